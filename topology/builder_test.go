package topology_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/topology"
)

func TestBuilderBuildsAnIndexedGraph(t *testing.T) {
	// Declared out of topological order on purpose.
	g, err := topology.NewBuilder("etl").
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 4, SlotSharingGroup: "io", Duration: 250 * time.Millisecond}).
		AddVertex(topology.JobVertex{ID: "agg", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "lookup", Parallelism: 1}).
		Connect("agg", "sink", exchange.Forward).
		Connect("src", "agg", exchange.Hash).
		ConnectPinned("lookup", "agg", exchange.Broadcast, exchange.Pipelined).
		Build()
	require.NoError(t, err)

	assert.Equal(t, "etl", g.Name())
	assert.Equal(t, 4, g.NumVertices())
	assert.Equal(t, 3, g.NumEdges())
	assert.Equal(t, 9, g.NumSubtasks())
	assert.Equal(t, topology.DefaultSlotSharingGroup, g.Vertex(0).SlotSharingGroup, "empty group becomes the default")
	assert.Equal(t, "io", g.Vertex(1).SlotSharingGroup)
	assert.Equal(t, topology.DefaultDuration, g.Vertex(0).Duration, "a zero duration becomes the default, as in a job file")
	assert.Equal(t, 250*time.Millisecond, g.Vertex(1).Duration, "a given duration is kept")

	idx, ok := g.VertexIndex("agg")
	assert.True(t, ok)
	assert.Equal(t, topology.JobVertexID(2), idx)
	_, ok = g.VertexIndex("nope")
	assert.False(t, ok)

	src, dst := g.EdgeEnds(1)
	assert.Equal(t, topology.JobVertexID(1), src)
	assert.Equal(t, topology.JobVertexID(2), dst)
	assert.Equal(t, []topology.JobEdgeID{1, 2}, g.InEdges(2))
	assert.Equal(t, []topology.JobEdgeID{0}, g.OutEdges(2))
	assert.Empty(t, g.InEdges(1))
	assert.Empty(t, g.OutEdges(0))
	assert.Equal(t, topology.JobEdge{Source: "lookup", Target: "agg", ShipStrategy: exchange.Broadcast, Pinned: true, Exchange: exchange.Pipelined}, g.Edge(2))

	// Producers before consumers; ties in declaration order (src before lookup).
	assert.Equal(t, []topology.JobVertexID{1, 3, 2, 0}, g.TopologicalOrder())
	for pos, v := range g.TopologicalOrder() {
		assert.Equal(t, pos, g.TopologicalRank(v))
	}
	assert.Equal(t, topology.DefaultSubmission(), g.Submission())

	assert.Equal(t, 2, g.BlockingEdges(exchange.AllBlocking), "the pinned pipelined edge stays pipelined")
	assert.Equal(t, 1, g.BlockingEdges(exchange.ForwardPipelinedOnly))
	assert.Equal(t, 1, g.BlockingEdges(exchange.PointwisePipelinedOnly))
	assert.Equal(t, 0, g.BlockingEdges(exchange.AllPipelined))
}

func TestTopologicalOrderIsStableForIndependentVertices(t *testing.T) {
	b := topology.NewBuilder("many")
	ids := []string{"e", "d", "c", "b", "a", "f", "g", "h", "i", "j", "k", "l"}
	for _, id := range ids {
		b.AddVertex(topology.JobVertex{ID: id, Parallelism: 1})
	}
	g, err := b.Build()
	require.NoError(t, err)
	want := make([]topology.JobVertexID, len(ids))
	for i := range want {
		want[i] = topology.JobVertexID(i)
	}
	assert.Equal(t, want, g.TopologicalOrder(), "no edges: declaration order")
}

func TestBuilderIsNotAliasedByTheGraph(t *testing.T) {
	b := topology.NewBuilder("x").AddVertex(topology.JobVertex{ID: "A", Parallelism: 1})
	g, err := b.Build()
	require.NoError(t, err)
	b.AddVertex(topology.JobVertex{ID: "B", Parallelism: 1}).Connect("A", "B", exchange.Hash)
	assert.Equal(t, 1, g.NumVertices(), "later builder calls do not change a built graph")
	assert.Equal(t, 0, g.NumEdges())
	g2, err := b.Build()
	require.NoError(t, err)
	assert.Equal(t, 2, g2.NumVertices())
}

func TestBuilderRejectsBadGraphs(t *testing.T) {
	v := func(id string, p int) topology.JobVertex { return topology.JobVertex{ID: id, Parallelism: p} }
	tests := []struct {
		name     string
		build    func() *topology.Builder
		sentinel error
		kind     errKind
		culprit  []string
	}{
		{"no vertices", func() *topology.Builder { return topology.NewBuilder("empty") },
			topology.ErrEmptyJob, plainErr, []string{`"empty"`}},
		{"parallelism 0", func() *topology.Builder { return topology.NewBuilder("j").AddVertex(v("A", 0)) },
			topology.ErrInvalidParallelism, vertexErr, []string{`"A"`, "parallelism"}},
		{"parallelism -1", func() *topology.Builder { return topology.NewBuilder("j").AddVertex(v("A", -1)) },
			topology.ErrInvalidParallelism, vertexErr, []string{`"A"`}},
		{"parallelism 1,000,001", func() *topology.Builder { return topology.NewBuilder("j").AddVertex(v("A", topology.MaxParallelism+1)) },
			topology.ErrInvalidParallelism, vertexErr, []string{`"A"`, "1000001"}},
		{"id with #", func() *topology.Builder { return topology.NewBuilder("j").AddVertex(v("A#0", 1)) },
			topology.ErrInvalidVertexID, vertexErr, []string{`"A#0"`}},
		{"id with newline", func() *topology.Builder { return topology.NewBuilder("j").AddVertex(v("A\n", 1)) },
			topology.ErrInvalidVertexID, vertexErr, []string{"whitespace"}},
		{"empty id", func() *topology.Builder { return topology.NewBuilder("j").AddVertex(v("", 1)) },
			topology.ErrInvalidVertexID, vertexErr, []string{"vertices[0]"}},
		{"duplicate", func() *topology.Builder { return topology.NewBuilder("j").AddVertex(v("A", 1)).AddVertex(v("A", 1)) },
			topology.ErrDuplicateVertex, vertexErr, []string{`"A"`, "vertices[1]"}},
		{"unknown vertex", func() *topology.Builder {
			return topology.NewBuilder("j").AddVertex(v("A", 1)).Connect("A", "B", exchange.Hash)
		}, topology.ErrUnknownVertex, edgeErr, []string{`"B"`}},
		{"self loop", func() *topology.Builder {
			return topology.NewBuilder("j").AddVertex(v("A", 1)).Connect("A", "A", exchange.Forward)
		}, topology.ErrCycle, cycleErr, []string{"A"}},
		{"two-cycle", func() *topology.Builder {
			return topology.NewBuilder("j").AddVertex(v("A", 1)).AddVertex(v("B", 1)).
				Connect("A", "B", exchange.Forward).Connect("B", "A", exchange.Hash)
		}, topology.ErrCycle, cycleErr, []string{"A, B"}},
		{"forward unequal", func() *topology.Builder {
			return topology.NewBuilder("j").AddVertex(v("A", 3)).AddVertex(v("B", 4)).Connect("A", "B", exchange.Forward)
		}, topology.ErrForwardParallelism, edgeErr, []string{`"A" -> "B"`, "3", "4"}},
		{"invalid ship strategy value", func() *topology.Builder {
			return topology.NewBuilder("j").AddVertex(v("A", 1)).AddVertex(v("B", 1)).Connect("A", "B", exchange.ShipStrategy(42))
		}, exchange.ErrUnknownShipStrategy, edgeErr, []string{"shipStrategy", "forward"}},
		{"invalid pinned exchange value", func() *topology.Builder {
			return topology.NewBuilder("j").AddVertex(v("A", 1)).AddVertex(v("B", 1)).
				ConnectPinned("A", "B", exchange.Hash, exchange.ResultPartitionType(9))
		}, exchange.ErrUnknownPartitionType, edgeErr, []string{"exchange", "blocking"}},
		{"negative duration", func() *topology.Builder {
			return topology.NewBuilder("j").AddVertex(topology.JobVertex{ID: "A", Parallelism: 1, Duration: -time.Second})
		}, topology.ErrInvalidField, vertexErr, []string{"durationMs"}},
		{"bad priority", func() *topology.Builder {
			return topology.NewBuilder("j").AddVertex(v("A", 1)).SetSubmission(topology.Submission{Queue: "q", Priority: 10001})
		}, topology.ErrInvalidField, decodeErr, []string{"priority"}},
		{"queue outside root", func() *topology.Builder {
			s := topology.DefaultSubmission()
			s.Queue = "default"
			return topology.NewBuilder("j").AddVertex(v("A", 1)).SetSubmission(s)
		}, topology.ErrInvalidQueueName, decodeErr, []string{`field "queue"`, `"default"`}},
		{"empty user", func() *topology.Builder {
			s := topology.DefaultSubmission()
			s.User = ""
			return topology.NewBuilder("j").AddVertex(v("A", 1)).SetSubmission(s)
		}, topology.ErrInvalidField, decodeErr, []string{`field "user"`}},
		{"negative driver startup", func() *topology.Builder {
			s := topology.DefaultSubmission()
			s.Driver = &topology.Driver{Startup: -time.Second}
			return topology.NewBuilder("j").AddVertex(v("A", 1)).SetSubmission(s)
		}, topology.ErrInvalidField, decodeErr, []string{`field "driver.startupMs"`, "-1000 ms"}},
		{"gang of negative slots", func() *topology.Builder {
			s := topology.DefaultSubmission()
			s.Gang = &topology.Gang{MinSlots: -1}
			return topology.NewBuilder("j").AddVertex(v("A", 1)).SetSubmission(s)
		}, topology.ErrInvalidField, decodeErr, []string{"gang.minSlots"}},
		{"too many subtasks", func() *topology.Builder {
			b := topology.NewBuilder("j")
			for i := range 2148 {
				b.AddVertex(v("v"+itoa(i), topology.MaxParallelism))
			}
			return b
		}, topology.ErrTooLarge, plainErr, []string{"subtasks"}},
		{"too many partitions", func() *topology.Builder {
			b := topology.NewBuilder("j").AddVertex(v("src", topology.MaxParallelism)).AddVertex(v("dst", 1))
			for range 2148 {
				b.Connect("src", "dst", exchange.Hash)
			}
			return b
		}, topology.ErrTooLarge, plainErr, []string{"partitions"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var (
				g   *topology.JobGraph
				err error
			)
			require.NotPanics(t, func() { g, err = tc.build().Build() })
			require.Error(t, err)
			assert.Nil(t, g)
			assert.ErrorIs(t, err, tc.sentinel)
			assertTyped(t, err, tc.kind)
			for _, c := range tc.culprit {
				assert.Contains(t, err.Error(), c)
			}
		})
	}
}

func TestBuilderAcceptsBoundaryParallelism(t *testing.T) {
	g, err := topology.NewBuilder("j").
		AddVertex(topology.JobVertex{ID: "one", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "max", Parallelism: topology.MaxParallelism}).
		Connect("one", "max", exchange.Rescale).
		Build()
	require.NoError(t, err)
	assert.Equal(t, topology.MaxParallelism+1, g.NumSubtasks())
}

// AddGraph lays a built graph into another as it is: ids prefixed, a
// zero duration kept (AddVertex would make it DefaultDuration).
func TestBuilderAddGraphKeepsTheVerticesAsBuilt(t *testing.T) {
	g, err := topology.DecodeBytes([]byte(`{"name": "z", "vertices": [{"id": "a", "parallelism": 2, "durationMs": 0},
		{"id": "b", "parallelism": 2}], "edges": [{"source": "a", "target": "b", "shipStrategy": "forward"}]}`))
	require.NoError(t, err)
	both, err := topology.NewBuilder("both").AddGraph("0/", g).AddGraph("1/", g).Build()
	require.NoError(t, err)
	require.Equal(t, 4, both.NumVertices())
	require.Equal(t, 2, both.NumEdges())
	for _, id := range []string{"0/a", "1/a"} {
		jv, ok := both.VertexIndex(id)
		require.True(t, ok, id)
		assert.Equal(t, time.Duration(0), both.Vertex(jv).Duration, id)
		assert.Equal(t, 2, both.Vertex(jv).Parallelism, id)
	}
	jv, ok := both.VertexIndex("1/b")
	require.True(t, ok)
	assert.Equal(t, topology.DefaultDuration, both.Vertex(jv).Duration)
	assert.Equal(t, topology.JobEdge{Source: "1/a", Target: "1/b", ShipStrategy: exchange.Forward}, both.Edge(1))
	assert.Equal(t, "both", both.Name())
}
