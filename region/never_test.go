package region_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// referenceNever marks the job vertices that never finish by fixpoint:
// unbounded ones and readers of such through pipelined edges.
func referenceNever(et *topology.ExecutionTopology) []bool {
	g := et.Job()
	never := make([]bool, g.NumVertices())
	for i := range never {
		never[i] = g.Vertex(topology.JobVertexID(i)).Unbounded
	}
	for changed := true; changed; {
		changed = false
		for e := range topology.JobEdgeID(g.NumEdges()) {
			src, dst := g.EdgeEnds(e)
			if never[src] && !never[dst] && et.PartitionType(e).IsPipelined() {
				never[dst], changed = true, true
			}
		}
	}
	return never
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
