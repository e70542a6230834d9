package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/admission/slurm"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// The run command runs job files for real on a Slurm cluster: the
// scheduler of each job runs on a driver, its pool's demand goes to a
// Slurm admission (package admission/slurm: every region's bulk an
// allocation), and every task is a job step in its slot's allocation, on
// its slot's node, that sleeps for the vertex's durationMs.

func newRunCommand(stdin io.Reader, mode *modeFlag) *cobra.Command {
	var (
		useSlurm    bool
		cfg         slurmRunConfig
		conf, user  string
		traceFile   string
		timeout     time.Duration
		logRequests bool
		eventsFile  string
		auditFile   string
	)
	c := &cobra.Command{
		Use:   "run --slurm [--mode M] [--partition P] [--queue-partition Q=P ...] [--trace FILE] JOB [JOB ...]",
		Short: "Run jobs for real on a Slurm cluster: every region's bulk an allocation, every task a job step",
		Long: `run executes job files on a Slurm cluster (the one SLURM_CONF names, or --slurm-conf).
Each job has its own scheduler; its regions ask for slots through the Slurm admission:
every bulk becomes one all-or-nothing Slurm job that holds an allocation, and every task
runs as a step in its slot's allocation on its slot's node (srun --overlap), sleeping for
its vertex's durationMs (times --duration-scale). Several jobs run at once and compete
for the cluster through Slurm; a job starts at its submitAtMs, and its queue picks the
partition (--queue-partition, else --partition). The trace (--trace) has the format of simulate --trace,
in real milliseconds since the start. Allocations still held at the end are cancelled.

Exit codes: 0 every job finished, 1 a job failed (the message says which and why),
2 bad input or no Slurm reachable.

` + formatsHelp,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badInput(fmt.Errorf("expected at least 1 job file argument (a path or - for standard input), got 0"))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&useSlurm, "slurm", false, "run on Slurm (the only backend so far; required)")
	c.Flags().StringVar(&cfg.Partition, "partition", "", "Slurm partition to allocate in when the job's queue is not mapped (default: the cluster's default partition)")
	c.Flags().StringToStringVar(&cfg.Partitions, "queue-partition", nil, "map a job file's queue to a Slurm partition: QUEUE=PARTITION (repeatable, or comma-separated)")
	c.Flags().StringVar(&conf, "slurm-conf", "", "slurm.conf of the cluster (default: $SLURM_CONF, or Slurm's own default)")
	c.Flags().StringVar(&user, "user", "", "submit the allocations and steps as this user (runuser; needs root)")
	c.Flags().StringVar(&traceFile, "trace", "", "write the trace as JSON Lines to FILE (- for standard output; the summary then goes to standard error)")
	c.Flags().Float64Var(&cfg.Scale, "duration-scale", 1, "multiply every task's durationMs by this factor (0 < f)")
	c.Flags().DurationVar(&cfg.IdleTimeout, "idle-timeout", 500*time.Millisecond, "give a slot nobody needs back to Slurm after this long (its allocation ends with its last slot)")
	c.Flags().DurationVar(&timeout, "timeout", 30*time.Minute, "give up (and cancel everything) after this long")
	c.Flags().BoolVar(&logRequests, "verbose", false, "log the admission's outages and refusals on standard error")
	c.Flags().StringVar(&eventsFile, "events", "", "priority changes, JSON Lines of set-priority events (the events file of simulate; t in real ms): each runs scontrol as its \"by\" user on the job's Slurm jobs, so Slurm decides")
	c.Flags().StringVar(&auditFile, "audit", "", "write one JSON line per priority change, applied or refused by Slurm")
	c.RunE = func(c *cobra.Command, args []string) error {
		if !useSlurm {
			return badInput(errors.New("run needs a backend: --slurm (simulate runs in virtual time)"))
		}
		if !(cfg.Scale > 0) {
			return badInput(fmt.Errorf("--duration-scale must be positive, not %v", cfg.Scale))
		}
		var jobs []*topology.JobGraph
		for _, a := range args {
			job, err := loadJob(a, stdin)
			if err != nil {
				return err
			}
			jobs = append(jobs, job)
		}
		if conf != "" {
			if _, err := os.Stat(conf); err != nil {
				return badInput(fmt.Errorf("--slurm-conf: %w", err))
			}
		}
		if eventsFile != "" {
			evs, err := readPriorityEvents(eventsFile)
			if err != nil {
				return badInput(err)
			}
			cfg.Events = evs
		}
		cfg.Mode = mode.mode
		cfg.Client = &slurm.ExecClient{Conf: conf, User: user}
		if logRequests {
			lc := zap.NewDevelopmentConfig()
			lc.Level = zap.NewAtomicLevelAt(zap.WarnLevel)
			lc.OutputPaths = []string{"stderr"}
			if l, err := lc.Build(); err == nil {
				cfg.Logger = l
			}
		}
		ctx, cancel := context.WithTimeout(c.Context(), timeout)
		defer cancel()
		if err := slurmReachable(ctx, cfg.Client, cfg.Partition); err != nil {
			return badInput(fmt.Errorf("no Slurm reachable: %w", err))
		}
		if auditFile != "" {
			f, err := os.Create(auditFile)
			if err != nil {
				return badInput(fmt.Errorf("cannot write %s: %w", auditFile, err))
			}
			defer f.Close()
			enc := json.NewEncoder(f)
			cfg.Audit = func(job string, at time.Duration, rec slurm.AuditRecord) {
				_ = enc.Encode(auditLine{T: at.Milliseconds(), By: rec.Principal, Job: job, SlurmJob: int64(rec.Job),
					Old: rec.Old, New: rec.New, Accepted: rec.Accepted, Reason: strings.TrimSpace(rec.Reason)})
			}
		}
		var outcomes []slurmOutcome
		write := func(w io.Writer) error {
			tw := simulator.NewTraceWriter(w)
			cfg.Trace = tw.Event
			outcomes = runOnSlurm(ctx, cfg, jobs)
			return tw.Flush()
		}
		var err error
		if traceFile != "" {
			err = writeOutput(c, traceFile, write)
		} else {
			err = write(io.Discard)
		}
		if err != nil {
			return err
		}
		return printOutcomes(summaryWriter(c, traceFile), outcomes)
	}
	return c
}

// slurmReachable checks that the partition can be described.
func slurmReachable(ctx context.Context, cl slurm.Client, partition string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, err := cl.Partition(ctx, partition)
	return err
}

// printOutcomes writes one line per job and the verdict; a failed job is
// a negative verdict.
func printOutcomes(w io.Writer, outcomes []slurmOutcome) error {
	var failed []string
	for _, o := range outcomes {
		if o.Err != nil {
			fmt.Fprintf(w, "job %s: failed after %s: %v\n", o.Name, runMillis(o.End), o.Err)
			failed = append(failed, o.Name)
			continue
		}
		fmt.Fprintf(w, "job %s: finished at %s (first deploy %s): %s as Slurm steps in %s, all on their slot's node; %s\n",
			o.Name, runMillis(o.End), runMillis(o.FirstDeploy), count(o.Steps, "task run"), count(len(o.Allocations), "allocation"), count(o.Stats.Failovers, "failover"))
	}
	if len(failed) > 0 {
		verdict := fmt.Sprintf("failed: %s", strings.Join(failed, ", "))
		fmt.Fprintln(w, verdict)
		return negative(verdict)
	}
	fmt.Fprintln(w, "finished: every job")
	return nil
}

// runMillis formats a duration as whole milliseconds.
func runMillis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

// slurmRunConfig configures runOnSlurm.
type slurmRunConfig struct {
	Mode exchange.Mode
	// Partition is the Slurm partition of a job whose queue (the job
	// file's "queue") is not in Partitions.
	Partition  string
	Partitions map[string]string
	Client     slurm.Client
	// Scale multiplies every task's duration.
	Scale float64
	// IdleTimeout is the pool's: idle slots go back to Slurm after it.
	IdleTimeout time.Duration
	// PollMin, PollMax: the adapter's polling (defaults 50 ms, 500 ms).
	PollMin, PollMax time.Duration
	// Trace receives the trace events (called under a lock).
	Trace func(simulator.Event)
	// OnError receives the adapters' errors (outages, refusals).
	OnError func(job string, err error)
	// Events are priority changes to apply during the run.
	Events []priorityEvent
	// Audit receives every priority change, applied or refused (called
	// under a lock), with its time since the start.
	Audit func(job string, at time.Duration, rec slurm.AuditRecord)
	// OnDeploy is called for every task started (a test's hook).
	OnDeploy func(job string, task string, p slurm.Placement)
	// RunID makes the Slurm job names of this run unique; "" means one
	// from the process id and the time.
	RunID  string
	Logger *zap.Logger
}

// slurmOutcome is how one job's run ended.
type slurmOutcome struct {
	Name string
	// Err is nil when the job finished; a *scheduler.RegionError when the
	// scheduler failed it, a *slurm.TooLargeError when Slurm cannot hold
	// it, or the runtime's error.
	Err              error
	FirstDeploy, End time.Duration
	// Steps counts the task runs (steps started); Allocations the Slurm
	// jobs that held its slots.
	Steps       int
	Allocations map[slurm.JobID]bool
	Stats       scheduler.Stats
	// Outages counts the adapter's *slurm.OutageError reports.
	Outages int
}

// runOnSlurm runs the jobs at once, each with its own scheduler and Slurm
// admission, until every one has finished or failed (or ctx is done).
func runOnSlurm(ctx context.Context, cfg slurmRunConfig, jobs []*topology.JobGraph) []slurmOutcome {
	if cfg.RunID == "" {
		cfg.RunID = strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixMilli()%1e8, 36)
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
	if cfg.Scale <= 0 {
		cfg.Scale = 1
	}
	var traceMu sync.Mutex
	trace := func(ev simulator.Event) {
		if cfg.Trace == nil {
			return
		}
		traceMu.Lock()
		defer traceMu.Unlock()
		cfg.Trace(ev)
	}
	if cfg.Audit != nil {
		audit := cfg.Audit
		var auditMu sync.Mutex
		cfg.Audit = func(job string, at time.Duration, rec slurm.AuditRecord) {
			auditMu.Lock()
			defer auditMu.Unlock()
			audit(job, at, rec)
		}
	}
	clk := clock.New()
	start := clk.Now()
	outcomes := make([]slurmOutcome, len(jobs))
	var wg sync.WaitGroup
	for i, job := range jobs {
		name := job.Name()
		if len(jobs) > 1 && name == "" {
			name = "job" + strconv.Itoa(i)
		}
		r := &jobRun{cfg: cfg, clk: clk, start: start, name: name, multi: len(jobs) > 1, trace: trace,
			slurmName: slurmJobName(name, cfg.RunID, i), running: map[scheduler.TaskID]*taskRun{}, inSlot: map[scheduler.SlotID]scheduler.TaskID{},
			finished: map[scheduler.TaskID]bool{},
			out:      slurmOutcome{Name: name, Allocations: map[slurm.JobID]bool{}}}
		r.rs = region.FromJob(job, cfg.Mode)
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcomes[i] = r.run(ctx)
		}()
	}
	wg.Wait()
	return outcomes
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// slurmJobName is the base of a job's Slurm job names: rs-JOB-RUNID-jI.
func slurmJobName(job, runID string, i int) string {
	job = unsafeName.ReplaceAllString(job, "-")
	if len(job) > 40 {
		job = job[:40]
	}
	return "rs-" + job + "-" + runID + "-j" + strconv.Itoa(i)
}

// jobRun is the runtime of one job.
type jobRun struct {
	cfg       slurmRunConfig
	clk       clock.Clock
	start     time.Time
	name      string
	slurmName string
	multi     bool
	rs        *region.Regions
	trace     func(simulator.Event)
	d         *scheduler.Driver
	ad        *slurm.Adapter

	fatal   chan error
	wg      sync.WaitGroup
	mu      sync.Mutex // guards out.Steps and out.Allocations, outages, finished
	running map[scheduler.TaskID]*taskRun
	// finished holds the tasks whose finish the scheduler accepted since
	// they were last deployed: a task reading a hybrid result reports its
	// own finish only after its producers' (waitHybridProducers).
	finished map[scheduler.TaskID]bool
	inSlot   map[scheduler.SlotID]scheduler.TaskID // the last task deployed in each slot
	out      slurmOutcome
}

// taskRun is one running task attempt.
type taskRun struct {
	attempt scheduler.Attempt
	slot    scheduler.SlotID
	cancel  context.CancelFunc
	done    chan struct{}
}

// since is the time since the start of the run.
func (r *jobRun) since() time.Duration { return r.clk.Since(r.start) }

// event traces one event of a task.
func (r *jobRun) event(k simulator.Kind, v scheduler.TaskID, slot int, attempt scheduler.Attempt) {
	ev := simulator.Event{At: r.since(), Kind: k, Task: r.rs.Topology().VertexName(v), Region: int(r.rs.RegionOf(v)), Slot: slot, Attempt: int(attempt)}
	if r.multi {
		ev.Job = r.name
	}
	r.trace(ev)
}

// run runs the job to its end.
func (r *jobRun) run(ctx context.Context) slurmOutcome {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.fatal = make(chan error, 1)
	s := scheduler.New(r.rs, scheduler.Config{Pool: slotpool.Config{IdleTimeout: r.cfg.IdleTimeout}, ExternalAdmission: true, Logger: r.cfg.Logger})
	r.d = scheduler.StartDriver(ctx, s, scheduler.DriverConfig{Logger: r.cfg.Logger})
	defer r.d.Stop()
	ad, err := slurm.StartAdapter(ctx, slurm.AdapterConfig{
		Core: slurm.Config{Name: r.slurmName, Queue: r.rs.Topology().Job().Submission().Queue,
			Partitions: r.cfg.Partitions, Partition: r.cfg.Partition},
		Client: r.cfg.Client, Sink: r.d, Logger: r.cfg.Logger.With(zap.String("job", r.name)),
		PollMin: r.cfg.PollMin, PollMax: r.cfg.PollMax, RetryMax: 2 * time.Second,
		OnError: r.onError,
		Auditor: func(rec slurm.AuditRecord) {
			if r.cfg.Audit != nil {
				r.cfg.Audit(r.name, r.since(), rec)
			}
		},
	})
	if err != nil {
		r.out.Err, r.out.End = err, r.since()
		return r.out
	}
	r.ad = ad
	defer func() {
		cancel()
		r.wg.Wait()
		stopCtx, stop := context.WithTimeout(context.Background(), 60*time.Second)
		defer stop()
		if err := ad.Stop(stopCtx); err != nil {
			r.cfg.Logger.Warn("cancelling the allocations", zap.Error(err))
		}
	}()
	if at := r.rs.Topology().Job().Submission().SubmitAt; at > 0 { // the job file's submitAtMs
		select {
		case <-r.clk.After(at - r.since()):
		case <-ctx.Done():
		}
	}
	r.wg.Add(1)
	go r.priorities(ctx)
	err = r.d.Start(ctx)
	if err == nil {
		err = r.loop(ctx)
	}
	r.out.End = r.since()
	if st, serr := r.d.Status(ctx); serr == nil {
		r.out.Stats = st.Stats
	}
	r.out.Err = err
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.out
	out.Allocations = map[slurm.JobID]bool{}
	for k := range r.out.Allocations {
		out.Allocations[k] = true
	}
	return out
}

// onError counts outages and fails the job on a refused ask.
func (r *jobRun) onError(err error) {
	var oe *slurm.OutageError
	if errors.As(err, &oe) {
		r.mu.Lock()
		r.out.Outages++
		r.mu.Unlock()
	} else {
		r.abort(err) // Slurm will never grant this ask
	}
	if r.cfg.OnError != nil {
		r.cfg.OnError(r.name, err)
	}
}

// abort ends the run with err (the first one wins).
func (r *jobRun) abort(err error) {
	select {
	case r.fatal <- err:
	default:
	}
}

// loop applies the driver's Ready values until the job ended.
func (r *jobRun) loop(ctx context.Context) error {
	for {
		select {
		case rd, ok := <-r.d.Ready():
			if !ok {
				return scheduler.ErrStopped
			}
			if err := r.apply(ctx, rd); err != nil {
				return err
			}
			if ended, err := rd.Job.Ended(); ended {
				return err
			}
		case err := <-r.fatal:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// apply carries out one Ready: the admission's messages, cancels,
// releases, deploys.
func (r *jobRun) apply(ctx context.Context, rd scheduler.Ready) error {
	for _, req := range rd.Requests {
		for _, s := range req.Slots {
			for _, v := range s.Members {
				r.event(simulator.Request, v, simulator.NoSlot, req.Attempt)
			}
		}
	}
	if len(rd.ToAdmission) > 0 {
		if err := r.ad.Handle(ctx, rd.ToAdmission...); err != nil {
			return err // a *slurm.TooLargeError: Slurm can never hold it
		}
	}
	for _, c := range rd.Cancel {
		if t := r.running[c.Task]; t != nil && t.attempt == c.Attempt {
			t.cancel()
			<-t.done
			delete(r.running, c.Task)
			r.event(simulator.Cancel, c.Task, int(t.slot), c.Attempt)
		}
	}
	for _, rel := range rd.Released {
		if v, ok := r.inSlot[rel.Slot]; ok {
			r.event(simulator.Release, v, int(rel.Slot), rel.Attempt)
			delete(r.inSlot, rel.Slot)
		}
	}
	for _, dep := range rd.Deploy {
		p, ok := r.ad.Placement(dep.Slot)
		if !ok {
			return fmt.Errorf("slot %d of %s has no Slurm allocation", dep.Slot, r.rs.Topology().VertexName(dep.Task))
		}
		if old := r.running[dep.Task]; old != nil {
			<-old.done // it finished or failed and is reporting it
		}
		tctx, cancel := context.WithCancel(ctx)
		t := &taskRun{attempt: dep.Attempt, slot: dep.Slot, cancel: cancel, done: make(chan struct{})}
		r.running[dep.Task] = t
		r.inSlot[dep.Slot] = dep.Task
		r.mu.Lock()
		delete(r.finished, dep.Task)
		if r.out.Steps == 0 {
			r.out.FirstDeploy = r.since()
		}
		r.out.Steps++
		r.out.Allocations[p.Job] = true
		r.mu.Unlock()
		r.event(simulator.Deploy, dep.Task, int(dep.Slot), dep.Attempt)
		if r.cfg.OnDeploy != nil {
			r.cfg.OnDeploy(r.name, r.rs.Topology().VertexName(dep.Task), p)
		}
		r.wg.Add(1)
		go r.execute(tctx, dep, p, t)
	}
	return nil
}

// stepRefusedLimit is how long a task retries a step Slurm refuses to
// start before the task fails.
const stepRefusedLimit = 30 * time.Second

// execute runs one task attempt as a Slurm step on its slot's node and
// reports it. A step refused because slurmctld is unreachable is retried
// with backoff (it did not run); any other failure fails the task.
func (r *jobRun) execute(ctx context.Context, dep scheduler.Deployment, p slurm.Placement, t *taskRun) {
	defer r.wg.Done()
	defer close(t.done)
	name := r.rs.Topology().VertexName(dep.Task)
	if err := r.d.TaskRunning(ctx, dep.Task, dep.Attempt); err != nil {
		r.report(name, "running", err)
		return
	}
	dur := time.Duration(float64(r.rs.Topology().Job().Vertex(r.rs.Topology().JobVertexOf(dep.Task)).Duration) * r.cfg.Scale)
	argv := []string{"/bin/sh", "-c", `echo "$SLURMD_NODENAME"; exec sleep "$1"`, "step", strconv.FormatFloat(dur.Seconds(), 'f', 3, 64)}
	backoff := 100 * time.Millisecond
	var refusedSince time.Time
	for {
		var out bytes.Buffer
		err := r.cfg.Client.RunStep(ctx, p, argv, &out, nil)
		if ctx.Err() != nil {
			return // canceled: the scheduler knows
		}
		if err == nil {
			if node := strings.TrimSpace(out.String()); p.Node != "" && node != p.Node {
				r.abort(fmt.Errorf("task %s ran on node %q, its slot %d is on %q", name, node, dep.Slot, p.Node))
				return
			}
			if !r.waitHybridProducers(ctx, dep.Task) {
				return // canceled while it waited
			}
			r.event(simulator.Finish, dep.Task, int(dep.Slot), dep.Attempt)
			err := r.d.TaskFinished(ctx, dep.Task, dep.Attempt)
			if err == nil {
				r.mu.Lock()
				r.finished[dep.Task] = true
				r.mu.Unlock()
			}
			r.report(name, "finished", err)
			return
		}
		// A step that did not start is tried again: while slurmctld is
		// unreachable, and for a while when Slurm refuses it (right after
		// a controller restart it does for seconds; if the allocation is
		// gone, the admission revokes the slot and the task is canceled).
		refused := errors.Is(err, slurm.ErrStepRefused)
		if refused && refusedSince.IsZero() {
			refusedSince = r.clk.Now()
		}
		if errors.Is(err, slurm.ErrUnreachable) || (refused && r.clk.Since(refusedSince) < stepRefusedLimit) {
			r.cfg.Logger.Warn("step not started, retrying", zap.String("task", name), zap.Error(err))
			select {
			case <-r.clk.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		r.cfg.Logger.Info("step failed", zap.String("task", name), zap.Error(err))
		r.event(simulator.Fail, dep.Task, int(dep.Slot), dep.Attempt)
		r.report(name, "failed", r.d.TaskFailed(ctx, dep.Task, dep.Attempt))
		return
	}
}

// waitHybridProducers waits, holding the task's slot, until the scheduler
// accepted the finish of every producer of a hybrid result task v reads: a
// consumer reads until its producers wrote their last record, and the
// scheduler refuses a finish before theirs (strategy.ErrEarlyFinish). It
// returns false if ctx ended first (the task was canceled).
func (r *jobRun) waitHybridProducers(ctx context.Context, v scheduler.TaskID) bool {
	topo := r.rs.Topology()
	jv := topo.JobVertexOf(v)
	var producers []topology.Range
	for _, e := range topo.Job().InEdges(jv) {
		if topo.PartitionType(e).IsHybrid() {
			producers = append(producers, topo.GroupOnEdge(e, topo.ConsumedGroup(e, topo.SubtaskIndex(v))).Producers)
		}
	}
	wait := 5 * time.Millisecond
	for {
		done := true
		r.mu.Lock()
		for _, ps := range producers {
			for p := ps.Start; p < ps.End && done; p++ {
				done = r.finished[scheduler.TaskID(p)]
			}
		}
		r.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-r.clk.After(wait):
		case <-ctx.Done():
			return false
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// report handles the driver's answer to a task's report: the ones seen
// when an attempt was canceled or the run ended are fine, anything else
// ends the run.
func (r *jobRun) report(task, what string, err error) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, scheduler.ErrStopped) || errors.Is(err, scheduler.ErrNotRunning) {
		return
	}
	r.abort(fmt.Errorf("%s %s: %w", what, task, err))
}

// priorityEvent is a set-priority line of an events file.
type priorityEvent struct {
	At       time.Duration
	Job      string
	Priority int64
	By       string
}

// auditLine is one line of --audit.
type auditLine struct {
	T        int64  `json:"t"`
	By       string `json:"by"`
	Job      string `json:"job"`
	SlurmJob int64  `json:"slurmJob"`
	Old      int64  `json:"old"`
	New      int64  `json:"new"`
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason,omitempty"`
}

// slurmMaxPriority is the largest priority a Slurm job can have (its
// priority is a 32-bit number; 0 holds the job).
const slurmMaxPriority = 1<<32 - 2

// readPriorityEvents reads the set-priority events of an events file
// (JSON Lines, readEvents); a kill is refused, naming it.
func readPriorityEvents(path string) ([]priorityEvent, error) {
	all, err := readEvents(path, slurmMaxPriority)
	if err != nil {
		return nil, err
	}
	evs := make([]priorityEvent, 0, len(all))
	for _, ev := range all {
		if ev.Action != admission.ActionSetPriority {
			return nil, fmt.Errorf("%s: event %q of job %q at %d ms: run --slurm applies set-priority events only", path, ev.Action, ev.Job, ev.At.Milliseconds())
		}
		evs = append(evs, priorityEvent{At: ev.At, Job: ev.Job, Priority: int64(ev.Priority), By: ev.By})
	}
	return evs, nil
}

// priorities applies the job's priority changes at their times (or, when
// the job holds no Slurm job then, as soon as it does): scontrol runs as
// the event's user on the job's Slurm jobs (Slurm decides who may raise),
// and every answer goes to the audit.
func (r *jobRun) priorities(ctx context.Context) {
	defer r.wg.Done()
	for _, ev := range r.cfg.Events {
		if ev.Job != r.name {
			continue
		}
		select {
		case <-r.clk.After(ev.At - r.since()):
		case <-ctx.Done():
			return
		}
		for len(r.ad.Jobs()) == 0 { // none yet (or between regions): the next one
			select {
			case <-r.clk.After(20 * time.Millisecond):
			case <-ctx.Done():
				return
			}
		}
		err := r.ad.SetPriority(ctx, ev.By, ev.Priority)
		r.cfg.Logger.Info("set-priority", zap.String("job", r.name), zap.String("by", ev.By), zap.Int64("priority", ev.Priority), zap.Error(err))
	}
}
