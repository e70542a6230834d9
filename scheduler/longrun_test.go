package scheduler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
)

// liveBulks counts the bulks of every attempt so far that the pool still
// keeps a record of.
func (h *harness) liveBulks() int {
	n := 0
	for r := range h.rs.NumRegions() {
		st, err := h.s.strategy.Region(region.ID(r))
		require.NoError(h.t, err)
		for a := strategy.Attempt(0); a <= st.Attempt; a++ {
			if h.s.pool.State(bulkID(region.ID(r), a)) != pool.BulkUnknown {
				n++
			}
		}
	}
	return n
}

// TestLongRunForgetsBulks: hundreds of failovers (task failures and lost
// slots replaced by new ones) in one job: the pool never keeps more than
// one bulk record per region, the scheduler's slot table never outgrows
// the slots, and at the end nothing is left.
func TestLongRunForgetsBulks(t *testing.T) {
	for _, mode := range modes() {
		rs := region.FromJob(flip119(t), mode)
		h := newHarness(t, rs, Config{}, uint64(mode)+1)
		h.offer(h.unknownSlots(rs.MinimumSlots())...)
		h.start()
		failovers := 0
		for i := 0; h.s.State() == JobRunning; i++ {
			require.Less(t, i, 100_000)
			if failovers < 300 && h.rng.IntN(8) != 0 && len(h.f.running) > 0 {
				ids := h.f.runningIDs()
				v := ids[h.rng.IntN(len(ids))]
				if h.rng.IntN(3) == 0 {
					h.lose(h.f.running[v].Slot)
					h.offer(h.unknownSlots(1)...)
				} else {
					h.fail(v)
				}
				failovers++
				require.LessOrEqual(t, h.liveBulks(), rs.NumRegions())
				require.LessOrEqual(t, h.s.slots.len(), rs.MinimumSlots())
				continue
			}
			require.True(t, h.step(), "stalls")
		}
		require.Equal(t, JobFinished, h.s.State(), "%v: %v", mode, h.s.Err())
		assert.Equal(t, failovers, h.stats().Failovers)
		assert.GreaterOrEqual(t, failovers, 50, "%v", mode)
		assert.Zero(t, h.liveBulks())
		h.checkClean()
	}
}

// TestRuntimeReadsDeployOnly: the same walk by a runtime that looks only
// at Ready.Cancel and Ready.Deploy and ignores the rest (requests,
// releases, restarts, partitions, job changes).
func TestRuntimeReadsDeployOnly(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.PointwisePipelinedOnly)
	f := newFakeRuntime(t, rs)
	s := mustNew(t, rs, Config{})
	f.s = s
	apply := func() {
		rd := s.Ready()
		for _, c := range rd.Cancel {
			f.cancel(c.Task, c.Attempt)
		}
		for _, d := range rd.Deploy {
			f.deploy(d.Task, d.Attempt, d.Slot, d.Shared)
		}
	}
	slots := make([]slotpool.Slot, rs.MinimumSlots())
	for i := range slots {
		slots[i] = slotpool.Slot{ID: slotpool.SlotID(i + 1)}
		f.slotProfile[slots[i].ID] = slots[i].Profile
	}
	require.NoError(t, s.Offer(t0, slots...))
	require.NoError(t, s.Start(t0))
	apply()
	failed := false
	for s.State() == JobRunning {
		ids := f.runningIDs()
		require.NotEmpty(t, ids)
		v := ids[0]
		d := f.running[v]
		f.ended(v)
		if !failed {
			failed = true
			require.NoError(t, s.TaskFailed(t0, v, d.Attempt))
			apply()
			continue
		}
		f.finished[v] = d.Attempt
		require.NoError(t, s.TaskFinished(t0, v, d.Attempt))
		apply()
	}
	assert.Equal(t, JobFinished, s.State())
	st := s.Status()
	assert.Equal(t, 1, st.Stats.Failovers)
	assert.Equal(t, rs.MinimumSlots(), st.Pool.Free)
}
