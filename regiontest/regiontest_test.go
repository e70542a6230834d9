package regiontest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/regiontest"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// fakeTB records failures instead of failing the test running it.
type fakeTB struct {
	testing.TB
	errors  []string
	failed  bool
	stopped bool
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Error(args ...any) {
	f.errors = append(f.errors, fmt.Sprint(args...))
	f.failed = true
}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
	f.failed = true
}
func (f *fakeTB) Fatal(args ...any) { f.Error(args...); f.FailNow() }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	f.FailNow()
}
func (f *fakeTB) Fail()        { f.failed = true }
func (f *fakeTB) FailNow()     { f.failed, f.stopped = true, true }
func (f *fakeTB) Failed() bool { return f.failed }

func flip119(t testing.TB) *topology.JobGraph { return testjobs.FLIP119(t) }

func TestAssertDeadlockFreePasses(t *testing.T) {
	job := flip119(t)
	assert.True(t, regiontest.AssertDeadlockFree(t, job, exchange.AllPipelined, regiontest.Slots(4)))
	regiontest.RequireDeadlockFree(t, job, exchange.PointwisePipelinedOnly, regiontest.Slots(2))
	regiontest.RequireDeadlockFree(t, job, exchange.AllBlocking, regiontest.Slots(1), regiontest.Seeds(5))

	ft := &fakeTB{TB: t}
	assert.True(t, regiontest.AssertDeadlockFree(ft, job, exchange.AllPipelined, regiontest.Slots(4)))
	assert.False(t, ft.Failed())
	assert.Empty(t, ft.errors)
}

func TestAssertDeadlockFreeNotRunnable(t *testing.T) {
	job := flip119(t)
	ft := &fakeTB{TB: t}
	assert.False(t, regiontest.AssertDeadlockFree(ft, job, exchange.AllPipelined, regiontest.Slots(3)))
	require.True(t, ft.Failed())
	assert.False(t, ft.stopped, "Assert does not stop the test")
	require.Len(t, ft.errors, 1)
	msg := ft.errors[0]
	assert.Contains(t, msg, "region 0")
	assert.Contains(t, msg, "not runnable")
	assert.Contains(t, msg, `"flip119-example"`)
	assert.Contains(t, msg, "all-pipelined")
	assert.Contains(t, msg, "3 slots")

	ft = &fakeTB{TB: t}
	regiontest.RequireDeadlockFree(ft, job, exchange.AllPipelined, regiontest.Slots(3))
	assert.True(t, ft.stopped, "Require stops the test")
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "region 0")
}

func TestVerifyReport(t *testing.T) {
	job := flip119(t)
	rep := regiontest.Verify(job, exchange.AllPipelined, regiontest.Slots(4), regiontest.Seeds(7))
	require.True(t, rep.DeadlockFree(), rep.Problem)
	assert.True(t, rep.Static.Runnable)
	assert.Equal(t, 4, rep.Static.MinimumSlots)
	require.Len(t, rep.Runs, 7)
	for _, r := range rep.Runs {
		assert.Equal(t, runfile.Finished, r.Verdict)
		assert.Equal(t, time.Second, r.Makespan)
		assert.Nil(t, r.Events, "Verify does not record traces")
	}
	rep = regiontest.Verify(job, exchange.AllPipelined, regiontest.Slots(4))
	assert.Len(t, rep.Runs, regiontest.DefaultSeeds)

	rep = regiontest.Verify(job, exchange.AllPipelined, regiontest.Slots(2))
	assert.False(t, rep.DeadlockFree())
	assert.False(t, rep.Static.Runnable)
	assert.Empty(t, rep.Runs, "no simulation when the static check fails")
	assert.True(t, strings.Contains(rep.Problem, "not runnable"), rep.Problem)
}

// Seeds(0) only checks statically.
func TestSeedsZeroIsStaticOnly(t *testing.T) {
	job := flip119(t)
	rep := regiontest.Verify(job, exchange.AllPipelined, regiontest.Slots(4), regiontest.Seeds(0))
	assert.True(t, rep.DeadlockFree())
	assert.Empty(t, rep.Runs)
	rep = regiontest.Verify(job, exchange.AllPipelined, regiontest.Slots(3), regiontest.Seeds(0))
	assert.False(t, rep.DeadlockFree())
	assert.Contains(t, rep.Problem, "region 0")
	// A bad failure injection is reported even when no random seed is
	// simulated.
	rep = regiontest.Verify(job, exchange.AllPipelined, regiontest.Slots(4), regiontest.Seeds(0), regiontest.Failures("Q#0@1"))
	assert.False(t, rep.DeadlockFree())
	assert.Contains(t, rep.Problem, "Q#0@1")
}

func TestFailuresOption(t *testing.T) {
	job := flip119(t)
	rep := regiontest.Verify(job, exchange.PointwisePipelinedOnly, regiontest.Slots(2),
		regiontest.Seeds(5), regiontest.Failures("C#3@500", "A#0@200"))
	require.True(t, rep.DeadlockFree(), rep.Problem)
	require.Len(t, rep.Runs, 5)
	for _, r := range rep.Runs {
		assert.Equal(t, 2, r.Failovers, "both injected failures happen")
		assert.Greater(t, r.Makespan, 4*time.Second, "lost work makes the job longer")
	}
	assert.True(t, regiontest.AssertDeadlockFree(t, job, exchange.AllBlocking, regiontest.Slots(1),
		regiontest.Seeds(3), regiontest.Failures("D#3@999")))

	ft := &fakeTB{TB: t}
	assert.False(t, regiontest.AssertDeadlockFree(ft, job, exchange.AllBlocking, regiontest.Slots(1), regiontest.Failures("A#7@1")))
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "A#7@1")
	assert.Contains(t, ft.errors[0], simulator.ErrBadFailure.Error())
}

// Clusters with slots of different sizes, and exact matching.
func TestHeterogeneousCluster(t *testing.T) {
	job, err := topology.NewBuilder("two-sizes").
		AddVertex(topology.JobVertex{ID: "small", Parallelism: 2, Duration: time.Second, Resources: resource.New(500, 512)}).
		AddVertex(topology.JobVertex{ID: "big", Parallelism: 1, Duration: time.Second, Resources: resource.New(2000, 2048), SlotSharingGroup: "big"}).
		Connect("small", "big", exchange.Rebalance).
		Build()
	require.NoError(t, err)
	cluster := []resource.Count{{Profile: resource.New(1000, 1024), N: 2}, {Profile: resource.New(2000, 2048), N: 1}}
	regiontest.RequireDeadlockFree(t, job, exchange.AllBlocking, cluster)
	regiontest.RequireDeadlockFree(t, job, exchange.AllPipelined, cluster)
	regiontest.RequireDeadlockFree(t, job, exchange.AllPipelined, regiontest.SizedSlots(3, resource.New(2000, 2048)))

	// exactly matching slots only: small needs {500m, 512MB} slots
	ft := &fakeTB{TB: t}
	assert.False(t, regiontest.AssertDeadlockFree(ft, job, exchange.AllPipelined, cluster, regiontest.ExactMatching()))
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "not runnable")
	exact := []resource.Count{{Profile: resource.New(500, 512), N: 2}, {Profile: resource.New(2000, 2048), N: 1}}
	regiontest.RequireDeadlockFree(t, job, exchange.AllPipelined, exact, regiontest.ExactMatching())

	// three small slots: big fits none
	ft = &fakeTB{TB: t}
	assert.False(t, regiontest.AssertDeadlockFree(ft, job, exchange.AllPipelined,
		regiontest.SizedSlots(3, resource.New(1000, 1024))))
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "3 slots (3 x")
	assert.Contains(t, ft.errors[0], "not runnable")
	assert.Contains(t, ft.errors[0], "region 0")
}

// TestBuilderJobRunsLikeItsJobFile: the Builder gives a vertex without a
// Duration topology.DefaultDuration, as the JSON decoder does for a
// vertex without durationMs, so FLIP-119's example built in Go
// is the same graph as examples/jobs/flip119.json, simulates identically,
// and takes the failure specs written for the file.
func TestBuilderJobRunsLikeItsJobFile(t *testing.T) {
	built, err := topology.NewBuilder("flip119-example").
		AddVertex(topology.JobVertex{ID: "A", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "C", Parallelism: 4}).
		AddVertex(topology.JobVertex{ID: "D", Parallelism: 4}).
		Connect("A", "B", exchange.Forward).
		Connect("B", "C", exchange.Rescale).
		Connect("C", "D", exchange.Hash).
		Build()
	require.NoError(t, err)
	decoded := flip119(t)
	require.Equal(t, decoded, built, "the same graph, durations included")
	for jv := range topology.JobVertexID(built.NumVertices()) {
		assert.Equal(t, topology.DefaultDuration, built.Vertex(jv).Duration, built.Vertex(jv).ID)
	}

	mode := exchange.PointwisePipelinedOnly
	run := func(job *topology.JobGraph, failures ...string) *simulator.Result {
		rs := region.FromJob(job, mode)
		var fs []simulator.Failure
		for _, spec := range failures {
			f, err := simulator.ParseFailure(rs.Topology(), spec)
			require.NoError(t, err, spec)
			fs = append(fs, f)
		}
		res, err := simulator.Run(simulator.Config{Regions: rs, Cluster: regiontest.Slots(2), Seed: 7, Failures: fs, Record: true})
		require.NoError(t, err)
		require.True(t, res.Verdict.OK(), res.Reason)
		return res
	}
	// Two slots run the two regions of A, B and C one after the other, then
	// D's four subtasks two at a time: four waves of 1 s. B#1 failing after
	// 500 ms reruns its region: 500 ms more.
	for _, c := range []struct {
		failures []string
		makespan time.Duration
	}{{nil, 4 * time.Second}, {[]string{"B#1@500"}, 4500 * time.Millisecond}} {
		b, f := run(built, c.failures...), run(decoded, c.failures...)
		assert.Equal(t, f, b, "failures %v: the builder job and the job file simulate identically", c.failures)
		assert.Equal(t, c.makespan, b.Makespan, "failures %v", c.failures)
		assert.Len(t, b.Restarts, len(c.failures))
	}

	rep := regiontest.Verify(built, mode, regiontest.Slots(2), regiontest.Failures("B#1@500"))
	assert.True(t, rep.DeadlockFree(), rep.Problem)
	require.Len(t, rep.Runs, regiontest.DefaultSeeds)
	for _, res := range rep.Runs {
		assert.Len(t, res.Restarts, 1, "B#1 fails once after 500 ms")
	}
	regiontest.RequireDeadlockFree(t, built, mode, regiontest.Slots(2), regiontest.Failures("B#1@500"))
}

// Hybrid jobs: deadlock-free on their largest region's slots (1 for
// FLIP-119's example), with failures and any selective share; a share
// outside (0, 1] is a Problem naming it.
func TestHybridModes(t *testing.T) {
	job := flip119(t)
	for _, mode := range []exchange.Mode{exchange.AllHybridFull, exchange.AllHybridSelective} {
		rep := regiontest.Verify(job, mode, regiontest.Slots(1), regiontest.Seeds(5), regiontest.Failures("C#1@300"))
		require.True(t, rep.DeadlockFree(), rep.Problem)
		assert.Equal(t, 1, rep.Static.MinimumSlots)
		regiontest.RequireDeadlockFree(t, job, mode, regiontest.Slots(3), regiontest.Seeds(5), regiontest.SelectiveShare(0.25))
		fast := regiontest.Verify(job, mode, regiontest.Slots(12), regiontest.Seeds(1))
		require.True(t, fast.DeadlockFree(), fast.Problem)
		if mode == exchange.AllHybridFull {
			assert.Equal(t, time.Second, fast.Runs[0].Makespan, "with a slot per subtask every consumer works beside its producers")
		}
	}
	rep := regiontest.Verify(job, exchange.AllHybridSelective, regiontest.Slots(1), regiontest.SelectiveShare(2))
	assert.False(t, rep.DeadlockFree())
	assert.Contains(t, rep.Problem, "selective share 2")
}
