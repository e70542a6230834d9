package topology_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/topology"
)

// specConnected is the rule of docs/job-file.md verbatim: does producer subtask i
// feed consumer subtask j on a pointwise edge of parallelisms s -> t?
func specConnected(s, t, i, j int) bool {
	switch {
	case s == t:
		return i == j
	case s > t: // consumer j reads producers [j*s/t, (j+1)*s/t)
		return j*s/t <= i && i < (j+1)*s/t
	default: // producer i feeds consumers [ceil(i*t/s), ceil((i+1)*t/s))
		ceil := func(a, b int) int { return (a + b - 1) / b }
		return ceil(i*t, s) <= j && j < ceil((i+1)*t, s)
	}
}

// pointwiseJob is pre(3) -hash-> A(s) -ship-> B(t), so that the edge under
// test (index 1) has non-zero vertex, partition and group offsets.
func pointwiseJob(t *testing.T, s, c int, ship exchange.ShipStrategy) *topology.ExecutionTopology {
	t.Helper()
	g, err := topology.NewBuilder("pw").
		AddVertex(topology.JobVertex{ID: "pre", Parallelism: 3}).
		AddVertex(topology.JobVertex{ID: "A", Parallelism: s}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: c}).
		Connect("pre", "A", exchange.Hash).
		Connect("A", "B", ship).
		Build()
	require.NoError(t, err)
	return topology.NewExecutionTopology(g, exchange.PointwisePipelinedOnly)
}

func TestPointwiseConnectionsFollowTheSpec(t *testing.T) {
	const edge topology.JobEdgeID = 1
	for s := 1; s <= 12; s++ {
		for c := 1; c <= 12; c++ {
			ships := []exchange.ShipStrategy{exchange.Rescale}
			if s == c {
				ships = append(ships, exchange.Forward)
			}
			for _, ship := range ships {
				t.Run(fmt.Sprintf("%v/%dx%d", ship, s, c), func(t *testing.T) {
					et := pointwiseJob(t, s, c, ship)
					checkPointwiseEdge(t, et, edge, s, c)
				})
			}
		}
	}
}

func checkPointwiseEdge(t *testing.T, et *topology.ExecutionTopology, edge topology.JobEdgeID, s, c int) {
	aStart := et.VerticesOf(1).Start
	bStart := et.VerticesOf(2).Start
	require.Equal(t, int32(3), aStart)
	require.Equal(t, int32(3+s), bStart)
	producer := func(i int) topology.ExecutionVertexID { return topology.ExecutionVertexID(aStart + int32(i)) }
	consumer := func(j int) topology.ExecutionVertexID { return topology.ExecutionVertexID(bStart + int32(j)) }

	groups := et.GroupsOf(edge)
	assert.Equal(t, min(s, c), groups.Len(), "a pointwise edge has min(s, t) groups")
	assert.Equal(t, int32(1), groups.Start, "after the one group of the all-to-all edge")
	assert.Equal(t, 1+min(s, c), et.NumGroups())
	assert.Equal(t, exchange.Pointwise, et.Pattern(edge))

	// Every group is a complete bipartite block of spec connections, the
	// blocks are disjoint and together they are exactly the connections.
	covered := map[[2]int]int{}
	for g := groups.Start; g < groups.End; g++ {
		pg := et.Group(topology.GroupID(g))
		assert.Equal(t, edge, pg.Edge)
		assert.Equal(t, edge, et.EdgeOfGroup(topology.GroupID(g)))
		require.Positive(t, pg.Producers.Len(), "group %d has producers", g)
		require.Positive(t, pg.Consumers.Len(), "group %d has consumers", g)
		assert.True(t, pg.Producers.Len() == 1 || pg.Consumers.Len() == 1, "group %d: one side is a single subtask", g)
		checkGroupPartitions(t, et, topology.GroupID(g), pg)
		for p := pg.Producers.Start; p < pg.Producers.End; p++ {
			for q := pg.Consumers.Start; q < pg.Consumers.End; q++ {
				i, j := int(p-aStart), int(q-bStart)
				require.True(t, i >= 0 && i < s && j >= 0 && j < c, "group %d: %v out of the edge's vertices", g, pg)
				assert.True(t, specConnected(s, c, i, j), "group %d pairs A#%d with B#%d, which the spec does not connect", g, i, j)
				covered[[2]int{i, j}]++
			}
		}
	}
	for i := range s {
		for j := range c {
			if specConnected(s, c, i, j) {
				assert.Equal(t, 1, covered[[2]int{i, j}], "A#%d -> B#%d must be in exactly one group", i, j)
			}
		}
	}

	// Consumer side: ConsumedGroup(j) holds exactly j's producers.
	for j := range c {
		g := et.ConsumedGroup(edge, j)
		require.True(t, groups.Contains(int32(g)), "B#%d: group %d not of edge %d", j, g, edge)
		pg := et.Group(g)
		assert.True(t, pg.Consumers.Contains(int32(consumer(j))), "B#%d not among the consumers of its group", j)
		for i := range s {
			assert.Equal(t, specConnected(s, c, i, j), pg.Producers.Contains(int32(producer(i))), "B#%d: producer A#%d", j, i)
		}
	}
	// Producer side: ProducedGroup(i) holds exactly i's consumers; the
	// partition of producer i maps back to i and to that group.
	for i := range s {
		g := et.ProducedGroup(edge, i)
		require.True(t, groups.Contains(int32(g)), "A#%d: group %d not of edge %d", i, g, edge)
		pg := et.Group(g)
		assert.True(t, pg.Producers.Contains(int32(producer(i))), "A#%d not among the producers of its group", i)
		for j := range c {
			assert.Equal(t, specConnected(s, c, i, j), pg.Consumers.Contains(int32(consumer(j))), "A#%d: consumer B#%d", i, j)
		}
		p := et.PartitionOf(edge, producer(i))
		assert.Equal(t, topology.ResultPartitionID(3+i), p, "partitions of edge 1 follow the 3 of edge 0")
		assert.Equal(t, edge, et.EdgeOfPartition(p))
		assert.Equal(t, producer(i), et.PartitionProducer(p))
		assert.Equal(t, g, et.PartitionGroupOf(p))
	}
}

// checkGroupPartitions checks GroupPartitions(g) against Group(g): the
// partitions of its producers on its edge, in producer order.
func checkGroupPartitions(t *testing.T, et *topology.ExecutionTopology, g topology.GroupID, pg topology.PartitionGroup) {
	t.Helper()
	first, n := et.GroupPartitions(g)
	require.Equal(t, int32(pg.Producers.Len()), n, "group %d: one partition per producer", g)
	for k := range n {
		p := first + topology.ResultPartitionID(k)
		assert.Equal(t, topology.ExecutionVertexID(pg.Producers.Start+k), et.PartitionProducer(p), "group %d: partition %d", g, p)
		assert.Equal(t, g, et.PartitionGroupOf(p), "group %d: partition %d", g, p)
	}
}

func TestAllToAllEdgeIsOneGroup(t *testing.T) {
	et := pointwiseJob(t, 5, 7, exchange.Hash)
	for i, want := range []struct{ prod, cons topology.Range }{
		{topology.Range{Start: 0, End: 3}, topology.Range{Start: 3, End: 8}},
		{topology.Range{Start: 3, End: 8}, topology.Range{Start: 8, End: 15}},
	} {
		e := topology.JobEdgeID(i)
		src, dst := et.Job().EdgeEnds(e)
		gs := et.GroupsOf(e)
		require.Equal(t, 1, gs.Len())
		pg := et.Group(topology.GroupID(gs.Start))
		assert.Equal(t, want.prod, pg.Producers)
		assert.Equal(t, want.cons, pg.Consumers)
		checkGroupPartitions(t, et, topology.GroupID(gs.Start), pg)
		assert.Equal(t, exchange.AllToAll, et.Pattern(e))
		for j := range et.VerticesOf(dst).Len() {
			assert.Equal(t, topology.GroupID(gs.Start), et.ConsumedGroup(e, j))
		}
		for i := range et.VerticesOf(src).Len() {
			assert.Equal(t, topology.GroupID(gs.Start), et.ProducedGroup(e, i))
		}
	}
	assert.Equal(t, 2, et.NumGroups())
	assert.Equal(t, 8, et.NumPartitions())
	assert.Equal(t, 15, et.NumExecutionVertices())
}

func TestExecutionTopologyIdsAndModes(t *testing.T) {
	g, err := topology.NewBuilder("ids").
		AddVertex(topology.JobVertex{ID: "A", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "C", Parallelism: 4}).
		AddVertex(topology.JobVertex{ID: "D", Parallelism: 4}).
		Connect("A", "B", exchange.Forward).
		Connect("B", "C", exchange.Rescale).
		ConnectPinned("C", "D", exchange.Hash, exchange.Pipelined).
		Build()
	require.NoError(t, err)
	want := map[exchange.Mode][3]exchange.ResultPartitionType{
		exchange.AllBlocking:            {exchange.Blocking, exchange.Blocking, exchange.Pipelined},
		exchange.ForwardPipelinedOnly:   {exchange.PipelinedBounded, exchange.Blocking, exchange.Pipelined},
		exchange.PointwisePipelinedOnly: {exchange.PipelinedBounded, exchange.PipelinedBounded, exchange.Pipelined},
		exchange.AllPipelined:           {exchange.PipelinedBounded, exchange.PipelinedBounded, exchange.Pipelined},
	}
	for m, types := range want {
		et := topology.NewExecutionTopology(g, m)
		assert.Equal(t, m, et.Mode())
		assert.Same(t, g, et.Job())
		for e, pt := range types {
			assert.Equal(t, pt, et.PartitionType(topology.JobEdgeID(e)), "mode %v edge %d", m, e)
		}
	}

	et := topology.NewExecutionTopology(g, exchange.AllBlocking)
	assert.Equal(t, 12, et.NumExecutionVertices())
	assert.Equal(t, 8, et.NumPartitions(), "one partition per producer subtask and edge")
	assert.Equal(t, 2+2+1, et.NumGroups())
	assert.Equal(t, topology.Range{Start: 4, End: 8}, et.VerticesOf(2))
	assert.Equal(t, 4, et.VerticesOf(3).Len())
	assert.Equal(t, topology.ExecutionVertexID(9), et.ExecutionVertex(3, 1))
	for v := range topology.ExecutionVertexID(12) {
		jv := et.JobVertexOf(v)
		assert.True(t, et.VerticesOf(jv).Contains(int32(v)))
		assert.Equal(t, int(v)-int(et.VerticesOf(jv).Start), et.SubtaskIndex(v))
	}
	assert.False(t, topology.Range{Start: 2, End: 4}.Contains(4))
	assert.True(t, topology.Range{Start: 2, End: 4}.Contains(2))
}
