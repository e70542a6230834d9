package multijob

import (
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// Config configures a Scheduler.
type Config struct {
	// Admission configures the in-process admission the jobs share
	// (admission.New): the cluster's slots, the queues and their
	// policies, the audit sink. A nil Logger becomes
	// Logger.Named("admission").
	Admission admission.Config
	// Cluster, if set, is the admission the jobs share instead of the
	// in-process one Admission configures (which is then ignored): a
	// Slurm cluster (package slurm), say. The Scheduler calls
	// its Decide once per Ready.
	Cluster admission.Cluster
	// Jobs configures every job's scheduler (scheduler.New), but for what
	// the job's place in the cluster decides, which the Scheduler sets:
	// Admission (the job's port of the cluster), Speculation (the
	// JobSpec's), Logger (Logger.Named(job)), and, whatever Jobs says,
	// Pool.ReturnFreed (on: a slot whose tasks ended goes back to the
	// cluster, which decides who gets it) and Pool.Matching (the
	// cluster's, Admission.Matching). New refuses a Jobs that sets
	// Admission, ExternalAdmission, Speculation or Logger with a
	// *ConfigError, and a SelectiveShare scheduler.ValidateSelectiveShare
	// refuses.
	//
	// Pool.Timeout is how long a region of a job may wait for its slots
	// before the job fails; unlike a single scheduler's, zero or negative
	// means never: the admission decides who waits. Pool.IdleTimeout is
	// how long a job's pool keeps a free slot none of its waiting regions
	// can use before it gives it back; zero means at once (a
	// nanosecond).
	Jobs scheduler.Config
	// Logger receives debug logs; each job's scheduler logs to
	// Logger.Named(its name). nil means zap.NewNop().
	Logger *zap.Logger
}

// check refuses a Jobs configuration that sets what the Scheduler sets.
func (c *Config) check() error {
	jc := &c.Jobs
	bad := func(field, why string) error {
		return &ConfigError{Field: "Jobs." + field, Err: fmt.Errorf("%w: %s", ErrBadConfig, why)}
	}
	switch {
	case jc.Admission != nil:
		return bad("Admission", "every job's admission is its port of the cluster")
	case jc.ExternalAdmission:
		return bad("ExternalAdmission", "every job's admission is its port of the cluster (Config.Cluster for one outside the process)")
	case jc.Speculation != (scheduler.Speculation{}):
		return bad("Speculation", "speculation is set per job, in JobSpec.Speculation")
	case jc.Logger != nil:
		return bad("Logger", "each job logs to Config.Logger.Named(its name)")
	}
	if jc.SelectiveShare != 0 {
		if err := scheduler.ValidateSelectiveShare(jc.SelectiveShare); err != nil {
			return err
		}
	}
	return nil
}

// JobSpec is a job submitted to a Scheduler.
type JobSpec struct {
	// JobSpec is what the admission is told of the job (see
	// admission.JobSpec): its Name, unique among the jobs submitted (every
	// input and output names the job by it); Queue, User and Priority
	// ("" and 0 mean root.default, anonymous and
	// admission.DefaultPriority); Driver and Gang. Largest,
	// LargestName and Regions are the Scheduler's, which tells the
	// admission the job's largest region and what each region needs:
	// Submit refuses a spec that sets them.
	//
	// With a Driver, the admission grants the driver a slot first (an
	// admission.DriverGranted event), the runtime deploys it there, and
	// once it is up calls StartJob; without one the job starts when it is
	// submitted. A runtime that calls StartJob at the very instant of the
	// grant (a driver with no startup time, in virtual time) sets
	// StartAtOnce: the decision that grants the driver then ends there
	// (Ready's Deadline is that instant), and the Ready after StartJob
	// decides the job's first regions with the rest of the instant. A Gang reserves Gang.MinSlots slots (the driver's
	// included) before anything of the job runs; MinSlots must be at
	// least 1, and region.Regions.GangMinSlots gives the usual value.
	admission.JobSpec
	// Regions are the job's pipelined regions as they will ask for slots
	// (region.Regions.ForCluster for a cluster of several profiles). What
	// the largest region needs at once is what the admission checks the
	// job against: one that can never fit its queue is rejected.
	Regions *region.Regions
	// Speculation configures speculative execution of the job's slow
	// tasks (scheduler.Speculation; the zero value is off). As the job's
	// pool gives every freed slot back to the admission, a speculative
	// attempt asks the admission for its slot (slotpool.Ask.Speculative),
	// which grants it only while no regular ask of any job waits that
	// the slot could serve. Submit refuses an invalid setting, or one
	// for a job none of whose tasks may be speculated, with the
	// scheduler's *SpeculationError; and speculation over a Cluster that
	// does not grant speculative asks (admission.GrantsSpeculative: a
	// Slurm cluster decides who gets which slot by itself) with
	// ErrSpeculationCluster.
	Speculation scheduler.Speculation
}

// validate refuses a spec that cannot be submitted.
func (spec *JobSpec) validate() error {
	bad := func(format string, args ...any) error {
		return &JobError{Op: "submit", Job: spec.Name, Err: fmt.Errorf("%w: "+format, append([]any{ErrBadSpec}, args...)...)}
	}
	switch {
	case spec.Name == "":
		return bad("no name")
	case spec.Regions == nil:
		return bad("no regions")
	case spec.Regions.NumRegions() == 0:
		return bad("no regions")
	case spec.Largest != nil || spec.LargestName != "" || spec.JobSpec.Regions != nil:
		return bad("Largest, LargestName and Regions are set from the job's regions")
	}
	if err := spec.Speculation.ValidateJob(spec.Regions); err != nil {
		return &JobError{Op: "submit", Job: spec.Name, Err: err}
	}
	if g := spec.Gang; g != nil {
		if g.MinSlots < 1 {
			return bad("gang minSlots %d must be >= 1", g.MinSlots)
		}
		if g.Timeout < 0 && g.Timeout != admission.NoGangWait {
			return bad("gang timeout %v must be >= 0 (or admission.NoGangWait)", g.Timeout)
		}
	}
	return nil
}

// admissionSpec is what the admission is told of the job: its largest
// region (the one needing the most slots at once, the first of those)
// with its slots' profiles, named for a rejection, and, for a job with a
// driver, what each of its regions needs (each distinct need once, named
// by its first region), so that the driver takes no slot they need.
func (spec *JobSpec) admissionSpec() admission.JobSpec {
	rs := spec.Regions
	largest := region.ID(0)
	for r := range region.ID(rs.NumRegions()) {
		if rs.SlotCount(r) > rs.SlotCount(largest) {
			largest = r
		}
	}
	slots := rs.Slots(largest)
	profiles := make([]resource.Profile, len(slots))
	for i, s := range slots {
		profiles[i] = s.Profile
	}
	as := spec.JobSpec
	as.Largest = resource.Tally(profiles)
	as.LargestName = fmt.Sprintf("region %d %s", largest, rs.MemberNames(largest, 4))
	if as.Driver != nil {
		as.Regions = regionNeeds(rs)
	}
	if as.Start == nil {
		as.Start = startSlots(rs)
	}
	return as
}

// regionNeeds lists what each region of rs needs at once, each distinct
// need once (named by its first region).
func regionNeeds(rs *region.Regions) []admission.RegionNeed {
	var out []admission.RegionNeed
	seen := map[string]bool{}
	for r := range region.ID(rs.NumRegions()) {
		slots := rs.Slots(r)
		profiles := make([]resource.Profile, len(slots))
		for i, s := range slots {
			profiles[i] = s.Profile
		}
		need := resource.Tally(profiles)
		slices.SortFunc(need, func(a, b resource.Count) int { return resource.CompareSize(a.Profile, b.Profile) })
		key := fmt.Sprint(need)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, admission.RegionNeed{Name: fmt.Sprintf("region %d %s", r, rs.MemberNames(r, 4)), Slots: need})
	}
	return out
}

// startSlots is what a job asks for when it starts: the slots of its
// regions scheduled at the start (those that consume no other region's
// results), together, as region.Regions.GangMinSlots counts them.
func startSlots(rs *region.Regions) []resource.Count {
	var profiles []resource.Profile
	for r := range region.ID(rs.NumRegions()) {
		if len(rs.ConsumedGroups(r)) == 0 {
			for _, s := range rs.Slots(r) {
				profiles = append(profiles, s.Profile)
			}
		}
	}
	return resource.Tally(profiles)
}

// jobConfig is the configuration of a job's scheduler (see Config.Jobs):
// freed slots go back to the admission, which decides who gets them.
func (c *Config) jobConfig(port admission.JobPort, spec *JobSpec, log *zap.Logger) scheduler.Config {
	jc := c.Jobs
	jc.Pool = c.poolConfig()
	if port != nil {
		jc.Admission = port
	}
	jc.Speculation = spec.Speculation
	jc.Logger = log
	return jc
}

// poolConfig is the configuration of every job's pool.
func (c *Config) poolConfig() slotpool.Config {
	pc := c.Jobs.Pool
	pc.Matching, pc.ReturnFreed = c.Admission.Matching, true
	if pc.Timeout <= 0 {
		pc.Timeout = slotpool.NoTimeout
	}
	if pc.IdleTimeout <= 0 {
		pc.IdleTimeout = time.Nanosecond
	}
	return pc
}
