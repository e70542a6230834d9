package topology

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/regionsched/regionsched/exchange"
)

// randomJob returns an indexed job graph of n vertices with random edges
// (parallel edges included, no self loops); acyclic when dag. The second
// result is the same graph as a gonum simple.DirectedGraph, the reference
// jobView must agree with.
func randomJob(t *testing.T, r *rand.Rand, n int, dag bool) (*JobGraph, *simple.DirectedGraph) {
	t.Helper()
	g := &JobGraph{name: "random", submission: DefaultSubmission()}
	ref := simple.NewDirectedGraph()
	for i := range n {
		g.vertices = append(g.vertices, JobVertex{ID: fmt.Sprintf("v%d", i), Parallelism: 1 + r.IntN(3)})
		ref.AddNode(simple.Node(i))
	}
	for range r.IntN(3 * n) {
		s, d := r.IntN(n), r.IntN(n)
		if s == d || (dag && s > d) {
			continue
		}
		g.edges = append(g.edges, JobEdge{Source: g.vertices[s].ID, Target: g.vertices[d].ID, ShipStrategy: exchange.Hash})
		ref.SetEdge(simple.Edge{F: simple.Node(s), T: simple.Node(d)})
	}
	err := g.index()
	if dag {
		require.NoError(t, err)
	} else if err != nil {
		require.ErrorIs(t, err, ErrCycle) // the indexes are filled in before the sort
	}
	return g, ref
}

func ids(it graph.Nodes) []int64 {
	var out []int64
	for it.Next() {
		out = append(out, it.Node().ID())
	}
	slices.Sort(out)
	return out
}

// TestJobViewAgreesWithGonumSimpleGraph: the view answers every question
// of graph.Directed as gonum's simple.DirectedGraph built from the same
// edges does (parallel job edges are one graph edge).
func TestJobViewAgreesWithGonumSimpleGraph(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for iter := range 200 {
		n := 1 + r.IntN(12)
		g, ref := randomJob(t, r, n, iter%2 == 0)
		v := newJobView(g)
		require.Equal(t, ids(ref.Nodes()), ids(v.Nodes()))
		assert.Equal(t, n, v.Nodes().Len())
		for u := range int64(n) {
			require.NotNil(t, v.Node(u))
			assert.Equal(t, u, v.Node(u).ID())
			assert.Equal(t, ids(ref.From(u)), ids(v.From(u)), "From(%d)", u)
			assert.Equal(t, ids(ref.To(u)), ids(v.To(u)), "To(%d)", u)
			for w := range int64(n) {
				assert.Equal(t, ref.HasEdgeFromTo(u, w), v.HasEdgeFromTo(u, w), "%d -> %d", u, w)
				assert.Equal(t, ref.HasEdgeBetween(u, w), v.HasEdgeBetween(u, w), "%d -- %d", u, w)
				if e := v.Edge(u, w); ref.Edge(u, w) == nil {
					assert.Nil(t, e)
				} else {
					require.NotNil(t, e)
					assert.Equal(t, u, e.From().ID())
					assert.Equal(t, w, e.To().ID())
					assert.Equal(t, w, e.ReversedEdge().From().ID())
				}
			}
		}
		for _, bad := range []int64{-1, int64(n), 1 << 40} {
			assert.Nil(t, v.Node(bad))
			assert.Zero(t, v.From(bad).Len())
			assert.Zero(t, v.To(bad).Len())
			assert.False(t, v.HasEdgeFromTo(bad, 0))
			assert.Nil(t, v.Edge(0, bad))
		}
		byID := func(nodes []graph.Node) {
			slices.SortFunc(nodes, func(a, b graph.Node) int { return int(a.ID() - b.ID()) })
		}
		want, wantErr := topo.SortStabilized(ref, byID)
		got, gotErr := topo.SortStabilized(v, byID)
		assert.Equal(t, wantErr == nil, gotErr == nil)
		assert.Equal(t, idsOf(want), idsOf(got), "the stabilized order is the same")
		if wantErr == nil {
			for i, id := range idsOf(got) {
				assert.Equal(t, JobVertexID(id), g.topoOrder[i])
			}
		}
	}
}

func idsOf(nodes []graph.Node) []int64 {
	out := make([]int64, len(nodes))
	for i, n := range nodes {
		if n != nil {
			out[i] = n.ID()
		} else {
			out[i] = -1
		}
	}
	return out
}

// TestJobViewIteratorsFollowGonumsContract: Len counts what Next has not
// reached yet, Node is nil outside the iteration, Reset starts again.
func TestJobViewIteratorsFollowGonumsContract(t *testing.T) {
	g, err := NewBuilder("j").
		AddVertex(JobVertex{ID: "a", Parallelism: 1}).AddVertex(JobVertex{ID: "b", Parallelism: 1}).AddVertex(JobVertex{ID: "c", Parallelism: 1}).
		Connect("a", "b", exchange.Hash).Connect("a", "b", exchange.Forward).Connect("a", "c", exchange.Hash).Build()
	require.NoError(t, err)
	v := newJobView(g)
	for _, it := range []graph.Nodes{v.Nodes(), v.From(0)} {
		total := it.Len()
		assert.Nil(t, it.Node(), "no node before Next")
		for k := range total {
			require.True(t, it.Next())
			assert.NotNil(t, it.Node())
			assert.Equal(t, total-k-1, it.Len())
		}
		assert.False(t, it.Next())
		assert.Nil(t, it.Node(), "no node after the end")
		it.Reset()
		assert.Equal(t, total, it.Len())
		assert.Len(t, graph.NodesOf(it), total)
	}
	assert.Equal(t, []int64{1, 2}, ids(v.From(0)), "two parallel job edges a -> b are one graph edge")
}
