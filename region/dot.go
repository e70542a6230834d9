package region

import (
	"cmp"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/encoding"
	"gonum.org/v1/gonum/graph/encoding/dot"

	"github.com/regionsched/regionsched/internal/graphview"
	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/topology"
)

// pairwiseLimit is the largest block drawn with one arrow per producer and
// consumer pair; bigger blocks are drawn through a point node standing for
// the partition group, so the picture stays linear in the job's size.
const pairwiseLimit = 64

// DOT renders the execution vertices as a Graphviz digraph with one
// cluster per region (labelled with its id and slot count). Pipelined
// exchanges are solid arrows, blocking ones dashed, hybrid ones dotted.
func (rs *Regions) DOT() ([]byte, error) {
	t := rs.topo
	job := t.Job()
	n := int64(t.NumExecutionVertices())
	g := &dotGraph{name: job.Name(), edges: map[[2]int64]string{}}
	for v := range n {
		g.addNode(dotNode{id: v, attrs: []encoding.Attribute{{Key: "label", Value: t.VertexName(topology.ExecutionVertexID(v))}}})
	}
	nextGroupNode := n
	for e := range topology.JobEdgeID(job.NumEdges()) {
		style := "solid"
		switch pt := t.PartitionType(e); {
		case pt.IsHybrid():
			style = "dotted"
		case !pt.IsPipelined():
			style = "dashed"
		}
		gs := t.GroupsOf(e)
		for k := gs.Start; k < gs.End; k++ {
			pg := t.GroupOnEdge(e, topology.GroupID(k))
			if pg.Producers.Len()*pg.Consumers.Len() <= pairwiseLimit {
				for p := pg.Producers.Start; p < pg.Producers.End; p++ {
					for c := pg.Consumers.Start; c < pg.Consumers.End; c++ {
						g.setEdge(int64(p), int64(c), style)
					}
				}
				continue
			}
			hub := nextGroupNode
			nextGroupNode++
			g.addNode(dotNode{id: hub, attrs: []encoding.Attribute{{Key: "shape", Value: "point"}, {Key: "xlabel", Value: fmt.Sprintf("group %d", k)}}})
			for p := pg.Producers.Start; p < pg.Producers.End; p++ {
				g.setEdge(int64(p), hub, style)
			}
			for c := pg.Consumers.Start; c < pg.Consumers.End; c++ {
				g.setEdge(hub, int64(c), style)
			}
		}
	}
	for r := range ID(rs.NumRegions()) {
		sub := &dotGraph{name: fmt.Sprintf("cluster_region%d", r),
			label: fmt.Sprintf("region %d (%s)", r, count(rs.SlotCount(r), "slot"))}
		members := slices.Clone(rs.Members(r))
		slices.Sort(members)
		for _, v := range members {
			sub.addNode(g.nodes[v])
		}
		g.clusters = append(g.clusters, sub)
	}
	return dot.Marshal(g, "", "", "  ")
}

// dotGraph is the directed graph handed to gonum's DOT encoder: it
// implements graph.Directed (as the encoder and its subgraphs require),
// dot.Graph, dot.Structurer and dot.Attributers on plain slices, so the
// encoder is all of gonum this package needs. Edges are unique per
// (from, to) pair; setting one again replaces its style. A region's
// cluster holds nodes only.
type dotGraph struct {
	name, label string
	nodes       []graph.Node // ascending ids
	from        [][]int64    // from[i]: the targets of nodes[i], in the order first set
	edges       map[[2]int64]string
	clusters    []dot.Graph
}

var (
	_ graph.Directed  = (*dotGraph)(nil)
	_ dot.Graph       = (*dotGraph)(nil)
	_ dot.Structurer  = (*dotGraph)(nil)
	_ dot.Attributers = (*dotGraph)(nil)
)

// addNode appends a node whose id is larger than any before.
func (g *dotGraph) addNode(n graph.Node) {
	g.nodes = append(g.nodes, n)
	g.from = append(g.from, nil)
}

// index returns the position of the node with the given id in g.nodes.
func (g *dotGraph) index(id int64) (int, bool) {
	return slices.BinarySearchFunc(g.nodes, id, func(n graph.Node, id int64) int { return cmp.Compare(n.ID(), id) })
}

// setEdge adds the edge from -> to with a style, or restyles it.
func (g *dotGraph) setEdge(from, to int64, style string) {
	key := [2]int64{from, to}
	if _, ok := g.edges[key]; !ok {
		i, _ := g.index(from)
		g.from[i] = append(g.from[i], to)
	}
	g.edges[key] = style
}

func (g *dotGraph) nodesOf(ids []int64) graph.Nodes {
	nodes := make([]graph.Node, 0, len(ids))
	for _, id := range ids {
		nodes = append(nodes, g.Node(id))
	}
	return graphview.NewSlice(nodes)
}

func (g *dotGraph) Node(id int64) graph.Node {
	if i, ok := g.index(id); ok {
		return g.nodes[i]
	}
	return nil
}

func (g *dotGraph) Nodes() graph.Nodes { return graphview.NewSlice(g.nodes) }

func (g *dotGraph) From(id int64) graph.Nodes {
	if i, ok := g.index(id); ok {
		return g.nodesOf(g.from[i])
	}
	return graphview.NewSlice(nil)
}

// To scans every edge: the encoder never asks, it is here to make the
// graph a graph.Directed.
func (g *dotGraph) To(id int64) graph.Nodes {
	var sources []int64
	for i, targets := range g.from {
		if slices.Contains(targets, id) {
			sources = append(sources, g.nodes[i].ID())
		}
	}
	return g.nodesOf(sources)
}

func (g *dotGraph) HasEdgeFromTo(uid, vid int64) bool {
	_, ok := g.edges[[2]int64{uid, vid}]
	return ok
}

func (g *dotGraph) HasEdgeBetween(xid, yid int64) bool {
	return g.HasEdgeFromTo(xid, yid) || g.HasEdgeFromTo(yid, xid)
}

func (g *dotGraph) Edge(uid, vid int64) graph.Edge {
	style, ok := g.edges[[2]int64{uid, vid}]
	if !ok {
		return nil
	}
	return dotEdge{from: g.Node(uid), to: g.Node(vid), style: style}
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

// count renders "1 slot" or "3 slots".
var count = plural.Count
