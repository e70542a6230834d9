package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
)

// JobsConfig configures RunJobs: a run of job files (package runfile) on
// a cluster, as "regionsched run --kubernetes" does it.
type JobsConfig struct {
	// Runner configures the Runner (its Client, Run, Template, Shape,
	// NodeSelector, the queues in Jobs.Admission, Logger, Scale). Its
	// Trace, Start and TraceJobs are set by RunJobs; an empty Run is
	// NewRunID().
	Runner RunnerConfig
	// Mode is the exchange mode of the jobs' edges that pin none.
	Mode exchange.Mode
	// Events are priority changes and kills to apply, At since the start
	// of the run: the in-process admission decides (its roles, Users).
	Events []runfile.JobEvent
	// Users are the roles of the principals the events name (none: every
	// change is refused).
	Users map[string]admission.Role
	// Trace, if set, receives the trace events, At since the start of the
	// run; with several jobs each names its job.
	Trace func(runfile.Event)
	// Audit, if set, receives every change an event asked of the
	// admission, applied or refused, with its time since the start.
	Audit func(at time.Duration, rec admission.AuditRecord)
	// Poll is the longest time between two Steps of the Runner (0 means
	// DefaultPoll): it steps as soon as the pods or nodes change, or a
	// submission, an event or a timer is due.
	Poll time.Duration
}

// JobsResult is how a run of RunJobs ended.
type JobsResult struct {
	// Run is the run's id: every pod of it carries it (LabelRun).
	Run string
	// Slots counts the slots the nodes offered when the run started.
	Slots int
	// Jobs are the jobs' outcomes, in the order of the jobs given.
	Jobs []JobResult
	// WithdrawnSlots counts the slots of reclaims withdrawn before their
	// timeout, their reason gone (the trace has the reclaims).
	WithdrawnSlots int
	// Events say what became of each event of JobsConfig.Events applied
	// (applied, or refused and why), in the order they were applied.
	Events []EventOutcome
	// Stopped says why the run stopped before every job ended (ctx's
	// error on SIGINT, SIGTERM or a timeout, a *DeadlockError when the
	// jobs left could no longer progress, or what went wrong); nil when
	// every job ended.
	Stopped error
}

// JobResult is how one job of a run ended.
type JobResult struct {
	Name string
	// Err is nil when the job finished; else why not (multijob.JobEnd's
	// Err), or JobsResult.Stopped when the run stopped before it ended.
	Err error
	// FirstDeploy is when its first pod was bound and End when it ended,
	// since the start of the run.
	FirstDeploy, End time.Duration
	// Pods counts the task attempts run as pods (not its driver's); Bulks the bulks bound
	// (a region attempt's pods, bound all together).
	Pods, Bulks int
	// Stats are its scheduler's counts (failovers, restarts, ...).
	Stats scheduler.Stats
	// Restarts are its scheduler's failovers, in order: the task that
	// failed (or was the first stopped in a slot lost or reclaimed) and
	// the regions restarted.
	Restarts []Restart
}

// RunJobs runs job files on the cluster until every job ended or ctx is
// done: each job is submitted at its submitAtMs (its queue, user,
// priority and gang from its file), the events are applied at their
// times, and a Runner binds the regions' pods on the nodes. A job with a
// driver (its file's driver) gets a pod for it in the slot the admission
// grants it, and its regions ask for slots once that pod has run for the
// driver's startupMs (times RunnerConfig.Scale, as task durations are).
// Whatever ends it, every pod of the run is deleted before it returns
// (Run).
//
// The error is non-nil only when nothing ran: jobs without distinct
// names, a bad run id, no node offering a slot, or the API server not
// answering.
func RunJobs(ctx context.Context, cfg JobsConfig, clk clock.Clock, jobs ...runfile.Job) (JobsResult, error) {
	j, err := startJobs(ctx, cfg, clk, jobs)
	if err != nil {
		return JobsResult{}, err
	}
	stopped := j.run(ctx, clk, cfg.Poll)
	return j.finish(ctx, stopped), nil
}

// startJobs starts a run of RunJobs: the Runner, and nothing submitted
// yet.
func startJobs(ctx context.Context, cfg JobsConfig, clk clock.Clock, jobs []runfile.Job) (*jobsRun, error) {
	specs, err := jobSpecs(cfg.Mode, jobs)
	if err != nil {
		return nil, err
	}
	rc := cfg.Runner
	if rc.Run == "" {
		rc.Run = NewRunID()
	}
	rc.Start, rc.TraceJobs = clk.Now(), rc.TraceJobs || len(jobs) > 1
	if rc.DriverStartup == nil {
		rc.DriverStartup = driverStartups(jobs, rc.Scale)
	}
	j := &jobsRun{cfg: cfg, clk: clk, at: map[string]int{}}
	j.res = JobsResult{Run: rc.Run, Jobs: make([]JobResult, len(jobs))}
	for i, job := range jobs {
		j.res.Jobs[i] = JobResult{Name: job.Name, FirstDeploy: -1}
		j.at[job.Name] = i
	}
	rc.Trace = j.trace
	// The admission's records tell an event's outcome (the priority
	// before it), and go on to cfg.Audit.
	next := rc.Jobs.Admission.Audit
	rc.Jobs.Admission.Audit = auditFunc(func(rec admission.AuditRecord) {
		if j.loop != nil {
			j.noteAudit(rec)
		}
		if cfg.Audit != nil {
			cfg.Audit(rec.At.Sub(rc.Start), rec)
		}
		if next != nil {
			_ = next.Audit(rec)
		}
	})
	r, err := NewRunner(ctx, rc)
	if err != nil {
		return nil, err
	}
	j.res.Slots = len(r.Slots())
	for _, spec := range specs {
		if spec.Gang != nil && spec.Gang.MinSlots == 0 {
			spec.Gang.MinSlots = spec.Regions.GangMinSlots(spec.Driver != nil, j.res.Slots)
		}
	}
	j.loop = newLoop(r, rc.Start, specs, cfg.Events, cfg.Users)
	sink := rc.Jobs.Admission.Audit
	j.loop.audit = func(rec admission.AuditRecord) { _ = sink.Audit(rec) }
	return j, nil
}

// finish deletes every pod of the run (on a context of its own: ctx may
// be done) and returns how the jobs ended; stopped is why the run
// stopped before every job ended (nil if they all did).
func (j *jobsRun) finish(ctx context.Context, stopped error) JobsResult {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := j.r.Close(cctx); err != nil {
		stopped = errors.Join(stopped, fmt.Errorf("deleting the run's pods: %w", err))
	}
	return j.result(stopped)
}

// jobSpecs makes the jobs' specs: their regions under mode, their
// submission fields.
func jobSpecs(mode exchange.Mode, jobs []runfile.Job) ([]multijob.JobSpec, error) {
	seen := map[string]bool{}
	specs := make([]multijob.JobSpec, len(jobs))
	for i, j := range jobs {
		if j.Name == "" || seen[j.Name] || j.Job == nil {
			return nil, fmt.Errorf("kubernetes: job %q: every job needs a graph and a name of its own", j.Name)
		}
		seen[j.Name] = true
		sub := j.Job.Submission()
		rs := region.FromJob(j.Job, mode)
		specs[i] = multijob.JobSpec{JobSpec: admission.JobSpec{Name: j.Name, Queue: sub.Queue, User: sub.User, Priority: sub.Priority}, Regions: rs}
		if sub.Driver != nil {
			d := sub.Driver.Resources
			specs[i].Driver = &d
		}
		if g := sub.Gang; g != nil {
			specs[i].Gang = &admission.Gang{MinSlots: g.MinSlots, Hard: g.Hard, Timeout: g.Timeout}
			if g.Timeout == 0 {
				specs[i].Gang.Timeout = admission.NoGangWait // timeoutMs: 0, not the default
			}
		}
	}
	return specs, nil
}

// driverStartups returns the startup of each job's driver: its file's
// startupMs times scale (0 means 1); DefaultDriverStartup for a job
// without a driver.
func driverStartups(jobs []runfile.Job, scale float64) func(job string) time.Duration {
	startup := make(map[string]time.Duration, len(jobs))
	for _, j := range jobs {
		if d := j.Job.Submission().Driver; d != nil {
			startup[j.Name] = scaled(d.Startup, scale)
		}
	}
	return func(job string) time.Duration {
		if d, ok := startup[job]; ok {
			return d
		}
		return DefaultDriverStartup
	}
}

// auditFunc is an admission.AuditSink of a function.
type auditFunc func(admission.AuditRecord)

// Audit passes the record on.
func (f auditFunc) Audit(rec admission.AuditRecord) error {
	f(rec)
	return nil
}

// jobsRun is one run of RunJobs: its loop, and what it gathers of the
// jobs.
type jobsRun struct {
	*loop
	cfg JobsConfig
	clk clock.Clock
	at  map[string]int // a job's place in the jobs given
	res JobsResult
}

// trace counts the pods of each job, and passes the event on (naming
// its job only in a run of several).
func (j *jobsRun) trace(ev runfile.Event) {
	if ev.Kind == runfile.Deploy && !(ev.Task == runfile.DriverTask && ev.Region == runfile.NoRegion) {
		i := 0 // a run of one job does not name it
		if len(j.res.Jobs) > 1 {
			i = j.at[ev.Job]
		}
		jr := &j.res.Jobs[i]
		if jr.FirstDeploy < 0 {
			jr.FirstDeploy = ev.At
		}
		jr.Pods++
	}
	if j.cfg.Trace != nil {
		j.cfg.Trace(ev)
	}
}

// result gathers the jobs' outcomes once the run stopped (why, if
// before every job ended).
func (j *jobsRun) result(stopped error) JobsResult {
	ended := map[string]multijob.JobEnd{}
	for _, e := range j.r.Ends() {
		ended[e.Job] = e
	}
	end := j.clk.Now().Sub(j.start)
	for i := range j.res.Jobs {
		jr := &j.res.Jobs[i]
		jr.Bulks = j.r.Bulks(jr.Name)
		jr.Restarts = j.r.Restarts(jr.Name)
		if st, err := j.r.Status(jr.Name); err == nil {
			jr.Stats = st.Scheduler.Stats
		}
		if e, ok := ended[jr.Name]; ok {
			jr.Err, jr.End = e.Err, e.At.Sub(j.start)
			continue
		}
		jr.Err, jr.End = stopped, end
		if jr.Err == nil {
			jr.Err = errors.New("kubernetes: the run stopped before the job ended")
		}
	}
	j.res.Stopped = stopped
	j.res.WithdrawnSlots = j.r.WithdrawnSlots()
	j.res.Events = j.outcomes
	return j.res
}
