package kubernetes

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// A failover withdraws the open requests of the regions it restarts at
// once, as the simulator's trace does, not when their next attempts ask:
// v2#0 and v2#1 (regions of their own) wait for slots when v1#0 fails and
// restarts v0's region and v2#1's; v2#1's request is withdrawn in that
// Ready, before its requests, and v2#0's (its region not restarted)
// stays open.
func TestTraceWithdrawsRestartedRegionsRequests(t *testing.T) {
	rs, r, trace := tracingRunner(t, `{"vertices":[{"id":"v0","parallelism":1},{"id":"v1","parallelism":1},{"id":"v2","parallelism":2}],
		"edges":[{"source":"v0","target":"v1","shipStrategy":"forward","exchange":"pipelined"},
		{"source":"v0","target":"v2","shipStrategy":"rebalance","exchange":"blocking"}]}`)
	now := time.Unix(0, 0)
	task := func(name string) scheduler.TaskID {
		v, err := rs.Topology().ParseVertexName(name)
		require.NoError(t, err)
		return v
	}
	v21 := task("v2#1")
	require.NotEqual(t, rs.RegionOf(task("v2#0")), rs.RegionOf(v21))
	r.traceRequest(now, "s", task("v2#0"), 0)
	r.traceRequest(now, "s", v21, 0)
	*trace = nil
	restart := scheduler.Restart{Failed: task("v1#0"), Regions: []scheduler.RegionID{rs.RegionOf(task("v0#0")), rs.RegionOf(v21)}}
	r.traceReady(now, multijob.Ready{Jobs: []multijob.JobReady{{Job: "s", Ready: scheduler.Ready{
		Restarted: []scheduler.Restart{restart},
		Requests:  []scheduler.Request{{Region: restart.Regions[0], Attempt: 1, Slots: rs.Slots(restart.Regions[0])}},
	}}}})
	assert.Equal(t, []string{"withdraw v2#1@0", "request v0#0@1", "request v1#0@1"}, *trace)
	assert.Equal(t, map[scheduler.TaskID]scheduler.Attempt{task("v2#0"): 0, task("v0#0"): 1, task("v1#0"): 1}, r.tr.asked["s"])
	require.NoError(t, r.Close(context.Background()))
}

// A region that asked and restarted within one Ready (every input of an
// instant is applied before it) no longer waits: its request is
// withdrawn right after it is traced, as in the simulator's trace. Here
// the job's scheduler has not started, so no region of it waits.
func TestTraceWithdrawsARequestItsReadyRestarted(t *testing.T) {
	rs, r, trace := tracingRunner(t, `{"vertices":[{"id":"v0","parallelism":1},{"id":"v2","parallelism":2}],
		"edges":[{"source":"v0","target":"v2","shipStrategy":"rebalance","exchange":"blocking"}]}`)
	now := time.Unix(0, 0)
	v20, err := rs.Topology().ParseVertexName("v2#0")
	require.NoError(t, err)
	reg := rs.RegionOf(v20)
	r.traceReady(now, multijob.Ready{Jobs: []multijob.JobReady{{Job: "s", Ready: scheduler.Ready{
		Requests:  []scheduler.Request{{Region: reg, Attempt: 0, Slots: rs.Slots(reg)}},
		Restarted: []scheduler.Restart{{Regions: []scheduler.RegionID{reg}}},
	}}}})
	assert.Equal(t, []string{"request v2#0@0", "withdraw v2#0@0"}, *trace)
	assert.Empty(t, r.tr.asked["s"])
	require.NoError(t, r.Close(context.Background()))
}

// A job that finished ended with its last task, an input of the
// instant: its driver's finish and release are traced before the events
// of the decision over that instant (its reclaims, cancels and
// requests), as in the simulator's trace.
func TestTraceFinishedJobsDriverBeforeTheDecision(t *testing.T) {
	_, r, trace := tracingRunner(t, `{"vertices":[{"id":"v0","parallelism":1}]}`)
	now := time.Unix(0, 0)
	r.jobs["s"].driver = &driverPod{name: DriverPodName("r1", "s"), slot: 3, bound: true}
	require.NoError(t, r.apply(context.Background(), now, multijob.Ready{
		Events: []admission.Event{{Kind: admission.Reclaimed, Job: "h", Victim: "l", Count: 1}},
		Ended:  []multijob.JobEnd{{Job: "s", Outcome: multijob.Finished}},
	}))
	assert.Equal(t, []string{"finish driver@0", "release driver@0", "reclaim @0"}, *trace)
	require.NoError(t, r.Close(context.Background()))
}

// tracingRunner returns the regions of a job (all-blocking), and a Runner
// on two fake nodes to which job "s" of those regions was submitted at
// time 0, with the trace events it writes ("kind task@attempt").
func tracingRunner(t *testing.T, job string) (*region.Regions, *Runner, *[]string) {
	t.Helper()
	g, err := topology.DecodeBytes([]byte(job))
	require.NoError(t, err)
	rs := region.Build(topology.NewExecutionTopology(g, exchange.AllBlocking))
	trace := &[]string{}
	c := fakeCluster()
	kwokNodes(t, c, "k1", "k2")
	r, err := NewRunner(context.Background(), RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024),
		Trace: func(ev runfile.Event) { *trace = append(*trace, fmt.Sprintf("%s %s@%d", ev.Kind, ev.Task, ev.Attempt)) }})
	require.NoError(t, err)
	require.NoError(t, r.Submit(time.Unix(0, 0), multijob.JobSpec{JobSpec: admission.JobSpec{Name: "s"}, Regions: rs}))
	return rs, r, trace
}
