package multijob

import (
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/scheduler"
)

// Scheduler runs many jobs on one cluster (see the package comment). It
// is not safe for concurrent use; Driver runs one on its own goroutine.
type Scheduler struct {
	cfg    Config
	log    *zap.Logger
	c      admission.Cluster
	q      *admission.Queues // c, if it is the in-process admission; else nil
	jobs   []*job            // in submission order, but those forgotten
	byName map[string]*job
	// submitted counts the jobs submitted (job.idx's next value).
	submitted int
	byID      map[admission.JobID]*job

	now   time.Time // the latest input's time
	timed bool      // now is set

	dirty  []*job // jobs whose schedulers had an input since the last Ready
	events []admission.Event
	ended  []JobEnd
	// spare is the storage of the Ready handed out last, valid until the
	// next call, which empties it to build the Ready after.
	spare Ready
}

// job is one submitted job.
type job struct {
	idx   int // its place in submission order (from 0, not reused)
	spec  JobSpec
	port  admission.JobPort
	sched *scheduler.Scheduler // nil if rejected at once
	// started: its scheduler was started; deployed: the admission was told
	// its first region deployed; dirty: in Scheduler.dirty.
	started, deployed, dirty bool
	// closing: its scheduler is being canceled by a kill (or by the
	// admission), which ends the job itself.
	closing bool
	end     *JobEnd // set once it ended
}

// New returns a Scheduler with no jobs over cfg.Cluster, or else over
// the in-process admission cfg.Admission configures (admission.New).
// Bad admission configuration returns the admission's typed error; a
// Jobs configuration that sets what the Scheduler sets, a *ConfigError;
// a bad Jobs.SelectiveShare, ValidateSelectiveShare's.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &Scheduler{cfg: cfg, log: cfg.Logger, c: cfg.Cluster, byName: map[string]*job{}, byID: map[admission.JobID]*job{}}
	if s.c == nil {
		ac := cfg.Admission
		if ac.Logger == nil {
			ac.Logger = cfg.Logger.Named("admission")
		}
		q, err := admission.New(ac)
		if err != nil {
			return nil, err
		}
		s.c = q
	}
	s.q, _ = s.c.(*admission.Queues)
	return s, nil
}

// Cluster returns the cluster the jobs share: its own input methods (a
// Slurm cluster's observations) go through ClusterInput.
func (s *Scheduler) Cluster() admission.Cluster { return s.c }

// ClusterInput runs fn, which gives the cluster inputs of its own (what
// a Slurm cluster's commands returned, the jobs' states it observed),
// with the time now; the cluster's decisions then reach the jobs in the
// next Ready, as any input's. fn must not call the Scheduler.
//
// Errors: a *scheduler.TimeError if now is before an earlier input's
// time (fn does not run); else fn's error.
func (s *Scheduler) ClusterInput(now time.Time, fn func(now time.Time) error) error {
	if err := s.checkTime(now); err != nil {
		return err
	}
	s.advance(now)
	return fn(now)
}

// checkTime refuses a time before the latest input's.
func (s *Scheduler) checkTime(now time.Time) error {
	if s.timed && now.Before(s.now) {
		return &scheduler.TimeError{Now: now, Last: s.now}
	}
	return nil
}

// advance records the time of an input that was taken.
func (s *Scheduler) advance(now time.Time) { s.now, s.timed = now, true }

// Submit adds a job at time now. The admission takes it at once (or
// rejects it: Ready then reports it in Ended, with the
// *admission.RejectedError, and in a StateChanged event) and gives it a
// scheduler whose pool talks to the admission. A job without a driver
// starts: its source regions ask for slots, granted in Ready, whatever
// the order of the jobs submitted at the same instant.
//
// Errors (nothing changes): a *scheduler.TimeError if now is before an
// earlier input's time; a *JobError wrapping ErrBadSpec (no name, no
// regions, a bad gang), a *scheduler.SpeculationError (JobSpec.Speculation),
// ErrDuplicateJob, ErrSpeculationCluster, or the admission's refusal
// (admission.ErrUnknownQueue without Config.Admission.CreateQueues,
// admission.ErrBadPriority).
func (s *Scheduler) Submit(now time.Time, spec JobSpec) error {
	if err := s.checkTime(now); err != nil {
		return err
	}
	if err := spec.validate(); err != nil {
		return err
	}
	if _, dup := s.byName[spec.Name]; dup {
		return &JobError{Op: "submit", Job: spec.Name, Err: ErrDuplicateJob}
	}
	if spec.Speculation.Enabled && !admission.GrantsSpeculative(s.c) {
		return &JobError{Op: "submit", Job: spec.Name, Err: ErrSpeculationCluster}
	}
	// The job's scheduler is made once the admission took the job: its
	// configuration is validated first, an admission standing in for the
	// job's port.
	probe := s.schedulerConfig(spec, nil)
	probe.ExternalAdmission = true
	if err := probe.Validate(); err != nil {
		return &JobError{Op: "submit", Job: spec.Name, Err: err}
	}
	port, err := s.c.Submit(now, spec.admissionSpec())
	if err != nil {
		return &JobError{Op: "submit", Job: spec.Name, Err: err}
	}
	sched, err := scheduler.New(spec.Regions, s.schedulerConfig(spec, port))
	if err != nil { // what probe and spec.validate accepted: cannot happen
		return &JobError{Op: "submit", Job: spec.Name, Err: err}
	}
	s.advance(now)
	j := &job{idx: s.submitted, spec: spec, port: port}
	s.submitted++
	s.jobs = append(s.jobs, j)
	s.byName[spec.Name] = j
	s.byID[port.ID()] = j
	if port.State() == admission.JobRejected {
		s.end(now, j, Rejected, port.Err())
		return nil
	}
	j.sched = sched
	// The admission's first message is the cluster's capacity: a region
	// that can never fit fails the job when it starts.
	if err := j.sched.Admit(now); err != nil {
		s.log.Warn("a job's scheduler refused the admission's messages", zap.String("job", spec.Name), zap.Error(err))
	}
	if spec.Driver == nil {
		s.start(now, j)
	}
	s.after(now, j)
	return nil
}

// schedulerConfig is the configuration of the scheduler of the job of
// spec, whose admission is port.
func (s *Scheduler) schedulerConfig(spec JobSpec, port admission.JobPort) scheduler.Config {
	return s.cfg.jobConfig(port, &spec, s.log.Named(spec.Name))
}

// start starts a job's scheduler. A job that fails at once (a region that
// can never fit the cluster) ends in after.
func (s *Scheduler) start(now time.Time, j *job) {
	j.started = true
	if err := j.sched.Start(now); err != nil {
		s.log.Debug("job failed at its start", zap.String("job", j.spec.Name), zap.Error(err))
	}
}

// StartJob starts a job with a driver, once its driver is up (deployed in
// the slot of its admission.DriverGranted event, after its startup time):
// its source regions ask for slots.
//
// Errors (nothing changes): a *scheduler.TimeError; a *JobError wrapping
// ErrUnknownJob, ErrJobEnded, ErrAlreadyStarted (a job without a driver
// started at Submit) or ErrNoDriverSlot.
func (s *Scheduler) StartJob(now time.Time, name string) error {
	const op = "start"
	j, err := s.live(op, name)
	if err != nil {
		return err
	}
	if err := s.checkTime(now); err != nil {
		return err
	}
	if j.started {
		return &JobError{Op: op, Job: name, Err: ErrAlreadyStarted}
	}
	if _, ok := j.port.DriverSlot(); !ok {
		return &JobError{Op: op, Job: name, Err: ErrNoDriverSlot}
	}
	s.advance(now)
	s.start(now, j)
	s.after(now, j)
	return nil
}

// live returns the job of that name if it has not ended.
func (s *Scheduler) live(op, name string) (*job, error) {
	j, ok := s.byName[name]
	switch {
	case !ok:
		return nil, &JobError{Op: op, Job: name, Err: ErrUnknownJob}
	case j.end != nil:
		return nil, &JobError{Op: op, Job: name, Err: ErrJobEnded}
	}
	return j, nil
}

// report hands a report about one of a job's tasks or slots to its
// scheduler.
func (s *Scheduler) report(now time.Time, op, name string, fn func(*scheduler.Scheduler) error) error {
	j, err := s.live(op, name)
	if err != nil {
		return err
	}
	if err := s.checkTime(now); err != nil {
		return err
	}
	if err := fn(j.sched); err != nil {
		return &JobError{Op: op, Job: name, Err: err}
	}
	s.advance(now)
	s.after(now, j)
	return nil
}

// TaskRunning reports that a deployed task of a job runs
// (scheduler.Scheduler.TaskRunning).
//
// Errors (nothing changes): a *scheduler.TimeError; a *JobError wrapping
// ErrUnknownJob, ErrJobEnded or the job's scheduler's error.
func (s *Scheduler) TaskRunning(now time.Time, name string, v scheduler.TaskID, attempt scheduler.Attempt) error {
	return s.report(now, "task-running", name, func(sc *scheduler.Scheduler) error { return sc.TaskRunning(now, v, attempt) })
}

// TaskFinished reports that a task of a job finished
// (scheduler.Scheduler.TaskFinished): a slot whose tasks all ended goes
// back to the admission, which decides in Ready who gets it.
//
// Errors: as TaskRunning.
func (s *Scheduler) TaskFinished(now time.Time, name string, v scheduler.TaskID, attempt scheduler.Attempt) error {
	return s.report(now, "task-finished", name, func(sc *scheduler.Scheduler) error { return sc.TaskFinished(now, v, attempt) })
}

// TaskFailed reports that a task of a job failed
// (scheduler.Scheduler.TaskFailed): its region and those downstream
// restart.
//
// Errors: as TaskRunning.
func (s *Scheduler) TaskFailed(now time.Time, name string, v scheduler.TaskID, attempt scheduler.Attempt, lost ...scheduler.PartitionID) error {
	return s.report(now, "task-failed", name, func(sc *scheduler.Scheduler) error { return sc.TaskFailed(now, v, attempt, lost...) })
}

// SlotLost reports that a slot a job holds vanished
// (scheduler.Scheduler.SlotLost).
//
// Errors: as TaskRunning.
func (s *Scheduler) SlotLost(now time.Time, name string, slot scheduler.SlotID) error {
	return s.report(now, "slot-lost", name, func(sc *scheduler.Scheduler) error { return sc.SlotLost(now, slot) })
}

// Tick fires the timeouts due at now: the jobs' pools' (fulfillability,
// idle slots) and the admission's (gangs, starting, reclaims).
//
// Errors: a *scheduler.TimeError if now is before an earlier input's
// time (nothing changes).
func (s *Scheduler) Tick(now time.Time) error {
	if err := s.checkTime(now); err != nil {
		return err
	}
	s.advance(now)
	for _, j := range s.jobs {
		if j.end != nil || j.sched == nil {
			continue
		}
		if t, ok := j.sched.NextDeadline(); ok && !t.After(now) {
			if err := j.sched.Tick(now); err != nil {
				s.log.Warn("tick refused", zap.String("job", j.spec.Name), zap.Error(err))
			}
			s.after(now, j)
		}
	}
	s.c.Tick(now)
	return nil
}

// NextDeadline returns when Tick next has work to do.
func (s *Scheduler) NextDeadline() (time.Time, bool) {
	at, ok := s.c.NextDeadline()
	for _, j := range s.jobs {
		if j.end != nil || j.sched == nil {
			continue
		}
		if t, tok := j.sched.NextDeadline(); tok && (!ok || t.Before(at)) {
			at, ok = t, true
		}
	}
	return at, ok
}

// after follows an input of a job's scheduler: its Ready is collected in
// the next Ready; the admission is told when its first region deployed
// (a starting job is running) and when it finished or failed.
func (s *Scheduler) after(now time.Time, j *job) {
	if !j.dirty {
		j.dirty = true
		s.dirty = append(s.dirty, j)
	}
	if j.end != nil || j.closing {
		return
	}
	if !j.deployed && j.sched.Stats().RegionsDeployed > 0 {
		j.deployed = true
		j.port.Deployed(now)
	}
	var err error
	switch j.sched.State() {
	case scheduler.JobFinished:
		s.end(now, j, Finished, nil)
		err = j.port.Finished(now)
	case scheduler.JobFailed:
		s.end(now, j, Failed, j.sched.Err())
		err = j.port.Failed(now, j.sched.Err())
	}
	if err != nil {
		s.log.Debug("the admission refused the end of a job", zap.String("job", j.spec.Name), zap.Error(err))
	}
}

// end records that a job ended, for the next Ready.
func (s *Scheduler) end(now time.Time, j *job, how Outcome, err error) {
	j.end = &JobEnd{Job: j.spec.Name, Outcome: how, Err: err, At: now}
	s.ended = append(s.ended, *j.end)
	if !j.dirty {
		j.dirty = true
		s.dirty = append(s.dirty, j)
	}
}
