package simulator_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/jobgen"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// taskProfiles are what one subtask of a generated job may need.
var taskProfiles = []resource.Profile{
	resource.Unknown,
	resource.New(500, 512),
	resource.New(1000, 1024),
	resource.New(2000, 4096),
	resource.New(1000, 2048).WithExtended("gpu", 1),
}

// slotProfiles are the sizes of generated clusters' slots.
var slotProfiles = []resource.Profile{
	resource.New(1000, 1024),
	resource.New(2000, 2048),
	resource.New(2000, 4096),
	resource.New(4000, 8192),
	resource.New(4000, 8192).WithExtended("gpu", 1),
	resource.New(8000, 16384).WithExtended("gpu", 2),
}

// randomJobs are small jobs: 2-6 vertices with parallelism 1-4 in 1-2
// slot sharing groups, edges of random ship strategies (forward only
// between equal parallelisms) along the declaration order, about a third
// of the pairs and most consecutive ones, in some jobs a fifth of them
// with a pinned exchange of any type (hybrid ones included), resources
// from taskProfiles, durations of 100 ms - 2 s.
var randomJobs = jobgen.Options{
	Vertices:        jobgen.IntRange{Min: 2, Max: 6},
	Parallelism:     jobgen.IntRange{Min: 1, Max: 4},
	Density:         jobgen.FloatRange{Min: 1.0 / 3, Max: 1.0 / 3},
	ChainRate:       0.75,
	ForwardRate:     1.0 / 3,
	PinRates:        []float64{0, 0.2},
	PinTypes:        jobgen.AllPinTypes(),
	Groups:          []string{"g0", "g1"},
	GroupRate:       0.5,
	Profiles:        taskProfiles,
	ResourceJobRate: 1,
	ResourceRate:    1,
	Duration:        jobgen.DurationRange{Min: 100 * time.Millisecond, Max: 2 * time.Second, Step: 100 * time.Millisecond},
}

// randomJob draws a job of randomJobs named name.
func randomJob(rng *rand.Rand, name string) (*topology.JobGraph, error) {
	o := randomJobs
	o.Name = name
	return jobgen.Generate(rng, o)
}

// randomCluster is 1-8 slots of 2-3 profiles.
func randomCluster(rng *rand.Rand) []resource.Count {
	total := 1 + rng.IntN(8)
	kinds := min(total, 2+rng.IntN(2))
	perm := rng.Perm(len(slotProfiles))
	counts := make([]resource.Count, kinds)
	for i := range counts {
		counts[i] = resource.Count{Profile: slotProfiles[perm[i]], N: 1}
	}
	for range total - kinds {
		counts[rng.IntN(kinds)].N++
	}
	return counts
}

// On heterogeneous clusters, region.Check and the simulation agree:
// whenever Check says runnable, the region policy finishes for every seed
// (soundness: Check never says runnable for a job that deadlocks or
// fails); whenever it says not runnable, the scheduler fails the job
// (SetCapacity) instead of deadlocking or hanging.
func TestHeterogeneousClustersCheckAgreesWithSimulation(t *testing.T) {
	cases, seedsPer := 400, 20
	if raceEnabled || testing.Short() {
		cases, seedsPer = 120, 5
	}
	rng := rand.New(rand.NewPCG(2024, 119))
	runnable, notRunnable := 0, 0
	for c := range cases {
		job, err := randomJob(rng, fmt.Sprintf("job%d", c))
		require.NoError(t, err)
		mode := modes[rng.IntN(len(modes))]
		cluster := randomCluster(rng)
		rs := region.FromJob(job, mode)
		v := rs.Check(cluster, resource.FitsEveryDimension)
		desc := fmt.Sprintf("case %d: %s, mode %s, cluster %v, check: %s", c, describeJob(job), mode, cluster, v.Reason)
		if v.Runnable {
			runnable++
		} else {
			notRunnable++
		}
		for seed := 1; seed <= seedsPer; seed++ {
			res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Seed: uint64(seed), Ties: tiesFor(uint64(seed)), Record: true})
			requireTrace(t, rs, cluster, simulator.RegionPolicy, res, "%s seed %d", desc, seed)
			if v.Runnable {
				require.Equal(t, runfile.Finished, res.Verdict, "%s seed %d: %s", desc, seed, res.Reason)
				require.Equal(t, rs.NumRegions(), res.RegionsScheduled)
			} else {
				require.Equal(t, runfile.Failed, res.Verdict, "%s seed %d: %s", desc, seed, res.Reason)
				assert.Contains(t, res.Reason, "region", desc)
			}
		}
	}
	t.Logf("%d cases: %d runnable (finished for all %d seeds), %d not runnable (failed at once)", cases, runnable, seedsPer, notRunnable)
	assert.Positive(t, runnable)
	assert.Positive(t, notRunnable)
	assert.Greater(t, min(runnable, notRunnable), cases/10, "the generator exercises both sides")
}

// Failover on random jobs and clusters that Check calls runnable: one
// injected failure of a random subtask at a random point of its work; the
// job still finishes, and exactly the failed region and everything
// downstream of it run again.
func TestHeterogeneousFailover(t *testing.T) {
	cases := 300
	if raceEnabled || testing.Short() {
		cases = 80
	}
	rng := rand.New(rand.NewPCG(99, 1))
	tried, upstream := 0, 0
	for c := 0; tried < cases; c++ {
		job, err := randomJob(rng, fmt.Sprintf("job%d", c))
		require.NoError(t, err)
		mode := modes[rng.IntN(len(modes))]
		cluster := randomCluster(rng)
		rs := region.FromJob(job, mode)
		if !rs.Check(cluster, resource.FitsEveryDimension).Runnable {
			continue
		}
		tried++
		topo := rs.Topology()
		x := topology.ExecutionVertexID(rng.IntN(topo.NumExecutionVertices()))
		d := job.Vertex(topo.JobVertexOf(x)).Duration
		after := time.Duration(rng.Int64N(int64(d/time.Millisecond))) * time.Millisecond
		seed := uint64(1 + rng.IntN(1000))
		desc := fmt.Sprintf("case %d: %s, mode %s, cluster %v, fail %s@%v, seed %d", c, describeJob(job), mode, cluster, topo.VertexName(x), after, seed)
		res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Seed: seed, Ties: tiesFor(seed), Record: true,
			Failures: []simulator.Failure{{Task: x, After: after}}})
		require.Equal(t, runfile.Finished, res.Verdict, "%s: %s", desc, res.Reason)
		requireTrace(t, rs, cluster, simulator.RegionPolicy, res, desc)
		if checkFailover(t, rs, x, after, res) {
			upstream++
		}
		if t.Failed() {
			t.Fatal(desc)
		}
	}
	t.Logf("%d failovers, %d of them restarted a producer of released partitions", cases, upstream)
}

// Several injected failures on random runnable cases, under both
// policies: the job finishes, each failure fires at most once and only
// on the first attempt of its task that runs, and the trace invariants
// hold throughout.
func TestRandomMultipleFailures(t *testing.T) {
	cases := 300
	if raceEnabled || testing.Short() {
		cases = 80
	}
	rng := rand.New(rand.NewPCG(5, 55))
	fired := 0
	for c := 0; c < cases; {
		job, err := randomJob(rng, fmt.Sprintf("job%d", c))
		require.NoError(t, err)
		mode := modes[rng.IntN(len(modes))]
		cluster := randomCluster(rng)
		rs := region.FromJob(job, mode)
		if !rs.Check(cluster, resource.FitsEveryDimension).Runnable {
			continue
		}
		c++
		topo := rs.Topology()
		var failures []simulator.Failure
		var names []string
		for range 1 + rng.IntN(3) {
			x := topology.ExecutionVertexID(rng.IntN(topo.NumExecutionVertices()))
			if slices.ContainsFunc(failures, func(f simulator.Failure) bool { return f.Task == x }) {
				continue // one injection per subtask
			}
			d := job.Vertex(topo.JobVertexOf(x)).Duration
			after := time.Duration(rng.Int64N(int64(d/time.Millisecond))) * time.Millisecond
			failures = append(failures, simulator.Failure{Task: x, After: after})
			names = append(names, fmt.Sprintf("%s@%v", topo.VertexName(x), after))
		}
		policy := simulator.RegionPolicy
		if rng.IntN(4) == 0 {
			policy = simulator.EagerPolicy
		}
		seed := uint64(1 + rng.IntN(1000))
		desc := fmt.Sprintf("case %d: %s, mode %s, cluster %v, %v, fail %v, seed %d", c, describeJob(job), mode, cluster, policy, names, seed)
		res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Policy: policy, Seed: seed, Ties: tiesFor(seed), Record: true, Failures: failures})
		requireTrace(t, rs, cluster, policy, res, desc)
		if policy == simulator.RegionPolicy {
			require.Equal(t, runfile.Finished, res.Verdict, "%s: %s", desc, res.Reason)
		} else if res.Verdict != runfile.Finished {
			require.Equal(t, runfile.Deadlock, res.Verdict, "%s: %s", desc, res.Reason)
		}
		failedTasks := map[string]bool{}
		firstRun := map[string]int{} // attempt of each task's first deploy
		for _, ev := range res.Events {
			if _, ok := firstRun[ev.Task]; !ok && ev.Kind == runfile.Deploy {
				firstRun[ev.Task] = ev.Attempt
			}
			if ev.Kind == runfile.Fail {
				require.Equal(t, firstRun[ev.Task], ev.Attempt, "%s: only the first attempt that runs fails", desc)
				require.False(t, failedTasks[ev.Task], "%s: %s failed twice", desc, ev.Task)
				failedTasks[ev.Task] = true
			}
		}
		assert.Equal(t, len(failedTasks), res.Failovers, desc)
		assert.LessOrEqual(t, len(failedTasks), len(failures), desc)
		fired += len(failedTasks)
	}
	t.Logf("%d cases, %d failures fired", cases, fired)
	assert.Greater(t, fired, cases)
}

// The eager baseline on the same random cases: it may deadlock, but it
// never hangs, and when it deadlocks some task holds or waits for a slot.
func TestHeterogeneousEagerNeverHangs(t *testing.T) {
	cases := 200
	if raceEnabled || testing.Short() {
		cases = 60
	}
	rng := rand.New(rand.NewPCG(7, 7))
	verdicts := map[runfile.Verdict]int{}
	for c := range cases {
		job, err := randomJob(rng, fmt.Sprintf("job%d", c))
		require.NoError(t, err)
		mode := modes[rng.IntN(len(modes))]
		cluster := randomCluster(rng)
		rs := region.FromJob(job, mode)
		res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Policy: simulator.EagerPolicy, Seed: uint64(c), Record: true})
		requireTrace(t, rs, cluster, simulator.EagerPolicy, res, "case %d", c)
		verdicts[res.Verdict]++
		switch res.Verdict {
		case runfile.Finished:
		case runfile.Deadlock:
			assert.True(t, strings.HasPrefix(res.Reason, "deadlock: "), res.Reason)
			assert.NotEmpty(t, append(res.Holding, res.Waiting...))
		default:
			t.Fatalf("case %d: eager ended %v: %s", c, res.Verdict, res.Reason)
		}
	}
	t.Logf("eager on %d random cases: %v", cases, verdicts)
	assert.Positive(t, verdicts[runfile.Finished])
	assert.Positive(t, verdicts[runfile.Deadlock])
}

// describeJob renders a generated job compactly for failure messages.
func describeJob(job *topology.JobGraph) string {
	var b strings.Builder
	for jv := range topology.JobVertexID(job.NumVertices()) {
		vx := job.Vertex(jv)
		fmt.Fprintf(&b, "%s(p%d %s %v %v) ", vx.ID, vx.Parallelism, vx.SlotSharingGroup, vx.Resources, vx.Duration)
	}
	for e := range topology.JobEdgeID(job.NumEdges()) {
		ed := job.Edge(e)
		s, t := job.EdgeEnds(e)
		fmt.Fprintf(&b, "%s-%v->%s ", job.Vertex(s).ID, ed.ShipStrategy, job.Vertex(t).ID)
	}
	return b.String()
}
