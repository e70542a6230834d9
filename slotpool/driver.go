package slotpool

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/regionsched/regionsched/resource"
	"go.uber.org/zap"
)

// DriverConfig configures a Driver.
type DriverConfig struct {
	// Clock gives the time and the one timer; nil means the wall clock.
	// Tests pass clock.NewMock().
	Clock clock.Clock
	// Logger; nil means zap.NewNop().
	Logger *zap.Logger
	// Admission, if set, is an in-process admission: the driver's loop
	// hands it the pool's ToAdmission messages and applies its answers,
	// and ticks it. Without it, ToAdmission messages go to OnEvent and
	// answers come in through Deliver.
	Admission Admission
	// OnEvent receives, on the loop goroutine, every event no
	// AllocateBulk/Submit caller waits for: Lost (fail those tasks over),
	// outcomes of bulks submitted elsewhere, ToAdmission messages when no
	// Admission is set. It must not call the Driver (it would deadlock);
	// hand work to another goroutine instead.
	OnEvent func(Event)
}

// Result is the outcome of a bulk: its slots (Slots[i] serves request i),
// or the error it failed with.
type Result struct {
	Bulk  BulkID
	Slots []SlotID
	Err   error
}

// Driver owns a Pool and runs it on one goroutine, the event loop, so
// that callers on other goroutines can use it. Time comes from one
// clock.Clock; the driver arms a single timer for the pool's (and the
// admission's) next deadline, whose callback only posts a tick to the
// loop.
type Driver struct {
	pool    *Pool
	clk     clock.Clock
	log     *zap.Logger
	adm     Admission
	onEvent func(Event)

	cmds chan command
	tick chan struct{}
	quit chan struct{}
	done chan struct{}
	stop sync.Once

	// Owned by the loop goroutine.
	waiters map[BulkID]chan Result
	timer   *clock.Timer
	armedAt time.Time
}

type command struct {
	fn    func(now time.Time) error
	reply chan error
}

// NewDriver starts the event loop of pool. Close stops it. The pool must
// not be used directly afterwards.
func NewDriver(pool *Pool, cfg DriverConfig) *Driver {
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	d := &Driver{
		pool:    pool,
		clk:     cfg.Clock,
		log:     cfg.Logger,
		adm:     cfg.Admission,
		onEvent: cfg.OnEvent,
		cmds:    make(chan command),
		tick:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
		waiters: make(map[BulkID]chan Result),
	}
	go d.loop()
	return d
}

func (d *Driver) loop() {
	defer close(d.done)
	for {
		var reply chan error
		var err error
		select {
		case c := <-d.cmds:
			reply = c.reply
			err = c.fn(d.clk.Now())
		case <-d.tick:
			now := d.clk.Now()
			d.armedAt = time.Time{}
			d.pool.Tick(now)
			if d.adm != nil {
				d.adm.Tick(now)
			}
		case <-d.quit:
			if d.timer != nil {
				d.timer.Stop()
			}
			for id, w := range d.waiters {
				w <- Result{Bulk: id, Err: ErrClosed}
			}
			return
		}
		now := d.clk.Now()
		d.pump(now)
		d.rearm(now)
		if reply != nil {
			reply <- err
		}
	}
}

// pump carries events and admission messages until both sides are quiet.
func (d *Driver) pump(now time.Time) {
	for {
		events := d.pool.Ready()
		for _, ev := range events {
			d.route(now, ev)
		}
		var msgs []FromAdmission
		if d.adm != nil {
			msgs = d.adm.Ready()
		}
		if len(events) == 0 && len(msgs) == 0 {
			return
		}
		for _, m := range msgs {
			if err := d.pool.Admit(now, m); err != nil {
				d.log.Warn("admission message rejected", zap.Error(err))
			}
		}
	}
}

func (d *Driver) route(now time.Time, ev Event) {
	switch e := ev.(type) {
	case Fulfilled:
		if w, ok := d.waiters[e.Bulk]; ok {
			delete(d.waiters, e.Bulk)
			w <- Result{Bulk: e.Bulk, Slots: e.Slots}
			return
		}
	case Failed:
		if w, ok := d.waiters[e.Bulk]; ok {
			delete(d.waiters, e.Bulk)
			w <- Result{Bulk: e.Bulk, Err: e.Err}
			return
		}
	case ToAdmission:
		if d.adm != nil {
			if err := d.adm.Handle(now, e); err != nil {
				d.log.Warn("admission rejected message", zap.Error(err))
			}
			return
		}
	}
	if d.onEvent != nil {
		d.onEvent(ev)
	}
}

// rearm keeps one timer armed for the earliest deadline.
func (d *Driver) rearm(now time.Time) {
	next, ok := d.pool.NextDeadline()
	if d.adm != nil {
		if a, aok := d.adm.NextDeadline(); aok && (!ok || a.Before(next)) {
			next, ok = a, true
		}
	}
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
	// Clamp: a negative duration would move a mock clock backwards, and a
	// mock clock fires even a zero-duration timer only when moved, so a
	// deadline already due is posted directly.
	wait := next.Sub(now)
	if wait <= 0 {
		d.armedAt = time.Time{}
		select {
		case d.tick <- struct{}{}:
		default: // a tick is already pending
		}
		return
	}
	d.armedAt = next
	d.timer = d.clk.AfterFunc(wait, func() {
		select {
		case d.tick <- struct{}{}:
		default: // a tick is already pending
		}
	})
}

// do runs fn on the loop and returns its error.
func (d *Driver) do(fn func(now time.Time) error) error {
	reply := make(chan error, 1)
	select {
	case d.cmds <- command{fn: fn, reply: reply}:
	case <-d.done:
		return ErrClosed
	}
	return <-reply
}

// Submit submits a bulk and returns at once with a channel that delivers
// its outcome. When Submit returns, the bulk is in the pool.
func (d *Driver) Submit(b Bulk) (<-chan Result, error) {
	ch := make(chan Result, 1)
	err := d.do(func(now time.Time) error {
		// Register only an accepted bulk: a rejected duplicate must not
		// replace the waiter of the bulk it duplicates. Events are pumped
		// after this function returns, so none is missed.
		if err := d.pool.Submit(now, b); err != nil {
			return err
		}
		d.waiters[b.ID] = ch
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ch, nil
}

// AllocateBulk submits a bulk and blocks until it is fulfilled or fails,
// or ctx is done; then the bulk is canceled in the pool (slots it got in
// the meantime go back) and ctx.Err() is returned.
func (d *Driver) AllocateBulk(ctx context.Context, b Bulk) (Result, error) {
	ch, err := d.Submit(b)
	if err != nil {
		return Result{Bulk: b.ID, Err: err}, err
	}
	select {
	case r := <-ch:
		return r, r.Err
	case <-ctx.Done():
	}
	err = d.do(func(now time.Time) error {
		delete(d.waiters, b.ID)
		if err := d.pool.Cancel(now, b.ID); err != nil && !errors.Is(err, ErrBulkFinished) {
			return err
		}
		return nil
	})
	if err != nil {
		return Result{Bulk: b.ID, Err: err}, err
	}
	return Result{Bulk: b.ID, Err: ctx.Err()}, ctx.Err()
}

// Cancel cancels a bulk (see Pool.Cancel). A caller waiting for it (Submit
// or AllocateBulk) gets a result whose error wraps ErrBulkCanceled.
func (d *Driver) Cancel(id BulkID) error {
	return d.do(func(now time.Time) error {
		if err := d.pool.Cancel(now, id); err != nil {
			return err
		}
		if ch, ok := d.waiters[id]; ok {
			delete(d.waiters, id)
			ch <- Result{Bulk: id, Err: &BulkError{Op: "cancel", Bulk: id, Err: ErrBulkCanceled}}
		}
		return nil
	})
}

// Offer offers slots (see Pool.Offer).
func (d *Driver) Offer(slots ...Slot) error {
	return d.do(func(now time.Time) error { return d.pool.Offer(now, slots...) })
}

// Release says the task in a slot ended (see Pool.Release).
func (d *Driver) Release(id SlotID) error {
	return d.do(func(now time.Time) error { return d.pool.Release(now, id) })
}

// Lose says a slot is gone (see Pool.Lose).
func (d *Driver) Lose(id SlotID) error {
	return d.do(func(now time.Time) error { return d.pool.Lose(now, id) })
}

// SetCapacity declares the cluster's capacity (see Pool.SetCapacity).
func (d *Driver) SetCapacity(capacity []resource.Count) error {
	return d.do(func(now time.Time) error {
		d.pool.SetCapacity(now, capacity)
		return nil
	})
}

// Deliver applies messages from an admission that runs elsewhere (see
// Pool.Admit); it stops at the first rejected message.
func (d *Driver) Deliver(msgs ...FromAdmission) error {
	return d.do(func(now time.Time) error {
		for _, m := range msgs {
			if err := d.pool.Admit(now, m); err != nil {
				return err
			}
		}
		return nil
	})
}

// Bulk returns a snapshot of a bulk (see Pool.Bulk).
func (d *Driver) Bulk(id BulkID) (info BulkInfo, ok bool, err error) {
	err = d.do(func(time.Time) error {
		info, ok = d.pool.Bulk(id)
		return nil
	})
	return info, ok, err
}

// Stats returns the pool's counts.
func (d *Driver) Stats() (st Stats, err error) {
	err = d.do(func(time.Time) error {
		st = d.pool.Stats()
		return nil
	})
	return st, err
}

// Close stops the loop; callers still waiting get ErrClosed. Safe to call
// more than once.
func (d *Driver) Close() error {
	d.stop.Do(func() { close(d.quit) })
	<-d.done
	return nil
}
