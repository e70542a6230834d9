package scheduler

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

func TestJobStateString(t *testing.T) {
	assert.Equal(t, "created", JobCreated.String())
	assert.Equal(t, "running", JobRunning.String())
	assert.Equal(t, "finished", JobFinished.String())
	assert.Equal(t, "failed", JobFailed.String())
	assert.Equal(t, "JobState(9)", JobState(9).String())
}

func TestBulkIDRoundTrip(t *testing.T) {
	seen := map[slotpool.BulkID]bool{}
	for _, r := range []region.ID{0, 1, 7, 1 << 20, 1<<31 - 1} {
		for _, a := range []strategy.Attempt{0, 1, 2, 1000, 1<<31 - 1} {
			id := bulkID(r, a)
			assert.Positive(t, id)
			assert.Equal(t, r, regionOfBulk(id), "region %d attempt %d", r, a)
			assert.False(t, seen[id], "bulk id %d reused", id)
			seen[id] = true
		}
	}
}

// TestNotRunning: reports before Start and after the end are refused with
// ErrNotRunning; Start twice with ErrAlreadyStarted.
func TestNotRunning(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	h := newHarness(t, rs, Config{}, 1)
	a0 := h.byName("A#0")
	assert.Equal(t, JobCreated, h.s.State())
	assert.ErrorIs(t, h.s.TaskRunning(h.now, a0, 0), ErrNotRunning)
	assert.ErrorIs(t, h.s.TaskFinished(h.now, a0, 0), ErrNotRunning)
	assert.ErrorIs(t, h.s.TaskFailed(h.now, a0, 0), ErrNotRunning)
	// Slots and capacity may come before Start; a free slot may go.
	h.offer(h.unknownSlots(2)...)
	require.NoError(t, h.s.SlotLost(h.now, 2))
	delete(h.inPool, 2)
	h.start()
	assert.Equal(t, JobRunning, h.s.State())
	assert.ErrorIs(t, h.s.Start(h.now), ErrAlreadyStarted)
	h.drive()
	require.Equal(t, JobFinished, h.s.State())
	assert.NoError(t, h.s.Err())
	assert.ErrorIs(t, h.s.TaskRunning(h.now, a0, 0), ErrNotRunning)
	assert.ErrorIs(t, h.s.TaskFinished(h.now, a0, 0), ErrNotRunning)
	assert.ErrorIs(t, h.s.TaskFailed(h.now, a0, 0), ErrNotRunning)
	assert.ErrorIs(t, h.s.Start(h.now), ErrAlreadyStarted)
	h.checkClean()
}

// TestBadReports: unknown vertices, attempts from the future, lost
// partitions that do not exist, reports of tasks never deployed: typed
// errors, no panic, nothing changes.
func TestBadReports(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	h := newHarness(t, rs, Config{}, 1)
	h.offer(h.unknownSlots(1)...)
	h.start()
	a0, a1, b0 := h.byName("A#0"), h.byName("A#1"), h.byName("B#0")
	require.Contains(t, h.f.running, a0)
	require.NotContains(t, h.f.running, a1, "A#1 waits for the one slot")
	st, err := h.s.strategy.Vertex(a1)
	require.NoError(t, err)
	require.Equal(t, strategy.TaskScheduled, st.State)

	n := topology.ExecutionVertexID(rs.Topology().NumExecutionVertices())
	np := topology.ResultPartitionID(rs.Topology().NumPartitions())
	before := h.snapshot()
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"finish unknown vertex", func() error { return h.s.TaskFinished(h.now, n, 0) }, strategy.ErrUnknownVertex},
		{"finish negative vertex", func() error { return h.s.TaskFinished(h.now, -1, 0) }, strategy.ErrUnknownVertex},
		{"running unknown vertex", func() error { return h.s.TaskRunning(h.now, n+100, 0) }, strategy.ErrUnknownVertex},
		{"fail unknown vertex", func() error { return h.s.TaskFailed(h.now, -5, 0) }, strategy.ErrUnknownVertex},
		{"finish future attempt", func() error { return h.s.TaskFinished(h.now, a0, 1) }, strategy.ErrUnknownAttempt},
		{"fail negative attempt", func() error { return h.s.TaskFailed(h.now, a0, -1) }, strategy.ErrUnknownAttempt},
		{"fail with unknown lost partition", func() error { return h.s.TaskFailed(h.now, a0, 0, np) }, strategy.ErrUnknownPartition},
		{"fail with negative lost partition", func() error { return h.s.TaskFailed(h.now, a0, 0, 0, -1) }, strategy.ErrUnknownPartition},
		{"finish a task waiting for slots", func() error { return h.s.TaskFinished(h.now, a1, 0) }, strategy.ErrInvalidTransition},
		{"running a task waiting for slots", func() error { return h.s.TaskRunning(h.now, a1, 0) }, strategy.ErrInvalidTransition},
		{"fail a task waiting for slots", func() error { return h.s.TaskFailed(h.now, a1, 0) }, strategy.ErrInvalidTransition},
		{"finish a task never scheduled", func() error { return h.s.TaskFinished(h.now, b0, 0) }, strategy.ErrInvalidTransition},
		{"fail a task never scheduled", func() error { return h.s.TaskFailed(h.now, b0, 0) }, strategy.ErrInvalidTransition},
	}
	for _, c := range cases {
		var err error
		require.NotPanics(t, func() { err = c.call() }, c.name)
		assert.ErrorIs(t, err, c.want, c.name)
		h.check()
		assert.Equal(t, before, h.snapshot(), "%s changed something", c.name)
	}
	var uv *UnknownVertexError
	assert.True(t, errors.As(h.s.TaskFinished(h.now, n, 0), &uv))
	var up *UnknownPartitionError
	assert.True(t, errors.As(h.s.TaskFailed(h.now, a0, 0, np), &up))
	var te *TransitionError
	require.True(t, errors.As(h.s.TaskFinished(h.now, a1, 0), &te))
	assert.Equal(t, "A#1", te.Name)
	_, ok := h.s.SlotOf(n)
	assert.False(t, ok)
	_, ok = h.s.SlotOf(a1)
	assert.False(t, ok)

	// Reporting a finished task again is the strategy's transition error.
	h.finish(a0)
	assert.ErrorIs(t, h.s.TaskFinished(h.now, a0, 0), strategy.ErrInvalidTransition)
	assert.ErrorIs(t, h.s.TaskFailed(h.now, a0, 0), strategy.ErrInvalidTransition)
	h.check()
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	h.checkClean()
}

// TestOfferDuplicate: a duplicate slot id is the pool's typed error.
func TestOfferDuplicate(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	h := newHarness(t, rs, Config{}, 1)
	slots := h.unknownSlots(1)
	h.offer(slots...)
	err := h.s.Offer(h.now, slots...)
	assert.ErrorIs(t, err, slotpool.ErrDuplicateSlot)
	var se *slotpool.SlotError
	assert.True(t, errors.As(err, &se))
}

// TestTaskStatesMatchTheStrategys: the scheduler's task states are the
// strategy's, in the same order, under the same names (taskState converts
// by number).
func TestTaskStatesMatchTheStrategys(t *testing.T) {
	for st := strategy.TaskCreated; st <= strategy.TaskCanceled; st++ {
		assert.Equal(t, st.String(), taskState(st).String())
	}
	assert.Equal(t, []TaskState{TaskCreated, TaskScheduled, TaskDeploying, TaskRunning, TaskFinished, TaskFailed, TaskCanceled},
		[]TaskState{taskState(strategy.TaskCreated), taskState(strategy.TaskScheduled), taskState(strategy.TaskDeploying),
			taskState(strategy.TaskRunning), taskState(strategy.TaskFinished), taskState(strategy.TaskFailed), taskState(strategy.TaskCanceled)})
}

// TestDefaultSelectiveShareIsTheStrategys: the default the scheduler
// documents is the one its strategy applies.
func TestDefaultSelectiveShareIsTheStrategys(t *testing.T) {
	assert.Equal(t, strategy.DefaultSelectiveShare, DefaultSelectiveShare)
}
