package slurm

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/slotpool"
)

// clusterInputs runs a slurmCluster's input methods on the goroutine that owns the
// slurmCluster, with the current time: a multijob.Driver (its ClusterInput
// method) whose Scheduler runs over the slurmCluster.
type clusterInputs interface {
	ClusterInput(ctx context.Context, fn func(now time.Time) error) error
}

// pollerConfig configures a poller.
type pollerConfig struct {
	// slurmCluster is the Slurm cluster the jobs run on; clusterInputs owns it (a
	// multijob.Driver over a multijob.Scheduler whose Config.Cluster it
	// is).
	Cluster *slurmCluster
	Inputs  clusterInputs
	// Client runs Slurm's commands (an *ExecClient).
	Client slurmClient
	// Clock paces the polling; nil means the wall clock.
	Clock clock.Clock
	// Logger; nil means zap.NewNop().
	Logger *zap.Logger
	// PollMin and PollMax bound the interval between two queries (one
	// squeue for every job of the run): PollMin after any change,
	// doubling up to PollMax while nothing changes (defaults 100 ms and
	// 2 s). RetryMax caps the backoff while slurmctld is unreachable
	// (default 5 s).
	PollMin, PollMax, RetryMax time.Duration
	// PartitionEvery is how often the partitions are read again, to follow
	// their nodes' states (default 10 s).
	PartitionEvery time.Duration
	// WaitNotice is how long an allocation may be pending before a
	// Waiting notice reports Slurm's reason (default 5 s).
	WaitNotice time.Duration
	// Notify, if set, is told of outages, recoveries and long waits. It is
	// called from the poller's goroutine and must not block for long.
	Notify func(Notice)
}

// NoticeKind says what a Notice reports.
type NoticeKind uint8

// The notices of a run.
const (
	// OutageBegan: slurmctld stopped answering (Op failed with Err).
	OutageBegan NoticeKind = iota + 1
	// OutageEnded: it answers again; Duration is the outage's length,
	// Failures the attempts that failed meanwhile.
	OutageEnded
	// Waiting: an allocation of Job has been pending for Duration; Wait
	// has Slurm's reason. Reported once it waited WaitNotice, and again
	// whenever the reason changes.
	Waiting
)

// Notice is something the poller of a run reports (RunConfig.Notify).
type Notice struct {
	Kind     NoticeKind
	At       time.Time
	Op       string
	Err      error
	Duration time.Duration
	Failures int
	Job      string
	Wait     Wait
}

// outageSpan is one period during which slurmctld did not answer.
type outageSpan struct {
	Start, End time.Time
	// Failures counts the commands that failed meanwhile.
	Failures int
}

// poller is the I/O layer of a Cluster: on one goroutine it runs the
// commands the slurmCluster asks for, queries every job of the run with one
// squeue per poll, reads the partitions again now and then, and feeds the
// results back through clusterInputs. While slurmctld is unreachable it keeps
// the state, retries with backoff, and reports the outage once when it
// begins and once when it ends. Its methods may be called from any
// goroutine.
type poller struct {
	pacer
	cfg pollerConfig
	log *zap.Logger

	mu      sync.Mutex
	queries int
	outages []outageSpan

	// Owned by the loop goroutine.
	outage   *outageSpan
	partsAt  time.Time
	waitSeen map[string]string // allocation name -> reason reported
}

// startPoller starts the poller's goroutine; it runs until Stop or ctx is
// done. It returns a *ConfigError if slurmCluster, clusterInputs or Client is
// missing.
func startPoller(ctx context.Context, cfg pollerConfig) (*poller, error) {
	if cfg.Cluster == nil || cfg.Inputs == nil || cfg.Client == nil {
		return nil, &ConfigError{Field: "pollerConfig", Why: "slurmCluster, clusterInputs and Client are required"}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	cfg.PollMin, cfg.PollMax, cfg.RetryMax = pollDefaults(cfg.PollMin, cfg.PollMax, cfg.RetryMax)
	if cfg.PartitionEvery <= 0 {
		cfg.PartitionEvery = 10 * time.Second
	}
	if cfg.WaitNotice <= 0 {
		cfg.WaitNotice = 5 * time.Second
	}
	r := &poller{pacer: newPacer(cfg.Clock, cfg.PollMin, cfg.PollMax, cfg.RetryMax), cfg: cfg, log: cfg.Logger, waitSeen: map[string]string{}}
	r.partsAt = r.clk.Now()
	go r.loop(ctx, r.step)
	return r, nil
}

// Poke wakes the poller up: the slurmCluster may have commands (call it after
// an input that makes some: a submit, a release, a priority change).
func (r *poller) Poke() { r.poke() }

// Queries counts the squeue queries run so far.
func (r *poller) Queries() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.queries
}

// Outages returns the outages so far; one still going has a zero End.
func (r *poller) Outages() []outageSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]outageSpan(nil), r.outages...)
}

// placement returns where a granted slot of a job lives, read on the
// slurmCluster's goroutine.
func (r *poller) placement(ctx context.Context, job string, slot slotpool.SlotID) (slotPlacement, bool) {
	var p slotPlacement
	var ok bool
	err := r.cfg.Inputs.ClusterInput(ctx, func(time.Time) error {
		p, ok = r.cfg.Cluster.placement(job, slot)
		return nil
	})
	return p, ok && err == nil
}

// deployPlacements returns where the slots of a Ready's deployments
// live (slurmCluster.deployPlacements), read on the slurmCluster's
// goroutine in one input; false if that ended.
func (r *poller) deployPlacements(ctx context.Context, refs []slotRef) (map[slotRef]slotPlacement, bool) {
	var out map[slotRef]slotPlacement
	err := r.cfg.Inputs.ClusterInput(ctx, func(time.Time) error {
		out = r.cfg.Cluster.deployPlacements(refs)
		return nil
	})
	return out, err == nil
}

// Done is closed when the loop has ended.
func (r *poller) Done() <-chan struct{} { return r.done }

// Stop ends the loop and cancels every allocation of the run still held
// or pending, retrying each cancel while slurmctld is unreachable, until
// ctx is done. Call it while clusterInputs still runs, or after it stopped (the
// slurmCluster is then read directly). It returns the last cancel error, if
// any. Safe to call more than once.
func (r *poller) Stop(ctx context.Context) error {
	r.halt()
	var cmds []slurmCommand
	shutdown := func(time.Time) error {
		r.cfg.Cluster.Shutdown()
		cmds = r.cfg.Cluster.Commands()
		return nil
	}
	if err := r.cfg.Inputs.ClusterInput(ctx, shutdown); err != nil {
		if err := shutdown(time.Time{}); err != nil { // its owner stopped: nobody else touches it
			return err
		}
	}
	var last error
	for _, c := range cmds {
		if c.Kind != cmdCancel {
			continue
		}
		done, err := r.retry(ctx, "cancel", func() error { return r.cfg.Client.Cancel(ctx, c.Name, c.Job) }, r.failed)
		if !done {
			return err
		}
		if err != nil {
			last = err
		}
	}
	r.recovered()
	return last
}

// input runs fn on the slurmCluster's goroutine; false if that ended.
func (r *poller) input(ctx context.Context, fn func(now time.Time)) bool {
	return r.cfg.Inputs.ClusterInput(ctx, func(now time.Time) error { fn(now); return nil }) == nil
}

// step runs the slurmCluster's commands, queries its jobs once, reads the
// partitions when due, and returns how long to wait before the next step
// (less than 0: at once).
func (r *poller) step(ctx context.Context) time.Duration {
	cl := r.cfg.Cluster
	var cmds []slurmCommand
	var names []string
	if !r.input(ctx, func(time.Time) { cmds, names = cl.Commands(), cl.Watched() }) {
		return r.cfg.PollMax
	}
	inOutage := r.outage != nil
	changed := len(cmds) > 0
	failed := false
	for _, c := range cmds {
		failed = !r.run(ctx, c) || failed
	}
	if len(names) > 0 {
		statuses, err := r.cfg.Client.query(ctx, names)
		r.mu.Lock()
		r.queries++
		r.mu.Unlock()
		switch {
		case err == nil:
			r.recovered()
			var waits []jobWait
			r.input(ctx, func(now time.Time) {
				cl.Observe(now, names, statuses)
				waits = cl.Waiting()
			})
			r.noticeWaits(waits)
		case errors.Is(err, ErrUnreachable):
			r.failed("query", err)
			failed = true
		default: // an answer that could not be read: back off as well
			r.failures++
			r.log.Warn("slurm query failed", zap.Int("attempts", r.failures), zap.String("error", err.Error()))
			failed = true
		}
	}
	if !failed && r.clk.Since(r.partsAt) >= r.cfg.PartitionEvery {
		r.partsAt = r.clk.Now()
		r.readPartitions(ctx)
	}
	if inOutage && r.outage == nil {
		changed = true // slurmctld answers again: whatever it did meanwhile shows soon
	}
	var more bool
	r.input(ctx, func(time.Time) { more = cl.HasCommands() })
	return r.next(failed, more, changed)
}

// run runs one command and reports its outcome; false if slurmctld was
// unreachable.
func (r *poller) run(ctx context.Context, c slurmCommand) bool {
	cl := r.cfg.Cluster
	var err error
	switch c.Kind {
	case cmdSubmit:
		var job JobID
		job, err = r.cfg.Client.submit(ctx, c.Name, c.Request)
		r.input(ctx, func(now time.Time) { cl.Submitted(now, c.Name, job, err) })
	case cmdCancel:
		err = r.cfg.Client.Cancel(ctx, c.Name, c.Job)
		r.input(ctx, func(now time.Time) { cl.Cancelled(now, c.Name, c.Job, err) })
	case cmdSetPriority:
		err = r.cfg.Client.setPriority(ctx, c.Principal, c.Job, c.Priority)
		r.input(ctx, func(now time.Time) { cl.PriorityDone(now, c, err) })
	}
	switch {
	case err == nil:
		r.recovered()
	case errors.Is(err, ErrUnreachable):
		r.failed(c.Kind.String(), err)
		return false
	default:
		r.log.Info("slurm command refused", zap.Stringer("command", c.Kind), zap.String("name", c.Name), zap.String("error", err.Error()))
	}
	return true
}

// readPartitions reads the slurmCluster's partitions again and hands them over
// (their nodes' states decide what can still fit).
func (r *poller) readPartitions(ctx context.Context) {
	var names []string
	if !r.input(ctx, func(time.Time) { names = r.cfg.Cluster.Partitions() }) {
		return
	}
	for _, n := range names {
		p, err := r.cfg.Client.partition(ctx, n)
		if err != nil {
			if errors.Is(err, ErrUnreachable) {
				r.failed("partition", err)
			}
			return
		}
		r.input(ctx, func(now time.Time) { r.cfg.Cluster.SetPartition(now, p) })
	}
}

// noticeWaits reports the allocations pending longer than WaitNotice,
// once, and again when Slurm's reason changes.
func (r *poller) noticeWaits(waits []jobWait) {
	now := r.clk.Now()
	live := map[string]bool{}
	for _, w := range waits {
		live[w.Name] = true
		if w.Since.IsZero() || now.Sub(w.Since) < r.cfg.WaitNotice {
			continue
		}
		if reason, seen := r.waitSeen[w.Name]; seen && reason == w.Reason {
			continue
		}
		r.waitSeen[w.Name] = w.Reason
		r.notify(Notice{Kind: Waiting, At: now, Job: w.Job, Wait: w.Wait, Duration: now.Sub(w.Since)})
	}
	for name := range r.waitSeen {
		if !live[name] {
			delete(r.waitSeen, name)
		}
	}
}

// failed records one failed attempt while slurmctld is unreachable: the
// first one of an outage is reported.
func (r *poller) failed(op string, err error) {
	r.failures++
	if r.outage == nil {
		now := r.clk.Now()
		r.mu.Lock()
		r.outages = append(r.outages, outageSpan{Start: now})
		r.outage = &r.outages[len(r.outages)-1]
		r.mu.Unlock()
		r.log.Warn("slurm controller unreachable", zap.String("op", op), zap.String("error", err.Error()))
		r.notify(Notice{Kind: OutageBegan, At: now, Op: op, Err: err})
	}
	r.mu.Lock()
	r.outages[len(r.outages)-1].Failures++
	r.mu.Unlock()
}

// recovered ends an outage, reporting its length.
func (r *poller) recovered() {
	if r.outage == nil {
		r.failures = 0
		return
	}
	now := r.clk.Now()
	r.mu.Lock()
	o := &r.outages[len(r.outages)-1]
	o.End = now
	out := *o
	r.mu.Unlock()
	r.outage = nil
	r.failures = 0
	r.delay = r.min
	r.log.Info("slurm answering again", zap.Duration("outage", out.End.Sub(out.Start)), zap.Int("failedAttempts", out.Failures))
	r.notify(Notice{Kind: OutageEnded, At: now, Duration: out.End.Sub(out.Start), Failures: out.Failures})
}

// notify hands a notice to Notify.
func (r *poller) notify(n Notice) {
	if r.cfg.Notify != nil {
		r.cfg.Notify(n)
	}
}
