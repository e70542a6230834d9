package multijob

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
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
	s   *Scheduler
	clk clock.Clock
	log *zap.Logger

	mu     sync.Mutex
	queue  []*input // inputs posted and not taken yet
	closed bool     // the loop ended: inputs are refused
	wake   chan struct{}
	readyc chan Ready
	tickc  chan struct{}
	stopc  chan struct{}
	done   chan struct{}
	stop   sync.Once
	// queued, if set (by tests), runs after an input was queued.
	queued func()

	// Owned by the loop goroutine.
	timer     *clock.Timer
	armedAt   time.Time
	undecided bool // inputs were applied since the last Ready call
}

// input is one call of an input method, queued for the loop.
type input struct {
	fn    func(now time.Time) error
	reply chan error // the loop answers every input it took, once
	read  bool       // a query: it changes nothing, so nothing to decide
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
		wake:   make(chan struct{}, 1),
		readyc: make(chan Ready),
		tickc:  make(chan struct{}, 1),
		stopc:  make(chan struct{}),
		done:   make(chan struct{}),
		queued: queued,
		// What s was given before the loop runs is the first instant.
		undecided: true,
	}
	go d.loop(ctx)
	return d
}

func (d *Driver) loop(ctx context.Context) {
	defer close(d.done)
	defer close(d.readyc)
	defer d.refuseQueued()
	defer func() {
		if d.timer != nil {
			d.timer.Stop()
		}
	}()
	var pending *Ready
	for {
		if pending == nil && d.undecided {
			// The end of a turn: every input queued meanwhile joins this
			// instant, then the admission decides.
			for d.takeQueued() > 0 { // (inputs may queue while one is applied)
			}
			d.takeTick()
			d.undecided = false
			if rd := d.s.Ready(); !rd.Empty() {
				// A copy: the receiver keeps it while the loop calls
				// Ready again, which reuses the lists handed out.
				rd = rd.Clone()
				pending = &rd
			}
			d.rearm()
		}
		var readyc chan Ready
		var rd Ready
		if pending != nil {
			readyc, rd = d.readyc, *pending
		}
		select {
		case <-d.wake:
			d.takeQueued()
		case readyc <- rd:
			pending = nil
		case <-d.tickc:
			d.tick()
		case <-d.stopc:
			return
		case <-ctx.Done():
			return
		}
		d.rearm()
	}
}

// takeQueued applies the inputs queued so far, in the order they came,
// and returns how many it applied.
func (d *Driver) takeQueued() int {
	d.mu.Lock()
	queue := d.queue
	d.queue = nil
	d.mu.Unlock()
	for _, in := range queue {
		in.reply <- in.fn(d.clk.Now())
		d.undecided = d.undecided || !in.read
	}
	return len(queue)
}

// takeTick fires the timeouts if a tick is posted.
func (d *Driver) takeTick() {
	select {
	case <-d.tickc:
		d.tick()
	default:
	}
}

// refuseQueued ends the queue: the inputs in it and every input posted
// from now on return ErrStopped.
func (d *Driver) refuseQueued() {
	d.mu.Lock()
	queue := d.queue
	d.queue, d.closed = nil, true
	d.mu.Unlock()
	for _, in := range queue {
		in.reply <- ErrStopped
	}
}

// tick fires the timeouts due now.
func (d *Driver) tick() {
	d.armedAt = time.Time{}
	if err := d.s.Tick(d.clk.Now()); err != nil {
		d.log.Warn("tick refused", zap.Error(err))
	}
	d.undecided = true
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

// do runs fn on the loop and returns its error (see post).
func (d *Driver) do(ctx context.Context, fn func(now time.Time) error) error {
	return d.post(ctx, &input{fn: fn, reply: make(chan error, 1)})
}

// post queues in for the loop and returns its answer: ErrStopped if the
// loop ended first, ctx.Err() if ctx is done before the loop took it
// (then it was not applied).
func (d *Driver) post(ctx context.Context, in *input) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrStopped
	}
	d.queue = append(d.queue, in)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default: // the loop is woken already
	}
	if d.queued != nil {
		d.queued()
	}
	select {
	case err := <-in.reply:
		return err
	case <-ctx.Done():
		if d.withdraw(in) {
			return ctx.Err()
		}
		return <-in.reply // taken meanwhile: it is answered
	}
}

// withdraw takes in out of the queue if the loop has not taken it.
func (d *Driver) withdraw(in *input) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, q := range d.queue {
		if q == in {
			d.queue = slices.Delete(d.queue, i, i+1)
			return true
		}
	}
	return false
}

// Ready returns the channel of Ready values, one per decision that had
// something for the runtime, in order. It is closed when the loop ends.
// The runtime must keep reading it. A Ready received is the receiver's (a
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

// Submit adds a job (Scheduler.Submit).
func (d *Driver) Submit(ctx context.Context, spec JobSpec) error {
	return d.do(ctx, func(now time.Time) error { return d.s.Submit(now, spec) })
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

// Status returns a snapshot of a job (Scheduler.Status).
func (d *Driver) Status(ctx context.Context, job string) (JobStatus, error) {
	var st JobStatus
	err := d.post(ctx, &input{fn: func(time.Time) error {
		var err error
		st, err = d.s.Status(job)
		return err
	}, reply: make(chan error, 1), read: true})
	return st, err
}

// ClusterInput runs fn on the loop with the clock's time
// (Scheduler.ClusterInput): the inputs of a cluster that decides outside
// the process (a Slurm cluster's command results and observations). The
// admission's decisions reach the jobs in the Ready of the same turn.
func (d *Driver) ClusterInput(ctx context.Context, fn func(now time.Time) error) error {
	return d.do(ctx, func(now time.Time) error { return d.s.ClusterInput(now, fn) })
}
