package scheduler

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// TestSlotLostInUse loses a slot that runs tasks of the all-pipelined
// FLIP-119 region, with one spare slot: every task of the region is
// canceled (those in the lost slot too: the runtime must forget them),
// the region restarts with attempt 1 in the remaining slots, never the
// lost one, and the job finishes.
func TestSlotLostInUse(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	for seed := uint64(1); seed <= 10; seed++ {
		h := newHarness(t, rs, Config{}, seed)
		h.offer(h.unknownSlots(5)...)
		h.start()
		require.Len(t, h.f.running, 12)
		for range int(seed) % 4 {
			h.step()
		}
		ids := h.f.runningIDs()
		victim := h.f.running[ids[h.rng.IntN(len(ids))]].Slot
		inLost := h.f.runningIn(victim)
		require.NotEmpty(t, inLost)
		running := len(ids)

		h.lose(victim)
		require.Len(t, h.f.restarts, 1)
		assert.Equal(t, inLost[0], h.f.restarts[0].Failed, "the first task in the lost slot is the failed one")
		assert.Equal(t, []region.ID{0}, h.f.restarts[0].Regions)
		assert.Len(t, h.f.cancels, running, "every running task of the region is canceled")
		for _, v := range inLost {
			assert.Contains(t, h.f.cancels, cancelCall{V: v, Attempt: 0, Call: h.f.call})
		}
		for _, rc := range h.f.releases {
			assert.NotEqual(t, victim, rc.Slot, "a lost slot is not released")
		}
		// Redeployed at once in the four slots left.
		require.Len(t, h.f.running, 12)
		for _, d := range h.f.running {
			assert.Equal(t, Attempt(1), d.Attempt)
			assert.NotEqual(t, victim, d.Slot)
		}
		assert.Equal(t, Stats{RegionsDeployed: 2, Failovers: 1, RegionRestarts: 1}, h.stats())
		h.drive()
		assert.Equal(t, JobFinished, h.s.State())
		h.checkClean()
		assert.Equal(t, 4, h.s.Status().Pool.Free)
	}
}

// TestSlotLostWithFinishedTask: A#0 finished in a slot it shares with
// B#0, which still runs; losing the slot loses A#0's blocking partition
// too. The restart is what the strategy computes for B#0 with A#0's
// partitions lost, E (which read them) runs again, and the job finishes.
func TestSlotLostWithFinishedTask(t *testing.T) {
	job := build(t, topology.NewBuilder("shared").
		AddVertex(topology.JobVertex{ID: "A", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "E", Parallelism: 1}).
		ConnectPinned("A", "B", exchange.Forward, exchange.Pipelined).
		ConnectPinned("A", "E", exchange.Forward, exchange.Blocking))
	rs := region.FromJob(job, exchange.AllBlocking)
	require.Equal(t, 2, rs.NumRegions())
	h := newHarness(t, rs, Config{}, 1)
	h.offer(h.unknownSlots(2)...)
	h.start()
	a, b, e := h.byName("A#0"), h.byName("B#0"), h.byName("E#0")
	slot := h.f.running[a].Slot
	require.Equal(t, slot, h.f.running[b].Slot, "A#0 and B#0 share a slot")
	h.finish(a)
	require.Contains(t, h.f.running, e, "E#0 reads A#0's finished partition")
	lost, err := h.s.strategy.BlockingPartitionsOf(a)
	require.NoError(t, err)
	want, err := h.s.strategy.RegionsToRestart(b, lost...)
	require.NoError(t, err)

	h.lose(slot)
	require.Len(t, h.f.restarts, 1)
	assert.Equal(t, restartCall{Failed: b, Regions: want}, h.f.restarts[0])
	assert.ElementsMatch(t, []cancelCall{{V: b, Call: h.f.call}, {V: e, Call: h.f.call}}, h.f.cancels)
	st, err := h.s.strategy.Vertex(a)
	require.NoError(t, err)
	assert.Equal(t, strategy.Attempt(1), st.Attempt)
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	_, again := h.deployedIn[regionAttempt{rs.RegionOf(e), 1}]
	assert.True(t, again, "E ran again")
	h.checkClean()
}

// TestSlotLostFree loses a free slot and a slot held by the waiting head:
// nothing visible changes, and the lost ids are gone from the pool.
func TestSlotLostFree(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	h := newHarness(t, rs, Config{}, 1)
	slots := h.unknownSlots(5)
	h.offer(slots...)
	h.start()
	var free slotpool.SlotID
	for _, sl := range slots {
		if len(h.f.runningIn(sl.ID)) == 0 {
			free = sl.ID
		}
	}
	require.NotZero(t, free)
	before := h.snapshot()
	h.lose(free)
	assert.Equal(t, before.Stats, h.stats())
	assert.Equal(t, before.Vertices, h.snapshot().Vertices)
	assert.Equal(t, before.Deploys, len(h.f.deploys))
	assert.Equal(t, before.Cancels, len(h.f.cancels))
	assert.Equal(t, before.Releases, len(h.f.releases))
	assert.Empty(t, h.f.restarts)
	_, ok := h.s.pool.Slot(free)
	assert.False(t, ok)

	// Unknown (and already lost) slot ids are the pool's typed error.
	for _, id := range []slotpool.SlotID{free, 999, -1} {
		err := h.s.SlotLost(h.now, id)
		var se *slotpool.SlotError
		require.True(t, errors.As(err, &se), "%v", err)
		assert.Equal(t, id, se.Slot)
		assert.ErrorIs(t, err, slotpool.ErrUnknownSlot)
	}
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	h.checkClean()
}

// TestSlotLostHeldByWaitingHead: the head holds a slot while it waits;
// losing that slot changes nothing but the head waits for another one.
func TestSlotLostHeldByWaitingHead(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.PointwisePipelinedOnly)
	h := newHarness(t, rs, Config{}, 1)
	h.start() // no slots yet: every source region waits
	require.NotEmpty(t, h.s.Status().Waiting)
	one := h.unknownSlots(1)
	h.offer(one...)
	info, ok := h.s.pool.Slot(one[0].ID)
	require.True(t, ok)
	require.Equal(t, pool.SlotHeld, info.State, "region 0 needs %d slots", rs.SlotCount(0))
	h.lose(one[0].ID)
	assert.Empty(t, h.f.deploys)
	assert.Empty(t, h.f.restarts)
	h.offer(h.unknownSlots(rs.MinimumSlots())...)
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	h.checkClean()
}
