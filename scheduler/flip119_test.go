package scheduler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
)

// TestFLIP119AllModes runs FLIP-119's example in every mode on exactly
// MinimumSlots unknown-sized slots, finishing tasks in several random
// orders; the harness checks on every call that regions deploy whole and
// in one call, shared slots together, after their blocking inputs, into
// slots the pool gave them, never more than offered.
func TestFLIP119AllModes(t *testing.T) {
	job := flip119(t)
	for _, mode := range modes() {
		t.Run(mode.String(), func(t *testing.T) {
			rs := region.FromJob(job, mode)
			for seed := uint64(1); seed <= 20; seed++ {
				h := newHarness(t, rs, Config{}, seed)
				h.offer(h.unknownSlots(rs.MinimumSlots())...)
				h.start()

				// Start asks for the source regions only, in order.
				sources := sourceRegions(rs)
				require.NotEmpty(t, sources)
				var asked []region.ID
				for _, ra := range h.f.requests {
					asked = append(asked, ra.R)
					assert.Zero(t, ra.A)
				}
				if mode.IsHybrid() {
					// The consumers of a source region deployed at once
					// may start too (its hybrid results are consumable).
					require.GreaterOrEqual(t, len(asked), len(sources))
					require.Equal(t, sources, asked[:len(sources)], "Start must ask for the source regions first")
				} else {
					require.Equal(t, sources, asked, "Start must ask for exactly the source regions")
				}
				require.NotEmpty(t, h.f.deploys, "the first source region fits")
				for _, d := range h.f.deploys {
					if !d.Shared { // a consumer may go into the slot of a source it reads live
						assert.Contains(t, sources, rs.RegionOf(d.V), "%s deployed at Start", rs.Topology().VertexName(d.V))
					}
				}

				h.drive()
				require.Equal(t, JobFinished, h.s.State())
				require.NoError(t, h.s.Err())
				assert.Equal(t, rs.NumRegions(), h.stats().RegionsDeployed)
				fromPool := map[region.ID]bool{}
				for _, ra := range h.f.requests {
					fromPool[ra.R] = true
				}
				assert.Equal(t, Stats{RegionsDeployed: rs.NumRegions(), RegionsShared: rs.NumRegions() - len(fromPool)}, h.stats())
				if !mode.IsHybrid() {
					assert.Len(t, fromPool, rs.NumRegions(), "only consumers of hybrid results share their producers' slots")
				}
				assert.LessOrEqual(t, h.f.maxUsed, rs.MinimumSlots())
				assert.Len(t, h.f.deploys, rs.Topology().NumExecutionVertices())
				assert.Empty(t, h.f.cancels)
				assert.Empty(t, h.f.toAdm, "no admission, no messages for one")
				assert.Equal(t, []JobChange{{State: JobRunning}, {State: JobFinished}}, h.f.jobs)

				// Every slot a region got from the pool was released exactly
				// once, after all its tasks (and its guests') finished (the
				// fake checks "after"); a region that shared slots got none.
				released := map[regionAttempt]int{}
				for _, rc := range h.f.releases {
					released[regionAttempt{rc.Region, rc.Attempt}]++
				}
				for r := range region.ID(rs.NumRegions()) {
					want := 0
					if fromPool[r] {
						want = rs.SlotCount(r)
					}
					assert.Equal(t, want, released[regionAttempt{r, 0}], "releases of region %d", r)
				}
				h.checkClean()
				assert.Equal(t, rs.MinimumSlots(), h.s.Status().Pool.Free)
			}
		})
	}
}

// TestSharedSlotReleasedWithLastTask follows one shared slot: in
// all-pipelined mode the whole FLIP-119 job is one region in 4 slots, and
// slot k holds A#k?, B#k?, C#k, D#k. The slot goes back only when its
// last task finishes.
func TestSharedSlotReleasedWithLastTask(t *testing.T) {
	job := flip119(t)
	rs := region.FromJob(job, exchange.AllPipelined)
	require.Equal(t, 1, rs.NumRegions(), "all pipelined: one region")
	h := newHarness(t, rs, Config{}, 1)
	h.offer(h.unknownSlots(4)...)
	h.start()
	require.Len(t, h.f.deploys, 12)

	slots := rs.Slots(0)
	var shared region.Slot
	for _, sl := range slots {
		if len(sl.Members) > len(shared.Members) {
			shared = sl
		}
	}
	require.Greater(t, len(shared.Members), 1)
	pool, ok := h.s.SlotOf(shared.Members[0])
	require.True(t, ok)
	for i, v := range shared.Members {
		got, ok := h.s.SlotOf(v)
		require.True(t, ok)
		require.Equal(t, pool, got, "%s shares the slot", rs.Topology().VertexName(v))
		h.finish(v)
		if i < len(shared.Members)-1 {
			assert.Empty(t, h.f.releases, "slot released before its last task finished")
		}
	}
	require.Len(t, h.f.releases, 1)
	assert.Equal(t, releaseCall{Slot: pool, Region: 0, Attempt: 0}, h.f.releases[0])
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	h.checkClean()
}

// TestBlockingInputsGateDeploys checks, with names, that in all-blocking
// mode B#0 deploys right after A#0 finishes and not before, and that the
// all-to-all consumers D wait for every C.
func TestBlockingInputsGateDeploys(t *testing.T) {
	job := flip119(t)
	rs := region.FromJob(job, exchange.AllBlocking)
	require.Equal(t, 12, rs.NumRegions())
	h := newHarness(t, rs, Config{}, 1)
	h.offer(h.unknownSlots(2)...)
	h.start()
	names := func(ds []deployCall) []string {
		var out []string
		for _, d := range ds {
			out = append(out, rs.Topology().VertexName(d.V))
		}
		return out
	}
	assert.Equal(t, []string{"A#0", "A#1"}, names(h.f.deploys))
	h.finish(h.byName("A#1"))
	assert.Equal(t, []string{"B#1"}, names(h.f.deploysIn(h.f.call)))
	h.finish(h.byName("A#0"))
	assert.Equal(t, []string{"B#0"}, names(h.f.deploysIn(h.f.call)))
	for _, n := range []string{"B#0", "B#1"} {
		h.finish(h.byName(n))
	}
	// C#0..3 are ready; two slots.
	require.Len(t, h.f.running, 2)
	for len(h.f.running) > 0 {
		ids := h.f.runningIDs()
		for _, d := range h.f.deploys {
			if rs.Topology().JobVertexOf(d.V) == 3 {
				// D is deployed only once every C finished.
				for c := range 4 {
					cv := rs.Topology().ExecutionVertex(2, c)
					_, fin := h.f.finished[cv]
					assert.True(t, fin, "D deployed before %s finished", rs.Topology().VertexName(cv))
				}
			}
		}
		h.finish(ids[0])
	}
	assert.Equal(t, JobFinished, h.s.State())
	h.checkClean()
}
