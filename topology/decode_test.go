package topology_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

const flip119Path = "../examples/jobs/flip119.json"

func decodeString(t *testing.T, s string) *topology.JobGraph {
	t.Helper()
	g, err := topology.Decode(strings.NewReader(s))
	require.NoError(t, err)
	return g
}

func TestDecodeFLIP119Example(t *testing.T) {
	f, err := os.Open(flip119Path)
	require.NoError(t, err)
	defer f.Close()
	g, err := topology.Decode(f)
	require.NoError(t, err)

	assert.Equal(t, "flip119-example", g.Name())
	require.Equal(t, 4, g.NumVertices())
	require.Equal(t, 3, g.NumEdges())
	for i, want := range []struct {
		id  string
		par int
	}{{"A", 2}, {"B", 2}, {"C", 4}, {"D", 4}} {
		v := g.Vertex(topology.JobVertexID(i))
		assert.Equal(t, want.id, v.ID)
		assert.Equal(t, want.par, v.Parallelism)
		idx, ok := g.VertexIndex(want.id)
		assert.True(t, ok)
		assert.Equal(t, topology.JobVertexID(i), idx)
	}
	assert.Equal(t, 12, g.NumSubtasks())
	for i, want := range []struct {
		s, t string
		ship exchange.ShipStrategy
	}{{"A", "B", exchange.Forward}, {"B", "C", exchange.Rescale}, {"C", "D", exchange.Hash}} {
		e := g.Edge(topology.JobEdgeID(i))
		assert.Equal(t, want.s, e.Source)
		assert.Equal(t, want.t, e.Target)
		assert.Equal(t, want.ship, e.ShipStrategy)
		assert.False(t, e.Pinned)
		src, dst := g.EdgeEnds(topology.JobEdgeID(i))
		assert.Equal(t, topology.JobVertexID(i), src)
		assert.Equal(t, topology.JobVertexID(i+1), dst)
	}
	assert.Equal(t, []topology.JobVertexID{0, 1, 2, 3}, g.TopologicalOrder())

	// FLIP-119: blocking logical edges 3/2/1/0 in the four modes.
	for mode, want := range map[exchange.Mode]int{
		exchange.AllBlocking: 3, exchange.ForwardPipelinedOnly: 2, exchange.PointwisePipelinedOnly: 1, exchange.AllPipelined: 0,
	} {
		assert.Equal(t, want, g.BlockingEdges(mode), "mode %v", mode)
	}
}

func TestDecodeDefaults(t *testing.T) {
	g := decodeString(t, `{"vertices":[{"id":"A","parallelism":3}]}`)
	v := g.Vertex(0)
	assert.Equal(t, topology.DefaultSlotSharingGroup, v.SlotSharingGroup)
	assert.Equal(t, "default", v.SlotSharingGroup)
	assert.Equal(t, time.Second, v.Duration, "durationMs defaults to 1000")
	built, err := topology.NewBuilder("").AddVertex(topology.JobVertex{ID: "A", Parallelism: 3}).Build()
	require.NoError(t, err)
	assert.Equal(t, built, g, "the Builder applies the same defaults to a zero JobVertex")
	assert.Zero(t, decodeString(t, `{"vertices":[{"id":"A","parallelism":1,"durationMs":0}]}`).Vertex(0).Duration,
		"an explicit durationMs 0 is kept")
	assert.False(t, v.Unbounded, "bounded defaults to true")
	assert.True(t, v.Resources.IsUnknown(), "absent resources are unknown")
	assert.Empty(t, g.Name())
	assert.Zero(t, g.NumEdges())

	sub := g.Submission()
	assert.Equal(t, topology.DefaultSubmission(), sub)
	assert.Zero(t, sub.SubmitAt)
	assert.Equal(t, "root.default", sub.Queue)
	assert.Equal(t, "anonymous", sub.User)
	assert.Equal(t, 5000, sub.Priority)
	assert.Nil(t, sub.Driver)
	assert.Nil(t, sub.Gang)
}

func TestDecodeSpecExampleWithEveryVertexAndEdgeField(t *testing.T) {
	g := decodeString(t, `{
	  "name": "flip119-example",
	  "vertices": [
	    {"id": "A", "parallelism": 2},
	    {"id": "B", "parallelism": 2, "slotSharingGroup": "default"},
	    {"id": "C", "parallelism": 4, "resources": {"cpuMillis": 500, "memoryMB": 512, "extended": {"gpu": 1}}},
	    {"id": "D", "parallelism": 4, "durationMs": 2000, "bounded": false, "slotSharingGroup": "sink"}
	  ],
	  "edges": [
	    {"source": "A", "target": "B", "shipStrategy": "forward"},
	    {"source": "B", "target": "C", "shipStrategy": "rescale", "exchange": "pipelined"},
	    {"source": "C", "target": "D", "shipStrategy": "hash", "exchange": "blocking"}
	  ]
	}`)
	assert.Equal(t, resource.New(500, 512).WithExtended("gpu", 1), g.Vertex(2).Resources)
	assert.Equal(t, 2*time.Second, g.Vertex(3).Duration)
	assert.True(t, g.Vertex(3).Unbounded)
	assert.Equal(t, "sink", g.Vertex(3).SlotSharingGroup)

	assert.False(t, g.Edge(0).Pinned)
	assert.True(t, g.Edge(1).Pinned)
	assert.Equal(t, exchange.Pipelined, g.Edge(1).Exchange)
	assert.True(t, g.Edge(2).Pinned)
	assert.Equal(t, exchange.Blocking, g.Edge(2).Exchange)

	// Pinned edges keep their type under every mode.
	for _, m := range exchange.Modes() {
		assert.Equal(t, exchange.Pipelined, g.Edge(1).PartitionType(m))
		assert.Equal(t, exchange.Blocking, g.Edge(2).PartitionType(m))
		assert.Equal(t, m.PartitionType(exchange.Forward), g.Edge(0).PartitionType(m))
	}
	assert.Equal(t, 2, g.BlockingEdges(exchange.AllBlocking))
	assert.Equal(t, 1, g.BlockingEdges(exchange.AllPipelined))
}

// TestDecodeHybridExchange: an edge pins a hybrid exchange with "hybrid"
// (full), "hybrid-full" or "hybrid-selective"; hybrid edges are counted
// apart from blocking ones, and both separate regions.
func TestDecodeHybridExchange(t *testing.T) {
	g := decodeString(t, `{
	  "vertices": [{"id": "A", "parallelism": 2}, {"id": "B", "parallelism": 2}, {"id": "C", "parallelism": 2}, {"id": "D", "parallelism": 1}],
	  "edges": [
	    {"source": "A", "target": "B", "shipStrategy": "forward", "exchange": "hybrid"},
	    {"source": "B", "target": "C", "shipStrategy": "hash", "exchange": "Hybrid-Full"},
	    {"source": "C", "target": "D", "shipStrategy": "rebalance", "exchange": "hybrid-selective"}
	  ]
	}`)
	for e, want := range []exchange.ResultPartitionType{exchange.HybridFull, exchange.HybridFull, exchange.HybridSelective} {
		edge := g.Edge(topology.JobEdgeID(e))
		assert.True(t, edge.Pinned)
		for _, m := range exchange.Modes() {
			assert.Equal(t, want, edge.PartitionType(m), "edge %d, mode %v", e, m)
		}
	}
	assert.Equal(t, 0, g.BlockingEdges(exchange.AllBlocking))
	assert.Equal(t, 3, g.HybridEdges(exchange.AllPipelined))
	assert.Equal(t, 0, g.PipelinedEdges(exchange.AllPipelined))
	var buf bytes.Buffer
	require.NoError(t, topology.Encode(&buf, g))
	assert.Contains(t, buf.String(), `"exchange": "hybrid-full"`)
	assert.Contains(t, buf.String(), `"exchange": "hybrid-selective"`)
}

func TestDecodeSubmissionFields(t *testing.T) {
	g := decodeString(t, `{
	  "vertices": [{"id": "A", "parallelism": 1}],
	  "submitAtMs": 4000, "queue": "root.etl", "user": "alice", "priority": 9000,
	  "driver": {"resources": {"cpuMillis": 1000, "memoryMB": 1024}, "startupMs": 500},
	  "gang": {"minSlots": 3, "style": "hard", "timeoutMs": 60000}
	}`)
	sub := g.Submission()
	assert.Equal(t, 4*time.Second, sub.SubmitAt)
	assert.Equal(t, "root.etl", sub.Queue)
	assert.Equal(t, "alice", sub.User)
	assert.Equal(t, 9000, sub.Priority)
	require.NotNil(t, sub.Driver)
	assert.Equal(t, resource.New(1000, 1024), sub.Driver.Resources)
	assert.Equal(t, 500*time.Millisecond, sub.Driver.Startup)
	require.NotNil(t, sub.Gang)
	assert.Equal(t, topology.Gang{MinSlots: 3, Hard: true, Timeout: time.Minute}, *sub.Gang)

	g = decodeString(t, `{"vertices": [{"id": "A", "parallelism": 1}], "driver": {}, "gang": {"minSlots": 2}}`)
	sub = g.Submission()
	require.NotNil(t, sub.Driver)
	assert.Equal(t, time.Second, sub.Driver.Startup, "startupMs defaults to 1000")
	assert.True(t, sub.Driver.Resources.IsUnknown())
	require.NotNil(t, sub.Gang)
	assert.Equal(t, topology.Gang{MinSlots: 2, Hard: false, Timeout: 15 * time.Minute}, *sub.Gang)
}

// A gang's timeoutMs of 0 stays 0 (no wait), apart from an absent one
// (the 15-minute default), and survives a round trip through Encode.
func TestDecodeGangTimeoutZeroAndAbsent(t *testing.T) {
	for _, c := range []struct {
		gang string
		want time.Duration
	}{{`{"style": "hard", "timeoutMs": 0}`, 0}, {`{"style": "hard"}`, topology.DefaultGangTimeout}, {`{"timeoutMs": 1}`, time.Millisecond}} {
		g := decodeString(t, `{"vertices": [{"id": "A", "parallelism": 1}], "gang": `+c.gang+`}`)
		require.NotNil(t, g.Submission().Gang, c.gang)
		assert.Equal(t, c.want, g.Submission().Gang.Timeout, c.gang)
		var buf bytes.Buffer
		require.NoError(t, topology.Encode(&buf, g))
		back, err := topology.DecodeBytes(buf.Bytes())
		require.NoError(t, err, buf.String())
		assert.Equal(t, c.want, back.Submission().Gang.Timeout, buf.String())
	}
	assert.Equal(t, 15*time.Minute, topology.DefaultGangTimeout)
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	g, err := topology.NewBuilder("round-trip").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 4, Duration: 1500 * time.Millisecond}).
		AddVertex(topology.JobVertex{ID: "map", Parallelism: 4, SlotSharingGroup: "compute",
			Resources: resource.New(500, 512).WithExtended("gpu", 1), Duration: time.Second}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 2, Unbounded: true}).
		AddVertex(topology.JobVertex{ID: "side", Parallelism: 3, Resources: resource.New(0, 0), Duration: time.Second}).
		Connect("src", "map", exchange.Forward).
		ConnectPinned("map", "sink", exchange.Rescale, exchange.Pipelined).
		ConnectPinned("src", "side", exchange.Broadcast, exchange.PipelinedBounded).
		ConnectPinned("side", "sink", exchange.Hash, exchange.Blocking).
		Connect("src", "sink", exchange.Rebalance).
		SetSubmission(topology.Submission{
			SubmitAt: 3 * time.Second, Queue: "root.q", User: "bob", Priority: 42,
			Driver: &topology.Driver{Resources: resource.New(100, 200), Startup: 2 * time.Second},
			Gang:   &topology.Gang{MinSlots: 5, Hard: true, Timeout: time.Minute},
		}).
		Build()
	require.NoError(t, err)

	var buf bytes.Buffer
	require.NoError(t, topology.Encode(&buf, g))
	back, err := topology.Decode(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err, buf.String())
	assert.Equal(t, g, back, buf.String())

	// And the file itself is stable under a second round.
	var again bytes.Buffer
	require.NoError(t, topology.Encode(&again, back))
	assert.Equal(t, buf.String(), again.String())
}

func TestEncodeDecodeRoundTripFLIP119(t *testing.T) {
	data, err := os.ReadFile(flip119Path)
	require.NoError(t, err)
	g, err := topology.DecodeBytes(data)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, topology.Encode(&buf, g))
	back, err := topology.DecodeBytes(buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, g, back)
}

func TestDecodeEncodeDecodeIsStable(t *testing.T) {
	for _, in := range []string{
		`{"vertices":[{"id":"A","parallelism":1}]}`,
		`{"vertices":[{"id":"A","parallelism":1}],"queue":"root","user":"x"}`,
		`{"vertices":[{"id":"A","parallelism":1}],"queue":"root.default","user":"anonymous","priority":5000,"submitAtMs":0}`,
		`{"vertices":[{"id":"A","parallelism":1,"durationMs":0,"bounded":false}],"driver":{},"gang":{"minSlots":1,"style":"soft","timeoutMs":0}}`,
		`{"vertices":[{"id":"A","parallelism":1,"resources":{"extended":{"x y":3}}}],"driver":{"resources":{}}}`,
		`{"vertices":[{"id":"A","parallelism":2},{"id":"B","parallelism":2}],"edges":[{"source":"A","target":"B","shipStrategy":"FORWARD","exchange":"Pipelined"},{"source":"A","target":"B","shipStrategy":"hash"}]}`,
		`{"vertices":[{"id":"A","parallelism":2},{"id":"B","parallelism":2}],"edges":[{"source":"A","target":"B","shipStrategy":"forward","exchange":"hybrid"},{"source":"A","target":"B","shipStrategy":"hash","exchange":"HYBRID-SELECTIVE"}]}`,
	} {
		t.Run(in, func(t *testing.T) {
			g := decodeString(t, in)
			var buf bytes.Buffer
			require.NoError(t, topology.Encode(&buf, g))
			back, err := topology.DecodeBytes(buf.Bytes())
			require.NoError(t, err, buf.String())
			assert.Equal(t, g, back, buf.String())
		})
	}
}

// TestDecodeScaleExamples checks the job files of the performance figures
// (docs/performance.md): forward chains of 10 vertices, 100 ms a subtask, as large as
// examples/scale/README.md says.
func TestDecodeScaleExamples(t *testing.T) {
	for file, want := range map[string]struct {
		name string
		par  int
	}{
		"chains-2m.json":     {"chains-10x200000", 200_000},
		"chains-100k-a.json": {"a", 10_000},
		"chains-100k-b.json": {"b", 10_000},
	} {
		t.Run(file, func(t *testing.T) {
			f, err := os.Open("../examples/scale/" + file)
			require.NoError(t, err)
			defer f.Close()
			g, err := topology.Decode(f)
			require.NoError(t, err)
			assert.Equal(t, want.name, g.Name())
			require.Equal(t, 10, g.NumVertices())
			require.Equal(t, 9, g.NumEdges())
			for jv := range topology.JobVertexID(g.NumVertices()) {
				v := g.Vertex(jv)
				assert.Equal(t, want.par, v.Parallelism, v.ID)
				assert.Equal(t, 100*time.Millisecond, v.Duration, v.ID)
			}
			for e := range topology.JobEdgeID(g.NumEdges()) {
				assert.Equal(t, exchange.Forward, g.Edge(e).ShipStrategy, "edge %d", e)
			}
		})
	}
}
