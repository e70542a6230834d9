package simulator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
)

// seeds scales a seed count down under the race detector and -short.
func seeds(n int) int {
	if raceEnabled || testing.Short() {
		return max(1, n/5)
	}
	return n
}

// FLIP-119, all-pipelined: one region of 12 subtasks that needs 4 slots.
func TestFLIP119AllPipelinedFourSlotsFinishes(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	require.Equal(t, 1, rs.NumRegions())
	require.Equal(t, 4, rs.MinimumSlots())
	for seed := uint64(1); seed <= 100; seed++ {
		res := run(t, simulator.Config{Regions: rs, Cluster: slots(4), Seed: seed, Ties: tiesFor(seed), Record: true})
		require.Equal(t, runfile.Finished, res.Verdict, "seed %d: %s", seed, res.Reason)
		assert.Equal(t, 1000*time.Millisecond, res.Makespan, "seed %d", seed)
		assert.InDelta(t, 1.0, res.Utilization, 1e-9, "seed %d", seed)
		assert.Equal(t, 1, res.RegionsScheduled)
		assert.True(t, strings.HasPrefix(res.Reason, "finished"), res.Reason)
		st := requireTrace(t, rs, slots(4), simulator.RegionPolicy, res, "seed %d", seed)
		assert.Equal(t, 4, st.maxInUse)
		assert.True(t, st.shared, "12 subtasks share 4 slots")
	}
}

func TestFLIP119AllPipelinedThreeSlotsFails(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	v := rs.Check(slots(3), resource.FitsEveryDimension)
	require.False(t, v.Runnable)
	assert.Equal(t, region.ID(0), v.Region)
	assert.Contains(t, v.Reason, "region 0")

	for seed := uint64(1); seed <= 5; seed++ {
		res := run(t, simulator.Config{Regions: rs, Cluster: slots(3), Seed: seed, Ties: tiesFor(seed), Record: true})
		require.Equal(t, runfile.Failed, res.Verdict, res.Reason)
		assert.True(t, strings.HasPrefix(res.Reason, "failed: "), res.Reason)
		assert.Contains(t, res.Reason, "region 0")
		require.Error(t, res.Err)
		assert.Zero(t, res.Makespan, "the region can never fit: the job fails at once")
		requireTrace(t, rs, slots(3), simulator.RegionPolicy, res)
		for _, ev := range res.Events {
			assert.NotEqual(t, runfile.Deploy, ev.Kind, "nothing deploys: %+v", ev)
		}
	}
}

// The eager baseline deadlocks on FLIP-119's example with 4 slots for
// some seeds, reports the tasks holding slots, and never hangs.
func TestFLIP119AllPipelinedEagerDeadlocks(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	deadlocks, finished := 0, 0
	for seed := uint64(1); seed <= 50; seed++ {
		res := run(t, simulator.Config{Regions: rs, Cluster: slots(4), Policy: simulator.EagerPolicy, Seed: seed, Ties: tiesFor(seed), Record: true})
		requireTrace(t, rs, slots(4), simulator.EagerPolicy, res, "seed %d", seed)
		switch res.Verdict {
		case runfile.Deadlock:
			deadlocks++
			assert.True(t, strings.HasPrefix(res.Reason, "deadlock: "), res.Reason)
			require.NotEmpty(t, res.Holding, "seed %d: %s", seed, res.Reason)
			for _, name := range res.Holding {
				assert.Contains(t, res.Reason, name)
			}
			assert.Contains(t, res.Reason, "hold slots while waiting")
			assert.LessOrEqual(t, len(res.Holding), 4)
			// every task named as holding is deployed at the end of the trace
			open := map[string]bool{}
			for _, ev := range res.Events {
				switch ev.Kind {
				case runfile.Deploy:
					open[ev.Task] = true
				case runfile.Finish, runfile.Fail, runfile.Cancel:
					delete(open, ev.Task)
				}
			}
			for _, name := range res.Holding {
				assert.True(t, open[name], "seed %d: %s holds no slot in the trace", seed, name)
			}
			assert.Nil(t, res.Err)
		case runfile.Finished:
			finished++
		default:
			t.Fatalf("seed %d: unexpected verdict %v: %s", seed, res.Verdict, res.Reason)
		}
	}
	t.Logf("eager on 4 slots: %d deadlocks, %d finished of 50 seeds", deadlocks, finished)
	assert.Positive(t, deadlocks, "the eager baseline must reproduce FLIP-119's deadlock")
}

func TestFLIP119PointwiseTwoSlots(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.PointwisePipelinedOnly)
	require.Equal(t, 2, rs.MinimumSlots())
	for seed := uint64(1); seed <= uint64(seeds(50)); seed++ {
		res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: seed, Ties: tiesFor(seed), Record: true})
		require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
		assert.Equal(t, 4000*time.Millisecond, res.Makespan, "seed %d", seed)
		assert.InDelta(t, 1.0, res.Utilization, 1e-9, "seed %d", seed)
		requireTrace(t, rs, slots(2), simulator.RegionPolicy, res, "seed %d", seed)
	}
}

func TestFLIP119AllBlockingOneSlot(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	require.Equal(t, 12, rs.NumRegions())
	for seed := uint64(1); seed <= uint64(seeds(50)); seed++ {
		res := run(t, simulator.Config{Regions: rs, Cluster: slots(1), Seed: seed, Ties: tiesFor(seed), Record: true})
		require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
		assert.Equal(t, 12000*time.Millisecond, res.Makespan)
		assert.Equal(t, 12, res.RegionsScheduled)
		assert.InDelta(t, 1.0, res.Utilization, 1e-9)
		requireTrace(t, rs, slots(1), simulator.RegionPolicy, res, "seed %d", seed)
	}
}
