package multijob

import (
	"fmt"
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
	// Admission configures the admission the jobs share: the cluster's
	// slots, the queues and their policies, the audit sink. Its
	// DecidePerInstant is set whatever it says (the Scheduler decides in
	// Ready), and a nil Logger becomes Logger.Named("admission").
	Admission admission.Config
	// Cluster, if set, is the admission the jobs share instead of the
	// in-process one Admission configures (which is then ignored): a
	// Slurm cluster (package slurm), say. The Scheduler calls
	// its Decide once per Ready.
	Cluster admission.Cluster
	// Timeout is how long a region of a job may wait for its slots before
	// the job fails (each job's slotpool.Config.Timeout); zero or
	// negative means never: the admission decides who waits.
	Timeout time.Duration
	// IdleTimeout is how long a job's pool keeps a free slot none of its
	// waiting regions can use before it gives it back to the admission;
	// zero means at once (a nanosecond).
	IdleTimeout time.Duration
	// SelectiveShare is every job's scheduler.Config.SelectiveShare: the
	// share of the producers of a selective hybrid input that must have
	// finished before its consumer may start (0: the default). New
	// refuses a value scheduler.ValidateSelectiveShare refuses.
	SelectiveShare float64
	// DisableHybridSlotSharing is every job's
	// scheduler.Config.DisableHybridSlotSharing: consumers of hybrid
	// results ask for slots of their own instead of going into their
	// producers'.
	DisableHybridSlotSharing bool
	// Logger receives debug logs; each job's scheduler logs to
	// Logger.Named(its name). nil means zap.NewNop().
	Logger *zap.Logger
}

// JobSpec is a job submitted to a Scheduler.
type JobSpec struct {
	// Name is unique among the jobs submitted; every input and output
	// names the job by it.
	Name string
	// Queue, User and Priority are as in admission.JobSpec ("" and 0 mean
	// root.default, anonymous and admission.DefaultPriority).
	Queue    string
	User     string
	Priority int
	// Driver, if set, is the profile of the job's driver (job master): the
	// admission grants it a slot first (an admission.DriverGranted event),
	// the runtime deploys it there, and once it is up calls StartJob.
	// Without a driver the job starts when it is submitted.
	Driver *resource.Profile
	// Gang, if set, reserves Gang.MinSlots slots (the driver's included)
	// before anything of the job runs (see admission.Gang). MinSlots must
	// be at least 1; region.Regions.GangMinSlots gives the usual value.
	Gang *admission.Gang
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
// with its slots' profiles, named for a rejection.
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
	return admission.JobSpec{
		Name: spec.Name, Queue: spec.Queue, User: spec.User, Priority: spec.Priority,
		Driver: spec.Driver, Gang: spec.Gang,
		Largest:     resource.Tally(profiles),
		LargestName: fmt.Sprintf("region %d %s", largest, rs.MemberNames(largest, 4)),
		Start:       startSlots(rs),
	}
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

// poolConfig is the configuration of every job's pool: freed slots go
// back to the admission, which decides who gets them.
func (c *Config) poolConfig() slotpool.Config {
	pc := slotpool.Config{Matching: c.Admission.Matching, Timeout: c.Timeout, IdleTimeout: c.IdleTimeout, ReturnFreed: true}
	if pc.Timeout <= 0 {
		pc.Timeout = slotpool.NoTimeout
	}
	if pc.IdleTimeout <= 0 {
		pc.IdleTimeout = time.Nanosecond
	}
	return pc
}
