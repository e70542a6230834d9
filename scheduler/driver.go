package scheduler

import (
	"context"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

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
	s   *Scheduler
	clk clock.Clock
	log *zap.Logger

	inputs chan input
	readyc chan Ready
	tickc  chan struct{}
	stopc  chan struct{}
	done   chan struct{}
	stop   sync.Once

	// Owned by the loop goroutine.
	timer   *clock.Timer
	armedAt time.Time
}

type input struct {
	fn    func(now time.Time) error
	reply chan error
}

// StartDriver starts the event loop of s. It runs until Stop is called or
// ctx is done.
func StartDriver(ctx context.Context, s *Scheduler, cfg DriverConfig) *Driver {
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	d := &Driver{
		s:      s,
		clk:    cfg.Clock,
		log:    cfg.Logger,
		inputs: make(chan input),
		readyc: make(chan Ready),
		tickc:  make(chan struct{}, 1),
		stopc:  make(chan struct{}),
		done:   make(chan struct{}),
	}
	go d.loop(ctx)
	return d
}

func (d *Driver) loop(ctx context.Context) {
	defer close(d.done)
	defer close(d.readyc)
	defer func() {
		if d.timer != nil {
			d.timer.Stop()
		}
	}()
	var pending *Ready
	for {
		if pending == nil && d.s.HasReady() {
			// A copy: the receiver keeps it while the loop calls Ready
			// again, which reuses the lists handed out.
			rd := d.s.Ready().Clone()
			pending = &rd
		}
		var readyc chan Ready
		var rd Ready
		if pending != nil {
			readyc, rd = d.readyc, *pending
		}
		select {
		case in := <-d.inputs:
			in.reply <- in.fn(d.clk.Now())
		case readyc <- rd:
			pending = nil
		case <-d.tickc:
			d.armedAt = time.Time{}
			if err := d.s.Tick(d.clk.Now()); err != nil {
				d.log.Warn("tick refused", zap.Error(err))
			}
		case <-d.stopc:
			return
		case <-ctx.Done():
			return
		}
		d.rearm()
	}
}

// rearm keeps one timer armed for the scheduler's next deadline.
func (d *Driver) rearm() {
	next, ok := d.s.NextDeadline()
	if !ok {
		if d.timer != nil {
			d.timer.Stop()
			d.timer, d.armedAt = nil, time.Time{}
		}
		return
	}
	if d.timer != nil && next.Equal(d.armedAt) {
		return
	}
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	// A deadline already due is posted directly: a negative duration would
	// move a mock clock backwards, and a mock fires even a zero-duration
	// timer only when it is moved.
	wait := next.Sub(d.clk.Now())
	if wait <= 0 {
		d.armedAt = time.Time{}
		d.postTick()
		return
	}
	d.armedAt = next
	d.timer = d.clk.AfterFunc(wait, d.postTick)
}

// postTick posts a tick to the loop unless one is pending; it never
// blocks, so a timer callback returns at once.
func (d *Driver) postTick() {
	select {
	case d.tickc <- struct{}{}:
	default:
	}
}

// do runs fn on the loop and returns its error; ErrStopped if the loop
// ended first, ctx.Err() if ctx is done before the loop took the input
// (then it was not applied).
func (d *Driver) do(ctx context.Context, fn func(now time.Time) error) error {
	in := input{fn: fn, reply: make(chan error, 1)}
	select {
	case d.inputs <- in:
	case <-ctx.Done():
		return ctx.Err()
	case <-d.done:
		return ErrStopped
	}
	return <-in.reply // the loop answers every input it took
}

// Ready returns the channel of Ready values: every output of the
// scheduler, in order. It is closed when the loop ends. The runtime must
// keep reading it; inputs are taken meanwhile, and what they produce
// waits for the next receive. A Ready received is the receiver's (a
// Clone): later turns of the loop leave it alone.
func (d *Driver) Ready() <-chan Ready { return d.readyc }

// Done is closed when the loop has ended.
func (d *Driver) Done() <-chan struct{} { return d.done }

// Stop ends the loop and waits for it. Safe to call more than once and
// from any goroutine.
func (d *Driver) Stop() {
	d.stop.Do(func() { close(d.stopc) })
	<-d.done
}

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
	err := d.do(ctx, func(time.Time) error {
		st = d.s.Status()
		return nil
	})
	return st, err
}
