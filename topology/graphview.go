package topology

import (
	"gonum.org/v1/gonum/graph"

	"github.com/regionsched/regionsched/internal/csr"
	"github.com/regionsched/regionsched/internal/graphview"
)

// jobView presents the vertices and edges of a job graph as a gonum
// graph.Directed: node i is vertices[i], and there is an edge u -> v when
// at least one job edge goes from u to v (parallel job edges are one
// graph edge, as gonum's simple graphs have them). gonum's algorithms
// (topo.SortStabilized, topo.TarjanSCC) run on it directly, without
// copying the job into gonum's simple.DirectedGraph, whose package pulls
// gonum's matrix code into the build.
type jobView struct {
	succ, pred csr.CSR[int32] // distinct successors / predecessors of each vertex
}

var _ graph.Directed = (*jobView)(nil)

// newJobView builds the view of a graph whose edge endpoints are indexed
// (edgeSource, edgeTarget, outEdges, inEdges). Cost O(V + E).
func newJobView(g *JobGraph) *jobView {
	n := len(g.vertices)
	seen := make([]int32, n) // seen[w] == u+1: w already listed for u
	distinct := func(lists [][]JobEdgeID, other []int32) func(add func(row, w int32)) {
		return func(add func(row, w int32)) {
			clear(seen)
			for u, edges := range lists {
				for _, e := range edges {
					if w := other[e]; seen[w] != int32(u)+1 {
						seen[w] = int32(u) + 1
						add(int32(u), w)
					}
				}
			}
		}
	}
	return &jobView{
		succ: csr.Build[int32, int32](n, distinct(g.outEdges, g.edgeTarget)),
		pred: csr.Build[int32, int32](n, distinct(g.inEdges, g.edgeSource)),
	}
}

func (v *jobView) has(id int64) bool { return id >= 0 && id < int64(v.succ.Rows()) }

// Node returns the vertex with index id, or nil.
func (v *jobView) Node(id int64) graph.Node {
	if !v.has(id) {
		return nil
	}
	return graphview.Node(id)
}

// Nodes returns every vertex, in index order.
func (v *jobView) Nodes() graph.Nodes { return graphview.NewRange(v.succ.Rows()) }

// From returns the distinct targets of the edges leaving id.
func (v *jobView) From(id int64) graph.Nodes {
	if !v.has(id) {
		return graphview.NewIDs[int32](nil)
	}
	return graphview.NewIDs(v.succ.Row(int32(id)))
}

// To returns the distinct sources of the edges entering id.
func (v *jobView) To(id int64) graph.Nodes {
	if !v.has(id) {
		return graphview.NewIDs[int32](nil)
	}
	return graphview.NewIDs(v.pred.Row(int32(id)))
}

// HasEdgeFromTo reports whether a job edge goes from uid to vid.
func (v *jobView) HasEdgeFromTo(uid, vid int64) bool {
	if !v.has(uid) || !v.has(vid) {
		return false
	}
	for _, w := range v.succ.Row(int32(uid)) {
		if int64(w) == vid {
			return true
		}
	}
	return false
}

// HasEdgeBetween reports whether a job edge joins xid and yid either way.
func (v *jobView) HasEdgeBetween(xid, yid int64) bool {
	return v.HasEdgeFromTo(xid, yid) || v.HasEdgeFromTo(yid, xid)
}

// Edge returns the edge from uid to vid, or nil.
func (v *jobView) Edge(uid, vid int64) graph.Edge {
	if !v.HasEdgeFromTo(uid, vid) {
		return nil
	}
	return graphview.Edge{F: graphview.Node(uid), T: graphview.Node(vid)}
}
