package scheduler

import (
	"context"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/internal/driverloop"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
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
// with real goroutines and a real clock (the shape of etcd raft's node
// around its RawNode). Its input methods may be called from any
// goroutine: each posts the input to the loop, which calls the Scheduler
// with the clock's current time, and returns the Scheduler's answer. The
// outputs come out of Ready, one Ready value at a time, in order. The
// Scheduler's timeouts fire by themselves: the driver keeps one timer armed
// for NextDeadline, whose callback only posts a tick to the loop.
//
// The loop ends on Stop or when the context given to StartDriver is done;
// then every input returns ErrStopped, the Ready channel is closed, and
// no goroutine of the driver is left. The Scheduler must not be used
// directly while the driver runs.
type Driver struct {
	s    *Scheduler
	loop *driverloop.Loop[Ready]
}

// machine is a Scheduler as the loop drives it.
type machine struct{ *Scheduler }

// Output returns the scheduler's Ready if it has one: a copy, as the
// receiver keeps it while the loop calls Ready again, which reuses the
// lists handed out.
func (m machine) Output() (Ready, bool) {
	if !m.HasReady() {
		return Ready{}, false
	}
	return m.Ready().Clone(), true
}

// StartDriver starts the event loop of s. It runs until Stop is called or
// ctx is done.
func StartDriver(ctx context.Context, s *Scheduler, cfg DriverConfig) *Driver {
	return &Driver{s: s, loop: driverloop.Start[Ready](ctx, machine{s}, driverloop.Config{
		Clock: cfg.Clock, Logger: cfg.Logger, ErrStopped: ErrStopped,
	})}
}

// do runs fn on the loop and returns its error; ErrStopped if the loop
// ended first, ctx.Err() if ctx is done before the loop took the input
// (then it was not applied).
func (d *Driver) do(ctx context.Context, fn func(now time.Time) error) error {
	return d.loop.Do(ctx, fn)
}

// Ready returns the channel of Ready values: every output of the
// scheduler, in order. It is closed when the loop ends. The runtime must
// keep reading it; inputs are taken meanwhile, and what they produce
// waits for the next receive. A Ready received is the receiver's (a
// Clone): later turns of the loop leave it alone.
func (d *Driver) Ready() <-chan Ready { return d.loop.Out() }

// Done is closed when the loop has ended.
func (d *Driver) Done() <-chan struct{} { return d.loop.Done() }

// Stop ends the loop and waits for it. Safe to call more than once and
// from any goroutine.
func (d *Driver) Stop() { d.loop.Stop() }

// Start starts the job (Scheduler.Start).
func (d *Driver) Start(ctx context.Context) error {
	return d.do(ctx, func(now time.Time) error { return d.s.Start(now) })
}

// Offer adds slots to the pool (Scheduler.Offer).
func (d *Driver) Offer(ctx context.Context, slots ...Slot) error {
	return d.do(ctx, func(now time.Time) error { return d.s.Offer(now, slots...) })
}

// SetCapacity declares the cluster's capacity (Scheduler.SetCapacity).
func (d *Driver) SetCapacity(ctx context.Context, capacity []resource.Count) error {
	return d.do(ctx, func(now time.Time) error { return d.s.SetCapacity(now, capacity) })
}

// TaskRunning reports a running task (Scheduler.TaskRunning).
func (d *Driver) TaskRunning(ctx context.Context, v TaskID, attempt Attempt) error {
	return d.do(ctx, func(now time.Time) error { return d.s.TaskRunning(now, v, attempt) })
}

// TaskFinished reports a finished task (Scheduler.TaskFinished).
func (d *Driver) TaskFinished(ctx context.Context, v TaskID, attempt Attempt) error {
	return d.do(ctx, func(now time.Time) error { return d.s.TaskFinished(now, v, attempt) })
}

// TaskFailed reports a failed task (Scheduler.TaskFailed).
func (d *Driver) TaskFailed(ctx context.Context, v TaskID, attempt Attempt, lost ...PartitionID) error {
	return d.do(ctx, func(now time.Time) error { return d.s.TaskFailed(now, v, attempt, lost...) })
}

// SlotLost reports a vanished slot (Scheduler.SlotLost).
func (d *Driver) SlotLost(ctx context.Context, slot SlotID) error {
	return d.do(ctx, func(now time.Time) error { return d.s.SlotLost(now, slot) })
}

// Cancel ends the job (Scheduler.Cancel).
func (d *Driver) Cancel(ctx context.Context, reason error) error {
	return d.do(ctx, func(now time.Time) error { return d.s.Cancel(now, reason) })
}

// Admit applies an outside admission's messages (Scheduler.Admit).
func (d *Driver) Admit(ctx context.Context, msgs ...slotpool.FromAdmission) error {
	return d.do(ctx, func(now time.Time) error { return d.s.Admit(now, msgs...) })
}

// Status returns a snapshot of the scheduler (Scheduler.Status).
func (d *Driver) Status(ctx context.Context) (Status, error) {
	var st Status
	err := d.loop.Read(ctx, func(time.Time) error {
		st = d.s.Status()
		return nil
	})
	return st, err
}
