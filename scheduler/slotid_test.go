package scheduler_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// TestSlotIDsOfAnySize: slot ids are any int64; the tasks of one-member
// regions (all-blocking chains) are deployed in, reported in and release
// exactly the slots offered, however large or negative their ids.
func TestSlotIDsOfAnySize(t *testing.T) {
	rs := region.FromJob(benchChains(t, 3), exchange.AllBlocking)
	ids := []slotpool.SlotID{math.MaxInt32, math.MaxInt32 + 1, -7, 1 << 40}
	offered := map[slotpool.SlotID]bool{}
	var slots []scheduler.Slot
	for _, id := range ids {
		slots = append(slots, scheduler.Slot{ID: id, Profile: resource.Unknown})
		offered[id] = true
	}
	now := time.Unix(0, 0)
	s := newScheduler(t, rs, scheduler.Config{})
	require.NoError(t, s.Offer(now, slots...))
	require.NoError(t, s.Start(now))
	var queue running // bench_test.go's: oldest first
	used := map[slotpool.SlotID]int{}
	for {
		rd := s.Ready()
		for _, r := range rd.Released {
			require.True(t, offered[r.Slot], "released slot %d", r.Slot)
			used[r.Slot]--
		}
		for _, d := range rd.Deploy {
			require.True(t, offered[d.Slot], "deployed in slot %d", d.Slot)
			used[d.Slot]++
			require.Equal(t, 1, used[d.Slot], "slot %d given twice", d.Slot)
		}
		queue.push(rd.Deploy)
		d, ok := queue.pop()
		if !ok {
			break
		}
		slot, ok := s.SlotOf(d.Task)
		require.True(t, ok)
		require.Equal(t, d.Slot, slot)
		require.NoError(t, s.TaskFinished(now, d.Task, d.Attempt))
	}
	require.Equal(t, scheduler.JobFinished, s.State())
	for id, n := range used {
		require.Zero(t, n, "slot %d", id)
	}
}
