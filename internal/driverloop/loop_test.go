package driverloop

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

var errStopped = errors.New("stopped")

// counter is a machine whose inputs append to a log; its output is the
// log since the last output, and its one deadline, if set, is when Tick
// appends "tick".
type counter struct {
	log      []string
	deadline time.Time
}

func (c *counter) Output() ([]string, bool) {
	if len(c.log) == 0 {
		return nil, false
	}
	out := c.log
	c.log = nil
	return out, true
}

func (c *counter) Tick(now time.Time) error {
	if !c.deadline.IsZero() && !now.Before(c.deadline) {
		c.deadline = time.Time{}
		c.log = append(c.log, fmt.Sprintf("tick@%v", now.Unix()))
	}
	return nil
}

func (c *counter) NextDeadline() (time.Time, bool) { return c.deadline, !c.deadline.IsZero() }

// add returns an input that appends s to the log.
func (c *counter) add(s string) func(time.Time) error {
	return func(time.Time) error {
		c.log = append(c.log, s)
		return nil
	}
}

// Without Batch every input gets its own output; the machine's error is
// the input's answer; after Stop inputs return ErrStopped and the output
// channel is closed.
func TestOneInputOneOutput(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	c := &counter{}
	l := Start[[]string](ctx, c, Config{Clock: clock.NewMock(), ErrStopped: errStopped})
	require.NoError(t, l.Do(ctx, c.add("a")))
	require.NoError(t, l.Do(ctx, c.add("b")))
	assert.Equal(t, []string{"a"}, <-l.Out())
	assert.Equal(t, []string{"b"}, <-l.Out())
	boom := errors.New("boom")
	assert.Equal(t, boom, l.Do(ctx, func(time.Time) error { return boom }))
	l.Stop()
	l.Stop()
	_, open := <-l.Out()
	assert.False(t, open)
	assert.ErrorIs(t, l.Do(ctx, c.add("c")), errStopped)
	<-l.Done()
}

// With Batch the inputs applied while an output waits for its reader are
// one instant: one output; a Read changes nothing, so no output; with
// Changed the first turn asks for one.
func TestBatch(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	c := &counter{log: []string{"before"}}
	l := Start[[]string](ctx, c, Config{Clock: clock.NewMock(), ErrStopped: errStopped, Batch: true, Changed: true})
	defer l.Stop()
	assert.Equal(t, []string{"before"}, <-l.Out(), "the first turn decides what came before")
	require.NoError(t, l.Do(ctx, c.add("a")))
	require.NoError(t, l.Do(ctx, c.add("b"))) // (taken before "a"'s output is read, or after)
	var all []string
	for len(all) < 2 {
		all = append(all, <-l.Out()...)
	}
	assert.Equal(t, []string{"a", "b"}, all)
	var seen []string
	require.NoError(t, l.Read(ctx, func(time.Time) error { seen = append(seen, "read"); c.log = append(c.log, "x"); return nil }))
	require.NoError(t, l.Do(ctx, c.add("y")))
	assert.Equal(t, []string{"x", "y"}, <-l.Out(), "the read made no turn of its own")
	assert.Equal(t, []string{"read"}, seen)
}

// The timer fires the machine's deadline by itself, with the clock's
// time; a deadline already due is ticked at once.
func TestTimer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	clk := clock.NewMock()
	c := &counter{}
	l := Start[[]string](ctx, c, Config{Clock: clk, ErrStopped: errStopped})
	defer l.Stop()
	at := clk.Now().Add(time.Second)
	require.NoError(t, l.Do(ctx, func(time.Time) error { c.deadline = at; return nil }))
	// (Do returns with the timer armed: the clock may move at once.)
	clk.Add(time.Second)
	assert.Equal(t, []string{fmt.Sprintf("tick@%d", at.Unix())}, <-l.Out())
	due := clk.Now().Add(-time.Second)
	require.NoError(t, l.Do(ctx, func(time.Time) error { c.deadline = due; return nil }))
	assert.Equal(t, []string{fmt.Sprintf("tick@%d", clk.Now().Unix())}, <-l.Out())
}

// An input whose context is done is not applied; a canceled loop context
// ends the loop.
func TestContexts(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	loopCtx, cancelLoop := context.WithCancel(context.Background())
	c := &counter{}
	l := Start[[]string](loopCtx, c, Config{Clock: clock.NewMock(), ErrStopped: errStopped})
	done, cancel := context.WithCancel(context.Background())
	cancel()
	applied := false
	assert.ErrorIs(t, l.Do(done, func(time.Time) error { applied = true; return nil }), context.Canceled)
	cancelLoop()
	<-l.Done()
	assert.False(t, applied)
	assert.ErrorIs(t, l.Do(context.Background(), c.add("a")), errStopped)
}
