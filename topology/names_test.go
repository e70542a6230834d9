package topology_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/topology"
)

func TestVertexNamesRoundTrip(t *testing.T) {
	g, err := topology.NewBuilder("names").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 3}).
		AddVertex(topology.JobVertex{ID: "a.b-c_d", Parallelism: 12}).
		AddVertex(topology.JobVertex{ID: "ünï", Parallelism: 1}).
		Connect("src", "a.b-c_d", exchange.Hash).
		Build()
	require.NoError(t, err)
	et := topology.NewExecutionTopology(g, exchange.AllBlocking)
	require.Equal(t, 16, et.NumExecutionVertices())

	assert.Equal(t, "src#0", et.VertexName(0))
	assert.Equal(t, "src#2", et.VertexName(2))
	assert.Equal(t, "a.b-c_d#0", et.VertexName(3))
	assert.Equal(t, "a.b-c_d#11", et.VertexName(14))
	assert.Equal(t, "ünï#0", et.VertexName(15))

	for v := range topology.ExecutionVertexID(et.NumExecutionVertices()) {
		name := et.VertexName(v)
		back, err := et.ParseVertexName(name)
		require.NoError(t, err, name)
		assert.Equal(t, v, back, name)
		jv := et.JobVertexOf(v)
		assert.Equal(t, g.Vertex(jv).ID+"#"+itoa(et.SubtaskIndex(v)), name)
		assert.Equal(t, v, et.ExecutionVertex(jv, et.SubtaskIndex(v)))
	}
}

func TestParseVertexNameRejectsBadNames(t *testing.T) {
	g, err := topology.NewBuilder("names").AddVertex(topology.JobVertex{ID: "A", Parallelism: 2}).Build()
	require.NoError(t, err)
	et := topology.NewExecutionTopology(g, exchange.AllBlocking)
	for _, name := range []string{"", "A", "A#", "#0", "B#0", "A#2", "A#-1", "A#x", "A#1#1", "a#0", "A #0", "A#99999999999999999999", "A#01", "A#+1"} {
		t.Run(name, func(t *testing.T) {
			_, err := et.ParseVertexName(name)
			require.Error(t, err)
			assert.ErrorIs(t, err, topology.ErrUnknownSubtask)
			assert.Contains(t, err.Error(), name)
		})
	}
}
