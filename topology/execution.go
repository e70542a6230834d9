package topology

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/regionsched/regionsched/exchange"
)

// ExecutionVertexID is the dense id of one subtask: the subtasks of job
// vertex i are numbered consecutively, job vertices in declaration order.
type ExecutionVertexID int32

// ResultPartitionID is the dense id of one result partition: the
// partition produced by subtask k of an edge's source, for that edge.
type ResultPartitionID int32

// GroupID is the dense id of one ConsumedPartitionGroup, which is paired
// one-to-one with the ConsumerVertexGroup that reads it: a block of a job
// edge. The blocks of job edge e are numbered consecutively.
type GroupID int32

// Range is a half-open range [Start, End) of dense ids.
type Range struct{ Start, End int32 }

// Len returns End - Start.
func (r Range) Len() int { return int(r.End - r.Start) }

// Contains reports whether Start <= x < End.
func (r Range) Contains(x int32) bool { return x >= r.Start && x < r.End }

// PartitionGroup is one block of a job edge: the ConsumedPartitionGroup
// (the producer subtasks whose partitions it holds) and its
// ConsumerVertexGroup (the consumer subtasks that read every partition of
// the group).
type PartitionGroup struct {
	// Edge is the job edge the group is a block of.
	Edge JobEdgeID
	// Producers are the execution vertices whose partitions form the
	// group; producer v's partition is PartitionOf(Edge, v).
	Producers Range
	// Consumers are the execution vertices that read the whole group.
	Consumers Range
}

// ExecutionTopology is a JobGraph expanded to subtasks under a global data
// exchange mode, with every edge kept as blocks of partition groups (see
// the package comment). It is immutable and safe for concurrent reads.
type ExecutionTopology struct {
	job            *JobGraph
	mode           exchange.Mode
	vertexStart    []int32 // len V+1
	partitionStart []int32 // len E+1
	groupStart     []int32 // len E+1
	partitionType  []exchange.ResultPartitionType
	pattern        []exchange.DistributionPattern
	edges          []edgeShape // len E
}

// edgeShape is what the group and partition arithmetic of one job edge
// reads, in one record: a scheduler does that arithmetic on every task
// event, and this is one bounds check and one cache line, not seven
// slices.
type edgeShape struct {
	sBase, cBase int32 // the first subtask of the edge's source and target
	s, c         int32 // their parallelisms
	groupStart   int32 // the edge's first group
	partStart    int32 // the edge's first partition
	allToAll     bool
}

// NewExecutionTopology expands g under mode m. Cost O(V + E) time and
// memory. A mode that is none of exchange.Modes() is a programming error
// (modes from text come from exchange.ParseMode) and panics.
func NewExecutionTopology(g *JobGraph, m exchange.Mode) *ExecutionTopology {
	if m > exchange.AllHybridSelective {
		panic(fmt.Sprintf("topology: invalid global data exchange mode %d", m))
	}
	t := &ExecutionTopology{
		job:            g,
		mode:           m,
		vertexStart:    make([]int32, g.NumVertices()+1),
		partitionStart: make([]int32, g.NumEdges()+1),
		groupStart:     make([]int32, g.NumEdges()+1),
		partitionType:  make([]exchange.ResultPartitionType, g.NumEdges()),
		pattern:        make([]exchange.DistributionPattern, g.NumEdges()),
		edges:          make([]edgeShape, g.NumEdges()),
	}
	for i, v := range g.vertices {
		t.vertexStart[i+1] = t.vertexStart[i] + int32(v.Parallelism)
	}
	for i, e := range g.edges {
		src, dst := g.edgeSource[i], g.edgeTarget[i]
		s := t.vertexStart[src+1] - t.vertexStart[src]
		c := t.vertexStart[dst+1] - t.vertexStart[dst]
		t.partitionType[i] = e.PartitionType(m)
		t.pattern[i] = e.ShipStrategy.Pattern()
		t.partitionStart[i+1] = t.partitionStart[i] + s
		blocks := int32(1)
		if t.pattern[i] == exchange.Pointwise {
			blocks = min(s, c)
		}
		t.groupStart[i+1] = t.groupStart[i] + blocks
		t.edges[i] = edgeShape{
			sBase: t.vertexStart[src], cBase: t.vertexStart[dst], s: s, c: c,
			groupStart: t.groupStart[i], partStart: t.partitionStart[i],
			allToAll: t.pattern[i] == exchange.AllToAll,
		}
	}
	return t
}

// Job returns the job graph.
func (t *ExecutionTopology) Job() *JobGraph { return t.job }

// Mode returns the global data exchange mode the topology was built with.
func (t *ExecutionTopology) Mode() exchange.Mode { return t.mode }

// NumExecutionVertices returns the number of subtasks.
func (t *ExecutionTopology) NumExecutionVertices() int {
	return int(t.vertexStart[len(t.vertexStart)-1])
}

// NumPartitions returns the number of result partitions.
func (t *ExecutionTopology) NumPartitions() int {
	return int(t.partitionStart[len(t.partitionStart)-1])
}

// NumGroups returns the number of partition groups (blocks).
func (t *ExecutionTopology) NumGroups() int { return int(t.groupStart[len(t.groupStart)-1]) }

// VerticesOf returns the execution vertices of job vertex jv.
func (t *ExecutionTopology) VerticesOf(jv JobVertexID) Range {
	return Range{t.vertexStart[jv], t.vertexStart[jv+1]}
}

// ExecutionVertex returns the id of subtask `subtask` of job vertex jv.
func (t *ExecutionTopology) ExecutionVertex(jv JobVertexID, subtask int) ExecutionVertexID {
	return ExecutionVertexID(t.vertexStart[jv] + int32(subtask))
}

// JobVertexOf returns the job vertex index of v (O(log V)).
func (t *ExecutionTopology) JobVertexOf(v ExecutionVertexID) JobVertexID {
	return JobVertexID(searchStart(t.vertexStart, int32(v)))
}

// SubtaskIndex returns v's 0-based subtask index within its job vertex.
func (t *ExecutionTopology) SubtaskIndex(v ExecutionVertexID) int {
	return int(int32(v) - t.vertexStart[t.JobVertexOf(v)])
}

// VertexName returns "ID#i" (docs/job-file.md).
func (t *ExecutionTopology) VertexName(v ExecutionVertexID) string {
	jv := t.JobVertexOf(v)
	return t.job.vertices[jv].ID + "#" + strconv.Itoa(int(int32(v)-t.vertexStart[jv]))
}

// ParseVertexName resolves "ID#i" to an execution vertex; i is a decimal
// subtask index without sign or leading zeros. Errors wrap ErrUnknownSubtask.
func (t *ExecutionTopology) ParseVertexName(name string) (ExecutionVertexID, error) {
	id, idx, ok := strings.Cut(name, "#")
	if !ok {
		return 0, fmt.Errorf("%w: %q is not of the form ID#i", ErrUnknownSubtask, name)
	}
	jv, found := t.job.byID[id]
	if !found {
		return 0, fmt.Errorf("%w: no vertex %q (in %q)", ErrUnknownSubtask, id, name)
	}
	last := t.job.vertices[jv].Parallelism - 1
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 || i > last || strconv.Itoa(i) != idx {
		return 0, fmt.Errorf("%w: %q: subtask index must be a number in 0 ... %d", ErrUnknownSubtask, name, last)
	}
	return t.ExecutionVertex(jv, i), nil
}

// PartitionType returns the result partition type of job edge e.
func (t *ExecutionTopology) PartitionType(e JobEdgeID) exchange.ResultPartitionType {
	return t.partitionType[e]
}

// Pattern returns the distribution pattern of job edge e.
func (t *ExecutionTopology) Pattern(e JobEdgeID) exchange.DistributionPattern { return t.pattern[e] }

// GroupsOf returns the partition groups of job edge e.
func (t *ExecutionTopology) GroupsOf(e JobEdgeID) Range {
	return Range{t.groupStart[e], t.groupStart[e+1]}
}

// EdgeOfGroup returns the job edge of group g (O(log E)).
func (t *ExecutionTopology) EdgeOfGroup(g GroupID) JobEdgeID {
	return JobEdgeID(searchStart(t.groupStart, int32(g)))
}

// searchStart returns the first i with start[i+1] > x: the range of a
// prefix-sum table that holds x (sort.Search, written out: it runs on
// every task event of a scheduler).
func searchStart(start []int32, x int32) int {
	lo, hi := 0, len(start)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if start[m+1] > x {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// Group returns the producers and consumers of group g.
func (t *ExecutionTopology) Group(g GroupID) PartitionGroup {
	return t.GroupOnEdge(t.EdgeOfGroup(g), g)
}

// GroupOnEdge returns Group(g) for a group g of job edge e (g in
// GroupsOf(e)) without looking its edge up: for a caller that walks the
// groups edge by edge, or knows the edge of the partition at hand.
func (t *ExecutionTopology) GroupOnEdge(e JobEdgeID, g GroupID) PartitionGroup {
	return t.groupOfEdge(e, int32(g)-t.edges[e].groupStart)
}

func (t *ExecutionTopology) groupOfEdge(e JobEdgeID, k int32) PartitionGroup {
	es := &t.edges[e]
	sBase, cBase := es.sBase, es.cBase
	s, c := int64(es.s), int64(es.c)
	pg := PartitionGroup{Edge: e}
	switch {
	case es.allToAll:
		pg.Producers = Range{sBase, sBase + int32(s)}
		pg.Consumers = Range{cBase, cBase + int32(c)}
	case s == c: // forward: producer k feeds consumer k (no division)
		pg.Producers = Range{sBase + k, sBase + k + 1}
		pg.Consumers = Range{cBase + k, cBase + k + 1}
	case s >= c: // consumer k reads producers [k*s/c, (k+1)*s/c)
		kk := int64(k)
		pg.Producers = Range{sBase + int32(kk*s/c), sBase + int32((kk+1)*s/c)}
		pg.Consumers = Range{cBase + k, cBase + k + 1}
	default: // producer k feeds consumers [ceil(k*c/s), ceil((k+1)*c/s))
		kk := int64(k)
		pg.Producers = Range{sBase + k, sBase + k + 1}
		pg.Consumers = Range{cBase + int32(ceilDiv(kk*c, s)), cBase + int32(ceilDiv((kk+1)*c, s))}
	}
	return pg
}

// GroupPartitions returns the partitions of group g, those its producers
// write on its edge: n consecutive ids from first. It is Group's producer
// range in partition ids, without the consumers (O(log E)); the tests hold
// the two together.
func (t *ExecutionTopology) GroupPartitions(g GroupID) (first ResultPartitionID, n int32) {
	es := &t.edges[t.EdgeOfGroup(g)]
	k := int32(g) - es.groupStart
	s, c := int64(es.s), int64(es.c)
	lo, hi := k, k+1 // forward, or producer k feeds several consumers
	switch {
	case es.allToAll:
		lo, hi = 0, int32(s)
	case s > c: // consumer k reads producers [k*s/c, (k+1)*s/c)
		kk := int64(k)
		lo, hi = int32(kk*s/c), int32((kk+1)*s/c)
	}
	return ResultPartitionID(es.partStart + lo), hi - lo
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// ConsumedGroup returns the group that consumer subtask `subtask` of edge
// e's target reads on edge e.
func (t *ExecutionTopology) ConsumedGroup(e JobEdgeID, subtask int) GroupID {
	es := &t.edges[e]
	k := int64(0)
	if !es.allToAll {
		if s, c := int64(es.s), int64(es.c); s >= c {
			k = int64(subtask)
		} else {
			k = int64(subtask) * s / c
		}
	}
	return GroupID(es.groupStart + int32(k))
}

// ProducedGroup returns the group that holds the partition of producer
// subtask `subtask` of edge e's source on edge e.
func (t *ExecutionTopology) ProducedGroup(e JobEdgeID, subtask int) GroupID {
	es := &t.edges[e]
	k := int64(0)
	if !es.allToAll {
		if s, c := int64(es.s), int64(es.c); s > c {
			k = ceilDiv(int64(subtask+1)*c, s) - 1
		} else { // s == c (forward) is one group per subtask too
			k = int64(subtask)
		}
	}
	return GroupID(es.groupStart + int32(k))
}

// PartitionOf returns the partition that producer v writes for job edge e
// (v must be a subtask of e's source).
func (t *ExecutionTopology) PartitionOf(e JobEdgeID, v ExecutionVertexID) ResultPartitionID {
	es := &t.edges[e]
	return ResultPartitionID(es.partStart + int32(v) - es.sBase)
}

// EdgeOfPartition returns the job edge of partition p (O(log E)).
func (t *ExecutionTopology) EdgeOfPartition(p ResultPartitionID) JobEdgeID {
	return JobEdgeID(searchStart(t.partitionStart, int32(p)))
}

// PartitionProducer returns the execution vertex that writes partition p.
func (t *ExecutionTopology) PartitionProducer(p ResultPartitionID) ExecutionVertexID {
	e := t.EdgeOfPartition(p)
	return ExecutionVertexID(t.vertexStart[t.job.edgeSource[e]] + int32(p) - t.partitionStart[e])
}

// PartitionGroupOf returns the group that holds partition p.
func (t *ExecutionTopology) PartitionGroupOf(p ResultPartitionID) GroupID {
	e := t.EdgeOfPartition(p)
	return t.ProducedGroup(e, int(int32(p)-t.partitionStart[e]))
}
