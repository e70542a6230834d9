package slurm

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// pacer is the polling goroutine of an Adapter or a Poller: it runs a
// step, waits as long as the step says (polling faster after a change,
// backing off while slurmctld does not answer), is woken early by poke,
// and ends on halt or when its context is done.
type pacer struct {
	clk                clock.Clock
	min, max, retryMax time.Duration

	wake  chan struct{}
	stopc chan struct{}
	done  chan struct{}
	stop  sync.Once

	// Owned by the loop goroutine.
	delay    time.Duration // the wait after a step with nothing new
	failures int           // commands failed in a row (an outage)
}

// pollDefaults fills in the defaults of the polling intervals of an
// Adapter or a poller (PollMin, PollMax, RetryMax): 100 ms, 2 s and 5 s,
// neither maximum below the minimum.
func pollDefaults(pollMin, pollMax, retryMax time.Duration) (time.Duration, time.Duration, time.Duration) {
	if pollMin <= 0 {
		pollMin = 100 * time.Millisecond
	}
	if pollMax < pollMin {
		pollMax = max(pollMin, 2*time.Second)
	}
	if retryMax < pollMin {
		retryMax = max(pollMin, 5*time.Second)
	}
	return pollMin, pollMax, retryMax
}

// newPacer returns a pacer polling every min to max, backing off up to
// retryMax.
func newPacer(clk clock.Clock, min, max, retryMax time.Duration) pacer {
	return pacer{clk: clk, min: min, max: max, retryMax: retryMax, delay: min,
		wake: make(chan struct{}, 1), stopc: make(chan struct{}), done: make(chan struct{})}
}

// loop runs step until halted or ctx is done, waiting what it returns
// between two steps (less than 0: not at all); it closes done.
func (p *pacer) loop(ctx context.Context, step func(context.Context) time.Duration) {
	defer close(p.done)
	for {
		wait := step(ctx)
		if wait < 0 {
			continue
		}
		t := p.clk.Timer(wait)
		select {
		case <-p.wake:
			p.delay = p.min
		case <-t.C:
		case <-p.stopc:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		}
		t.Stop()
	}
}

// poke wakes the loop up for a step at once.
func (p *pacer) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// halt ends the loop and waits for it; safe to call more than once.
func (p *pacer) halt() {
	p.stop.Do(func() { close(p.stopc) })
	<-p.done
}

// next is the wait after a step: the backoff while commands fail, none
// when more commands wait, min after a change, else twice the last wait
// up to max.
func (p *pacer) next(failed, more, changed bool) time.Duration {
	switch {
	case failed || p.failures > 0:
		return p.backoff()
	case more:
		p.delay = p.min
		return -1
	case changed:
		p.delay = p.min
	default:
		p.delay = min(2*p.delay, p.max)
	}
	return p.delay
}

// backoff returns the next wait of a retry: min doubled per failure, up
// to retryMax.
func (p *pacer) backoff() time.Duration {
	d := p.min
	for i := 1; i < p.failures && d < p.retryMax; i++ {
		d *= 2
	}
	return min(d, p.retryMax)
}

// retry runs op until it succeeds or fails otherwise than with
// ErrUnreachable: each unreachable attempt is told to failed (with what)
// and followed by the backoff. It returns op's last error, and done
// false if ctx ended during a backoff.
func (p *pacer) retry(ctx context.Context, what string, op func() error, failed func(what string, err error)) (done bool, err error) {
	for {
		err = op()
		if err == nil || !errors.Is(err, ErrUnreachable) {
			return true, err
		}
		failed(what, err)
		if !p.sleep(ctx, p.backoff()) {
			return false, err
		}
	}
}

// sleep waits d on the clock; false if ctx ended first.
func (p *pacer) sleep(ctx context.Context, d time.Duration) bool {
	t := p.clk.Timer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
