package strategy_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/traverse"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/jobgen"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// randomJobs are DAGs of 2-8 vertices, parallelism 1-6, edges only from
// lower to higher index (acyclic), random ship strategies (forward only
// between equal parallelisms) and a quarter of the edges with a random
// pinned exchange. A third of the jobs start with a cross motif on v0,
// v1, v2 (jobgen.RescaleTriangle): S -rescale pipelined-> X -rescale
// pipelined-> T plus S -rescale blocking-> T, with parallelisms that cut
// a group of the blocking edge across two regions, one of which consumes
// it (a cross-region group, FLINK-22017); random graphs almost never
// make one.
var randomJobs = jobgen.Options{
	Name:        "random",
	Vertices:    jobgen.IntRange{Min: 2, Max: 8},
	Parallelism: jobgen.IntRange{Min: 1, Max: 6},
	Density:     jobgen.FloatRange{Min: 0.4, Max: 0.4},
	ForwardRate: 0.2,
	PinRates:    []float64{0.25},
	Motifs:      []jobgen.Motif{jobgen.RescaleTriangle},
	MotifRate:   1.0 / 3,
}

// randomJob returns a seeded job of randomJobs and a random global mode.
func randomJob(t testing.TB, rng *rand.Rand) (*topology.JobGraph, exchange.Mode) {
	t.Helper()
	g, err := jobgen.Generate(rng, randomJobs)
	require.NoError(t, err)
	return g, exchange.Modes()[rng.IntN(4)]
}

// describeJob renders a job and mode for failure messages.
func describeJob(g *topology.JobGraph, mode exchange.Mode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode %v;", mode)
	for i := range topology.JobVertexID(g.NumVertices()) {
		fmt.Fprintf(&b, " %s(%d)", g.Vertex(i).ID, g.Vertex(i).Parallelism)
	}
	for i := range topology.JobEdgeID(g.NumEdges()) {
		e := g.Edge(i)
		fmt.Fprintf(&b, "; %s-%v", e.Source, e.ShipStrategy)
		if e.Pinned {
			fmt.Fprintf(&b, "/%v", e.Exchange)
		}
		fmt.Fprintf(&b, "->%s", e.Target)
	}
	return b.String()
}

// executionEdge is one producer subtask -> consumer subtask connection.
// blocking is set for blocking and hybrid partitions (they separate
// regions), pt tells them apart.
type executionEdge struct {
	producer, consumer topology.ExecutionVertexID
	partition          topology.ResultPartitionID
	edge               topology.JobEdgeID
	blocking           bool
	pt                 exchange.ResultPartitionType
}

// expandedGraph is the naive reference: every execution edge expanded
// pairwise from the job graph with the connection rules of docs/job-file.md
// section 1, independently of the topology's partition groups. Only
// vertex and partition ids are taken from the topology.
type expandedGraph struct {
	topo     *topology.ExecutionTopology
	regions  *region.Regions
	in, out  [][]executionEdge // per execution vertex
	blocking []bool            // per partition
}

func expand(rs *region.Regions) *expandedGraph {
	t := rs.Topology()
	job := t.Job()
	x := &expandedGraph{
		topo:     t,
		regions:  rs,
		in:       make([][]executionEdge, t.NumExecutionVertices()),
		out:      make([][]executionEdge, t.NumExecutionVertices()),
		blocking: make([]bool, t.NumPartitions()),
	}
	for e := range topology.JobEdgeID(job.NumEdges()) {
		src, dst := job.EdgeEnds(e)
		s, c := job.Vertex(src).Parallelism, job.Vertex(dst).Parallelism
		pt := job.Edge(e).PartitionType(t.Mode())
		blocking := !pt.IsPipelined()
		connect := func(i, j int) {
			u, w := t.ExecutionVertex(src, i), t.ExecutionVertex(dst, j)
			ee := executionEdge{producer: u, consumer: w, partition: t.PartitionOf(e, u), edge: e, blocking: blocking, pt: pt}
			x.out[u] = append(x.out[u], ee)
			x.in[w] = append(x.in[w], ee)
			x.blocking[ee.partition] = blocking
		}
		switch {
		case job.Edge(e).ShipStrategy.Pattern() == exchange.AllToAll:
			for i := range s {
				for j := range c {
					connect(i, j)
				}
			}
		case s == c:
			for i := range s {
				connect(i, i)
			}
		case s > c:
			for j := range c {
				for i := j * s / c; i < (j+1)*s/c; i++ {
					connect(i, j)
				}
			}
		default:
			for i := range s {
				for j := (i*c + s - 1) / s; j < ((i+1)*c+s-1)/s; j++ {
					connect(i, j)
				}
			}
		}
	}
	return x
}

// externalInputs returns the blocking and hybrid partitions the members
// of region r read from producers outside r.
func (x *expandedGraph) externalInputs(r region.ID) []topology.ResultPartitionID {
	var out []topology.ResultPartitionID
	for _, v := range x.regions.Members(r) {
		for _, e := range x.in[v] {
			if e.blocking && x.regions.RegionOf(e.producer) != r {
				out = append(out, e.partition)
			}
		}
	}
	return out
}

// hybrid reports whether partition p is a hybrid one.
func (x *expandedGraph) hybrid(p topology.ResultPartitionID) bool {
	return x.topo.PartitionType(x.topo.EdgeOfPartition(p)).IsHybrid()
}

// inputSet is what one consumer subtask reads on one hybrid job edge: the
// producers, by the expanded edges (a partition group, seen from outside).
type inputSet struct {
	edge      topology.JobEdgeID
	pt        exchange.ResultPartitionType
	producers []topology.ExecutionVertexID // ascending
	readers   []topology.ExecutionVertexID // every consumer subtask that reads exactly these on edge
}

// hybridInputs returns the hybrid input sets of the members of region r
// that have a producer outside r.
func (x *expandedGraph) hybridInputs(r region.ID) []inputSet {
	var out []inputSet
	for _, v := range x.regions.Members(r) {
		byEdge := map[topology.JobEdgeID][]topology.ExecutionVertexID{}
		pts := map[topology.JobEdgeID]exchange.ResultPartitionType{}
		for _, e := range x.in[v] {
			if e.pt.IsHybrid() {
				byEdge[e.edge] = append(byEdge[e.edge], e.producer)
				pts[e.edge] = e.pt
			}
		}
		for edge, ps := range byEdge {
			slices.Sort(ps)
			outside := slices.ContainsFunc(ps, func(p topology.ExecutionVertexID) bool { return x.regions.RegionOf(p) != r })
			if !outside {
				continue
			}
			out = append(out, inputSet{edge: edge, pt: pts[edge], producers: ps, readers: x.readersOf(edge, ps)})
		}
	}
	return out
}

// readersOf returns the consumer subtasks that read exactly producers ps
// on job edge edge.
func (x *expandedGraph) readersOf(edge topology.JobEdgeID, ps []topology.ExecutionVertexID) []topology.ExecutionVertexID {
	var out []topology.ExecutionVertexID
	for _, e := range x.out[ps[0]] {
		if e.edge != edge {
			continue
		}
		var mine []topology.ExecutionVertexID
		for _, f := range x.in[e.consumer] {
			if f.edge == edge {
				mine = append(mine, f.producer)
			}
		}
		slices.Sort(mine)
		if slices.Equal(mine, ps) {
			out = append(out, e.consumer)
		}
	}
	return out
}

// selectiveNeed is how many producers of in must have finished before
// region c may read it (selective, share): ceil(share * n), at least one,
// and no more than the producers outside the consumer region that writes
// the most of them (a region cannot wait for its own).
func (x *expandedGraph) selectiveNeed(in inputSet, share float64) int {
	n := len(in.producers)
	need := min(max(int(math.Ceil(share*float64(n))), 1), n)
	producerRegions := map[region.ID]int{}
	for _, p := range in.producers {
		producerRegions[x.regions.RegionOf(p)]++
	}
	if len(producerRegions) > 1 {
		for _, w := range in.readers {
			if own, ok := producerRegions[x.regions.RegionOf(w)]; ok {
				need = min(need, n-own)
			}
		}
	}
	return need
}

// consumerRegions returns the regions that read partition p.
func (x *expandedGraph) consumerRegions(p topology.ResultPartitionID) []region.ID {
	var out []region.ID
	u := x.topo.PartitionProducer(p)
	for _, e := range x.out[u] {
		if e.partition == p {
			out = append(out, x.regions.RegionOf(e.consumer))
		}
	}
	return out
}

// liveRead names what a consumer subtask read live: the selective hybrid
// partitions of one job edge, a producer of which had not finished when
// the consumer's region began running.
type liveRead struct {
	consumer topology.ExecutionVertexID
	edge     topology.JobEdgeID
}

// naiveRegionsToRestart is the reference failover: a gonum directed graph
// with a node per execution vertex and per region, an arc for every
// expanded execution edge, a reverse arc for every blocking execution
// edge whose partition is unavailable and for every selective hybrid
// execution edge its consumer read live (readsLive: by consumer and job
// edge, nil for none),
// and arcs both ways between a region and its members; the answer is the
// regions of the vertices a breadth-first search from the failed vertex
// reaches.
func (x *expandedGraph) naiveRegionsToRestart(failed topology.ExecutionVertexID, unavailable map[topology.ResultPartitionID]bool, readsLive map[liveRead]bool) []region.ID {
	n := int64(len(x.in))
	g := simple.NewDirectedGraph()
	for id := range n + int64(x.regions.NumRegions()) {
		g.AddNode(simple.Node(id))
	}
	arc := func(a, b int64) { g.SetEdge(g.NewEdge(simple.Node(a), simple.Node(b))) }
	for v := range n {
		regionNode := n + int64(x.regions.RegionOf(topology.ExecutionVertexID(v)))
		arc(v, regionNode)
		arc(regionNode, v)
		for _, e := range x.out[v] {
			arc(int64(e.producer), int64(e.consumer))
			live := e.pt == exchange.HybridSelective && readsLive[liveRead{consumer: e.consumer, edge: e.edge}]
			if (e.blocking && unavailable[e.partition]) || live {
				arc(int64(e.consumer), int64(e.producer))
			}
		}
	}
	var out []region.ID
	bfs := traverse.BreadthFirst{Visit: func(node graph.Node) {
		if id := node.ID(); id < n {
			out = append(out, x.regions.RegionOf(topology.ExecutionVertexID(id)))
		}
	}}
	bfs.Walk(g, simple.Node(int64(failed)), nil)
	slices.Sort(out)
	return slices.Compact(out)
}
