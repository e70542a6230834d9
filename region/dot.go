package region

import (
	"fmt"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/encoding"
	"gonum.org/v1/gonum/graph/encoding/dot"
	"gonum.org/v1/gonum/graph/simple"

	"github.com/regionsched/regionsched/topology"
)

// pairwiseLimit is the largest block drawn with one arrow per producer and
// consumer pair; bigger blocks are drawn through a point node standing for
// the partition group, so the picture stays linear in the job's size.
const pairwiseLimit = 64

// DOT renders the execution vertices as a Graphviz digraph with one
// cluster per region (labelled with its id and slot count). Pipelined
// exchanges are solid arrows, blocking ones dashed.
func (rs *Regions) DOT() ([]byte, error) {
	t := rs.topo
	job := t.Job()
	g := &dotGraph{DirectedGraph: simple.NewDirectedGraph(), name: job.Name()}
	n := int64(t.NumExecutionVertices())
	for v := range n {
		g.AddNode(dotNode{id: v, attrs: []encoding.Attribute{{Key: "label", Value: t.VertexName(topology.ExecutionVertexID(v))}}})
	}
	nextGroupNode := n
	for e := range job.NumEdges() {
		style := "solid"
		if !t.PartitionType(e).IsPipelined() {
			style = "dashed"
		}
		gs := t.GroupsOf(e)
		for k := gs.Start; k < gs.End; k++ {
			pg := t.Group(topology.GroupID(k))
			if pg.Producers.Len()*pg.Consumers.Len() <= pairwiseLimit {
				for p := pg.Producers.Start; p < pg.Producers.End; p++ {
					for c := pg.Consumers.Start; c < pg.Consumers.End; c++ {
						g.SetEdge(dotEdge{from: g.Node(int64(p)), to: g.Node(int64(c)), style: style})
					}
				}
				continue
			}
			hub := dotNode{id: nextGroupNode, attrs: []encoding.Attribute{{Key: "shape", Value: "point"}, {Key: "xlabel", Value: fmt.Sprintf("group %d", k)}}}
			nextGroupNode++
			g.AddNode(hub)
			for p := pg.Producers.Start; p < pg.Producers.End; p++ {
				g.SetEdge(dotEdge{from: g.Node(int64(p)), to: hub, style: style})
			}
			for c := pg.Consumers.Start; c < pg.Consumers.End; c++ {
				g.SetEdge(dotEdge{from: hub, to: g.Node(int64(c)), style: style})
			}
		}
	}
	for r := range ID(rs.NumRegions()) {
		sub := &dotGraph{DirectedGraph: simple.NewDirectedGraph(), name: fmt.Sprintf("cluster_region%d", r),
			label: fmt.Sprintf("region %d (%s)", r, plural(rs.SlotCount(r), "slot"))}
		for _, v := range rs.Members(r) {
			sub.AddNode(g.Node(int64(v)))
		}
		g.clusters = append(g.clusters, sub)
	}
	return dot.Marshal(g, "", "", "  ")
}

type dotGraph struct {
	*simple.DirectedGraph
	name, label string
	clusters    []dot.Graph
}

func (g *dotGraph) DOTID() string { return g.name }

func (g *dotGraph) Structure() []dot.Graph { return g.clusters }

func (g *dotGraph) DOTAttributers() (graphAttrs, nodeAttrs, edgeAttrs encoding.Attributer) {
	ga := attrs{{Key: "rankdir", Value: "LR"}}
	if g.label != "" {
		ga = attrs{{Key: "label", Value: g.label}, {Key: "style", Value: "rounded"}}
	}
	return ga, attrs{{Key: "shape", Value: "box"}}, attrs{}
}

type attrs []encoding.Attribute

func (a attrs) Attributes() []encoding.Attribute { return a }

type dotNode struct {
	id    int64
	attrs []encoding.Attribute
}

func (n dotNode) ID() int64                        { return n.id }
func (n dotNode) DOTID() string                    { return fmt.Sprintf("n%d", n.id) }
func (n dotNode) Attributes() []encoding.Attribute { return n.attrs }

type dotEdge struct {
	from, to graph.Node
	style    string
}

func (e dotEdge) From() graph.Node         { return e.from }
func (e dotEdge) To() graph.Node           { return e.to }
func (e dotEdge) ReversedEdge() graph.Edge { return dotEdge{from: e.to, to: e.from, style: e.style} }
func (e dotEdge) Attributes() []encoding.Attribute {
	return []encoding.Attribute{{Key: "style", Value: e.style}}
}

// plural renders "1 slot" or "3 slots".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
