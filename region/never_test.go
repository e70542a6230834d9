package region_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// referenceNever marks the job vertices that never finish by fixpoint:
// unbounded ones and readers of such through edges whose consumers do not
// wait for finished producers (naiveWaits).
func referenceNever(rs *region.Regions) []bool {
	g := rs.Topology().Job()
	never := make([]bool, g.NumVertices())
	for i := range never {
		never[i] = g.Vertex(topology.JobVertexID(i)).Unbounded
	}
	for changed := true; changed; {
		changed = false
		for e := range topology.JobEdgeID(g.NumEdges()) {
			src, dst := g.EdgeEnds(e)
			if never[src] && !never[dst] && !naiveWaits(rs, e) {
				never[dst], changed = true, true
			}
		}
	}
	return never
}

// naiveWaits reports whether the consumers of edge e wait for finished
// producers, by every producer-consumer pair: blocking edges, and
// selective hybrid ones with a pair in different regions.
func naiveWaits(rs *region.Regions, e topology.JobEdgeID) bool {
	t := rs.Topology()
	switch pt := t.PartitionType(e); {
	case pt.IsPipelined() || pt == exchange.HybridFull:
		return false
	case pt == exchange.Blocking:
		return true
	}
	gs := t.GroupsOf(e)
	for k := gs.Start; k < gs.End; k++ {
		pg := t.GroupOnEdge(e, topology.GroupID(k))
		for c := pg.Consumers.Start; c < pg.Consumers.End; c++ {
			for p := pg.Producers.Start; p < pg.Producers.End; p++ {
				if rs.RegionOf(topology.ExecutionVertexID(c)) != rs.RegionOf(topology.ExecutionVertexID(p)) {
					return true
				}
			}
		}
	}
	return false
}

// TestNeverFinishes: unbounded vertices and everything that reads them
// through pipelined edges, transitively, never finish; a blocking edge
// stops the spread; out-of-range indexes are false, not a panic.
func TestNeverFinishes(t *testing.T) {
	g, err := topology.NewBuilder("spread").
		AddVertex(topology.JobVertex{ID: "U", Parallelism: 1, Unbounded: true}).
		AddVertex(topology.JobVertex{ID: "P", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "Q", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "S", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "F", Parallelism: 1}).
		ConnectPinned("U", "P", exchange.Hash, exchange.Pipelined).
		ConnectPinned("P", "Q", exchange.Forward, exchange.PipelinedBounded).
		ConnectPinned("F", "Q", exchange.Hash, exchange.Pipelined).
		ConnectPinned("F", "S", exchange.Hash, exchange.Blocking).
		Build()
	require.NoError(t, err)
	rs := region.FromJob(g, exchange.AllBlocking)
	want := map[string]bool{"U": true, "P": true, "Q": true, "S": false, "F": false}
	for jv := range topology.JobVertexID(g.NumVertices()) {
		assert.Equal(t, want[g.Vertex(jv).ID], rs.NeverFinishes(jv), g.Vertex(jv).ID)
	}
	assert.False(t, rs.NeverFinishes(-1))
	assert.False(t, rs.NeverFinishes(topology.JobVertexID(g.NumVertices())))
	// Every slot with such a subtask is held forever.
	for r := range region.ID(rs.NumRegions()) {
		for _, s := range rs.Slots(r) {
			never := false
			for _, v := range s.Members {
				never = never || want[g.Vertex(rs.Topology().JobVertexOf(v)).ID]
			}
			assert.Equal(t, never, s.Unbounded, "slot %v", s.Members)
		}
	}
	// A bounded job marks nothing.
	b, err := topology.NewBuilder("bounded").AddVertex(topology.JobVertex{ID: "A", Parallelism: 1}).Build()
	require.NoError(t, err)
	assert.False(t, region.FromJob(b, exchange.AllPipelined).NeverFinishes(0))
}

// TestNeverFinishesThroughHybridEdges: a full hybrid consumer of a
// subtask that never finishes starts (its producers are deployed) and
// never finishes either, holding its slot; a selective one never starts
// (it waits for a share of finished producers), so Check says the job can
// never run, naming the edge, whatever the cluster.
func TestNeverFinishesThroughHybridEdges(t *testing.T) {
	build := func(pt exchange.ResultPartitionType) *region.Regions {
		g, err := topology.NewBuilder("hybrid-stream").
			AddVertex(topology.JobVertex{ID: "U", Parallelism: 2, Unbounded: true}).
			AddVertex(topology.JobVertex{ID: "C", Parallelism: 2}).
			ConnectPinned("U", "C", exchange.Hash, pt).
			Build()
		require.NoError(t, err)
		return region.FromJob(g, exchange.AllBlocking)
	}
	full := build(exchange.HybridFull)
	assert.True(t, full.NeverFinishes(1), "a full hybrid consumer runs beside its producer forever")
	v := full.Check([]resource.Count{{Profile: resource.Unknown, N: 4}}, resource.FitsEveryDimension)
	assert.True(t, v.Runnable, v.Reason)
	assert.Equal(t, 4, v.Indefinite, "every subtask holds its slot forever")
	v = full.Check([]resource.Count{{Profile: resource.Unknown, N: 3}}, resource.FitsEveryDimension)
	assert.False(t, v.Runnable, "4 slots are held at once in the end")

	selective := build(exchange.HybridSelective)
	assert.False(t, selective.NeverFinishes(1), "a selective hybrid consumer never starts")
	v = selective.Check([]resource.Count{{Profile: resource.Unknown, N: 100}}, resource.FitsEveryDimension)
	assert.False(t, v.Runnable)
	assert.True(t, v.Definite)
	assert.Contains(t, v.Reason, "hybrid-selective result of edge U -> C")

	// A selective consumer in its producer's region (glued to it by a
	// pipelined edge) waits for no share: it runs beside it forever.
	g, err := topology.NewBuilder("hybrid-in-region").
		AddVertex(topology.JobVertex{ID: "U", Parallelism: 1, Unbounded: true}).
		AddVertex(topology.JobVertex{ID: "C", Parallelism: 1}).
		ConnectPinned("U", "C", exchange.Forward, exchange.PipelinedBounded).
		ConnectPinned("U", "C", exchange.Forward, exchange.HybridSelective).
		Build()
	require.NoError(t, err)
	inRegion := region.FromJob(g, exchange.AllBlocking)
	require.Equal(t, 1, inRegion.NumRegions())
	assert.True(t, inRegion.NeverFinishes(1))
	v = inRegion.Check([]resource.Count{{Profile: resource.Unknown, N: 1}}, resource.FitsEveryDimension)
	assert.True(t, v.Runnable, v.Reason)
	assert.Equal(t, 1, v.Indefinite)
}
