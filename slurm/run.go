package slurm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// RunConfig configures Run.
type RunConfig struct {
	// Client runs Slurm's commands; nil means an ExecClient of the
	// cluster SLURM_CONF names.
	Client *ExecClient
	// Mode is the exchange mode of the jobs' edges that pin none.
	Mode exchange.Mode
	// partition is the Slurm partition of a job whose queue (its job
	// file's "queue") is not in Partitions; "" is the cluster's default
	// partition.
	Partition  string
	Partitions map[string]string
	// Scale multiplies every task's duration (0 means 1).
	Scale float64
	// Command, if set, is the command line a task runs in its step, given
	// its job, its name (VERTEX#INDEX) and its duration (times Scale);
	// nil sleeps for the duration. It runs on the slot's node with the
	// slot's CPUs; a non-zero exit fails the task (and its region fails
	// over). Its output is not kept.
	Command func(job, task string, d time.Duration) []string
	// IdleTimeout is how long a job's pool keeps a slot none of its
	// regions can use before it goes back to Slurm.
	IdleTimeout time.Duration
	// TimeLimit is every allocation's Slurm time limit (0: the
	// partition's): Slurm ends what a runner that died leaves behind.
	TimeLimit time.Duration
	// PollMin and PollMax bound the interval between two queries of the
	// run's Slurm jobs (defaults 50 ms and 500 ms).
	PollMin, PollMax time.Duration
	// PartitionEvery is how often the partitions' node states are read
	// (default 10 s); WaitNotice how long an allocation pends before a
	// Waiting notice tells Slurm's reason (default 5 s).
	PartitionEvery, WaitNotice time.Duration
	// NameJobs makes every trace event name its job with one job too
	// (with several they always do).
	NameJobs bool
	// Trace, if set, receives the trace events, At since the start of
	// the run (called under a lock, one at a time).
	Trace func(runfile.Event)
	// Notify, if set, receives the notices: outages when they begin and
	// end, allocations that wait (called from the poller's goroutine).
	Notify func(Notice)
	// Events are priority changes and kills to apply during the run, At
	// since its start: a priority change runs scontrol as its By user on
	// the job's Slurm jobs, so that Slurm decides; a kill cancels the
	// job.
	Events []runfile.JobEvent
	// Audit, if set, receives every priority change once Slurm's answer
	// is known, with its time since the start (called one at a time).
	Audit func(job string, at time.Duration, rec AuditRecord)
	// RunID names the run: it makes its Slurm job names unique and tags
	// its allocations (Tag). "" means NewRunID().
	RunID string
	// Logger; nil means zap.NewNop().
	Logger *zap.Logger

	// client, if set, replaces Client (a test's fake Slurm).
	client slurmClient
	// onDeploy is called for every task started (a test's hook).
	onDeploy func(job, task string, p slotPlacement)
	// onStart is called once the jobs are being submitted, with the
	// poller (a test's hook).
	onStart func(*poller)
}

// Result is how a run ended.
type Result struct {
	// RunID is the run's id, as its allocations are tagged (Tag).
	RunID string
	// Jobs are the jobs' outcomes, in the order Run got them.
	Jobs []JobResult
	// Stopped says why the run stopped before every job ended (the
	// context's error when it was cancelled or timed out, or what went
	// wrong); nil when every job ended.
	Stopped error
	// Outages counts the periods during which slurmctld did not answer.
	Outages int
	// Slots is the number of slots the run had when it started: the CPUs
	// (one a slot) of the nodes in service of the partitions its jobs'
	// queues map to, a node in several of them counted once.
	Slots int
	// Events say what became of each event of RunConfig.Events applied,
	// in order: a kill or a change refused at once (an unknown or ended
	// job, a priority scontrol cannot set), or a set-priority as Slurm
	// answered it (refused if it refused it for any of the job's Slurm
	// jobs, with its reason).
	Events []EventOutcome
}

// EventOutcome is what became of one event of a run.
type EventOutcome struct {
	runfile.JobEvent
	// Old is the priority Slurm reported before an applied set-priority
	// (of the job's first Slurm job it was asked of).
	Old int64
	// Applied says whether it took effect; Reason says why not.
	Applied bool
	Reason  string
	// answered: Slurm's answer for one of the job's Slurm jobs came.
	answered bool
}

// Restart is one failover of a job's scheduler: a task failed (or was
// the first one stopped in a slot lost) and its failover strategy
// restarted regions.
type Restart struct {
	// At is when the runtime applied it, since the start of the run.
	At time.Duration
	// Task is the failed task ("C#0"), Regions the regions restarted,
	// ascending.
	Task    string
	Regions []int
}

// JobResult is how one job's run ended.
type JobResult struct {
	Name string
	// Err is nil when the job finished; a *scheduler.RegionError when
	// its scheduler failed it, a *TooLargeError when Slurm cannot hold
	// it, an *admission.KilledError, or Result.Stopped when the run
	// stopped before the job ended.
	Err error
	// FirstDeploy is when its first task started and End when it ended,
	// since the start of the run.
	FirstDeploy, End time.Duration
	// Steps counts the task runs (steps started); Allocations are the
	// Slurm jobs that held its slots, in increasing order.
	Steps       int
	Allocations []JobID
	Stats       scheduler.Stats
	// Restarts are its scheduler's failovers, in order.
	Restarts []Restart
}

// Run runs jobs on a Slurm cluster until every one has finished, failed
// or been killed, or ctx is done. The jobs share the cluster through a
// multijob.Scheduler over the Slurm admission: each job has its own
// scheduler, every region's bulk becomes one all-or-nothing Slurm job
// holding an allocation, and every task runs as a job step in its slot's
// allocation on its slot's node, sleeping for its vertex's durationMs
// times Scale. A job is submitted at its submitAtMs, in the partition
// of its queue. One poller serves the whole run.
//
// Whatever ends the run, every allocation of the run is cancelled
// before Run returns (the caller cancels ctx on SIGINT or SIGTERM), and
// every allocation carries TimeLimit and the run's tag, so that Slurm
// ends, and ExecClient.Leftovers finds, what a runner killed outright
// leaves.
//
// The error is non-nil only when the run could not start, and then
// nothing was submitted: a *ConfigError (jobs without distinct names, a
// negative Scale or TimeLimit), Slurm unreachable (errors.Is
// ErrUnreachable, or the CommandError of a cluster that cannot be
// described), or a partition of partition or Partitions that does not
// exist.
func Run(ctx context.Context, cfg RunConfig, jobs ...runfile.Job) (Result, error) {
	cfg, err := cfg.withDefaults(jobs)
	if err != nil {
		return Result{}, err
	}
	reach, cancel := context.WithTimeout(ctx, 15*time.Second)
	_, err = cfg.client.partition(reach, cfg.Partition)
	cancel()
	if err != nil {
		return Result{}, fmt.Errorf("no Slurm reachable: %w", err)
	}
	parts, err := runPartitions(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	r := newRun(cfg, jobs)
	stopped := r.run(ctx, jobs, parts)
	res := r.result(stopped)
	res.Slots = runSlots(cfg, jobs, parts)
	return res, nil
}

// runSlots counts the slots of the partitions the jobs run in: the CPUs
// a job may use of each node in service, a node in several partitions
// counted once, with the most any of them lets a job use.
func runSlots(cfg RunConfig, jobs []runfile.Job, parts []partition) int {
	used := map[string]bool{}
	for _, j := range jobs {
		name := jobConfig{Queue: j.Job.Submission().Queue, Partitions: cfg.Partitions, Partition: cfg.Partition}.PartitionName()
		for _, p := range parts {
			if p.Name == name || (name == "" && p.Default) {
				used[p.Name] = true
			}
		}
	}
	cpus := map[string]int{}
	for _, p := range parts {
		if !used[p.Name] {
			continue
		}
		for _, n := range p.Nodes {
			cpus[n.Name] = max(cpus[n.Name], p.UsableCPUs(n))
		}
	}
	total := 0
	for _, c := range cpus {
		total += c
	}
	return total
}

// withDefaults checks cfg and the jobs' names and fills in the defaults.
func (cfg RunConfig) withDefaults(jobs []runfile.Job) (RunConfig, error) {
	seen := map[string]bool{}
	for _, j := range jobs {
		if j.Name == "" || seen[j.Name] || j.Job == nil {
			return cfg, &ConfigError{Field: "jobs", Value: j.Name, Why: "every job needs a graph and a name of its own"}
		}
		seen[j.Name] = true
	}
	switch {
	case cfg.Scale < 0:
		return cfg, &ConfigError{Field: "Scale", Value: fmt.Sprint(cfg.Scale), Why: "must be at least 0"}
	case cfg.TimeLimit < 0:
		return cfg, &ConfigError{Field: "TimeLimit", Value: cfg.TimeLimit.String(), Why: "must be at least 0"}
	}
	if cfg.client == nil {
		if cfg.Client == nil {
			cfg.Client = &ExecClient{}
		}
		cfg.client = cfg.Client
	}
	if cfg.RunID == "" {
		cfg.RunID = NewRunID()
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.PollMin <= 0 {
		cfg.PollMin = 50 * time.Millisecond
	}
	if cfg.PollMax <= 0 {
		cfg.PollMax = 500 * time.Millisecond
	}
	if cfg.Scale == 0 {
		cfg.Scale = 1
	}
	return cfg, nil
}

// runPartitions describes the partitions the run may allocate in: the
// default one, partition and every mapped queue's.
func runPartitions(ctx context.Context, cfg RunConfig) ([]partition, error) {
	names := []string{"", cfg.Partition}
	for _, p := range cfg.Partitions {
		names = append(names, p)
	}
	slices.Sort(names)
	var out []partition
	seen := map[string]bool{}
	for _, n := range slices.Compact(names) {
		p, err := cfg.client.partition(ctx, n)
		if err != nil {
			if n == "" {
				continue // no default partition: every job names its own
			}
			return nil, fmt.Errorf("partition %q: %w", n, err)
		}
		if n == "" {
			p.Default = true
		}
		if !seen[p.Name] || p.Default {
			seen[p.Name] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// runner is one run of jobs on Slurm: a multijob scheduler over the
// Slurm cluster, its driver, the poller, and the tasks as steps.
type runner struct {
	cfg   RunConfig
	clk   clock.Clock
	start time.Time
	multi bool
	trace func(runfile.Event)
	d     *multijob.Driver
	pl    *poller

	fatal chan error
	wg    sync.WaitGroup
	mu    sync.Mutex // guards the outcomes' Steps, Allocations and FirstDeploy, and finished
	jobs  map[string]*jobRun
	order []string

	outMu    sync.Mutex // guards outcomes
	outcomes []EventOutcome
	auditMu  sync.Mutex // guards calls of cfg.Audit
}

// jobRun is the runtime's view of one job.
type jobRun struct {
	// submitted is closed once the job was submitted (or the run ended):
	// its events wait for it.
	submitted chan struct{}
	rs        *region.Regions
	out       JobResult
	allocs    map[JobID]bool
	ended     bool
	running   map[scheduler.TaskID]*taskRun
	inSlot    map[scheduler.SlotID]scheduler.TaskID // the last task deployed in each slot
	// finished holds the tasks whose finish the scheduler accepted since
	// they were last deployed (guarded by runner.mu): a task reading a
	// hybrid result reports its own finish only after its producers'
	// (waitHybridProducers).
	finished map[scheduler.TaskID]bool
	// asked holds the open requests of the trace: the attempt each task
	// asked for a slot with and was not deployed in (withdrawn when its
	// region restarts, it asks again for another attempt, or the job
	// ends).
	asked map[scheduler.TaskID]scheduler.Attempt
}

// taskRun is one running task attempt.
type taskRun struct {
	attempt scheduler.Attempt
	slot    scheduler.SlotID
	cancel  context.CancelFunc
	done    chan struct{}
}

// newRun prepares the run of jobs.
func newRun(cfg RunConfig, jobs []runfile.Job) *runner {
	r := &runner{cfg: cfg, clk: clock.New(), multi: len(jobs) > 1 || cfg.NameJobs, fatal: make(chan error, 1), jobs: map[string]*jobRun{}}
	r.start = r.clk.Now()
	var traceMu sync.Mutex
	r.trace = func(ev runfile.Event) {
		if cfg.Trace == nil {
			return
		}
		traceMu.Lock()
		defer traceMu.Unlock()
		cfg.Trace(ev)
	}
	for _, j := range jobs {
		r.jobs[j.Name] = &jobRun{submitted: make(chan struct{}), rs: region.FromJob(j.Job, cfg.Mode), running: map[scheduler.TaskID]*taskRun{},
			finished: map[scheduler.TaskID]bool{}, inSlot: map[scheduler.SlotID]scheduler.TaskID{}, asked: map[scheduler.TaskID]scheduler.Attempt{},
			out: JobResult{Name: j.Name}, allocs: map[JobID]bool{}}
		r.order = append(r.order, j.Name)
	}
	return r
}

// result gathers the jobs' outcomes once the run stopped (why, if
// before every job ended).
func (r *runner) result(stopped error) Result {
	res := Result{RunID: r.cfg.RunID, Stopped: stopped, Jobs: make([]JobResult, len(r.order))}
	r.outMu.Lock()
	for _, o := range r.outcomes {
		if o.Applied && o.Action == admission.ActionSetPriority && !o.answered {
			o.Applied, o.Reason = false, "Slurm had not answered when the run ended"
		}
		res.Events = append(res.Events, o)
	}
	r.outMu.Unlock()
	if r.pl != nil {
		res.Outages = len(r.pl.Outages())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, name := range r.order {
		jr := r.jobs[name]
		if !jr.ended {
			jr.out.Err, jr.out.End = stopped, r.since()
		}
		res.Jobs[i] = jr.out
		for id := range jr.allocs {
			res.Jobs[i].Allocations = append(res.Jobs[i].Allocations, id)
		}
		slices.Sort(res.Jobs[i].Allocations)
	}
	return res
}

// since is the time since the start of the run.
func (r *runner) since() time.Duration { return r.clk.Since(r.start) }

// run runs the jobs; it returns why it stopped before every job ended
// (nil if they all did).
func (r *runner) run(ctx context.Context, jobs []runfile.Job, parts []partition) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cl, err := newCluster(clusterConfig{Run: r.cfg.RunID, Partitions: r.cfg.Partitions, Partition: r.cfg.Partition,
		TimeLimit: r.cfg.TimeLimit, Auditor: func(rec AuditRecord) {
			r.answered(rec)
			r.cfg.Logger.Info("set-priority", zap.String("job", rec.RuntimeJob), zap.String("by", rec.Principal),
				zap.Int64("priority", rec.New), zap.Bool("accepted", rec.Accepted), zap.String("reason", rec.Reason))
			if r.cfg.Audit != nil {
				r.auditMu.Lock()
				defer r.auditMu.Unlock()
				r.cfg.Audit(rec.RuntimeJob, r.since(), rec)
			}
		}}, parts)
	if err != nil {
		return err
	}
	ms, err := multijob.New(multijob.Config{Cluster: cl, Jobs: scheduler.Config{Pool: slotpool.Config{IdleTimeout: r.cfg.IdleTimeout}}, Logger: r.cfg.Logger})
	if err != nil {
		return err
	}
	// The driver and the poller outlive ctx: when it ends, the poller
	// still cancels every allocation (stop) before both stop.
	keep := context.WithoutCancel(ctx)
	r.d = multijob.StartDriver(keep, ms, multijob.DriverConfig{Clock: r.clk, Logger: r.cfg.Logger})
	r.pl, err = startPoller(keep, pollerConfig{Cluster: cl, Inputs: r.d, Client: r.cfg.client, Clock: r.clk,
		Logger: r.cfg.Logger, PollMin: r.cfg.PollMin, PollMax: r.cfg.PollMax, RetryMax: 2 * time.Second, Notify: r.cfg.Notify,
		PartitionEvery: r.cfg.PartitionEvery, WaitNotice: r.cfg.WaitNotice})
	if err != nil {
		r.d.Stop()
		return err
	}
	defer func() {
		// Whatever happened, nothing stays allocated: the tasks stop, the
		// poller cancels every allocation of the run (retrying while
		// slurmctld does not answer), then the driver stops.
		cancel()
		r.wg.Wait()
		stopCtx, stop := context.WithTimeout(context.Background(), 60*time.Second)
		defer stop()
		if err := r.pl.Stop(stopCtx); err != nil {
			r.cfg.Logger.Warn("cancelling the allocations", zap.String("error", err.Error()))
		}
		r.d.Stop()
	}()
	for _, j := range jobs {
		r.wg.Add(1)
		go r.submit(ctx, j)
	}
	r.wg.Add(1)
	go r.events(ctx)
	if r.cfg.onStart != nil {
		r.cfg.onStart(r.pl)
	}
	return r.loop(ctx)
}

// submit submits a job at its submitAtMs.
func (r *runner) submit(ctx context.Context, j runfile.Job) {
	defer r.wg.Done()
	jr := r.jobs[j.Name]
	defer close(jr.submitted)
	sub := j.Job.Submission()
	if sub.SubmitAt > 0 {
		select {
		case <-r.clk.After(sub.SubmitAt - r.since()):
		case <-ctx.Done():
			return
		}
	}
	err := r.d.Submit(ctx, multijob.JobSpec{JobSpec: admission.JobSpec{Name: j.Name, Queue: sub.Queue, User: sub.User, Priority: sub.Priority}, Regions: jr.rs})
	if err != nil && ctx.Err() == nil {
		r.abort(fmt.Errorf("submitting %s: %w", j.Name, err))
	}
	r.pl.Poke()
}

// events applies the run's priority changes and kills at their times:
// Slurm decides who may change a priority (scontrol runs as the event's
// user), and every answer goes to the audit.
func (r *runner) events(ctx context.Context) {
	defer r.wg.Done()
	for _, ev := range r.cfg.Events {
		select {
		case <-r.clk.After(ev.At - r.since()):
		case <-ctx.Done():
			return
		}
		if jr := r.jobs[ev.Job]; jr != nil {
			if at := jr.rs.Topology().Job().Submission().SubmitAt; ev.At < at {
				r.notArrived(ev, at)
				continue
			}
			<-jr.submitted // an event at the job's submission comes after it
		}
		by := admission.Principal{Name: ev.By}
		// Its outcome is there before Slurm is asked: Slurm's answer
		// (answered) may come before the call returns.
		i := r.asking(ev)
		var err error
		switch ev.Action {
		case admission.ActionSetPriority:
			err = r.d.SetPriority(ctx, by, ev.Job, ev.Priority)
		case admission.ActionKill:
			err = r.d.Kill(ctx, by, ev.Job)
		}
		r.cfg.Logger.Info("event", zap.Stringer("action", ev.Action), zap.String("job", ev.Job), zap.String("by", ev.By), zap.Error(err))
		r.outcome(i, err)
		r.pl.Poke()
	}
}

// notArrived refuses an event for a job that arrives only at at, after
// it, as simulate does: its outcome, and an audit record for a priority
// change (the run's audit records priority changes).
func (r *runner) notArrived(ev runfile.JobEvent, at time.Duration) {
	reason := fmt.Sprintf("the job has not arrived yet (it arrives at %d ms)", at.Milliseconds())
	r.cfg.Logger.Info("event", zap.Stringer("action", ev.Action), zap.String("job", ev.Job), zap.String("by", ev.By), zap.String("refused", reason))
	if ev.Action == admission.ActionSetPriority && r.cfg.Audit != nil {
		r.auditMu.Lock()
		r.cfg.Audit(ev.Job, r.since(), AuditRecord{At: r.clk.Now(), Principal: ev.By, RuntimeJob: ev.Job, New: int64(ev.Priority), Reason: reason})
		r.auditMu.Unlock()
	}
	r.traceRefused(ev, reason)
	r.outMu.Lock()
	defer r.outMu.Unlock()
	r.outcomes = append(r.outcomes, EventOutcome{JobEvent: ev, Reason: reason})
}

// traceRefused traces the refusal of an event now, as simulate does.
func (r *runner) traceRefused(ev runfile.JobEvent, reason string) {
	r.trace(runfile.Event{At: r.since(), Kind: runfile.Refused, Job: ev.Job, By: ev.By, Reason: fmt.Sprintf("%s: %s", ev.Action, reason),
		Slot: runfile.NoSlot, Region: runfile.NoRegion})
}

// asking records the outcome of an event about to be applied, applied
// until said otherwise (outcome, answered), and returns its index.
func (r *runner) asking(ev runfile.JobEvent) int {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	r.outcomes = append(r.outcomes, EventOutcome{JobEvent: ev, Applied: true})
	return len(r.outcomes) - 1
}

// outcome records what became of event i, applied (err: why it was
// refused at once); a set-priority asked of Slurm waits for its answer
// (answered).
func (r *runner) outcome(i int, err error) {
	if err == nil {
		return
	}
	reason := err.Error()
	if re := (*admission.RefusedError)(nil); errors.As(err, &re) {
		reason = re.Reason
	}
	r.outMu.Lock()
	o := &r.outcomes[i]
	o.Applied, o.Reason = false, reason
	ev := o.JobEvent
	r.outMu.Unlock()
	r.traceRefused(ev, reason)
}

// answered applies Slurm's answer to a priority change to the outcome of
// the last set-priority of its job, user and priority: the first answer
// tells the priority before it; one refusal refuses it.
func (r *runner) answered(rec AuditRecord) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	for i := len(r.outcomes) - 1; i >= 0; i-- {
		o := &r.outcomes[i]
		if o.Action != admission.ActionSetPriority || o.Job != rec.RuntimeJob || o.By != rec.Principal || int64(o.Priority) != rec.New {
			continue
		}
		if !o.Applied && !o.answered {
			continue // refused before Slurm was asked
		}
		if !o.answered {
			o.Old, o.answered = rec.Old, true
		}
		if !rec.Accepted && o.Applied {
			o.Applied, o.Reason = false, cmp.Or(strings.TrimSpace(rec.Reason), "refused by Slurm")
			r.traceRefused(o.JobEvent, o.Reason)
		}
		return
	}
}

// abort ends the run with err (the first one wins).
func (r *runner) abort(err error) {
	select {
	case r.fatal <- err:
	default:
	}
}

// loop applies the driver's Ready values until every job ended.
func (r *runner) loop(ctx context.Context) error {
	left := len(r.jobs)
	for left > 0 {
		select {
		case rd, ok := <-r.d.Ready():
			if !ok {
				return multijob.ErrStopped
			}
			left -= r.apply(ctx, rd)
			r.pl.Poke()
		case err := <-r.fatal:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
