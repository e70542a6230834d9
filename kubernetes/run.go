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

// Run is the driver of a Runner: it starts one (NewRunner), submits each
// job at its submission time (its topology's Submission().SubmitAt,
// since Run started), and steps the Runner on clk whenever the
// informers' caches change (changes within Coalesce make one Step), a
// submission or a timer of the Runner is due (NextWake), or poll passed
// since the last Step (0 means DefaultPoll), until every job ended, ctx
// ends, or nothing can happen any more (a *DeadlockError,
// Runner.Deadlock). Whatever happens, it then deletes every pod of the
// run (Close, on a context of its own, for at most 2 minutes) and returns
// how the jobs ended.
func Run(ctx context.Context, cfg RunnerConfig, clk clock.Clock, poll time.Duration, specs ...multijob.JobSpec) (ends []multijob.JobEnd, err error) {
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
	err = newLoop(r, clk.Now(), specs, nil, nil).run(ctx, clk, poll)
	return r.Ends(), err
}
