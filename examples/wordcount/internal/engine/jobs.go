package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/scheduler"
)

// JobsConfig is a run of several jobs of one graph on one set of local
// slots, which one multijob.Driver hands out among them.
type JobsConfig struct {
	// Config is what the jobs share: the graph, the mode, the slots, the
	// input, TopK, FailAfter, TempDir and Clock. Its Fail must be empty:
	// each job names its own (JobSpec.Fail).
	Config
	// Jobs are the jobs, at least one. They are all submitted at the
	// start of the run, as one instant: the policy, not their order,
	// decides who gets the slots first.
	Jobs []JobSpec
	// Policy orders the jobs' grants: the policy of the one queue they
	// share (root.default).
	Policy admission.Policy
}

// JobSpec is one job of a JobsConfig.
type JobSpec struct {
	// Name names the job: not empty, unique in the run.
	Name string
	// Priority is admission.MinPriority ... admission.MaxPriority (higher
	// first under the priority policy, a larger share under fairshare);
	// 0 means admission.DefaultPriority.
	Priority int
	// Fail is Config.Fail for this job.
	Fail []string
}

// JobResult is what one job of a run of several produced.
type JobResult struct {
	// Name and Priority are the job's (Priority with the default filled
	// in).
	Name     string
	Priority int
	// Result is the job's result, timeline and counts; its Counts are
	// empty unless the job finished, its PeakSlots counts the job's slots
	// only.
	Result
	// Outcome says how the job ended; zero if the run stopped first (a
	// fatal error of the runtime, or the context).
	Outcome multijob.Outcome
	// Err is why the job did not finish (multijob.JobEnd.Err: an
	// *admission.RejectedError if it can never run on these slots).
	Err error
	// Submitted and Ended are when the job was submitted and when it
	// ended, since the start of the run (Ended is zero if it did not).
	Submitted, Ended time.Duration
}

// JobsResult is what a run of several jobs produced.
type JobsResult struct {
	// Jobs holds each job's result, in the order of JobsConfig.Jobs.
	Jobs []JobResult
	// PeakSlots is the most slots that held a task at once, of any job.
	PeakSlots int
}

// RunJobs runs several jobs at once on cfg.Slots local slots: one engine
// per job, and one multijob.Driver whose admission grants the slots by
// cfg.Policy and whose Ready values one loop routes to the jobs' engines.
// A job that fails or is rejected is reported in its JobResult, not as an
// error: RunJobs returns an error for a bad configuration (with a nil
// result) or for the first error of the runtime, as Run does (with the
// result so far).
func RunJobs(ctx context.Context, cfg JobsConfig) (*JobsResult, error) {
	engines, err := newEngines(cfg)
	if err != nil {
		return nil, err
	}
	slots := newSlotTable(cfg.Slots).slots()
	s, err := multijob.New(multijob.Config{Admission: admission.Config{Slots: slots, DefaultPolicy: cfg.Policy}})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h, err := newHost(ctx, engines[0].cfg.Clock, cfg.Slots, cfg.TempDir)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(h.dir)
	run := &jobsRun{h: h, engines: engines, res: &JobsResult{Jobs: make([]JobResult, len(engines))}, index: map[string]int{}}
	for i, e := range engines {
		spec := cfg.Jobs[i]
		if err := s.Submit(h.clk.Now(), multijob.JobSpec{JobSpec: admission.JobSpec{Name: spec.Name, Priority: spec.Priority}, Regions: e.rs}); err != nil {
			return nil, err
		}
		prio := spec.Priority
		if prio == 0 {
			prio = admission.DefaultPriority
		}
		run.res.Jobs[i] = JobResult{Name: spec.Name, Priority: prio, Submitted: h.since(),
			Result: Result{Regions: e.rs.NumRegions(), MinimumSlots: e.rs.MinimumSlots()}}
		run.index[spec.Name] = i
	}
	// Submitted before the driver starts: its first turn decides over
	// every job at once.
	d := multijob.StartDriver(ctx, s, multijob.DriverConfig{Clock: h.clk})
	for i, e := range engines {
		e.attach(h, filepath.Join(h.dir, fmt.Sprintf("job-%d", i)), jobReporter{d: d, job: e.job})
	}
	defer func() {
		cancel() // every attempt's context is a child
		h.wg.Wait()
		d.Stop()
	}()
	err = run.loop(ctx, d)
	for i, e := range engines {
		jr := &run.res.Jobs[i]
		e.result(&jr.Result)
		if st, serr := d.Status(ctx, e.job); serr == nil {
			jr.Stats = st.Scheduler.Stats
		}
		if err == nil && jr.Outcome == multijob.Finished {
			if jr.Counts, err = e.collect(); err != nil {
				break
			}
		}
	}
	h.mu.Lock()
	run.res.PeakSlots = h.slots.peak
	h.mu.Unlock()
	return run.res, err
}

// newEngines checks the configuration and makes the jobs' engines.
func newEngines(cfg JobsConfig) ([]*engine, error) {
	if len(cfg.Jobs) == 0 {
		return nil, errors.New("no jobs")
	}
	if len(cfg.Fail) > 0 {
		return nil, fmt.Errorf("a run of several jobs takes no Config.Fail (%q): name each job's failures in its JobSpec", cfg.Fail)
	}
	engines := make([]*engine, len(cfg.Jobs))
	seen := map[string]bool{}
	for i, spec := range cfg.Jobs {
		switch {
		case spec.Name == "":
			return nil, fmt.Errorf("job %d has no name", i+1)
		case seen[spec.Name]:
			return nil, fmt.Errorf("two jobs named %q", spec.Name)
		}
		seen[spec.Name] = true
		jc := cfg.Config
		jc.Fail = spec.Fail
		e, err := newEngine(jc, spec.Name)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", spec.Name, err)
		}
		engines[i] = e
	}
	// One clock for all (newEngine gave each its own wall clock if none).
	for _, e := range engines[1:] {
		e.cfg.Clock = engines[0].cfg.Clock
	}
	return engines, nil
}

// jobsRun is the state of the Ready loop of a run of several jobs.
type jobsRun struct {
	h       *host
	engines []*engine
	res     *JobsResult
	index   map[string]int // job name -> index in engines and res.Jobs
}

// loop applies the driver's Ready values until every job ended (nil), a
// task goroutine hit a fatal error, or ctx is done. Each Ready is applied
// in the order multijob.Ready asks: every job's cancels and releases,
// then the ends of jobs, then every job's deployments (a slot one job
// gave up may go to another in the same Ready).
func (r *jobsRun) loop(ctx context.Context, d *multijob.Driver) error {
	for left := len(r.engines); left > 0; {
		select {
		case rd, ok := <-d.Ready():
			if !ok {
				if err := ctx.Err(); err != nil {
					return err
				}
				return multijob.ErrStopped
			}
			for _, jr := range rd.Jobs {
				if err := r.engine(jr.Job).release(jr.Ready); err != nil {
					return err
				}
			}
			for _, end := range rd.Ended {
				jr := &r.res.Jobs[r.index[end.Job]]
				jr.Outcome, jr.Err, jr.Ended = end.Outcome, end.Err, end.At.Sub(r.h.start)
				left--
			}
			for _, jr := range rd.Jobs {
				if err := r.engine(jr.Job).deploy(jr.Deploy); err != nil {
					return err
				}
			}
		case err := <-r.h.fatal:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// engine returns the engine of a job.
func (r *jobsRun) engine(job string) *engine { return r.engines[r.index[job]] }

// jobReporter reports a job's tasks to the multijob.Driver.
type jobReporter struct {
	d   *multijob.Driver
	job string
}

func (r jobReporter) TaskRunning(ctx context.Context, v scheduler.TaskID, attempt scheduler.Attempt) error {
	return r.d.TaskRunning(ctx, r.job, v, attempt)
}

func (r jobReporter) TaskFinished(ctx context.Context, v scheduler.TaskID, attempt scheduler.Attempt) error {
	return r.d.TaskFinished(ctx, r.job, v, attempt)
}

func (r jobReporter) TaskFailed(ctx context.Context, v scheduler.TaskID, attempt scheduler.Attempt, lost ...scheduler.PartitionID) error {
	return r.d.TaskFailed(ctx, r.job, v, attempt, lost...)
}
