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
	"github.com/regionsched/regionsched/topology"
)

// streamingJob is an unbounded source read by a bounded map, which a
// sink reads through a pipelined exchange, next to a batch branch of two
// regions. With stream → sink blocking instead, see blockedJob.
func streamingJob(t testing.TB, sinkExchange exchange.ResultPartitionType) *topology.JobGraph {
	t.Helper()
	job, err := topology.NewBuilder("streaming").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 2, Duration: time.Second, Unbounded: true}).
		AddVertex(topology.JobVertex{ID: "map", Parallelism: 2, Duration: time.Second}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1, Duration: time.Second}).
		AddVertex(topology.JobVertex{ID: "batch", Parallelism: 2, Duration: 2 * time.Second}).
		AddVertex(topology.JobVertex{ID: "report", Parallelism: 1, Duration: time.Second}).
		ConnectPinned("src", "map", exchange.Forward, exchange.PipelinedBounded).
		ConnectPinned("map", "sink", exchange.Hash, sinkExchange).
		ConnectPinned("batch", "report", exchange.Hash, exchange.Blocking).
		Build()
	require.NoError(t, err)
	return job
}

// A streaming job ends in the steady state: the unbounded source and the
// bounded tasks reading it keep running, the batch branch finishes; the
// run does not hang.
func TestSteadyState(t *testing.T) {
	job := streamingJob(t, exchange.PipelinedBounded)
	for _, policy := range []simulator.Policy{simulator.RegionPolicy, simulator.EagerPolicy} {
		rs := region.FromJob(job, exchange.AllBlocking)
		cluster := slots(7) // eager shares no slot: one per task
		require.True(t, rs.Check(cluster, resource.FitsEveryDimension).Runnable)
		for seed := uint64(1); seed <= 10; seed++ {
			res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Policy: policy, Seed: seed, Ties: tiesFor(seed), Record: true})
			require.Equal(t, runfile.Steady, res.Verdict, "%v seed %d: %s", policy, seed, res.Reason)
			assert.True(t, res.Verdict.OK())
			assert.True(t, strings.HasPrefix(res.Reason, "running: "), res.Reason)
			assert.Contains(t, res.Reason, "2 unbounded tasks keep running")
			assert.Contains(t, res.Reason, "3 tasks keep reading them")
			assert.Empty(t, res.Holding)
			assert.Empty(t, res.Waiting)
			assert.Empty(t, res.Blocked)
			assert.Equal(t, 3*time.Second, res.Makespan, "batch 0-2 s, report 2-3 s")
			requireTrace(t, rs, cluster, policy, res)
		}
	}
}

// A task reading the blocking result of a stream can never start: Check
// says so, and the run ends in a deadlock that names it (it never hangs,
// and it is not reported as a healthy steady state).
func TestBlockingResultOfAStreamNeverCompletes(t *testing.T) {
	job := streamingJob(t, exchange.Blocking)
	for _, policy := range []simulator.Policy{simulator.RegionPolicy, simulator.EagerPolicy} {
		rs := region.FromJob(job, exchange.AllBlocking)
		cluster := slots(6)
		v := rs.Check(cluster, resource.FitsEveryDimension)
		require.False(t, v.Runnable)
		assert.Contains(t, v.Reason, "edge map -> sink")
		res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Policy: policy, Seed: 1, Record: true})
		require.Equal(t, runfile.Deadlock, res.Verdict, "%v: %s", policy, res.Reason)
		assert.Equal(t, []string{"sink#0"}, res.Blocked)
		assert.True(t, strings.HasPrefix(res.Reason, "deadlock: "), res.Reason)
		assert.Contains(t, res.Reason, "sink#0 can never start")
		requireTrace(t, rs, cluster, policy, res)
		for _, ev := range res.Events {
			assert.NotEqual(t, "sink#0", ev.Task, "the sink behind the stream never asks for a slot")
		}
	}
}

// The steady state in all-pipelined mode: one region holding every slot.
func TestSteadyStateOneRegion(t *testing.T) {
	job, err := topology.NewBuilder("stream").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 2, Duration: time.Second, Unbounded: true}).
		AddVertex(topology.JobVertex{ID: "agg", Parallelism: 3, Duration: time.Second}).
		Connect("src", "agg", exchange.Hash).
		Build()
	require.NoError(t, err)
	rs := region.FromJob(job, exchange.AllPipelined)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(3), Seed: 1, Record: true})
	require.Equal(t, runfile.Steady, res.Verdict, res.Reason)
	assert.Equal(t, time.Second, res.Makespan, "agg's work is done at 1 s; it keeps reading the stream")
	requireTrace(t, rs, slots(3), simulator.RegionPolicy, res)
}

// A stale pool deadline (armed while a region could not be served, then
// withdrawn when slots came back) must not move the clock: the makespan
// is the time of the last real event, not the 5-minute timeout.
func TestStaleDeadlineDoesNotStretchMakespan(t *testing.T) {
	// stream#0 holds one of 2 slots forever; the a-b region needs both
	// and waits, unfulfillable (its timeout is armed). The stream fails at
	// 500 ms, a-b gets both slots and runs 500-1500 ms, then the stream
	// runs again.
	job, err := topology.NewBuilder("stale-deadline").
		AddVertex(topology.JobVertex{ID: "stream", Parallelism: 1, Duration: time.Second, Unbounded: true}).
		AddVertex(topology.JobVertex{ID: "a", Parallelism: 2, Duration: time.Second}).
		AddVertex(topology.JobVertex{ID: "b", Parallelism: 2, Duration: time.Second}).
		Connect("a", "b", exchange.Hash).
		Build()
	require.NoError(t, err)
	rs := region.FromJob(job, exchange.AllPipelined)
	require.Equal(t, 2, rs.NumRegions())
	require.Equal(t, 2, rs.MinimumSlots())
	stream, err := rs.Topology().ParseVertexName("stream#0")
	require.NoError(t, err)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 1, Record: true,
		Failures: []simulator.Failure{{Task: stream, After: 500 * time.Millisecond}}})
	require.True(t, res.Verdict.OK(), res.Reason)
	requireTrace(t, rs, slots(2), simulator.RegionPolicy, res)
	assert.Equal(t, 1500*time.Millisecond, res.Makespan, "%s", res.Reason)
	assert.Equal(t, runfile.Steady, res.Verdict)
	assert.Equal(t, 1, res.Failovers)
}

// The eager policy: a task too big for every slot waits forever: a
// deadlock with nobody holding a slot.
func TestEagerTaskFitsNoSlot(t *testing.T) {
	job, err := topology.NewBuilder("too-big").
		AddVertex(topology.JobVertex{ID: "big", Parallelism: 1, Duration: time.Second, Resources: resource.New(4000, 4096)}).
		Build()
	require.NoError(t, err)
	rs := region.FromJob(job, exchange.AllBlocking)
	cluster := []resource.Count{{Profile: resource.New(1000, 1024), N: 2}}
	res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Policy: simulator.EagerPolicy, Seed: 1})
	require.Equal(t, runfile.Deadlock, res.Verdict)
	assert.Empty(t, res.Holding)
	assert.Equal(t, []string{"big#0"}, res.Waiting)
	assert.Equal(t, "deadlock: at 0 ms big#0 waits for a slot that never comes", res.Reason)

	// the region policy fails the job at once, naming the region
	res = run(t, simulator.Config{Regions: rs, Cluster: cluster, Seed: 1})
	require.Equal(t, runfile.Failed, res.Verdict)
	assert.Contains(t, res.Reason, "region 0")
}
