package slurm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/slotpool"
)

// Sink takes the admission's messages for the pool: a scheduler.Driver
// (its Admit method), or a test's recorder.
type Sink interface {
	Admit(ctx context.Context, msgs ...slotpool.FromAdmission) error
}

// AdapterConfig configures an Adapter.
type AdapterConfig struct {
	// Name is the base of the Slurm job names: the allocation of ask N is
	// the job "Name-aN". It must be unique among the users of the cluster
	// for as long as Slurm remembers finished jobs (MinJobAge), since jobs
	// are found again by name after an outage: add a run id. No spaces
	// or commas.
	Name string
	// Queue is the job's queue; Partitions maps queues to Slurm
	// partitions. A queue not in the map uses Partition; an empty
	// Partition is the cluster's default partition.
	Queue      string
	Partitions map[string]string
	Partition  string
	// DefaultCPUs is the CPUs of a slot whose profile is Unknown (default
	// 1).
	DefaultCPUs int
	// ExtraArgs go to every sbatch (--account, --qos, ...).
	ExtraArgs []string
	// TimeLimit is every allocation's time limit (sbatch --time, rounded
	// up to whole minutes): Slurm ends an allocation by then even if its
	// runtime died without cancelling it. Zero means the partition's.
	TimeLimit time.Duration
	// Comment tags every allocation (sbatch --comment): ExecClient.Leftovers
	// finds allocations by it (see Tag). No newline.
	Comment string
	// Client runs Slurm's commands; nil means an ExecClient of the
	// cluster SLURM_CONF names.
	Client *ExecClient
	// Sink receives the grants, revokes and confirmations.
	Sink Sink
	// Clock paces the polling and the retries; nil means the wall clock.
	Clock clock.Clock
	// Logger; nil means zap.NewNop().
	Logger *zap.Logger
	// PollMin and PollMax bound the interval between two queries of the
	// jobs: it starts at PollMin after any change and doubles up to
	// PollMax while nothing changes (defaults 100 ms and 2 s). RetryMax
	// caps the backoff while slurmctld is unreachable (default 5 s).
	PollMin, PollMax, RetryMax time.Duration
	// OnError, if set, is told of refused asks (*TooLargeError, Slurm's
	// rejection of an sbatch) and of outages (*OutageError, once per
	// failed attempt). It is called from the adapter's goroutine and must
	// not block for long.
	OnError func(error)
	// Auditor, if set, gets every priority change (SetPriority).
	Auditor Auditor

	// client, if set, replaces Client (a test's fake Slurm).
	client slurmClient
}

// job is the configuration of the adapter's allocations.
func (cfg AdapterConfig) job() jobConfig {
	return jobConfig{Name: cfg.Name, Queue: cfg.Queue, Partitions: cfg.Partitions, Partition: cfg.Partition,
		DefaultCPUs: cfg.DefaultCPUs, ExtraArgs: cfg.ExtraArgs, TimeLimit: cfg.TimeLimit, Comment: cfg.Comment}
}

// Adapter is the admission of one job's pool on Slurm, for a runtime that
// holds the job's scheduler.Driver itself (its scheduler made with
// Config.ExternalAdmission): every all-or-nothing ask becomes one Slurm
// job holding an allocation. On one goroutine it runs the Slurm commands
// the job's allocations need, polls the jobs' states with exponential
// backoff while any is pending (and at PollMax while allocations run, to
// notice preemption), and hands the grants, revokes and confirmations to
// the Sink. While slurmctld is unreachable it reports an *OutageError, keeps its state
// and retries with backoff; a submit whose answer was lost is found
// again by its job name, so a slot is never granted twice nor lost.
// Its methods may be called from any goroutine.
type Adapter struct {
	pacer
	cfg AdapterConfig
	log *zap.Logger

	mu   sync.Mutex
	core *jobCore
}

// StartAdapter looks up the partition (retrying with backoff while
// slurmctld is unreachable, until ctx is done), declares its capacity to
// the Sink and starts polling. It returns a *ConfigError for a bad
// configuration and the ExecClient's error if the partition does not exist.
func StartAdapter(ctx context.Context, cfg AdapterConfig) (*Adapter, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Sink == nil {
		return nil, &ConfigError{Field: "AdapterConfig.Sink", Value: "", Why: "is required"}
	}
	if cfg.client == nil {
		if cfg.Client == nil {
			cfg.Client = &ExecClient{}
		}
		cfg.client = cfg.Client
	}
	if err := cfg.job().validate(); err != nil {
		return nil, err
	}
	cfg.PollMin, cfg.PollMax, cfg.RetryMax = pollDefaults(cfg.PollMin, cfg.PollMax, cfg.RetryMax)
	a := &Adapter{pacer: newPacer(cfg.Clock, cfg.PollMin, cfg.PollMax, cfg.RetryMax), cfg: cfg, log: cfg.Logger}
	var part partition
	done, err := a.retry(ctx, "partition", func() (err error) {
		part, err = cfg.client.partition(ctx, cfg.job().PartitionName())
		return err
	}, a.outage)
	switch {
	case !done:
		return nil, ctx.Err()
	case err != nil:
		return nil, err
	}
	a.recovered()
	core, err := newJobCore(cfg.job(), part)
	if err != nil {
		return nil, err
	}
	a.core = core
	a.log.Info("slurm admission started", zap.String("name", cfg.Name), zap.String("partition", part.Name),
		zap.Int("nodes", len(part.Nodes)), zap.Int("cpus", part.CPUs()))
	a.deliver(ctx)
	go a.loop(ctx, a.step)
	return a, nil
}

// Handle takes the pool's messages (Ready.ToAdmission of a scheduler).
// It returns their errors, joined: an ask that can never
// fit is a *TooLargeError (also given to OnError).
func (a *Adapter) Handle(_ context.Context, msgs ...slotpool.ToAdmission) error {
	var errs []error
	a.mu.Lock()
	now := a.clk.Now()
	for _, m := range msgs {
		if err := a.core.handle(now, m); err != nil {
			errs = append(errs, err)
		}
	}
	a.mu.Unlock()
	a.poke()
	return errors.Join(errs...)
}

// Placement returns where a granted slot lives (its job, component and
// node), for running a task in it (a job step: srun --jobid=JOB --overlap -w NODE, with --het-group for a
// heterogeneous job's component).
func (a *Adapter) Placement(slot slotpool.SlotID) (Placement, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.core.placement(slot)
}

// partition returns the partition the adapter allocates in.
func (a *Adapter) partition() partition {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.core.part
}

// Jobs returns the Slurm jobs of the allocations not over.
func (a *Adapter) jobs() []jobPriority {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.core.slurmJobs()
}

// SetPriority sets the priority of every Slurm job of the adapter (its
// pending and running allocations) to priority, running scontrol as
// principal, so that Slurm decides whether principal may. Every attempt
// goes to the Auditor; the refusals come back joined, each a
// *PriorityError (errors.Is(err, ErrPermissionDenied) when Slurm denied
// it to principal).
func (a *Adapter) SetPriority(ctx context.Context, principal string, priority int64) error {
	var errs []error
	for _, j := range a.jobs() {
		err := a.cfg.client.setPriority(ctx, principal, j.Job, priority)
		rec := AuditRecord{At: a.clk.Now(), Principal: principal, Job: j.Job, Old: j.Priority, New: priority, Accepted: err == nil}
		// What Slurm applied decides, not scontrol's exit status: a job's
		// owner lowering its priority gets it applied with exit status 1
		// ("not persistent").
		if applied, known := a.priorityOf(ctx, j); known {
			rec.Accepted = applied == priority
			if rec.Accepted {
				err = nil
			} else if err == nil {
				err = &CommandError{Command: "scontrol", Stderr: fmt.Sprintf("Slurm reports priority %d", applied), Err: ErrRejected}
			}
		}
		if err != nil {
			cause := err
			var ce *CommandError
			if errors.As(err, &ce) {
				cause = ce.Err
				rec.Reason = ce.Stderr
			} else {
				rec.Reason = err.Error()
			}
			errs = append(errs, &PriorityError{Principal: principal, Job: j.Job, Priority: priority, Err: errors.Join(cause, err)})
		}
		if a.cfg.Auditor != nil {
			a.cfg.Auditor(rec)
		}
		a.log.Info("slurm priority change", zap.String("principal", principal), zap.Int64("job", int64(j.Job)),
			zap.Int64("old", j.Priority), zap.Int64("new", priority), zap.Bool("accepted", err == nil), zap.Error(err))
	}
	a.poke()
	return errors.Join(errs...)
}

// priorityOf asks Slurm for the priority of one of the adapter's jobs;
// false if it could not tell.
func (a *Adapter) priorityOf(ctx context.Context, j jobPriority) (int64, bool) {
	statuses, err := a.cfg.client.query(ctx, []string{j.Name})
	if err != nil {
		return 0, false
	}
	for _, s := range statuses {
		if s.ID == j.Job || (s.HetJob == j.Job && s.HetOffset == 0) {
			return s.Priority, true
		}
	}
	return 0, false
}

// Done is closed when the polling loop has ended (Stop, or ctx done).
func (a *Adapter) Done() <-chan struct{} { return a.done }

// Stop ends the polling loop and cancels every allocation still held or
// pending in Slurm (retrying while slurmctld is unreachable, until ctx is
// done). It returns the last cancel error, if any. Safe to call more
// than once.
func (a *Adapter) Stop(ctx context.Context) error {
	a.halt()
	a.mu.Lock()
	a.core.shutdown(false)
	cmds := a.core.commands()
	a.mu.Unlock()
	var last error
	for _, c := range cmds {
		done, err := a.retry(ctx, "cancel", func() error { return a.cfg.client.Cancel(ctx, c.Name, c.Job) }, a.outage)
		if !done {
			return err
		}
		if err != nil {
			last = err
		}
	}
	return last
}

// step runs the jobCore's commands, queries the watched jobs, hands the
// messages to the Sink, and returns how long to wait before the next step
// (0 or less: at once; the time is the backoff).
func (a *Adapter) step(ctx context.Context) time.Duration {
	changed := a.runCommands(ctx)
	a.mu.Lock()
	names := a.core.watched()
	a.mu.Unlock()
	failed := false
	if len(names) > 0 {
		statuses, err := a.cfg.client.query(ctx, names)
		switch {
		case err == nil:
			a.recovered()
			a.mu.Lock()
			a.core.observe(a.clk.Now(), names, statuses)
			a.mu.Unlock()
		case errors.Is(err, ErrUnreachable):
			a.outage("query", err)
			failed = true
		default: // an answer that could not be read: back off as well
			a.failures++
			a.log.Warn("slurm query failed", zap.Int("attempts", a.failures), zap.Error(err))
			failed = true
		}
	}
	if a.deliver(ctx) {
		changed = true
	}
	a.mu.Lock()
	more := a.core.hasCommands()
	a.mu.Unlock()
	return a.next(failed, more, changed)
}

// runCommands runs what the jobCore asked for and reports the outcomes; it
// returns whether there were any.
func (a *Adapter) runCommands(ctx context.Context) bool {
	a.mu.Lock()
	cmds := a.core.commands()
	a.mu.Unlock()
	for _, c := range cmds {
		switch c.Kind {
		case cmdSubmit:
			job, err := a.cfg.client.submit(ctx, c.Name, c.Request)
			a.note("submit", err)
			a.mu.Lock()
			a.core.submitted(a.clk.Now(), c.Name, job, err)
			a.mu.Unlock()
			if err == nil {
				a.log.Debug("slurm job submitted", zap.String("name", c.Name), zap.Int64("job", int64(job)))
			}
		case cmdCancel:
			err := a.cfg.client.Cancel(ctx, c.Name, c.Job)
			a.note("cancel", err)
			a.mu.Lock()
			a.core.cancelled(a.clk.Now(), c.Name, c.Job, err)
			a.mu.Unlock()
		}
	}
	return len(cmds) > 0
}

// note logs a command's error (an outage, or another failure).
func (a *Adapter) note(op string, err error) {
	switch {
	case err == nil:
		a.recovered()
	case errors.Is(err, ErrUnreachable):
		a.outage(op, err)
	default:
		a.log.Warn("slurm "+op+" failed", zap.Error(err))
	}
}

// deliver reports refusals and hands the jobCore's messages to the Sink; it
// returns whether there were any.
func (a *Adapter) deliver(ctx context.Context) bool {
	a.mu.Lock()
	out := a.core.ready()
	refused := a.core.takeRefused()
	a.mu.Unlock()
	for _, err := range refused {
		a.log.Warn("slurm refused an ask", zap.Error(err))
		if a.cfg.OnError != nil {
			a.cfg.OnError(err)
		}
	}
	if len(out) == 0 {
		return len(refused) > 0
	}
	if err := a.cfg.Sink.Admit(ctx, out...); err != nil {
		a.log.Warn("the pool refused the admission's messages", zap.Error(err))
	}
	return true
}

// outage records one failed attempt while slurmctld is unreachable.
func (a *Adapter) outage(op string, err error) {
	a.failures++
	oe := &OutageError{Op: op, Attempts: a.failures, Err: err}
	a.log.Warn("slurm controller unreachable", zap.Error(oe))
	if a.cfg.OnError != nil {
		a.cfg.OnError(oe)
	}
}

// recovered ends an outage.
func (a *Adapter) recovered() {
	if a.failures > 0 {
		a.log.Info("slurm answering again", zap.Int("failedAttempts", a.failures))
		a.failures = 0
		a.delay = a.min
	}
}
