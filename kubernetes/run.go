package kubernetes

import (
	"context"
	"errors"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/regionsched/regionsched/multijob"
)

// closeTimeout bounds the deletion of a run's pods at the end of Run: a
// run of thousands of pods on a busy API server takes tens of seconds.
const closeTimeout = 2 * time.Minute

// Run is the driver of a Runner: it starts one (NewRunner), submits the
// jobs, and steps it every poll (default 200ms) on clk until every job
// ended, ctx ends, or nothing can happen any more (a *DeadlockError,
// Runner.Deadlock). Whatever happens, it then deletes every pod of the
// run (Close, on a context of its own, for at most 2 minutes) and returns
// how the jobs ended.
func Run(ctx context.Context, cfg RunnerConfig, clk clock.Clock, poll time.Duration, specs ...multijob.JobSpec) (ends []multijob.JobEnd, err error) {
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	r, err := NewRunner(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		defer cancel()
		if cerr := r.Close(cctx); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	for _, spec := range specs {
		if err := r.Submit(clk.Now(), spec); err != nil {
			return nil, err
		}
	}
	t := clk.Ticker(poll)
	defer t.Stop()
	for {
		now := clk.Now()
		if err = r.Step(ctx, now); err != nil {
			return r.Ends(), err
		}
		if r.Done() {
			return r.Ends(), nil
		}
		if d := r.Deadlock(now); d != nil {
			return r.Ends(), d
		}
		select {
		case <-ctx.Done():
			return r.Ends(), ctx.Err()
		case <-t.C:
		}
	}
}
