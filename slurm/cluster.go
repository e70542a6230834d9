package slurm

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/slotpool"
)

// clusterConfig configures a slurmCluster.
type clusterConfig struct {
	// Run names the run: every Slurm job of the slurmCluster is named
	// rs-JOB-RUN-jI (JOB the job's name made safe, I its index) and
	// tagged with Tag(Run) in its comment, so a run's allocations can be
	// found again (Leftovers). It must be unique among the cluster's
	// users for as long as Slurm remembers finished jobs. Letters,
	// digits, "_", "." and "-" only.
	Run string
	// Partitions maps a job's queue to a Slurm partition; a queue not in
	// it uses partition ("" is the cluster's default partition).
	Partitions map[string]string
	Partition  string
	// DefaultCPUs is the CPUs of a slot whose profile is Unknown (default
	// 1).
	DefaultCPUs int
	// ExtraArgs go to every sbatch (--account, --qos, ...).
	ExtraArgs []string
	// TimeLimit is every allocation's time limit (sbatch --time): Slurm
	// ends an allocation by then even if the runtime died without
	// cancelling it. Zero leaves the partition's limit.
	TimeLimit time.Duration
	// Auditor, if set, gets every priority change once Slurm's answer is
	// known: applied or refused by what Slurm reports the job's priority
	// to be afterwards, whatever scontrol's exit status said.
	Auditor auditor
}

// slurmCluster is a Slurm cluster as an admission.Cluster: many jobs share it,
// and Slurm decides who gets what. Each job's pool talks to a jobCore of its
// own (every all-or-nothing ask one Slurm job); the slurmCluster gathers the
// Cores' commands (Commands) and the job names to watch (Watched) so that
// one query serves every job of the run, and dispatches the results
// (Submitted, Cancelled, PriorityDone, Observe, SetPartition).
//
// It is a deterministic state machine like Core: the I/O (running the
// commands, polling) is a poller's, which calls the input methods through
// multijob.Driver.ClusterInput. Drivers and gangs are not supported:
// Slurm grants each region's slots all or nothing by itself, and a job
// submitted with either is refused with a *ConfigError.
type slurmCluster struct {
	cfg        clusterConfig
	parts      map[string]partition // by name
	defaultP   string               // the default partition's name
	jobs       []*clusterJob        // in submission order
	byName     map[string]*clusterJob
	byBase     map[string]*clusterJob // by the base of its Slurm job names
	events     []admission.Event
	cmds       []slurmCommand
	priorities []*priorityChange // scontrol run or to run, not audited yet, in order
}

// clusterJob is one job of a slurmCluster, and its admission.JobPort.
type clusterJob struct {
	c     *slurmCluster
	id    admission.JobID
	name  string
	spec  admission.JobSpec
	core  *jobCore
	state admission.JobState
	err   error
	// wants are the priorities asked for the job, in order, each applied
	// to each of its Slurm jobs (those submitted later too) until Slurm
	// refuses it or a later one supersedes it.
	wants []*wantedPriority
}

// wantedPriority is a priority change asked of a job.
type wantedPriority struct {
	by       string
	priority int64
	done     map[JobID]bool // Slurm jobs it was asked for
}

// priorityChange is one scontrol run for one Slurm job, waiting for the
// priority Slurm reports afterwards.
type priorityChange struct {
	job    *clusterJob
	want   *wantedPriority
	rec    AuditRecord
	ran    bool  // scontrol returned
	cmdErr error // its error
}

// newCluster returns a slurmCluster over the partitions parts, as the I/O
// layer found them (every partition the jobs' queues map to, and the
// default one, marked Default). It returns a *ConfigError for a bad Run
// or TimeLimit, or a partition the configuration names that is not in
// parts.
func newCluster(cfg clusterConfig, parts []partition) (*slurmCluster, error) {
	if cfg.Run == "" || safeName(cfg.Run) != cfg.Run {
		return nil, &ConfigError{Field: "Run", Value: cfg.Run, Why: "must be non-empty: letters, digits, _ . - only"}
	}
	if cfg.TimeLimit < 0 {
		return nil, &ConfigError{Field: "TimeLimit", Value: cfg.TimeLimit.String(), Why: "must be at least 0"}
	}
	c := &slurmCluster{cfg: cfg, parts: map[string]partition{}, byName: map[string]*clusterJob{},
		byBase: map[string]*clusterJob{}}
	for _, p := range parts {
		c.parts[p.Name] = p
		if p.Default {
			c.defaultP = p.Name
		}
	}
	queued := slices.Sorted(maps.Values(cfg.Partitions)) // the first missing one named, every run the same
	for _, n := range append([]string{cfg.Partition}, queued...) {
		if _, ok := c.partition(n); !ok {
			return nil, &ConfigError{Field: "Partitions", Value: n, Why: "no such partition was found (known: " + strings.Join(c.partitionNames(), ", ") + ")"}
		}
	}
	return c, nil
}

// safeName is s made of what a Slurm job name of ours may hold: letters,
// digits, "_", "." and "-"; each run of other characters becomes one "-".
func safeName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return b.String()
}

// partition returns the partition of that name ("" the default one).
func (c *slurmCluster) partition(name string) (partition, bool) {
	if name == "" {
		name = c.defaultP
	}
	p, ok := c.parts[name]
	return p, ok
}

// partitionNames lists the partitions known, sorted.
func (c *slurmCluster) partitionNames() []string {
	var out []string
	for n := range c.parts {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Tag is the comment every allocation of run carries (sbatch --comment).
func Tag(run string) string { return "regionsched-run=" + run }

// jobBaseName is the base of the Slurm job names of the i-th job of a
// run, named job: rs-JOB-RUN-jI, the job's name made safe (safeName) and
// cut to 40 characters.
func jobBaseName(job, run string, i int) string {
	job = safeName(job)
	if len(job) > 40 {
		job = job[:40]
	}
	return "rs-" + job + "-" + run + "-j" + strconv.Itoa(i)
}

// Submit admits a job: a jobCore of its own in its queue's partition. A job
// whose largest region can never fit the partition is returned rejected
// (a *TooLargeError); one with a driver or a gang is refused with a
// *ConfigError, and nothing changes.
func (c *slurmCluster) Submit(now time.Time, spec admission.JobSpec) (admission.JobPort, error) {
	switch {
	case spec.Driver != nil:
		return nil, &ConfigError{Field: "JobSpec.Driver", Value: spec.Name, Why: "a Slurm cluster runs no job driver in a slot (run the driver beside the runtime)"}
	case spec.Gang != nil:
		return nil, &ConfigError{Field: "JobSpec.Gang", Value: spec.Name, Why: "a Slurm cluster grants each region's slots all or nothing; a gang across regions is not supported"}
	case spec.Priority != 0 && !slurmPriority(spec.Priority):
		return nil, badPriority(admission.Principal{}, spec.Name, spec.Priority)
	}
	if _, dup := c.byName[spec.Name]; dup {
		return nil, &ConfigError{Field: "JobSpec.Name", Value: spec.Name, Why: "a job of that name was submitted already"}
	}
	cfg := jobConfig{Name: jobBaseName(spec.Name, c.cfg.Run, len(c.jobs)), Queue: spec.Queue, Partitions: c.cfg.Partitions,
		Partition: c.cfg.Partition, DefaultCPUs: c.cfg.DefaultCPUs, ExtraArgs: c.cfg.ExtraArgs, TimeLimit: c.cfg.TimeLimit,
		Comment: Tag(c.cfg.Run)}
	part, _ := c.partition(cfg.PartitionName()) // checked by newCluster
	j := &clusterJob{c: c, id: admission.JobID(len(c.jobs)), name: spec.Name, spec: spec, state: admission.JobAccepted}
	core, err := newJobCore(cfg, part)
	if err != nil {
		return nil, err
	}
	j.core = core
	c.jobs = append(c.jobs, j)
	c.byName[spec.Name] = j
	c.byBase[core.cfg.Name] = j
	if err := j.largestFits(); err != nil {
		j.state, j.err = admission.JobRejected, err
		c.event(now, j, admission.JobNew, err.Error())
		return j, nil
	}
	c.event(now, j, admission.JobNew, "submitted")
	return j, nil
}

// largestFits checks the job's largest region against its partition.
func (j *clusterJob) largestFits() error {
	var groups []slotpool.TaskGroup
	for _, cnt := range j.spec.Largest {
		groups = append(groups, slotpool.TaskGroup{Profile: cnt.Profile, MinMembers: cnt.N})
	}
	if len(groups) == 0 {
		return nil
	}
	req, err := mapGang(slotpool.Gang{Groups: groups}, j.core.part.Name, j.core.cfg.DefaultCPUs)
	if err != nil {
		return err
	}
	err = j.core.fits(0, req)
	var tl *TooLargeError
	if errors.As(err, &tl) {
		tl.Region = j.spec.LargestName
	}
	return err
}

// event records a state change of a job (from the state given to its
// current one).
func (c *slurmCluster) event(now time.Time, j *clusterJob, from admission.JobState, reason string) {
	c.events = append(c.events, admission.Event{At: now, Job: j.name, ID: j.id, Kind: admission.StateChanged, From: from, To: j.state, Reason: reason})
}

// end moves a job to a terminal state and cancels whatever it still has
// in Slurm.
func (c *slurmCluster) end(now time.Time, j *clusterJob, to admission.JobState, err error) {
	if j.state.Terminal() {
		return
	}
	from := j.state
	j.state, j.err = to, err
	c.auditUnasked(now, j)
	j.wants = nil
	j.core.shutdown(false)
	reason := "ended"
	if err != nil {
		reason = err.Error()
	}
	c.event(now, j, from, reason)
}

// auditUnasked audits, as refused, the priority changes of a job that
// ends before any of them was asked of one of its Slurm jobs (each
// Slurm job still had a change of its own awaiting its audit, or there
// was none yet): every change asked for is audited once, asked or not.
func (c *slurmCluster) auditUnasked(now time.Time, j *clusterJob) {
	if c.cfg.Auditor == nil {
		return
	}
	ended := j.state.String()
	if j.state == admission.JobCompleted {
		ended = "finished"
	}
	for _, w := range j.wants {
		if len(w.done) == 0 {
			c.cfg.Auditor(AuditRecord{At: now, Principal: w.by, RuntimeJob: j.name, New: w.priority,
				Reason: fmt.Sprintf("not asked of Slurm: job %s %s first", j.name, ended)})
		}
	}
}

// refused fails the jobs whose Cores refused an ask (it can never fit,
// or Slurm rejected its sbatch).
func (c *slurmCluster) refused(now time.Time, j *clusterJob) {
	if errs := j.core.takeRefused(); len(errs) > 0 {
		c.end(now, j, admission.JobFailed, errs[0])
	}
}

// Decide does nothing: Slurm decides, and its decisions come in through
// Observe.
func (c *slurmCluster) Decide(time.Time) {}

// Events returns the jobs' state changes since the last call.
func (c *slurmCluster) Events() []admission.Event {
	ev := c.events
	c.events = nil
	return ev
}

// Pending returns the jobs whose Cores have messages for their pools.
func (c *slurmCluster) Pending() []admission.JobID {
	var out []admission.JobID
	for _, j := range c.jobs {
		if j.core.hasReady() {
			out = append(out, j.id)
		}
	}
	return out
}

// Tick does nothing: the slurmCluster has no timers (its poller polls).
func (c *slurmCluster) Tick(time.Time) {}

// NextDeadline reports no deadline.
func (c *slurmCluster) NextDeadline() (time.Time, bool) { return time.Time{}, false }

// MaxPriority is the largest priority scontrol sets (0xFFFFFFFD: the two
// values above it mean "not set" and "infinite" in Slurm's 32-bit
// priority; 0 holds the job).
const MaxPriority = 1<<32 - 3

// Authorize refuses what cannot be asked of Slurm: an unknown or ended
// job, a priority outside 1 ... MaxPriority. Slurm itself decides whether
// by may change a priority (scontrol runs as by); a kill is the runtime's
// own decision, made with its own identity.
func (c *slurmCluster) Authorize(by admission.Principal, action admission.Action, job string, priority int) error {
	j, ok := c.byName[job]
	switch {
	case !ok:
		return &admission.RefusedError{By: by, Action: action, Job: job, Priority: priority, Reason: "no such job", Err: admission.ErrUnknownJob}
	case j.state.Terminal():
		return &admission.RefusedError{By: by, Action: action, Job: job, Priority: priority, Reason: "the job is " + j.state.String(), Err: admission.ErrInvalidTransition}
	case action == admission.ActionSetPriority && !slurmPriority(priority):
		return badPriority(by, job, priority)
	}
	return nil
}

// slurmPriority reports whether scontrol can set priority: 1 ...
// MaxPriority.
func slurmPriority(priority int) bool { return priority >= 1 && int64(priority) <= MaxPriority }

// badPriority refuses to set a priority scontrol cannot set.
func badPriority(by admission.Principal, job string, priority int) error {
	return &admission.RefusedError{By: by, Action: admission.ActionSetPriority, Job: job, Priority: priority,
		Reason: fmt.Sprintf("a Slurm priority is 1 ... %d", MaxPriority), Err: admission.ErrBadPriority}
}

// SetPriority asks Slurm to set the priority of every Slurm job of the
// job, now and later (the allocations of regions not submitted yet too),
// running scontrol as by: Slurm decides. Each answer reaches the Auditor
// once Observe saw the priority Slurm applied; a change of a Slurm job
// whose previous change is not audited yet is run after that audit.
// Errors: the
// *admission.RefusedError of Authorize.
func (c *slurmCluster) SetPriority(now time.Time, by admission.Principal, job string, priority int) error {
	if err := c.Authorize(by, admission.ActionSetPriority, job, priority); err != nil {
		return err
	}
	j := c.byName[job]
	// A change asked of Slurm already is superseded; one not asked yet
	// (the job had no Slurm job) is still asked, so that it is audited.
	j.wants = slices.DeleteFunc(j.wants, func(w *wantedPriority) bool { return len(w.done) > 0 })
	j.wants = append(j.wants, &wantedPriority{by: by.Name, priority: int64(priority), done: map[JobID]bool{}})
	c.applyWanted(now, j)
	return nil
}

// applyWanted issues the scontrol of a job's wanted priorities, in order,
// for each of its Slurm jobs not asked yet.
func (c *slurmCluster) applyWanted(now time.Time, j *clusterJob) {
	for _, w := range j.wants {
		c.applyOne(now, j, w)
	}
}

// applyOne issues the scontrol of one wanted priority for each of the
// job's Slurm jobs not asked yet. A Slurm job with a change not audited
// yet waits for that audit: the priority Slurm reports next must tell
// the outcome of one change only.
func (c *slurmCluster) applyOne(now time.Time, j *clusterJob, w *wantedPriority) {
	for _, sj := range j.core.slurmJobs() {
		if w.done[sj.Job] || c.changing(sj.Job) {
			continue
		}
		w.done[sj.Job] = true
		pc := &priorityChange{job: j, want: w, rec: AuditRecord{At: now, Principal: w.by, Job: sj.Job, RuntimeJob: j.name, Old: sj.Priority, New: w.priority}}
		c.priorities = append(c.priorities, pc)
		c.cmds = append(c.cmds, slurmCommand{Kind: cmdSetPriority, Name: sj.Name, Job: sj.Job, Priority: w.priority, Principal: w.by, change: pc})
	}
}

// changing reports whether a priority change of Slurm job sj awaits its
// audit.
func (c *slurmCluster) changing(sj JobID) bool {
	for _, pc := range c.priorities {
		if pc.rec.Job == sj {
			return true
		}
	}
	return false
}

// PriorityDone reports the outcome of a cmdSetPriority command. The audit
// waits for the priority Slurm reports at the next observation.
func (c *slurmCluster) PriorityDone(_ time.Time, cmd slurmCommand, err error) {
	if pc := cmd.change; pc != nil {
		pc.ran, pc.cmdErr = true, err
	}
}

// Kill ends a job at once: its Slurm jobs are cancelled, its port ends
// with an *admission.KilledError. Errors: the *admission.RefusedError of
// Authorize.
func (c *slurmCluster) Kill(now time.Time, by admission.Principal, job string) error {
	if err := c.Authorize(by, admission.ActionKill, job, 0); err != nil {
		return err
	}
	c.end(now, c.byName[job], admission.JobFailed, &admission.KilledError{Job: job, By: by})
	return nil
}

// Commands returns the commands to run since the last call, in order:
// the Cores' (submits and cancels) and the priority changes.
func (c *slurmCluster) Commands() []slurmCommand {
	var out []slurmCommand
	for _, j := range c.jobs {
		out = append(out, j.core.commands()...)
	}
	out = append(out, c.cmds...)
	c.cmds = nil
	return out
}

// HasCommands reports whether Commands has something to hand out.
func (c *slurmCluster) HasCommands() bool {
	if len(c.cmds) > 0 {
		return true
	}
	for _, j := range c.jobs {
		if j.core.hasCommands() {
			return true
		}
	}
	return false
}

// Watched returns the Slurm job names whose states the slurmCluster needs,
// sorted: one query of them serves every job.
func (c *slurmCluster) Watched() []string {
	var names []string
	for _, j := range c.jobs {
		names = append(names, j.core.watched()...)
	}
	slices.Sort(names)
	return names
}

// Busy reports whether the slurmCluster waits for Slurm (jobCore.busy of any job)
// or for the priority of a change.
func (c *slurmCluster) Busy() bool {
	if len(c.priorities) > 0 {
		return true
	}
	for _, j := range c.jobs {
		if j.core.busy() {
			return true
		}
	}
	return false
}

// jobOf returns the job a Slurm job name belongs to (BASE-aN).
func (c *slurmCluster) jobOf(name string) (*clusterJob, bool) {
	i := strings.LastIndex(name, "-a")
	if i < 0 {
		return nil, false
	}
	j, ok := c.byBase[name[:i]]
	return j, ok
}

// Submitted reports the outcome of a cmdSubmit command (jobCore.submitted).
func (c *slurmCluster) Submitted(now time.Time, name string, job JobID, err error) {
	if j, ok := c.jobOf(name); ok {
		j.core.submitted(now, name, job, err)
		c.refused(now, j)
	}
}

// Cancelled reports the outcome of a cmdCancel command (jobCore.cancelled).
func (c *slurmCluster) Cancelled(now time.Time, name string, job JobID, err error) {
	if j, ok := c.jobOf(name); ok {
		j.core.cancelled(now, name, job, err)
	}
}

// Observe takes what one query said of the names Watched returned: each
// job's jobCore gets its own (jobCore.observe), the wanted priorities go to the
// Slurm jobs that appeared, and the priority changes whose job reported
// its priority are audited.
func (c *slurmCluster) Observe(now time.Time, names []string, statuses []jobStatus) {
	namesOf := map[*clusterJob][]string{}
	for _, n := range names {
		if j, ok := c.jobOf(n); ok {
			namesOf[j] = append(namesOf[j], n)
		}
	}
	statusesOf := map[*clusterJob][]jobStatus{}
	seen := map[JobID]jobStatus{}
	for _, s := range statuses {
		if j, ok := c.jobOf(s.Name); ok {
			statusesOf[j] = append(statusesOf[j], s)
		}
		if s.HetOffset == 0 || s.Leader() == s.ID {
			seen[s.Leader()] = s
		}
	}
	for _, j := range c.jobs {
		if ns := namesOf[j]; len(ns) > 0 {
			j.core.observe(now, ns, statusesOf[j])
			c.refused(now, j)
		}
	}
	c.audit(now, seen)
	for _, j := range c.jobs {
		c.applyWanted(now, j)
	}
}

// audit reports the priority changes whose scontrol returned: applied if
// Slurm now reports the priority asked for, refused otherwise (with
// scontrol's message). A change whose job is no longer reported is
// judged by scontrol's exit status.
func (c *slurmCluster) audit(now time.Time, seen map[JobID]jobStatus) {
	waiting := c.priorities[:0]
	for _, pc := range c.priorities {
		if !pc.ran {
			waiting = append(waiting, pc)
			continue
		}
		rec := pc.rec
		st, ok := seen[rec.Job]
		switch {
		case ok:
			rec.Accepted = st.Priority == rec.New
			if !rec.Accepted {
				rec.Reason = fmt.Sprintf("Slurm reports priority %d", st.Priority)
			}
		default:
			rec.Accepted = pc.cmdErr == nil
		}
		if !rec.Accepted {
			if msg := commandMessage(pc.cmdErr); msg != "" {
				rec.Reason = msg
			}
			// Refused: not asked again for later allocations.
			pc.job.wants = slices.DeleteFunc(pc.job.wants, func(w *wantedPriority) bool { return w == pc.want })
		}
		if c.cfg.Auditor != nil {
			c.cfg.Auditor(rec)
		}
	}
	clear(c.priorities[len(waiting):])
	c.priorities = waiting
}

// commandMessage is what a failed command said (its standard error), or
// its error.
func commandMessage(err error) string {
	if err == nil {
		return ""
	}
	var ce *CommandError
	if errors.As(err, &ce) && strings.TrimSpace(ce.Stderr) != "" {
		return strings.TrimSpace(ce.Stderr)
	}
	return err.Error()
}

// SetPartition takes a new description of a partition (its nodes' states
// changed): the asks of its jobs that can no longer fit fail their jobs
// with a *TooLargeError naming the nodes out of service.
func (c *slurmCluster) SetPartition(now time.Time, p partition) {
	if p.Default {
		c.defaultP = p.Name
	}
	c.parts[p.Name] = p
	for _, j := range c.jobs {
		if j.core.part.Name == p.Name && !j.state.Terminal() {
			j.core.setPartition(p)
			c.refused(now, j)
		}
	}
}

// Partitions returns the partitions the slurmCluster allocates in, by name,
// sorted: those the poller follows.
func (c *slurmCluster) Partitions() []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		p, ok := c.partition(n)
		if ok && !seen[p.Name] {
			seen[p.Name] = true
			out = append(out, p.Name)
		}
	}
	add(c.cfg.Partition)
	for _, p := range c.cfg.Partitions {
		add(p)
	}
	slices.Sort(out)
	return out
}

// placement returns where a granted slot of a job lives.
func (c *slurmCluster) placement(job string, slot slotpool.SlotID) (slotPlacement, bool) {
	j, ok := c.byName[job]
	if !ok {
		return slotPlacement{}, false
	}
	return j.core.placement(slot)
}

// slotRef names a slot of a job.
type slotRef struct {
	Job  string
	Slot slotpool.SlotID
}

// deployPlacements returns where the slots of a Ready's deployments live
// (jobCore.deployPlacement; a slot not found is left out), then settles
// every job (jobCore.settle).
func (c *slurmCluster) deployPlacements(refs []slotRef) map[slotRef]slotPlacement {
	out := make(map[slotRef]slotPlacement, len(refs))
	for _, ref := range refs {
		if j, ok := c.byName[ref.Job]; ok {
			if p, ok := j.core.deployPlacement(ref.Slot); ok {
				out[ref] = p
			}
		}
	}
	for _, j := range c.jobs {
		j.core.settle()
	}
	return out
}

// jobWait is a job's ask that Slurm holds pending.
type jobWait struct {
	Job string
	Wait
}

// Waiting returns the asks Slurm holds pending, job by job in submission
// order.
func (c *slurmCluster) Waiting() []jobWait {
	var out []jobWait
	for _, j := range c.jobs {
		for _, w := range j.core.waiting() {
			out = append(out, jobWait{Job: j.name, Wait: w})
		}
	}
	return out
}

// SlurmJobs returns the Slurm jobs of a job's allocations not over.
func (c *slurmCluster) SlurmJobs(job string) []jobPriority {
	if j, ok := c.byName[job]; ok {
		return j.core.slurmJobs()
	}
	return nil
}

// Shutdown cancels every allocation of every job (the runtime is done),
// those whose cancel was issued already too (its outcome may be lost): the
// commands come out of Commands.
func (c *slurmCluster) Shutdown() {
	for _, j := range c.jobs {
		j.core.shutdown(true)
	}
}

// The JobPort of a job.

// ID is the job's index in submission order.
func (j *clusterJob) ID() admission.JobID { return j.id }

// State is the job's state: accepted, running once deployed, then
// completed, failed or rejected.
func (j *clusterJob) State() admission.JobState { return j.state }

// Err says why the job failed or was rejected.
func (j *clusterJob) Err() error { return j.err }

// Pending reports whether the job's jobCore has messages for its pool.
func (j *clusterJob) Pending() bool { return j.core.hasReady() }

// Granted counts the job's slots granted and not released.
func (j *clusterJob) Granted() int { return j.core.granted() }

// DriverSlot reports none: a Slurm cluster runs no driver.
func (j *clusterJob) DriverSlot() (slotpool.SlotID, bool) { return 0, false }

// Deployed moves the job to running.
func (j *clusterJob) Deployed(now time.Time) {
	if j.state == admission.JobAccepted || j.state == admission.JobStarting {
		from := j.state
		j.state = admission.JobRunning
		j.c.event(now, j, from, "deployed")
	}
}

// Finished ends the job completed; what it still has in Slurm is
// cancelled.
func (j *clusterJob) Finished(now time.Time) error {
	if j.state.Terminal() {
		return &admission.TransitionError{Job: j.name, From: j.state, To: admission.JobCompleted}
	}
	j.c.end(now, j, admission.JobCompleted, nil)
	return nil
}

// Failed ends the job failed; what it still has in Slurm is cancelled.
func (j *clusterJob) Failed(now time.Time, err error) error {
	if j.state.Terminal() {
		return &admission.TransitionError{Job: j.name, From: j.state, To: admission.JobFailed}
	}
	j.c.end(now, j, admission.JobFailed, err)
	return nil
}

// Handle passes a message of the job's pool to its jobCore. An ask of a job
// that ended is refused; its releases still go through (its slots go
// back to Slurm). An ask that can never fit fails the job.
func (j *clusterJob) Handle(now time.Time, msg slotpool.ToAdmission) error {
	if _, ask := msg.(slotpool.Ask); ask && j.state.Terminal() {
		return &admission.TransitionError{Job: j.name, From: j.state, To: j.state}
	}
	err := j.core.handle(now, msg)
	j.c.refused(now, j)
	return err
}

// Ready returns the jobCore's messages for the pool.
func (j *clusterJob) Ready() []slotpool.FromAdmission { return j.core.ready() }

// Tick does nothing (no timers).
func (j *clusterJob) Tick(time.Time) {}

// NextDeadline reports none.
func (j *clusterJob) NextDeadline() (time.Time, bool) { return time.Time{}, false }

var _ admission.Cluster = (*slurmCluster)(nil)
