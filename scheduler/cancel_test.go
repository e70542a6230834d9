package scheduler

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
)

// Cancel (a kill) cancels every running task, withdraws what waits and
// gives every slot back; the job fails with a *CancelError; a second
// Cancel changes nothing.
func TestCancelEndsTheJob(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.PointwisePipelinedOnly)
	h := newHarness(t, rs, Config{}, 1)
	h.offer(h.unknownSlots(2)...)
	h.start()
	require.NotEmpty(t, h.f.running, "the first region runs")
	running := len(h.f.running)
	killed := errors.New("killed by bob")
	h.begin()
	require.NoError(t, h.s.Cancel(h.now, killed))
	h.check()
	assert.Len(t, h.f.cancels, running, "every running task canceled")
	assert.Equal(t, JobFailed, h.s.State())
	var ce *CancelError
	require.ErrorAs(t, h.s.Err(), &ce)
	assert.ErrorIs(t, h.s.Err(), ErrCanceled)
	assert.ErrorIs(t, h.s.Err(), killed)
	h.checkClean()
	assert.ErrorIs(t, h.s.Cancel(h.now, killed), ErrNotRunning)
}
