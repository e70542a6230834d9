package region_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
)

// SlotsToRun is the fewest slots of unknown size Check finds the job
// runnable on, found by counting up from 1 (a naive reference), on random
// jobs with unbounded vertices in every mode; no count up to twice the job's
// slots runs a job it says never runs, and every count from it up to that
// runs the others. For a job whose every subtask finishes it is
// MinimumSlots.
func TestSlotsToRunIsTheFewestThatRun(t *testing.T) {
	r := rand.New(rand.NewPCG(20261130, 7))
	runs := func(rs *region.Regions, n int) bool {
		return rs.Check([]resource.Count{{Profile: resource.Unknown, N: n}}, resource.FitsEveryDimension).Runnable
	}
	streams := 0
	for i := range slotsToRunJobs {
		g, err := randomJob(r)
		require.NoError(t, err)
		for _, m := range exchange.Modes() {
			rs := region.FromJob(g, m)
			n, ok := rs.SlotsToRun()
			total := 0
			for reg := range region.ID(rs.NumRegions()) {
				total += rs.SlotCount(reg)
			}
			bound := 2*total + 2
			first := 0
			for k := 1; k <= bound; k++ {
				if runs(rs, k) {
					first = k
					break
				}
			}
			if !ok {
				require.Zero(t, first, "job %d %s says it never runs, and runs on %d slots\n%s", i, m, first, encodeJob(g))
				require.Equal(t, rs.MinimumSlots(), n)
				continue
			}
			require.Equal(t, first, n, "job %d %s\n%s", i, m, encodeJob(g))
			require.GreaterOrEqual(t, n, rs.MinimumSlots())
			for k := n; k <= bound; k++ {
				require.True(t, runs(rs, k), "job %d %s runs on %d slots and not on %d\n%s", i, m, n, k, encodeJob(g))
			}
			if len(rs.Check([]resource.Count{{Profile: resource.Unknown, N: n}}, resource.FitsEveryDimension).NeverFinish) == 0 {
				require.Equal(t, rs.MinimumSlots(), n, "job %d %s: bounded", i, m)
			} else if n > rs.MinimumSlots() {
				streams++
			}
		}
	}
	require.Positive(t, streams, "some jobs need more than their largest region")
}

// slotsToRunJobs is how many random jobs TestSlotsToRunIsTheFewestThatRun
// draws.
var slotsToRunJobs = 150
