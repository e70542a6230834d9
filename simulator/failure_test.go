package simulator_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// downstream returns r and every region reachable from it through
// blocking edges (ConsumerRegions, transitively).
func downstream(rs *region.Regions, r region.ID) map[int]bool {
	seen := map[int]bool{int(r): true}
	stack := []region.ID{r}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range rs.ConsumerRegions(x) {
			if !seen[int(c)] {
				seen[int(c)] = true
				stack = append(stack, c)
			}
		}
	}
	return seen
}

// failureTargets picks, per job vertex long enough to fail after 500 ms,
// its first and last subtask.
func failureTargets(topo *topology.ExecutionTopology) []topology.ExecutionVertexID {
	job := topo.Job()
	var out []topology.ExecutionVertexID
	for jv := range topology.JobVertexID(job.NumVertices()) {
		vx := job.Vertex(jv)
		if vx.Unbounded || vx.Duration <= 500*time.Millisecond {
			continue
		}
		vs := topo.VerticesOf(jv)
		out = append(out, topology.ExecutionVertexID(vs.Start))
		if vs.End-1 != vs.Start {
			out = append(out, topology.ExecutionVertexID(vs.End-1))
		}
	}
	return out
}

// checkFailover verifies a run with one injected failure of x (first
// attempt, after `after` of progress) under the region policy:
//   - the trace has the fail of x, once, at least `after` after its deploy;
//   - the regions asking for slots again (attempt >= 1) are exactly the
//     regions the strategy chose (Result.Restarts), and all of them are
//     redeployed;
//   - (a) every canceled task belongs to one of them, and x is not canceled;
//   - (b) x's region is among them;
//   - (c) each of them is x's region, downstream of it through blocking
//     edges, or the producer of an input of another restarted region (a
//     partition the strategy had released must be produced again);
//   - (d) x's region and everything downstream of it is among them, in
//     particular every downstream region deployed before the failure.
//
// It returns whether some restarted region was not downstream of x.
func checkFailover(t *testing.T, rs *region.Regions, x topology.ExecutionVertexID, after time.Duration, res *simulator.Result) (upstream bool) {
	t.Helper()
	topo := rs.Topology()
	name := topo.VertexName(x)
	xr := int(rs.RegionOf(x))

	var failAt time.Duration = -1
	var deployAt time.Duration
	for _, ev := range res.Events {
		if ev.Task == name && ev.Kind == runfile.Deploy && ev.Attempt == 0 {
			deployAt = ev.At
		}
		if ev.Kind == runfile.Fail {
			require.Equal(t, name, ev.Task, "only the injected failure happens")
			require.Equal(t, 0, ev.Attempt, "only the first attempt fails")
			require.Equal(t, time.Duration(-1), failAt, "the failure happens once")
			failAt = ev.At
		}
	}
	require.GreaterOrEqual(t, failAt, time.Duration(0), "the trace shows the fail of %s", name)
	assert.GreaterOrEqual(t, failAt-deployAt, after, "%s fails after %v of progress", name, after)

	// what the strategy chose
	require.Len(t, res.Restarts, 1)
	assert.Equal(t, name, res.Restarts[0].Task)
	assert.Equal(t, failAt, res.Restarts[0].At)
	chosen := map[int]bool{}
	for _, r := range res.Restarts[0].Regions {
		chosen[int(r)] = true
	}

	restarted := map[int]bool{}  // regions that asked again
	redeployed := map[int]bool{} // regions deployed again
	deployedBefore := map[int]bool{}
	canceled := map[string]bool{}
	for _, ev := range res.Events {
		switch {
		case ev.Kind == runfile.Request && ev.Attempt >= 1:
			restarted[ev.Region] = true
			assert.GreaterOrEqual(t, ev.At, failAt)
			assert.Equal(t, 1, ev.Attempt, "one failover: attempt 1")
		case ev.Kind == runfile.Deploy && ev.Attempt >= 1:
			redeployed[ev.Region] = true
		case ev.Kind == runfile.Deploy && ev.At <= failAt:
			deployedBefore[ev.Region] = true
		case ev.Kind == runfile.Cancel:
			canceled[ev.Task] = true
			assert.Equal(t, failAt, ev.At, "cancellations happen at the failover")
			assert.Equal(t, 0, ev.Attempt)
		}
	}
	assert.Equal(t, chosen, restarted, "the regions asking again are exactly the strategy's choice")
	assert.Equal(t, chosen, redeployed, "the regions deployed again are exactly the strategy's choice")
	// (b) x's region restarts
	assert.True(t, restarted[xr], "%s's region %d restarts", name, xr)
	// (c) only x's region, regions downstream of it, producers of inputs
	// of restarted regions (released or lost partitions, selective hybrid
	// results read live), and their consumers restart
	down := downstream(rs, region.ID(xr))
	for r := range restarted {
		if down[r] {
			continue
		}
		upstream = true
		justified := false
		for c := range restarted {
			for _, p := range rs.ProducerRegions(region.ID(c)) {
				justified = justified || int(p) == r
			}
			for _, p := range rs.ConsumerRegions(region.ID(c)) {
				justified = justified || int(p) == r
			}
		}
		assert.True(t, justified, "region %d restarted but is neither downstream of region %d nor a producer or consumer of a restarted region", r, xr)
	}
	// (d) everything downstream restarts, deployed or not
	for r := range down {
		assert.True(t, restarted[r], "region %d is downstream of %d and did not restart", r, xr)
	}
	for r := range deployedBefore {
		if down[r] {
			assert.True(t, restarted[r], "region %d ran downstream of the failure and was not restarted", r)
		}
	}
	// (a) canceled tasks belong to restarted regions
	for task := range canceled {
		v, err := topo.ParseVertexName(task)
		require.NoError(t, err)
		assert.True(t, restarted[int(rs.RegionOf(v))], "%s was canceled but its region did not restart", task)
		assert.NotEqual(t, name, task, "the failed task is not canceled")
	}
	assert.Equal(t, 1, res.Failovers)
	assert.Equal(t, len(restarted), res.RegionRestarts)
	return upstream
}

// Failure injection on every example job and mode, failing the first and
// last subtask of each vertex in turn.
func TestFailureInjectionRegionPolicy(t *testing.T) {
	const after = 500 * time.Millisecond
	for _, path := range jobFiles(t) {
		job := loadJob(t, path)
		if hasUnbounded(job) {
			continue
		}
		for _, mode := range modes {
			t.Run(fmt.Sprintf("%s/%s", filepath.Base(path), mode), func(t *testing.T) {
				rs := region.FromJob(job, mode)
				cluster := exampleCluster(t, rs)
				for _, x := range failureTargets(rs.Topology()) {
					for seed := 1; seed <= seeds(10); seed++ {
						res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Seed: uint64(seed), Ties: tiesFor(uint64(seed)), Record: true,
							Failures: []simulator.Failure{{Task: x, After: after}}})
						msg := fmt.Sprintf("fail %s seed %d", rs.Topology().VertexName(x), seed)
						require.Equal(t, runfile.Finished, res.Verdict, "%s: %s", msg, res.Reason)
						requireTrace(t, rs, cluster, simulator.RegionPolicy, res, msg)
						checkFailover(t, rs, x, after, res)
						if t.Failed() {
							t.Fatalf("%s", msg)
						}
					}
				}
			})
		}
	}
}

// A failure of a task whose region has members that finished already and
// whose downstream region ran: the finished members and the downstream
// region run again.
func TestFailureRestartsFinishedMembersAndConsumers(t *testing.T) {
	// src (1 s) -> work (5 s) pipelined; src -> side (1 s) blocking.
	// side's region runs while work still runs; work fails at 3 s.
	job, err := topology.NewBuilder("restart-finished").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 1, Duration: time.Second}).
		AddVertex(topology.JobVertex{ID: "work", Parallelism: 1, Duration: 5 * time.Second}).
		AddVertex(topology.JobVertex{ID: "side", Parallelism: 1, Duration: time.Second}).
		ConnectPinned("src", "work", exchange.Forward, exchange.PipelinedBounded).
		ConnectPinned("src", "side", exchange.Forward, exchange.Blocking).
		Build()
	require.NoError(t, err)
	rs := region.FromJob(job, exchange.AllBlocking)
	require.Equal(t, 2, rs.NumRegions())
	topo := rs.Topology()
	work, err := topo.ParseVertexName("work#0")
	require.NoError(t, err)
	for seed := uint64(1); seed <= 5; seed++ {
		res := run(t, simulator.Config{Regions: rs, Cluster: slots(3), Seed: seed, Ties: tiesFor(seed), Record: true,
			Failures: []simulator.Failure{{Task: work, After: 3 * time.Second}}})
		require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
		requireTrace(t, rs, slots(3), simulator.RegionPolicy, res)
		checkFailover(t, rs, work, 3*time.Second, res)
		count := map[string]int{}
		for _, ev := range res.Events {
			if ev.Kind == runfile.Finish {
				count[ev.Task]++
			}
		}
		assert.Equal(t, map[string]int{"src#0": 2, "side#0": 2, "work#0": 1}, count)
		// src 0-1 s, side 1-2 s, work fails at 3 s; src again 3-4 s, work 3-8 s, side 4-5 s
		assert.Equal(t, 8*time.Second, res.Makespan)
		assert.Equal(t, 1, res.Failovers)
		assert.Equal(t, 2, res.RegionRestarts)
	}
}

// The eager baseline restarts a failed task alone and finishes.
func TestFailureInjectionEager(t *testing.T) {
	for _, tc := range []struct {
		mode  exchange.Mode
		slots int
		task  string
	}{
		{exchange.AllBlocking, 1, "C#2"},
		{exchange.AllBlocking, 3, "A#1"},
		{exchange.PointwisePipelinedOnly, 12, "B#0"},
		{exchange.AllPipelined, 12, "D#3"},
		{exchange.AllPipelined, 12, "A#0"},
	} {
		rs := region.FromJob(flip119(t), tc.mode)
		x, err := rs.Topology().ParseVertexName(tc.task)
		require.NoError(t, err)
		for seed := uint64(1); seed <= uint64(seeds(20)); seed++ {
			res := run(t, simulator.Config{Regions: rs, Cluster: slots(tc.slots), Policy: simulator.EagerPolicy, Seed: seed, Ties: tiesFor(seed), Record: true,
				Failures: []simulator.Failure{{Task: x, After: 500 * time.Millisecond}}})
			require.Equal(t, runfile.Finished, res.Verdict, "%v %s seed %d: %s", tc.mode, tc.task, seed, res.Reason)
			requireTrace(t, rs, slots(tc.slots), simulator.EagerPolicy, res)
			fails, redeploys := 0, 0
			for _, ev := range res.Events {
				if ev.Kind == runfile.Fail {
					fails++
					assert.Equal(t, tc.task, ev.Task)
				}
				if ev.Kind == runfile.Deploy && ev.Attempt == 1 {
					redeploys++
					assert.Equal(t, tc.task, ev.Task)
				}
			}
			assert.Equal(t, 1, fails)
			assert.Equal(t, 1, redeploys)
			assert.Equal(t, 1, res.Failovers)
		}
	}
}

// A failure point at or beyond the task's duration never fires.
func TestFailureThatCannotFireIsRejected(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	x, err := rs.Topology().ParseVertexName("B#0")
	require.NoError(t, err)
	for _, failures := range [][]simulator.Failure{
		{{Task: x, After: time.Second}},     // B#0 takes 1000 ms: it finishes first
		{{Task: x, After: 2 * time.Second}}, // beyond its duration
		{{Task: x, After: 100 * time.Millisecond}, {Task: x, After: 200 * time.Millisecond}}, // named twice
	} {
		_, err := simulator.Run(simulator.Config{Regions: rs, Cluster: slots(2), Seed: 1, Failures: failures})
		require.Error(t, err, "%+v", failures)
		assert.ErrorIs(t, err, simulator.ErrBadFailure)
		assert.Contains(t, err.Error(), "B#0")
	}
}

// An injected failure fires on the first attempt that runs, even when the
// task's region was restarted (by another failure) before it got slots.
func TestFailureFiresOnTheFirstAttemptThatRuns(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.PointwisePipelinedOnly)
	topo := rs.Topology()
	b1, err := topo.ParseVertexName("B#1")
	require.NoError(t, err)
	d0, err := topo.ParseVertexName("D#0")
	require.NoError(t, err)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 1, Record: true,
		Failures: []simulator.Failure{{Task: b1, After: 500 * time.Millisecond}, {Task: d0, After: 500 * time.Millisecond}}})
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	assert.Equal(t, 2, res.Failovers, "B#1 fails, restarting D#0's region before it ran; D#0 still fails once")
	var failed []string
	for _, ev := range res.Events {
		if ev.Kind == runfile.Fail {
			failed = append(failed, ev.Task)
		}
	}
	assert.Equal(t, []string{"B#1", "D#0"}, failed)
	requireTrace(t, rs, slots(2), simulator.RegionPolicy, res)
}

// A failure at 0 ms fails the attempt as soon as it can progress.
func TestFailureAtZero(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.PointwisePipelinedOnly)
	x, err := rs.Topology().ParseVertexName("C#1")
	require.NoError(t, err)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 3, Record: true,
		Failures: []simulator.Failure{{Task: x, After: 0}}})
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	requireTrace(t, rs, slots(2), simulator.RegionPolicy, res)
	checkFailover(t, rs, x, 0, res)
}

// Bad failure injections are configuration errors, not panics.
func TestRunRejectsBadFailures(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	for _, f := range []simulator.Failure{{Task: -1}, {Task: 12}, {Task: 0, After: -time.Millisecond}} {
		_, err := simulator.Run(simulator.Config{Regions: rs, Cluster: slots(1), Failures: []simulator.Failure{f}})
		require.Error(t, err, "%+v", f)
		assert.True(t, errors.Is(err, simulator.ErrBadFailure), "%v", err)
	}
}

// A restarted region that reads a partition the strategy already
// released (every consumer of it had finished) makes the producer's
// region restart too, though it is not downstream of the failure
// (Flink's RestartPipelinedRegionFailoverStrategy).
func TestFailoverRestartsProducersOfReleasedPartitions(t *testing.T) {
	// src (2 x 300 ms) -> work (2 x 1.2 s) forward pipelined: regions
	// {src#0, work#0} and {src#1, work#1}; src -> mid broadcast blocking;
	// src -> sink hash blocking; mid -> sink blocking. mid runs 300-600 ms
	// and the src -> mid partitions are released; work#1 fails at 900 ms:
	// mid restarts (downstream) and needs src#0's partition again.
	job, err := topology.NewBuilder("released").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 2, Duration: 300 * time.Millisecond}).
		AddVertex(topology.JobVertex{ID: "work", Parallelism: 2, Duration: 1200 * time.Millisecond}).
		AddVertex(topology.JobVertex{ID: "mid", Parallelism: 1, Duration: 300 * time.Millisecond}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1, Duration: 1300 * time.Millisecond}).
		ConnectPinned("src", "work", exchange.Forward, exchange.PipelinedBounded).
		Connect("src", "mid", exchange.Broadcast).
		Connect("src", "sink", exchange.Hash).
		Connect("mid", "sink", exchange.Hash).
		Build()
	require.NoError(t, err)
	rs := region.FromJob(job, exchange.AllBlocking)
	require.Equal(t, 4, rs.NumRegions())
	topo := rs.Topology()
	work1, err := topo.ParseVertexName("work#1")
	require.NoError(t, err)
	src0, err := topo.ParseVertexName("src#0")
	require.NoError(t, err)
	for seed := uint64(1); seed <= 10; seed++ {
		res := run(t, simulator.Config{Regions: rs, Cluster: slots(4), Seed: seed, Ties: tiesFor(seed), Record: true,
			Failures: []simulator.Failure{{Task: work1, After: 900 * time.Millisecond}}})
		require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
		requireTrace(t, rs, slots(4), simulator.RegionPolicy, res)
		assert.True(t, checkFailover(t, rs, work1, 900*time.Millisecond, res), "a region upstream of the failure restarted")
		require.Len(t, res.Restarts, 1)
		assert.Equal(t, []region.ID{0, 1, 2, 3}, res.Restarts[0].Regions)
		assert.Equal(t, rs.RegionOf(src0), region.ID(0))
		canceled := map[string]bool{}
		for _, ev := range res.Events {
			if ev.Kind == runfile.Cancel {
				canceled[ev.Task] = true
			}
		}
		assert.Equal(t, map[string]bool{"work#0": true, "sink#0": true}, canceled, "the running tasks of the restarted regions")
	}
}

// Durations too long for virtual time are a configuration error, not an
// overflow that silently gives wrong times.
func TestRunRejectsJobsTooLongForVirtualTime(t *testing.T) {
	job, err := topology.NewBuilder("eons").
		AddVertex(topology.JobVertex{ID: "A", Parallelism: 1, Duration: 9e12 * time.Millisecond}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 1, Duration: 9e12 * time.Millisecond}).
		Connect("A", "B", exchange.Forward).
		Build()
	require.NoError(t, err)
	_, err = simulator.Run(simulator.Config{Regions: region.FromJob(job, exchange.AllBlocking), Cluster: slots(1)})
	require.ErrorIs(t, err, simulator.ErrTooLong)
	assert.Contains(t, err.Error(), "vertex A: 1 subtask of 9000000000000 ms")
}
