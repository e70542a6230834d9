package graphview_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/graph"

	"github.com/regionsched/regionsched/internal/graphview"
)

// checkIterator walks it twice (Reset in between) and checks gonum's
// contract: Len counts the nodes Next has not reached, Node is nil before
// the first and after the last Next.
func checkIterator(t *testing.T, it graph.Nodes, want []int64) {
	t.Helper()
	for range 2 {
		require.Equal(t, len(want), it.Len())
		assert.Nil(t, it.Node())
		for k, id := range want {
			require.True(t, it.Next())
			require.NotNil(t, it.Node())
			assert.Equal(t, id, it.Node().ID())
			assert.Equal(t, len(want)-k-1, it.Len())
		}
		assert.False(t, it.Next())
		assert.False(t, it.Next())
		assert.Nil(t, it.Node())
		assert.Zero(t, it.Len())
		it.Reset()
	}
}

func TestIterators(t *testing.T) {
	checkIterator(t, graphview.NewRange(3), []int64{0, 1, 2})
	checkIterator(t, graphview.NewRange(0), nil)
	checkIterator(t, graphview.NewRange(-2), nil)
	checkIterator(t, graphview.NewIDs([]int32{4, 2, 9}), []int64{4, 2, 9})
	checkIterator(t, graphview.NewIDs([]int64{1 << 40}), []int64{1 << 40})
	checkIterator(t, graphview.NewIDs[int32](nil), nil)
	checkIterator(t, graphview.NewSlice([]graph.Node{graphview.Node(5), graphview.Node(3)}), []int64{5, 3})
	checkIterator(t, graphview.NewSlice(nil), nil)
}

func TestSliceIsANodeSlicerThatCopies(t *testing.T) {
	nodes := []graph.Node{graphview.Node(1), graphview.Node(2), graphview.Node(3)}
	it := graphview.NewSlice(nodes)
	require.True(t, it.Next())
	rest := graph.NodesOf(it)
	require.Len(t, rest, 2)
	rest[0] = graphview.Node(99)
	assert.Equal(t, int64(2), nodes[1].ID(), "the caller may change the returned slice")
	assert.False(t, it.Next(), "NodeSlice consumes the iterator")
	assert.Nil(t, it.Node())
}

func TestEdge(t *testing.T) {
	e := graphview.Edge{F: graphview.Node(1), T: graphview.Node(2)}
	assert.Equal(t, int64(1), e.From().ID())
	assert.Equal(t, int64(2), e.To().ID())
	r := e.ReversedEdge()
	assert.Equal(t, int64(2), r.From().ID())
	assert.Equal(t, int64(1), r.To().ID())
}
