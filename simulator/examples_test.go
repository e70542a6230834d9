package simulator_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// exampleCluster is the smallest cluster of unknown-sized slots the
// example job runs on: MinimumSlots, plus the slots its unbounded tasks
// hold forever if it has any.
func exampleCluster(t testing.TB, rs *region.Regions) []resource.Count {
	t.Helper()
	n := rs.MinimumSlots()
	for !rs.Check(slots(n), resource.FitsEveryDimension).Runnable {
		n++
		require.LessOrEqual(t, n, 10*rs.Topology().NumExecutionVertices()+10, "no cluster size is runnable")
	}
	return slots(n)
}

// wantVerdict is Finished, or Steady for a streaming job.
func wantVerdict(job *topology.JobGraph) runfile.Verdict {
	if hasUnbounded(job) {
		return runfile.Steady
	}
	return runfile.Finished
}

// Every example job in every mode finishes under the region policy at
// exactly its minimum slots, for every seed, and every trace satisfies
// the invariants of checkTrace.
func TestExamplesAtMinimumSlots(t *testing.T) {
	n := seeds(100)
	for _, path := range jobFiles(t) {
		job := loadJob(t, path)
		for _, mode := range modes {
			t.Run(fmt.Sprintf("%s/%s", filepath.Base(path), mode), func(t *testing.T) {
				rs := region.FromJob(job, mode)
				cluster := exampleCluster(t, rs)
				var makespans = map[int64]int{}
				for seed := 1; seed <= n; seed++ {
					res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Seed: uint64(seed), Ties: tiesFor(uint64(seed)), Record: true})
					require.Equal(t, wantVerdict(job), res.Verdict, "seed %d: %s", seed, res.Reason)
					require.Zero(t, res.Failovers)
					st := requireTrace(t, rs, cluster, simulator.RegionPolicy, res, "seed %d", seed)
					assert.LessOrEqual(t, st.maxInUse, cluster[0].N)
					makespans[res.Makespan.Milliseconds()]++
					if res.Verdict == runfile.Finished {
						assert.Equal(t, rs.NumRegions(), res.RegionsScheduled, "seed %d", seed)
						assert.Equal(t, 1, finishesPerTask(res)[""], "seed %d: every task finishes exactly once", seed)
					}
				}
				t.Logf("%d slots, %d regions; makespans (ms: runs) %v", cluster[0].N, rs.NumRegions(), makespans)
			})
		}
	}
}

// finishesPerTask returns the set of per-task finish counts, keyed "" when
// every task finished exactly once (value 1), else by task name.
func finishesPerTask(res *simulator.Result) map[string]int {
	count := map[string]int{}
	for _, ev := range res.Events {
		if ev.Kind == runfile.Finish {
			count[ev.Task]++
		}
	}
	for name, c := range count {
		if c != 1 {
			return map[string]int{name: c}
		}
	}
	return map[string]int{"": 1}
}

// With more slots than needed the region policy still finishes and the
// trace invariants still hold (regions run side by side).
func TestExamplesWithSpareSlots(t *testing.T) {
	for _, path := range jobFiles(t) {
		job := loadJob(t, path)
		for _, mode := range modes {
			rs := region.FromJob(job, mode)
			base := exampleCluster(t, rs)[0].N
			for _, extra := range []int{1, 3, 50} {
				cluster := slots(base + extra)
				for seed := 1; seed <= seeds(10); seed++ {
					res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Seed: uint64(seed), Ties: tiesFor(uint64(seed)), Record: true})
					require.Equal(t, wantVerdict(job), res.Verdict, "%s %s +%d seed %d: %s", path, mode, extra, seed, res.Reason)
					requireTrace(t, rs, cluster, simulator.RegionPolicy, res, "%s %s +%d seed %d", path, mode, extra, seed)
				}
			}
		}
	}
}
