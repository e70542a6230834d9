package region_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/graph/encoding/dot"
	dotformat "gonum.org/v1/gonum/graph/formats/dot"
	"gonum.org/v1/gonum/graph/formats/dot/ast"
	"gonum.org/v1/gonum/graph/simple"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// dotDoc is what the tests read out of a DOT document.
type dotDoc struct {
	id       string
	directed bool
	// attrs of every node statement, by node id (merged over statements).
	attrs map[string]map[string]string
	// clusters: subgraph id -> node ids declared in it, in order.
	clusters     map[string][]string
	clusterOrder []string
	edges        []dotEdgeStmt
}

type dotEdgeStmt struct {
	from, to string
	attrs    map[string]string
}

// label returns the unquoted label of a node ("" if none).
func (d dotDoc) label(node string) string { return d.attrs[node]["label"] }

// dotUnquote undoes the quoting of a DOT ID or attribute value.
func dotUnquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// parseDOT parses one DOT graph with gonum's parser and collects node
// attributes, cluster membership and edges.
func parseDOT(t *testing.T, data []byte) dotDoc {
	t.Helper()
	f, err := dotformat.ParseBytes(data)
	require.NoError(t, err, "the output must parse as DOT:\n%s", data)
	require.Len(t, f.Graphs, 1)
	g := f.Graphs[0]
	d := dotDoc{id: dotUnquote(g.ID), directed: g.Directed, attrs: map[string]map[string]string{}, clusters: map[string][]string{}}
	var walk func(stmts []ast.Stmt, cluster string)
	walk = func(stmts []ast.Stmt, cluster string) {
		for _, s := range stmts {
			switch s := s.(type) {
			case *ast.NodeStmt:
				id := dotUnquote(s.Node.ID)
				if d.attrs[id] == nil {
					d.attrs[id] = map[string]string{}
				}
				for _, a := range s.Attrs {
					d.attrs[id][a.Key] = dotUnquote(a.Val)
				}
				if cluster != "" {
					d.clusters[cluster] = append(d.clusters[cluster], id)
				}
			case *ast.EdgeStmt:
				from, ok := s.From.(*ast.Node)
				require.True(t, ok, "edge from a subgraph: %v", s)
				to, ok := s.To.Vertex.(*ast.Node)
				require.True(t, ok, "edge to a subgraph: %v", s)
				require.Nil(t, s.To.To, "one arrow per edge statement: %v", s)
				assert.True(t, s.To.Directed, "%v", s)
				e := dotEdgeStmt{from: dotUnquote(from.ID), to: dotUnquote(to.ID), attrs: map[string]string{}}
				for _, a := range s.Attrs {
					e.attrs[a.Key] = dotUnquote(a.Val)
				}
				d.edges = append(d.edges, e)
			case *ast.Subgraph:
				id := dotUnquote(s.ID)
				require.True(t, strings.HasPrefix(id, "cluster"), "subgraph %q is not a cluster", id)
				require.Empty(t, cluster, "no nested clusters")
				_, dup := d.clusters[id]
				require.False(t, dup, "cluster %q twice", id)
				d.clusters[id] = nil
				d.clusterOrder = append(d.clusterOrder, id)
				walk(s.Stmts, id)
			}
		}
	}
	walk(g.Stmts, "")
	return d
}

// assertDOTMatchesRegions checks the DOT of rs: a directed graph that
// gonum reads back, one node per execution vertex (plus point nodes for
// large partition groups), one cluster per region holding exactly its
// members' labels, every edge between existing nodes, dashed exactly when
// the exchange is blocking.
func assertDOTMatchesRegions(t *testing.T, rs *region.Regions) dotDoc {
	t.Helper()
	out, err := rs.DOT()
	require.NoError(t, err)
	gg := simple.NewDirectedGraph()
	require.NoError(t, dot.Unmarshal(out, gg), "gonum reads the DOT back")

	topo := rs.Topology()
	d := parseDOT(t, out)
	assert.True(t, d.directed, "a digraph")
	assert.Equal(t, topo.Job().Name(), d.id, "the graph is named after the job")
	require.Len(t, d.clusterOrder, rs.NumRegions(), "one cluster per region")

	byLabel := map[string]string{} // vertex name -> node id
	for id, a := range d.attrs {
		if l, ok := a["label"]; ok {
			_, dup := byLabel[l]
			require.False(t, dup, "label %q on two nodes", l)
			byLabel[l] = id
		}
	}
	points := 0
	for _, a := range d.attrs {
		if a["shape"] == "point" {
			points++
		}
	}
	assert.Equal(t, topo.NumExecutionVertices(), len(byLabel), "one labelled node per execution vertex")
	assert.Equal(t, topo.NumExecutionVertices()+points, gg.Nodes().Len(), "no other nodes")

	for i, cluster := range d.clusterOrder {
		r := region.ID(i)
		var labels []string
		for _, n := range d.clusters[cluster] {
			labels = append(labels, d.label(n))
		}
		assert.ElementsMatch(t, memberNames(rs, rs.Members(r)), labels, "cluster %s holds exactly region %d", cluster, r)
	}

	vertexOf := map[string]topology.ExecutionVertexID{}
	for v := range topology.ExecutionVertexID(topo.NumExecutionVertices()) {
		vertexOf[byLabel[topo.VertexName(v)]] = v
	}
	job := topo.Job()
	// Partition types by (producer job vertex, consumer job vertex): which
	// styles an arrow between their subtasks may have.
	styles := map[[2]topology.JobVertexID]map[string]bool{}
	for e := range topology.JobEdgeID(job.NumEdges()) {
		s, c := job.EdgeEnds(e)
		style := "solid"
		switch pt := topo.PartitionType(e); {
		case pt.IsHybrid():
			style = "dotted"
		case !pt.IsPipelined():
			style = "dashed"
		}
		if styles[[2]topology.JobVertexID{s, c}] == nil {
			styles[[2]topology.JobVertexID{s, c}] = map[string]bool{}
		}
		styles[[2]topology.JobVertexID{s, c}][style] = true
	}
	for _, e := range d.edges {
		_, fromVertex := vertexOf[e.from]
		_, toVertex := vertexOf[e.to]
		require.True(t, fromVertex || d.attrs[e.from]["shape"] == "point", "edge from unknown node %s", e.from)
		require.True(t, toVertex || d.attrs[e.to]["shape"] == "point", "edge to unknown node %s", e.to)
		assert.Contains(t, []string{"solid", "dashed", "dotted"}, e.attrs["style"])
		if fromVertex && toVertex {
			key := [2]topology.JobVertexID{topo.JobVertexOf(vertexOf[e.from]), topo.JobVertexOf(vertexOf[e.to])}
			assert.True(t, styles[key][e.attrs["style"]], "%s -> %s is %s", d.label(e.from), d.label(e.to), e.attrs["style"])
		}
	}
	return d
}

// TestDOTFLIP119 draws FLIP-119's example in every mode.
func TestDOTFLIP119(t *testing.T) {
	wantDashed := map[exchange.Mode]int{
		exchange.AllBlocking:            22,
		exchange.ForwardPipelinedOnly:   20,
		exchange.PointwisePipelinedOnly: 16,
		exchange.AllPipelined:           0,
		exchange.AllHybridFull:          0,
		exchange.AllHybridSelective:     0,
	}
	wantDotted := map[exchange.Mode]int{exchange.AllHybridFull: 22, exchange.AllHybridSelective: 22}
	for _, mode := range exchange.Modes() {
		t.Run(mode.String(), func(t *testing.T) {
			rs := region.FromJob(loadFLIP119(t), mode)
			d := assertDOTMatchesRegions(t, rs)
			// A->B forward: 2 arrows, B->C rescale: 4, C->D hash: 16; all small
			// enough to be drawn pairwise.
			assert.Len(t, d.edges, 22)
			dashed, dotted := 0, 0
			for _, e := range d.edges {
				switch e.attrs["style"] {
				case "dashed":
					dashed++
				case "dotted":
					dotted++
				}
			}
			assert.Equal(t, wantDashed[mode], dashed)
			assert.Equal(t, wantDotted[mode], dotted)
			for i, c := range d.clusterOrder {
				assert.Contains(t, c, strconv.Itoa(i))
			}
		})
	}
}

// TestDOTClusterLabels: each cluster is labelled with its region id and
// slot count.
func TestDOTClusterLabels(t *testing.T) {
	rs := region.FromJob(loadFLIP119(t), exchange.PointwisePipelinedOnly)
	out, err := rs.DOT()
	require.NoError(t, err)
	s := string(out)
	assert.Contains(t, s, `"region 0 (2 slots)"`)
	assert.Contains(t, s, `"region 1 (2 slots)"`)
	assert.Contains(t, s, `"region 5 (1 slot)"`)
}

// TestDOTCycleRegionHasDashedEdgeInside: in the FLINK-17330 case the
// blocking edge lies inside the single merged region and is still dashed.
func TestDOTCycleRegionHasDashedEdgeInside(t *testing.T) {
	g := build(t, topology.NewBuilder("cycle").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 3}).
		AddVertex(topology.JobVertex{ID: "side", Parallelism: 3}).
		AddVertex(topology.JobVertex{ID: "join", Parallelism: 3}).
		Connect("src", "join", exchange.Forward).
		Connect("side", "join", exchange.Forward).
		ConnectPinned("src", "side", exchange.Hash, exchange.Blocking))
	rs := region.FromJob(g, exchange.ForwardPipelinedOnly)
	require.Equal(t, 1, rs.NumRegions())
	d := assertDOTMatchesRegions(t, rs)
	styles := map[string]int{}
	for _, e := range d.edges {
		styles[e.attrs["style"]]++
	}
	assert.Equal(t, map[string]int{"solid": 6, "dashed": 9}, styles)
}

// TestDOTRandomJobs: the structural checks on the random DAGs of the
// property tests, in every mode.
func TestDOTRandomJobs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 40 {
		g, err := randomJob(r)
		require.NoError(t, err)
		for _, mode := range exchange.Modes() {
			t.Run(fmt.Sprintf("%d/%v", i, mode), func(t *testing.T) {
				assertDOTMatchesRegions(t, region.FromJob(g, mode))
			})
		}
	}
}

// TestDOTEscapesNames: job names and vertex ids may hold quotes,
// backslashes and DOT punctuation; the output still parses and the labels
// come back intact.
func TestDOTEscapesNames(t *testing.T) {
	g := build(t, topology.NewBuilder(`my "job" \ {x} -> y; graph`).
		AddVertex(topology.JobVertex{ID: `a"b`, Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: `x\y`, Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: `z->w;{}[]=`, Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "subgraph", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "Ünïcödé", Parallelism: 1}).
		Connect(`a"b`, `x\y`, exchange.Forward).
		Connect(`x\y`, `z->w;{}[]=`, exchange.Hash).
		Connect(`z->w;{}[]=`, "subgraph", exchange.Rebalance).
		Connect("subgraph", "Ünïcödé", exchange.Forward))
	for _, mode := range exchange.Modes() {
		t.Run(mode.String(), func(t *testing.T) {
			assertDOTMatchesRegions(t, region.FromJob(g, mode))
		})
	}
}

// TestDOTLargeAllToAllStaysLinear: an all-to-all edge between 1,000 and
// 1,000 subtasks is drawn through one point node (2,000 arrows), not as
// 10^6 arrows, in both a blocking and a pipelined mode.
func TestDOTLargeAllToAllStaysLinear(t *testing.T) {
	const p = 1000
	g := allToAllJob(t, p)
	for _, mode := range []exchange.Mode{exchange.AllBlocking, exchange.AllPipelined} {
		t.Run(mode.String(), func(t *testing.T) {
			rs := region.FromJob(g, mode)
			out, err := rs.DOT()
			require.NoError(t, err)
			t.Logf("%d bytes of DOT for 2 x %d subtasks", len(out), p)
			require.Less(t, len(out), 1000*2*p, "linear in the number of subtasks (10^6 arrows would be tens of MB)")

			d := assertDOTMatchesRegions(t, rs)
			assert.Equal(t, 2*p, len(d.edges), "producers -> point -> consumers")
			points := 0
			for _, a := range d.attrs {
				if a["shape"] == "point" {
					points++
				}
			}
			assert.Equal(t, 1, points, "one point node for the one partition group")
		})
	}
}

// TestDOTLargeRescaleStaysLinear: pointwise blocks are drawn pairwise when
// small and through a point node when large (1 -> 1000 fan-out).
func TestDOTLargeRescaleStaysLinear(t *testing.T) {
	g := build(t, topology.NewBuilder("fanout").
		AddVertex(topology.JobVertex{ID: "one", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "many", Parallelism: 2000}).
		AddVertex(topology.JobVertex{ID: "few", Parallelism: 500}).
		Connect("one", "many", exchange.Rescale).
		Connect("many", "few", exchange.Rescale))
	rs := region.FromJob(g, exchange.AllBlocking)
	d := assertDOTMatchesRegions(t, rs)
	// one(2) -> many(2000): two blocks of 1 x 1000, each through a point;
	// many(2000) -> few(500): 500 blocks of 4 x 1, pairwise.
	assert.Equal(t, 2*(1+1000)+2000, len(d.edges))
}

// TestDOTGolden pins the exact output (as gonum's encoder wrote it for
// graph/simple before DOT moved to its own graph view): a hub node for
// the 9 x 8 all-to-all block, and two job edges b -> c drawn once per
// pair, in the style of the edge declared last.
func TestDOTGolden(t *testing.T) {
	g := build(t, topology.NewBuilder("small").
		AddVertex(topology.JobVertex{ID: "a", Parallelism: 9}).
		AddVertex(topology.JobVertex{ID: "b", Parallelism: 8}).
		AddVertex(topology.JobVertex{ID: "c", Parallelism: 2}).
		Connect("a", "b", exchange.Hash).
		ConnectPinned("b", "c", exchange.Rescale, exchange.Blocking).
		Connect("b", "c", exchange.Rebalance))
	out, err := region.FromJob(g, exchange.AllPipelined).DOT()
	require.NoError(t, err)
	assert.Equal(t, goldenSmallDOT, string(out)+"\n")
}

const goldenSmallDOT = `strict digraph small {
  graph [
    rankdir=LR
  ];
  node [
    shape=box
  ];

  subgraph cluster_region0 {
    graph [
      label="region 0 (9 slots)"
      style=rounded
    ];
    node [
      shape=box
    ];

    // Node definitions.
    n0 [label="a#0"];
    n1 [label="a#1"];
    n2 [label="a#2"];
    n3 [label="a#3"];
    n4 [label="a#4"];
    n5 [label="a#5"];
    n6 [label="a#6"];
    n7 [label="a#7"];
    n8 [label="a#8"];
    n9 [label="b#0"];
    n10 [label="b#1"];
    n11 [label="b#2"];
    n12 [label="b#3"];
    n13 [label="b#4"];
    n14 [label="b#5"];
    n15 [label="b#6"];
    n16 [label="b#7"];
    n17 [label="c#0"];
    n18 [label="c#1"];
  }
  // Node definitions.
  n0 [label="a#0"];
  n1 [label="a#1"];
  n2 [label="a#2"];
  n3 [label="a#3"];
  n4 [label="a#4"];
  n5 [label="a#5"];
  n6 [label="a#6"];
  n7 [label="a#7"];
  n8 [label="a#8"];
  n9 [label="b#0"];
  n10 [label="b#1"];
  n11 [label="b#2"];
  n12 [label="b#3"];
  n13 [label="b#4"];
  n14 [label="b#5"];
  n15 [label="b#6"];
  n16 [label="b#7"];
  n17 [label="c#0"];
  n18 [label="c#1"];
  n19 [
    shape=point
    xlabel="group 0"
  ];

  // Edge definitions.
  n0 -> n19 [style=solid];
  n1 -> n19 [style=solid];
  n2 -> n19 [style=solid];
  n3 -> n19 [style=solid];
  n4 -> n19 [style=solid];
  n5 -> n19 [style=solid];
  n6 -> n19 [style=solid];
  n7 -> n19 [style=solid];
  n8 -> n19 [style=solid];
  n9 -> n17 [style=solid];
  n9 -> n18 [style=solid];
  n10 -> n17 [style=solid];
  n10 -> n18 [style=solid];
  n11 -> n17 [style=solid];
  n11 -> n18 [style=solid];
  n12 -> n17 [style=solid];
  n12 -> n18 [style=solid];
  n13 -> n17 [style=solid];
  n13 -> n18 [style=solid];
  n14 -> n17 [style=solid];
  n14 -> n18 [style=solid];
  n15 -> n17 [style=solid];
  n15 -> n18 [style=solid];
  n16 -> n17 [style=solid];
  n16 -> n18 [style=solid];
  n19 -> n9 [style=solid];
  n19 -> n10 [style=solid];
  n19 -> n11 [style=solid];
  n19 -> n12 [style=solid];
  n19 -> n13 [style=solid];
  n19 -> n14 [style=solid];
  n19 -> n15 [style=solid];
  n19 -> n16 [style=solid];
}
`
