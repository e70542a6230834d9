// Package driverloop is the event loop of the drivers (scheduler.Driver,
// multijob.Driver): one goroutine that owns a deterministic state machine
// (a Machine) and a clock. Inputs are posted from any goroutine and
// applied on the loop with the clock's time, each answered with the
// machine's error; the outputs go out on a channel, one at a time, in
// order; one timer is kept armed for the machine's next deadline, and its
// callback only posts a tick to the loop. The drivers add their input
// methods on top.
package driverloop

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"
)

// Machine is what a Loop drives. The Loop calls it from its goroutine
// only.
type Machine[R any] interface {
	// Output returns the next output for the runtime, or false if there
	// is none. It is called whenever no output waits for its reader (in
	// a batching Loop, only after inputs or a tick changed something).
	// The output must be the receiver's: later calls must not change it.
	Output() (R, bool)
	// Tick fires the timeouts due at now.
	Tick(now time.Time) error
	// NextDeadline says when Tick next has work to do.
	NextDeadline() (time.Time, bool)
}

// Config configures a Loop.
type Config struct {
	// Clock gives the time of every input and the one timer; nil means
	// the wall clock.
	Clock clock.Clock
	// Logger; nil means zap.NewNop().
	Logger *zap.Logger
	// ErrStopped is what inputs return once the loop has ended.
	ErrStopped error
	// Batch makes a turn of the loop one instant: before each output
	// every input queued so far, and a tick due, are applied, so
	// simultaneous inputs are decided together. Without it, the loop
	// takes one input at a time and asks for an output after each.
	Batch bool
	// Changed makes the first turn ask for an output even without an
	// input (a batching machine given inputs before the loop started).
	Changed bool
	// Queued, if set (by tests), runs after each input was queued.
	Queued func()
}

// Loop is a running event loop.
type Loop[R any] struct {
	m   Machine[R]
	cfg Config
	clk clock.Clock
	log *zap.Logger

	mu     sync.Mutex
	queue  []*input // inputs posted and not taken yet
	closed bool     // the loop ended: inputs are refused
	wake   chan struct{}
	outc   chan R
	tickc  chan struct{}
	stopc  chan struct{}
	done   chan struct{}
	stop   sync.Once

	// Owned by the loop goroutine.
	timer   *clock.Timer
	armedAt time.Time
	changed bool // inputs or a tick were applied since the last output
}

// input is one call of an input method, queued for the loop.
type input struct {
	fn    func(now time.Time) error
	reply chan error // the loop answers every input it took, once
	read  bool       // a query: it changes nothing
}

// Start starts the loop of m. It runs until Stop is called or ctx is
// done.
func Start[R any](ctx context.Context, m Machine[R], cfg Config) *Loop[R] {
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	l := &Loop[R]{
		m: m, cfg: cfg, clk: cfg.Clock, log: cfg.Logger,
		wake:    make(chan struct{}, 1),
		outc:    make(chan R),
		tickc:   make(chan struct{}, 1),
		stopc:   make(chan struct{}),
		done:    make(chan struct{}),
		changed: cfg.Changed,
	}
	go l.run(ctx)
	return l
}

func (l *Loop[R]) run(ctx context.Context) {
	defer close(l.done)
	defer close(l.outc)
	defer l.refuseQueued()
	defer func() {
		if l.timer != nil {
			l.timer.Stop()
		}
	}()
	var pending *R
	for {
		if pending == nil && (l.changed || !l.cfg.Batch) {
			if l.cfg.Batch {
				// The end of a turn: every input queued meanwhile joins
				// this instant.
				for l.take() > 0 { // (inputs may queue while one is applied)
				}
				l.takeTick()
			}
			l.changed = false
			if out, ok := l.m.Output(); ok {
				pending = &out
			}
			l.rearm()
		}
		var outc chan R
		var out R
		if pending != nil {
			outc, out = l.outc, *pending
		}
		select {
		case <-l.wake:
			l.take()
		case outc <- out:
			pending = nil
		case <-l.tickc:
			l.tick()
		case <-l.stopc:
			return
		case <-ctx.Done():
			return
		}
		l.rearm()
	}
}

// take applies the inputs queued so far, in the order they came (one
// without Batch, and the loop is woken again for the others), and
// returns how many it applied.
func (l *Loop[R]) take() int {
	l.mu.Lock()
	queue := l.queue
	if l.cfg.Batch || len(queue) <= 1 {
		l.queue = nil
	} else {
		queue, l.queue = queue[:1], slices.Clone(queue[1:])
		l.signal()
	}
	l.mu.Unlock()
	for _, in := range queue {
		err := in.fn(l.clk.Now())
		if !in.read {
			// The timer follows the input before it is answered: a caller
			// that moves a mock clock next finds it armed.
			l.changed = true
			l.rearm()
		}
		in.reply <- err
	}
	return len(queue)
}

// takeTick fires the timeouts if a tick is posted.
func (l *Loop[R]) takeTick() {
	select {
	case <-l.tickc:
		l.tick()
	default:
	}
}

// refuseQueued ends the queue: the inputs in it and every input posted
// from now on return ErrStopped.
func (l *Loop[R]) refuseQueued() {
	l.mu.Lock()
	queue := l.queue
	l.queue, l.closed = nil, true
	l.mu.Unlock()
	for _, in := range queue {
		in.reply <- l.cfg.ErrStopped
	}
}

// tick fires the timeouts due now.
func (l *Loop[R]) tick() {
	l.armedAt = time.Time{}
	if err := l.m.Tick(l.clk.Now()); err != nil {
		l.log.Warn("tick refused", zap.Error(err))
	}
	l.changed = true
}

// rearm keeps one timer armed for the machine's next deadline.
func (l *Loop[R]) rearm() {
	next, ok := l.m.NextDeadline()
	if !ok {
		if l.timer != nil {
			l.timer.Stop()
			l.timer, l.armedAt = nil, time.Time{}
		}
		return
	}
	if l.timer != nil && next.Equal(l.armedAt) {
		return
	}
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	// A deadline already due is posted directly: a negative duration would
	// move a mock clock backwards, and a mock fires even a zero-duration
	// timer only when it is moved.
	wait := next.Sub(l.clk.Now())
	if wait <= 0 {
		l.armedAt = time.Time{}
		l.postTick()
		return
	}
	l.armedAt = next
	l.timer = l.clk.AfterFunc(wait, l.postTick)
}

// postTick posts a tick to the loop unless one is pending; it never
// blocks, so a timer callback returns at once.
func (l *Loop[R]) postTick() {
	select {
	case l.tickc <- struct{}{}:
	default:
	}
}

// signal wakes the loop unless it is woken already.
func (l *Loop[R]) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Do runs fn on the loop with the clock's time and returns its error,
// once the loop's timer is armed for the machine's next deadline as fn
// left it (a test may move a mock clock at once):
// ErrStopped if the loop ended first, ctx.Err() if ctx is done before the
// loop took it (then it was not applied).
func (l *Loop[R]) Do(ctx context.Context, fn func(now time.Time) error) error {
	return l.post(ctx, &input{fn: fn, reply: make(chan error, 1)})
}

// Read is Do for a query, which changes nothing: in a batching loop it
// does not make the turn ask for an output.
func (l *Loop[R]) Read(ctx context.Context, fn func(now time.Time) error) error {
	return l.post(ctx, &input{fn: fn, reply: make(chan error, 1), read: true})
}

// post queues in for the loop and returns its answer (see Do).
func (l *Loop[R]) post(ctx context.Context, in *input) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return l.cfg.ErrStopped
	}
	l.queue = append(l.queue, in)
	l.mu.Unlock()
	l.signal()
	if l.cfg.Queued != nil {
		l.cfg.Queued()
	}
	select {
	case err := <-in.reply:
		return err
	case <-ctx.Done():
		if l.withdraw(in) {
			return ctx.Err()
		}
		return <-in.reply // taken meanwhile: it is answered
	}
}

// withdraw takes in out of the queue if the loop has not taken it.
func (l *Loop[R]) withdraw(in *input) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, q := range l.queue {
		if q == in {
			l.queue = slices.Delete(l.queue, i, i+1)
			return true
		}
	}
	return false
}

// Out returns the channel of outputs, in order. It is closed when the
// loop ends.
func (l *Loop[R]) Out() <-chan R { return l.outc }

// Done is closed when the loop has ended.
func (l *Loop[R]) Done() <-chan struct{} { return l.done }

// Stop ends the loop and waits for it. Safe to call more than once and
// from any goroutine.
func (l *Loop[R]) Stop() {
	l.stop.Do(func() { close(l.stopc) })
	<-l.done
}
