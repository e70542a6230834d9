package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/admission/slurm"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
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
The jobs share the cluster through the multi-job scheduler with Slurm as its admission:
each job has its own scheduler, every region's bulk becomes one all-or-nothing Slurm job
that holds an allocation, and every task runs as a step in its slot's allocation on its
slot's node (srun --overlap), sleeping for its vertex's durationMs (times
--duration-scale). Slurm decides who gets the cluster; a job starts at its submitAtMs,
and its queue picks the partition (--queue-partition, else --partition). One poller
serves the whole run: one squeue per poll whatever the number of jobs.

Nothing is left behind: SIGINT and SIGTERM cancel every allocation of the run before
run exits; every allocation has a Slurm time limit (--time-limit), so that Slurm ends
it even after a SIGKILL; and every allocation is tagged with the run (sbatch --comment),
so that "regionsched leftovers --slurm" finds and cancels what a dead run left.

What Slurm does is said as it happens: one line when the controller stops answering and
one when it is back (with the outage's length), an allocation pending for more than 5 s
with Slurm's reason, and a summary of the outages at the end. A region that can no
longer fit (its partition's nodes drained or down) fails its job at once, naming the
nodes. The trace (--trace) has the format of simulate --trace, in real milliseconds since
the start.

Exit codes: 0 every job finished, 1 a job failed or was killed (the message says which
and why) or the run was interrupted, 2 bad input or no Slurm reachable.

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
	c.Flags().StringVar(&eventsFile, "events", "", "priority changes and kills, JSON Lines (the events file of simulate; t in real ms): a set-priority runs scontrol as its \"by\" user on the job's Slurm jobs, so Slurm decides; a kill cancels the job")
	c.Flags().StringVar(&auditFile, "audit", "", "write one JSON line per priority change, applied or refused by Slurm (judged by the priority Slurm reports afterwards)")
	c.Flags().DurationVar(&cfg.TimeLimit, "time-limit", 0, "Slurm time limit of every allocation, so that Slurm ends what a runner killed with SIGKILL leaves (default: --timeout plus a minute)")
	c.RunE = func(c *cobra.Command, args []string) error {
		if !useSlurm {
			return badInput(errors.New("run needs a backend: --slurm (simulate runs in virtual time)"))
		}
		if !(cfg.Scale > 0) {
			return badInput(fmt.Errorf("--duration-scale must be positive, not %v", cfg.Scale))
		}
		if cfg.TimeLimit < 0 {
			return badInput(fmt.Errorf("--time-limit must be at least 0, not %v", cfg.TimeLimit))
		}
		if cfg.TimeLimit == 0 {
			cfg.TimeLimit = timeout + time.Minute
		}
		jobs, err := (&jobsRun{}).loadJobs(args, stdin)
		if err != nil {
			return err
		}
		if conf != "" {
			if _, err := os.Stat(conf); err != nil {
				return badInput(fmt.Errorf("--slurm-conf: %w", err))
			}
		}
		if eventsFile != "" {
			evs, err := readSlurmEvents(eventsFile, jobNames(jobs))
			if err != nil {
				return badInput(err)
			}
			cfg.Events = evs
		}
		cfg.Mode = mode.mode
		cfg.Client = &slurm.ExecClient{Conf: conf, User: user}
		if logRequests {
			cfg.Logger = stderrLogger(c.ErrOrStderr())
		}
		// SIGINT and SIGTERM end the run: every allocation is cancelled
		// before the command exits.
		sigCtx, stopSignals := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
		defer stopSignals()
		ctx, cancel := context.WithTimeout(sigCtx, timeout)
		defer cancel()
		if err := slurmReachable(ctx, cfg.Client, cfg.Partition); err != nil {
			return badInput(fmt.Errorf("no Slurm reachable: %w", err))
		}
		if _, err := slurmPartitions(ctx, cfg); err != nil { // a mapped queue's partition
			return badInput(fmt.Errorf("--queue-partition: %w", err))
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
		sum := summaryWriter(c, traceFile)
		notes := &noticePrinter{w: sum}
		cfg.Notify = notes.print
		cfg.RunID = runID()
		fmt.Fprintf(sum, "run %s: allocations tagged %s, time limit %s (regionsched leftovers --slurm finds them)\n",
			cfg.RunID, slurm.Tag(cfg.RunID), cfg.TimeLimit)
		var outcomes []slurmOutcome
		write := func(w io.Writer) error {
			tw := runfile.NewTraceWriter(w)
			cfg.Trace = tw.Event
			outcomes = runOnSlurm(ctx, cfg, jobs)
			return tw.Flush()
		}
		if traceFile != "" {
			err = writeOutput(c, traceFile, write)
		} else {
			err = write(io.Discard)
		}
		if err != nil {
			return err
		}
		notes.summary()
		if sigCtx.Err() != nil {
			fmt.Fprintln(sum, "interrupted: every allocation of the run was cancelled")
		}
		return printOutcomes(sum, outcomes)
	}
	return c
}

// stderrLogger logs warnings and above on w, one line each, without
// stack traces.
func stderrLogger(w io.Writer) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.StacktraceKey = ""
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(w), zap.WarnLevel)
	return zap.New(core)
}

// noticePrinter prints the poller's notices as they come, one line each:
// an outage when it begins and when it ends (with its length), an
// allocation that waits (with Slurm's reason); and a summary of the
// outages at the end.
type noticePrinter struct {
	mu      sync.Mutex
	w       io.Writer
	outages []time.Duration
	open    bool
}

// print prints one notice.
func (n *noticePrinter) print(nt slurm.Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch nt.Kind {
	case slurm.OutageBegan:
		n.open = true
		fmt.Fprintf(n.w, "slurm: controller unreachable (%s); retrying\n", slurmMessage(nt.Err))
	case slurm.OutageEnded:
		n.open = false
		n.outages = append(n.outages, nt.Duration)
		fmt.Fprintf(n.w, "slurm: controller answering again after %s (%s failed meanwhile)\n", roundMs(nt.Duration), count(nt.Failures, "command"))
	case slurm.Waiting:
		reason := nt.Wait.Reason
		if reason == "" {
			reason = "no reason given"
		}
		fmt.Fprintf(n.w, "slurm: job %s: allocation %s (Slurm job %d) pending for %s: %s\n", nt.Job, nt.Wait.Name, nt.Wait.Job, roundMs(nt.Duration), reason)
	}
}

// slurmMessage is what a failed Slurm command said (the last line of its
// standard error), or the error itself.
func slurmMessage(err error) string {
	var ce *slurm.CommandError
	if errors.As(err, &ce) {
		if msg := strings.TrimSpace(ce.Stderr); msg != "" {
			lines := strings.Split(msg, "\n")
			last := strings.TrimSpace(lines[len(lines)-1])
			if strings.HasPrefix(last, ce.Command+":") {
				return last
			}
			return ce.Command + ": " + last
		}
		return ce.Command + ": no answer in time"
	}
	return err.Error()
}

// summary prints the outages of the run, if any.
func (n *noticePrinter) summary() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.outages) == 0 && !n.open {
		return
	}
	var total time.Duration
	for _, d := range n.outages {
		total += d
	}
	line := fmt.Sprintf("slurm outages: %d, %s in all", len(n.outages), roundMs(total))
	if n.open {
		line += "; the last one had not ended"
	}
	fmt.Fprintln(n.w, line)
}

// roundMs rounds a duration to milliseconds for printing.
func roundMs(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

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
	// IdleTimeout is how long a job's pool keeps a slot none of its
	// regions can use before it goes back to Slurm.
	IdleTimeout time.Duration
	// TimeLimit is every allocation's Slurm time limit (0: the
	// partition's): Slurm ends what a runner that died leaves behind.
	TimeLimit time.Duration
	// PollMin, PollMax: the poller's (defaults 50 ms, 500 ms).
	PollMin, PollMax time.Duration
	// PartitionEvery and WaitNotice are the poller's (defaults 10 s and
	// 5 s): how often node states are read, and how long an allocation
	// pends before its reason is told.
	PartitionEvery, WaitNotice time.Duration
	// Trace receives the trace events (called under a lock).
	Trace func(runfile.Event)
	// Notify receives the poller's notices: outages, recoveries, long
	// waits (called from its goroutine).
	Notify func(slurm.Notice)
	// Events are priority changes and kills to apply during the run.
	Events []runfile.JobEvent
	// Audit receives every priority change, applied or refused (called
	// under a lock), with its time since the start.
	Audit func(job string, at time.Duration, rec slurm.AuditRecord)
	// OnDeploy is called for every task started (a test's hook).
	OnDeploy func(job string, task string, p slurm.Placement)
	// OnStart is called once the run's jobs are submitted, with the
	// poller (a test's hook).
	OnStart func(*slurm.Poller)
	// RunID makes the Slurm job names of this run unique and tags its
	// allocations; "" means runID().
	RunID  string
	Logger *zap.Logger
}

// slurmJob is one job of a run, named as in simulate.
type slurmJob = runfile.Job

// slurmOutcome is how one job's run ended.
type slurmOutcome struct {
	Name string
	// Err is nil when the job finished; a *scheduler.RegionError when the
	// scheduler failed it, a *slurm.TooLargeError when Slurm cannot hold
	// it, an *admission.KilledError, or the runtime's error.
	Err              error
	FirstDeploy, End time.Duration
	// Steps counts the task runs (steps started); Allocations the Slurm
	// jobs that held its slots.
	Steps       int
	Allocations map[slurm.JobID]bool
	Stats       scheduler.Stats
	// Outages counts the outages of slurmctld during the run (the same
	// for every job).
	Outages int
}

// runID names a run: host, process id and start time, so that a run's
// leftovers can be told from a live run's (leftovers).
func runID() string {
	return thisHost() + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixMilli()%1e8, 36)
}

// thisHost is this machine's short host name as a run id holds it
// ("host" if it has none), for runID and leftovers alike.
func thisHost() string {
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	if host = slurm.SafeName(host); host == "" {
		return "host"
	}
	return host
}

// slurmRun is one run of jobs on Slurm: a multijob scheduler over the
// Slurm cluster, its driver, the poller, and the tasks as steps.
type slurmRun struct {
	cfg   slurmRunConfig
	clk   clock.Clock
	start time.Time
	multi bool
	trace func(runfile.Event)
	d     *multijob.Driver
	pl    *slurm.Poller

	fatal chan error
	wg    sync.WaitGroup
	mu    sync.Mutex // guards outs' Steps, Allocations and FirstDeploy
	jobs  map[string]*slurmJobRun
	order []string
}

// slurmJobRun is the runtime's view of one job.
type slurmJobRun struct {
	// submitted is closed once the job was submitted (or the run ended):
	// its events wait for it.
	submitted chan struct{}
	rs        *region.Regions
	out       slurmOutcome
	ended     bool
	running   map[scheduler.TaskID]*taskRun
	inSlot    map[scheduler.SlotID]scheduler.TaskID // the last task deployed in each slot
	// finished holds the tasks whose finish the scheduler accepted since
	// they were last deployed (guarded by slurmRun.mu): a task reading a
	// hybrid result reports its own finish only after its producers'
	// (waitHybridProducers).
	finished map[scheduler.TaskID]bool
}

// taskRun is one running task attempt.
type taskRun struct {
	attempt scheduler.Attempt
	slot    scheduler.SlotID
	cancel  context.CancelFunc
	done    chan struct{}
}

// runOnSlurm runs the jobs on one Slurm cluster, each submitted at its
// submitAtMs, until every one has finished, failed or been killed (or
// ctx is done: then everything still allocated is cancelled). The jobs'
// names must be distinct.
func runOnSlurm(ctx context.Context, cfg slurmRunConfig, jobs []slurmJob) []slurmOutcome {
	if cfg.RunID == "" {
		cfg.RunID = runID()
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
	r := &slurmRun{cfg: cfg, clk: clock.New(), multi: len(jobs) > 1, fatal: make(chan error, 1), jobs: map[string]*slurmJobRun{}}
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
		jr := &slurmJobRun{submitted: make(chan struct{}), rs: region.FromJob(j.Job, cfg.Mode), running: map[scheduler.TaskID]*taskRun{},
			finished: map[scheduler.TaskID]bool{},
			inSlot:   map[scheduler.SlotID]scheduler.TaskID{}, out: slurmOutcome{Name: j.Name, Allocations: map[slurm.JobID]bool{}}}
		r.jobs[j.Name] = jr
		r.order = append(r.order, j.Name)
	}
	err := r.run(ctx, jobs)
	outs := make([]slurmOutcome, len(jobs))
	outages := 0
	if r.pl != nil {
		outages = len(r.pl.Outages())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, name := range r.order {
		jr := r.jobs[name]
		if !jr.ended {
			jr.out.Err, jr.out.End = err, r.since()
		}
		jr.out.Outages = outages
		outs[i] = jr.out
		outs[i].Allocations = maps.Clone(jr.out.Allocations)
	}
	return outs
}

// since is the time since the start of the run.
func (r *slurmRun) since() time.Duration { return r.clk.Since(r.start) }

// run runs the jobs; it returns why it stopped before every job ended
// (nil if they all did).
func (r *slurmRun) run(ctx context.Context, jobs []slurmJob) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	parts, err := slurmPartitions(ctx, r.cfg)
	if err != nil {
		return err
	}
	auditMu := sync.Mutex{}
	cl, err := slurm.NewCluster(slurm.ClusterConfig{Run: r.cfg.RunID, Partitions: r.cfg.Partitions, Partition: r.cfg.Partition,
		TimeLimit: r.cfg.TimeLimit, Auditor: func(rec slurm.AuditRecord) {
			r.cfg.Logger.Info("set-priority", zap.String("job", rec.RuntimeJob), zap.String("by", rec.Principal),
				zap.Int64("priority", rec.New), zap.Bool("accepted", rec.Accepted), zap.String("reason", rec.Reason))
			if r.cfg.Audit != nil {
				auditMu.Lock()
				defer auditMu.Unlock()
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
	// still cancels every allocation (Stop) before both stop.
	keep := context.WithoutCancel(ctx)
	r.d = multijob.StartDriver(keep, ms, multijob.DriverConfig{Clock: r.clk, Logger: r.cfg.Logger})
	r.pl, err = slurm.StartPoller(keep, slurm.PollerConfig{Cluster: cl, Inputs: r.d, Client: r.cfg.Client, Clock: r.clk,
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
	if r.cfg.OnStart != nil {
		r.cfg.OnStart(r.pl)
	}
	return r.loop(ctx)
}

// slurmPartitions describes the partitions the run may allocate in: the
// default one, --partition and every mapped queue's.
func slurmPartitions(ctx context.Context, cfg slurmRunConfig) ([]slurm.Partition, error) {
	names := []string{"", cfg.Partition}
	for _, p := range cfg.Partitions {
		names = append(names, p)
	}
	slices.Sort(names)
	var out []slurm.Partition
	seen := map[string]bool{}
	for _, n := range slices.Compact(names) {
		p, err := cfg.Client.Partition(ctx, n)
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

// submit submits a job at its submitAtMs.
func (r *slurmRun) submit(ctx context.Context, j slurmJob) {
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

// events applies the events file's priority changes and kills at their
// times: Slurm decides who may change a priority (scontrol runs as the
// event's user), and every answer goes to the audit.
func (r *slurmRun) events(ctx context.Context) {
	defer r.wg.Done()
	for _, ev := range r.cfg.Events {
		select {
		case <-r.clk.After(ev.At - r.since()):
		case <-ctx.Done():
			return
		}
		if jr := r.jobs[ev.Job]; jr != nil {
			<-jr.submitted // an event at the job's submission comes after it
		}
		by := admission.Principal{Name: ev.By}
		var err error
		switch ev.Action {
		case admission.ActionSetPriority:
			err = r.d.SetPriority(ctx, by, ev.Job, ev.Priority)
		case admission.ActionKill:
			err = r.d.Kill(ctx, by, ev.Job)
		}
		r.cfg.Logger.Info("event", zap.Stringer("action", ev.Action), zap.String("job", ev.Job), zap.String("by", ev.By), zap.Error(err))
		r.pl.Poke()
	}
}

// abort ends the run with err (the first one wins).
func (r *slurmRun) abort(err error) {
	select {
	case r.fatal <- err:
	default:
	}
}

// loop applies the driver's Ready values until every job ended.
func (r *slurmRun) loop(ctx context.Context) error {
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

// apply carries out one Ready (every job's cancels, then the ends, then
// the deploys) and returns how many jobs ended.
func (r *slurmRun) apply(ctx context.Context, rd multijob.Ready) int {
	for _, jrd := range rd.Jobs {
		jr := r.jobs[jrd.Job]
		for _, req := range jrd.Requests {
			for _, s := range req.Slots {
				for _, v := range s.Members {
					r.event(jrd.Job, jr, runfile.Request, v, runfile.NoSlot, req.Attempt)
				}
			}
		}
		for _, c := range jrd.Cancel {
			if t := jr.running[c.Task]; t != nil && t.attempt == c.Attempt {
				t.cancel()
				<-t.done
				delete(jr.running, c.Task)
				r.event(jrd.Job, jr, runfile.Cancel, c.Task, int(t.slot), c.Attempt)
			}
		}
		for _, rel := range jrd.Released {
			if v, ok := jr.inSlot[rel.Slot]; ok {
				r.event(jrd.Job, jr, runfile.Release, v, int(rel.Slot), rel.Attempt)
				delete(jr.inSlot, rel.Slot)
			}
		}
	}
	ended := 0
	for _, end := range rd.Ended {
		jr := r.jobs[end.Job]
		if jr == nil || jr.ended {
			continue
		}
		ended++
		jr.ended = true
		for v, t := range jr.running {
			t.cancel()
			<-t.done
			delete(jr.running, v)
		}
		if st, err := r.d.Status(ctx, end.Job); err == nil {
			jr.out.Stats = st.Scheduler.Stats
		}
		r.mu.Lock()
		jr.out.Err, jr.out.End = end.Err, r.since()
		r.mu.Unlock()
	}
	for _, jrd := range rd.Jobs {
		jr := r.jobs[jrd.Job]
		for _, dep := range jrd.Deploy {
			r.deploy(ctx, jrd.Job, jr, dep)
		}
	}
	return ended
}

// deploy starts one task as a step in its slot's allocation.
func (r *slurmRun) deploy(ctx context.Context, job string, jr *slurmJobRun, dep scheduler.Deployment) {
	name := jr.rs.Topology().VertexName(dep.Task)
	p, ok := r.pl.Placement(ctx, job, dep.Slot)
	if !ok {
		if ctx.Err() == nil {
			r.abort(fmt.Errorf("job %s: slot %d of %s has no Slurm allocation", job, dep.Slot, name))
		}
		return
	}
	if old := jr.running[dep.Task]; old != nil {
		<-old.done // it finished or failed and is reporting it
	}
	tctx, cancel := context.WithCancel(ctx)
	t := &taskRun{attempt: dep.Attempt, slot: dep.Slot, cancel: cancel, done: make(chan struct{})}
	jr.running[dep.Task] = t
	jr.inSlot[dep.Slot] = dep.Task
	r.mu.Lock()
	delete(jr.finished, dep.Task)
	if jr.out.Steps == 0 {
		jr.out.FirstDeploy = r.since()
	}
	jr.out.Steps++
	jr.out.Allocations[p.Job] = true
	r.mu.Unlock()
	if dep.Shared { // its region asked the pool for nothing: traced as asking, served at once
		r.event(job, jr, runfile.Request, dep.Task, runfile.NoSlot, dep.Attempt)
	}
	ev := r.taskEvent(job, jr, runfile.Deploy, dep.Task, int(dep.Slot), dep.Attempt)
	ev.Shared = dep.Shared
	r.trace(ev)
	if r.cfg.OnDeploy != nil {
		r.cfg.OnDeploy(job, name, p)
	}
	r.wg.Add(1)
	go r.execute(tctx, job, jr, dep, p, t)
}

// event traces one event of a task.
func (r *slurmRun) event(job string, jr *slurmJobRun, k runfile.Kind, v scheduler.TaskID, slot int, attempt scheduler.Attempt) {
	r.trace(r.taskEvent(job, jr, k, v, slot, attempt))
}

// taskEvent is a trace event of a task.
func (r *slurmRun) taskEvent(job string, jr *slurmJobRun, k runfile.Kind, v scheduler.TaskID, slot int, attempt scheduler.Attempt) runfile.Event {
	ev := runfile.Event{At: r.since(), Kind: k, Task: jr.rs.Topology().VertexName(v), Region: int(jr.rs.RegionOf(v)), Slot: slot, Attempt: int(attempt)}
	if r.multi {
		ev.Job = job
	}
	return ev
}

// stepRefusedLimit is how long a task retries a step Slurm refuses to
// start before the task fails.
const stepRefusedLimit = 30 * time.Second

// execute runs one task attempt as a Slurm step on its slot's node and
// reports it. A step refused because slurmctld is unreachable is retried
// with backoff (it did not run); any other failure fails the task.
func (r *slurmRun) execute(ctx context.Context, job string, jr *slurmJobRun, dep scheduler.Deployment, p slurm.Placement, t *taskRun) {
	defer r.wg.Done()
	defer close(t.done)
	topo := jr.rs.Topology()
	name := topo.VertexName(dep.Task)
	if err := r.d.TaskRunning(ctx, job, dep.Task, dep.Attempt); err != nil {
		r.report(job, name, "running", err)
		return
	}
	dur := time.Duration(float64(topo.Job().Vertex(topo.JobVertexOf(dep.Task)).Duration) * r.cfg.Scale)
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
				r.abort(fmt.Errorf("job %s: task %s ran on node %q, its slot %d is on %q", job, name, node, dep.Slot, p.Node))
				return
			}
			if !r.waitHybridProducers(ctx, jr, dep.Task) {
				return // canceled while it waited
			}
			r.event(job, jr, runfile.Finish, dep.Task, int(dep.Slot), dep.Attempt)
			err := r.d.TaskFinished(ctx, job, dep.Task, dep.Attempt)
			if err == nil {
				r.mu.Lock()
				jr.finished[dep.Task] = true
				r.mu.Unlock()
			}
			r.report(job, name, "finished", err)
			r.pl.Poke()
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
			r.cfg.Logger.Info("step not started, retrying", zap.String("job", job), zap.String("task", name), zap.String("error", err.Error()))
			select {
			case <-r.clk.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		r.cfg.Logger.Info("step failed", zap.String("job", job), zap.String("task", name), zap.String("error", err.Error()))
		r.event(job, jr, runfile.Fail, dep.Task, int(dep.Slot), dep.Attempt)
		r.report(job, name, "failed", r.d.TaskFailed(ctx, job, dep.Task, dep.Attempt))
		r.pl.Poke()
		return
	}
}

// waitHybridProducers waits, holding the task's slot, until the scheduler
// accepted the finish of every producer of a hybrid result task v reads: a
// consumer reads until its producers wrote their last record, and the
// scheduler refuses a finish before theirs (strategy.ErrEarlyFinish). It
// returns false if ctx ended first (the task was canceled).
func (r *slurmRun) waitHybridProducers(ctx context.Context, jr *slurmJobRun, v scheduler.TaskID) bool {
	topo := jr.rs.Topology()
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
				done = jr.finished[scheduler.TaskID(p)]
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
// when an attempt was canceled, its job ended or the run ended are fine,
// anything else ends the run.
func (r *slurmRun) report(job, task, what string, err error) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, multijob.ErrStopped) ||
		errors.Is(err, scheduler.ErrNotRunning) || errors.Is(err, multijob.ErrJobEnded) {
		return
	}
	r.abort(fmt.Errorf("job %s: %s %s: %w", job, what, task, err))
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

// readSlurmEvents reads the events file of a run on Slurm: the events
// file of simulate, with Slurm's priority range (1 ... 4294967293) and
// the run's job names.
func readSlurmEvents(path string, jobs []string) ([]runfile.JobEvent, error) {
	return readEventsFor(path, jobs, slurm.MaxPriority)
}
