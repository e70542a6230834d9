package region_test

// The naive reference the property tests and BenchmarkBuildRegionsNaive
// compare against: every execution edge expanded pairwise from the
// formulas of docs/job-file.md (not from the topology package),
// connected components over the pipelined edges on a gonum undirected
// graph, then the graph of those components over the blocking edges with
// every strongly connected component merged (gonum's TarjanSCC).

import (
	"strconv"

	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/topology"
)

// specPipelined is the table of docs/job-file.md plus pinned exchanges.
func specPipelined(e topology.JobEdge, m exchange.Mode) bool {
	if e.Pinned {
		return e.Exchange == exchange.Pipelined || e.Exchange == exchange.PipelinedBounded
	}
	switch m {
	case exchange.AllPipelined:
		return true
	case exchange.PointwisePipelinedOnly:
		return e.ShipStrategy == exchange.Forward || e.ShipStrategy == exchange.Rescale
	case exchange.ForwardPipelinedOnly:
		return e.ShipStrategy == exchange.Forward
	}
	return false
}

// expansion numbers the subtasks of a job graph (job vertices in
// declaration order) and enumerates its execution edges pairwise.
type expansion struct {
	g      *topology.JobGraph
	mode   exchange.Mode
	offset []int // first subtask of each job vertex; len V+1
}

func expand(g *topology.JobGraph, m exchange.Mode) *expansion {
	x := &expansion{g: g, mode: m, offset: make([]int, g.NumVertices()+1)}
	for i := range topology.JobVertexID(g.NumVertices()) {
		x.offset[i+1] = x.offset[i] + g.Vertex(i).Parallelism
	}
	return x
}

func (x *expansion) numSubtasks() int { return x.offset[len(x.offset)-1] }

// name is the name (docs/job-file.md) of subtask u.
func (x *expansion) name(u int) string {
	jv := 0
	for x.offset[jv+1] <= u {
		jv++
	}
	return x.g.Vertex(topology.JobVertexID(jv)).ID + "#" + strconv.Itoa(u-x.offset[jv])
}

// jobVertex returns the job vertex index of subtask u.
func (x *expansion) jobVertex(u int) topology.JobVertexID {
	jv := topology.JobVertexID(0)
	for x.offset[jv+1] <= u {
		jv++
	}
	return jv
}

// forEachEdge calls f for every execution edge u -> v of job edge e.
func (x *expansion) forEachEdge(f func(e, u, v int, pipelined bool)) {
	for e := range x.g.NumEdges() {
		je := x.g.Edge(topology.JobEdgeID(e))
		si, _ := x.g.VertexIndex(je.Source)
		ti, _ := x.g.VertexIndex(je.Target)
		s, t := x.g.Vertex(si).Parallelism, x.g.Vertex(ti).Parallelism
		sBase, tBase := x.offset[si], x.offset[ti]
		pipelined := specPipelined(je, x.mode)
		if je.ShipStrategy != exchange.Forward && je.ShipStrategy != exchange.Rescale {
			for i := range s {
				for j := range t {
					f(e, sBase+i, tBase+j, pipelined)
				}
			}
			continue
		}
		for i := range s {
			for j := range t {
				if specConnected(s, t, i, j) {
					f(e, sBase+i, tBase+j, pipelined)
				}
			}
		}
	}
}

// specConnected is docs/job-file.md: does producer i feed consumer j on a
// pointwise edge of parallelisms s -> t?
func specConnected(s, t, i, j int) bool {
	switch {
	case s == t:
		return i == j
	case s > t:
		return j*s/t <= i && i < (j+1)*s/t
	default:
		ceil := func(a, b int) int { return (a + b - 1) / b }
		return ceil(i*t, s) <= j && j < ceil((i+1)*t, s)
	}
}

// naiveRegions returns, for every subtask, a label of its region, and the
// number of connected components before the cycle merge.
func naiveRegions(x *expansion) (label []int, components int) {
	n := x.numSubtasks()
	ug := simple.NewUndirectedGraph()
	for u := range n {
		ug.AddNode(simple.Node(u))
	}
	x.forEachEdge(func(_, u, v int, pipelined bool) {
		if pipelined {
			ug.SetEdge(ug.NewEdge(simple.Node(u), simple.Node(v)))
		}
	})
	comps := topo.ConnectedComponents(ug)
	compOf := make([]int, n)
	for c, nodes := range comps {
		for _, nd := range nodes {
			compOf[nd.ID()] = c
		}
	}

	dg := simple.NewDirectedGraph()
	for c := range comps {
		dg.AddNode(simple.Node(c))
	}
	x.forEachEdge(func(_, u, v int, pipelined bool) {
		if cu, cv := compOf[u], compOf[v]; !pipelined && cu != cv {
			dg.SetEdge(dg.NewEdge(simple.Node(cu), simple.Node(cv)))
		}
	})
	sccOf := make([]int, len(comps))
	for s, nodes := range topo.TarjanSCC(dg) {
		for _, nd := range nodes {
			sccOf[nd.ID()] = s
		}
	}
	label = make([]int, n)
	for u := range n {
		label[u] = sccOf[compOf[u]]
	}
	return label, len(comps)
}

// canonical rewrites a labelling as "the smallest member of my block", so
// two labellings describe the same partition iff they are equal.
func canonical(label []int) []int {
	first := map[int]int{}
	out := make([]int, len(label))
	for u, l := range label {
		if f, ok := first[l]; ok {
			out[u] = f
		} else {
			first[l] = u
			out[u] = u
		}
	}
	return out
}
