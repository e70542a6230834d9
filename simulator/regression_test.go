package simulator_test

import (
	"fmt"
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

// TestFinishCascadeStopsAtTasksCanceledByTheJobFailing: a task's finish
// lets pipelined consumers finish with it in one loop; if the finish makes
// the job fail (a region that can never be served), those consumers are
// canceled first and must not be marked finished afterwards.
func TestFinishCascadeStopsAtTasksCanceledByTheJobFailing(t *testing.T) {
	small := resource.New(500, 512)
	g, err := topology.NewBuilder("cascade").
		AddVertex(topology.JobVertex{ID: "v0", Parallelism: 2, SlotSharingGroup: "g1", Duration: 1500 * time.Millisecond}).
		AddVertex(topology.JobVertex{ID: "v1", Parallelism: 1, SlotSharingGroup: "g0", Resources: small, Duration: time.Second}).
		AddVertex(topology.JobVertex{ID: "v2", Parallelism: 2, SlotSharingGroup: "g1", Resources: small, Duration: 1700 * time.Millisecond}).
		AddVertex(topology.JobVertex{ID: "v3", Parallelism: 1, SlotSharingGroup: "g1", Resources: resource.New(1000, 2048).WithExtended("gpu", 1), Duration: 300 * time.Millisecond}).
		AddVertex(topology.JobVertex{ID: "v4", Parallelism: 3, SlotSharingGroup: "g1", Duration: 400 * time.Millisecond}).
		Connect("v0", "v1", exchange.Broadcast).
		Connect("v1", "v3", exchange.Forward).
		Connect("v0", "v4", exchange.Rescale).
		Build()
	require.NoError(t, err)
	rs := region.FromJob(g, exchange.PointwisePipelinedOnly)
	cluster := []resource.Count{
		{Profile: resource.New(1000, 1024), N: 1},
		{Profile: resource.New(2000, 2048), N: 1},
		{Profile: resource.New(2000, 4096), N: 2},
	}
	require.False(t, rs.Check(cluster, resource.FitsEveryDimension).Runnable, "v3 needs a gpu no slot has")
	res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Seed: 1, Record: true})
	assert.Equal(t, runfile.Failed, res.Verdict, res.Reason)
	canceled := map[string]bool{}
	for _, e := range res.Events {
		key := fmt.Sprintf("%s@%d", e.Task, e.Attempt)
		switch e.Kind {
		case runfile.Cancel:
			canceled[key] = true
		case runfile.Finish:
			assert.False(t, canceled[key], "%s finished after it was canceled", e.Task)
			assert.NotEqual(t, runfile.NoSlot, e.Slot, "%s finished without a slot", e.Task)
		}
	}
	_, err = checkTrace(rs, cluster, simulator.RegionPolicy, res)
	assert.NoError(t, err)
}
