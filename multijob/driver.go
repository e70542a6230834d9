package multijob

import (
	"context"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/driverloop"
	"github.com/regionsched/regionsched/scheduler"
)

// DriverConfig configures a Driver.
type DriverConfig struct {
	// Clock gives the time of every input and the one timer; nil means
	// the wall clock. Tests pass clock.NewMock().
	Clock clock.Clock
	// Logger; nil means zap.NewNop().
	Logger *zap.Logger
}

// Driver runs a Scheduler on one goroutine, the event loop, for a runtime
// with real goroutines and a real clock (scheduler.Driver for many jobs).
// Its input methods may be called from any goroutine: each queues the
// input for the loop, which applies it with the clock's current time and
// answers at once with the Scheduler's error. An instant is one turn of
// the loop: it applies every input queued since the last decision, then
// calls Ready once and hands the value out on the Ready channel (one with
// nothing for the runtime is not sent). While a Ready waits for its
// reader, inputs are still applied; they are decided together in the next
// turn. The timeouts fire by themselves: the driver keeps one timer armed
// for NextDeadline, whose callback only posts a tick to the loop.
//
// Inputs given to the Scheduler before StartDriver (several jobs
// submitted at one instant, say) are decided in the loop's first turn,
// together with whatever is queued by then.
//
// The loop ends on Stop or when the context given to StartDriver is done;
// then every input returns ErrStopped, the Ready channel is closed, and
// no goroutine of the driver is left. The Scheduler must not be used
// directly while the driver runs.
type Driver struct {
	s    *Scheduler
	loop *driverloop.Loop[Ready]
}

// machine is a Scheduler as the loop drives it: a turn of the loop is an
// instant.
type machine struct{ *Scheduler }

// Output decides the instant (Scheduler.Ready) and returns what it has
// for the runtime, if anything: a copy, as the receiver keeps it while
// the loop calls Ready again, which reuses the lists handed out.
func (m machine) Output() (Ready, bool) {
	rd := m.Ready()
	if rd.Empty() {
		return Ready{}, false
	}
	return rd.Clone(), true
}

// StartDriver starts the event loop of s. It runs until Stop is called or
// ctx is done. Its first turn decides: jobs submitted to s directly
// before (with the clock's time) are decided together, whatever their
// order.
func StartDriver(ctx context.Context, s *Scheduler, cfg DriverConfig) *Driver {
	return startDriver(ctx, s, cfg, nil)
}

// startDriver is StartDriver with a hook run after every input queued.
func startDriver(ctx context.Context, s *Scheduler, cfg DriverConfig, queued func()) *Driver {
	return &Driver{s: s, loop: driverloop.Start[Ready](ctx, machine{s}, driverloop.Config{
		Clock: cfg.Clock, Logger: cfg.Logger, ErrStopped: ErrStopped,
		// A turn applies every input queued, then decides; what s was
		// given before the loop runs is the first instant.
		Batch: true, Changed: true, Queued: queued,
	})}
}

// do runs fn on the loop and returns its error: ErrStopped if the loop
// ended first, ctx.Err() if ctx is done before the loop took it (then it
// was not applied).
func (d *Driver) do(ctx context.Context, fn func(now time.Time) error) error {
	return d.loop.Do(ctx, fn)
}

// Ready returns the channel of Ready values, one per decision that had
// something for the runtime, in order. It is closed when the loop ends.
// The runtime must keep reading it. A Ready received is the receiver's (a
// Clone): later turns of the loop leave it alone.
func (d *Driver) Ready() <-chan Ready { return d.loop.Out() }

// Done is closed when the loop has ended.
func (d *Driver) Done() <-chan struct{} { return d.loop.Done() }

// Stop ends the loop and waits for it. Safe to call more than once and
// from any goroutine.
func (d *Driver) Stop() { d.loop.Stop() }

// Submit adds jobs (Scheduler.Submit) as one input: the jobs of one call
// arrive at the same instant, and the admission decides over all of them
// together, as it does over what is given to the Scheduler before
// StartDriver. Two calls in a row are two inputs, which a busy loop may
// or may not take in one turn: submit jobs that must start together in
// one call. The specs are submitted in order; the first one refused
// stops the call, its error returned, the ones before it submitted.
func (d *Driver) Submit(ctx context.Context, specs ...JobSpec) error {
	return d.do(ctx, func(now time.Time) error {
		for _, spec := range specs {
			if err := d.s.Submit(now, spec); err != nil {
				return err
			}
		}
		return nil
	})
}

// StartJob starts a job whose driver is up (Scheduler.StartJob).
func (d *Driver) StartJob(ctx context.Context, job string) error {
	return d.do(ctx, func(now time.Time) error { return d.s.StartJob(now, job) })
}

// TaskRunning reports a running task (Scheduler.TaskRunning).
func (d *Driver) TaskRunning(ctx context.Context, job string, v scheduler.TaskID, attempt scheduler.Attempt) error {
	return d.do(ctx, func(now time.Time) error { return d.s.TaskRunning(now, job, v, attempt) })
}

// TaskFinished reports a finished task (Scheduler.TaskFinished).
func (d *Driver) TaskFinished(ctx context.Context, job string, v scheduler.TaskID, attempt scheduler.Attempt) error {
	return d.do(ctx, func(now time.Time) error { return d.s.TaskFinished(now, job, v, attempt) })
}

// TaskFailed reports a failed task (Scheduler.TaskFailed).
func (d *Driver) TaskFailed(ctx context.Context, job string, v scheduler.TaskID, attempt scheduler.Attempt, lost ...scheduler.PartitionID) error {
	return d.do(ctx, func(now time.Time) error { return d.s.TaskFailed(now, job, v, attempt, lost...) })
}

// SlotLost reports a vanished slot of a job (Scheduler.SlotLost).
func (d *Driver) SlotLost(ctx context.Context, job string, slot scheduler.SlotID) error {
	return d.do(ctx, func(now time.Time) error { return d.s.SlotLost(now, job, slot) })
}

// SetPriority changes a job's priority (Scheduler.SetPriority).
func (d *Driver) SetPriority(ctx context.Context, by admission.Principal, job string, priority int) error {
	return d.do(ctx, func(now time.Time) error { return d.s.SetPriority(now, by, job, priority) })
}

// Kill ends a job (Scheduler.Kill).
func (d *Driver) Kill(ctx context.Context, by admission.Principal, job string) error {
	return d.do(ctx, func(now time.Time) error { return d.s.Kill(now, by, job) })
}

// Forget drops an ended job whose end a Ready handed out
// (Scheduler.Forget): a long-running Driver then holds nothing of it, and
// its name may be submitted again.
func (d *Driver) Forget(ctx context.Context, job string) error {
	return d.do(ctx, func(time.Time) error { return d.s.Forget(job) })
}

// Status returns a snapshot of a job (Scheduler.Status).
func (d *Driver) Status(ctx context.Context, job string) (JobStatus, error) {
	var st JobStatus
	err := d.loop.Read(ctx, func(time.Time) error {
		var err error
		st, err = d.s.Status(job)
		return err
	})
	return st, err
}

// ClusterInput runs fn on the loop with the clock's time
// (Scheduler.ClusterInput): the inputs of a cluster that decides outside
// the process (a Slurm cluster's command results and observations). The
// admission's decisions reach the jobs in the Ready of the same turn.
func (d *Driver) ClusterInput(ctx context.Context, fn func(now time.Time) error) error {
	return d.do(ctx, func(now time.Time) error { return d.s.ClusterInput(now, fn) })
}
