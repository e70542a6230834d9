package topology

import (
	"time"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/resource"
)

// Limits of a job graph.
const (
	// MaxParallelism is the largest parallelism of one job vertex.
	MaxParallelism = 1_000_000
	// MaxPriority is the highest priority of a job (the lowest is 1).
	MaxPriority = 10_000
	// DefaultSlotSharingGroup is the group of a vertex that names none.
	DefaultSlotSharingGroup = "default"
	// DefaultDuration is the simulated run time of a subtask whose vertex
	// gives none: a job file without durationMs, or a JobVertex added to a
	// Builder with a zero Duration.
	DefaultDuration = time.Second
)

// JobVertex is one operator of the logical plan.
type JobVertex struct {
	// ID is unique in the job, non-empty, without '#' or whitespace.
	ID string
	// Parallelism is the number of subtasks, 1 ... MaxParallelism.
	Parallelism int
	// SlotSharingGroup names the group whose subtasks may share a slot;
	// "" means DefaultSlotSharingGroup.
	SlotSharingGroup string
	// Resources is what one subtask needs; resource.Unknown fits any slot.
	Resources resource.Profile
	// Duration is how long one subtask runs in the simulator. Zero means
	// DefaultDuration: Builder.AddVertex replaces it, as the JSON decoder
	// does for a vertex without durationMs, so a job built in Go and the
	// same job as a file run alike (a subtask that takes no simulated time
	// is not something to model). A negative duration fails validation
	// (ErrInvalidField). An explicit "durationMs": 0 in a job file is kept.
	Duration time.Duration
	// Unbounded marks a streaming subtask that never finishes on its own
	// and occupies its slot indefinitely. The zero value is bounded.
	Unbounded bool
}

// JobEdge connects a producer vertex to a consumer vertex.
type JobEdge struct {
	Source, Target string
	// ShipStrategy decides the distribution pattern (forward and rescale
	// are pointwise, the rest all-to-all).
	ShipStrategy exchange.ShipStrategy
	// Pinned means Exchange is fixed for this edge and the global mode
	// does not change it.
	Pinned bool
	// Exchange is the pinned result partition type (used when Pinned).
	Exchange exchange.ResultPartitionType
}

// PartitionType returns the partition type of the edge under a global mode:
// the pinned type if any, else the mode's choice for the ship strategy.
func (e JobEdge) PartitionType(m exchange.Mode) exchange.ResultPartitionType {
	if e.Pinned {
		return e.Exchange
	}
	return m.PartitionType(e.ShipStrategy)
}

// Submission carries the optional multi-job fields of a job file
// (docs/job-file.md): when and where the job is submitted. They do not
// change the job's regions.
type Submission struct {
	SubmitAt time.Duration // submitAtMs
	Queue    string        // a full queue name (ValidQueueName), default "root.default"
	User     string        // non-empty, default "anonymous"
	Priority int           // 1 ... MaxPriority, default 5000
	Driver   *Driver       // nil: no driver
	Gang     *Gang         // nil: no gang reservation
}

// Driver is a job master that needs its own slot for the job's lifetime.
type Driver struct {
	Resources resource.Profile
	Startup   time.Duration // default 1s
}

// Gang asks to reserve MinSlots slots at once before anything runs.
type Gang struct {
	// MinSlots is the slots to reserve, driver included; 0 (a job file's
	// gang without minSlots) means derived: the driver plus the slots of
	// the regions scheduled at the start, at most what the job's queue can
	// hold (region.Regions.GangMinSlots).
	MinSlots int
	Hard     bool // style "hard": fail the job on timeout; "soft": fall back
	// Timeout is how long the reservation may take from the job's arrival
	// (timeoutMs); 0 means it does not wait: reserved at arrival or timed
	// out at once. A job file's gang without timeoutMs has
	// DefaultGangTimeout.
	Timeout time.Duration
}

// DefaultGangTimeout is the Timeout of a job file's gang that sets no
// timeoutMs.
const DefaultGangTimeout = 15 * time.Minute

// DefaultSubmission returns the submission defaults of docs/job-file.md.
func DefaultSubmission() Submission {
	return Submission{Queue: "root.default", User: "anonymous", Priority: 5000}
}

// JobVertexID is the dense index of a job vertex: the vertices of a
// JobGraph are numbered 0, 1, ... in declaration order (the order they
// were added to the Builder or listed in the job file), and the numbering
// is stable for the graph's life.
type JobVertexID int32

// JobEdgeID is the dense index of a job edge: the edges of a JobGraph are
// numbered 0, 1, ... in declaration order, and the numbering is stable for
// the graph's life.
type JobEdgeID int32

// JobGraph is a validated, immutable logical plan. Create one with a
// Builder or Decode. Vertices and edges keep the order they were given in;
// their ids (JobVertexID, JobEdgeID) are stable.
type JobGraph struct {
	name       string
	vertices   []JobVertex
	edges      []JobEdge
	byID       map[string]JobVertexID
	edgeSource []int32 // JobVertexID of each edge's source
	edgeTarget []int32 // JobVertexID of each edge's target
	inEdges    [][]JobEdgeID
	outEdges   [][]JobEdgeID
	topoOrder  []JobVertexID // producers before consumers
	topoRank   []int32       // position of each vertex in topoOrder
	submission Submission
}

// Name returns the job name.
func (g *JobGraph) Name() string { return g.name }

// NumVertices returns the number of job vertices.
func (g *JobGraph) NumVertices() int { return len(g.vertices) }

// Vertex returns job vertex i (0 <= i < NumVertices()).
func (g *JobGraph) Vertex(i JobVertexID) JobVertex { return g.vertices[i] }

// VertexIndex returns the index of the vertex with the given id.
func (g *JobGraph) VertexIndex(id string) (JobVertexID, bool) {
	i, ok := g.byID[id]
	return i, ok
}

// NumEdges returns the number of job edges.
func (g *JobGraph) NumEdges() int { return len(g.edges) }

// Edge returns job edge i (0 <= i < NumEdges()).
func (g *JobGraph) Edge(i JobEdgeID) JobEdge { return g.edges[i] }

// EdgeEnds returns the vertex indexes of edge i's source and target.
func (g *JobGraph) EdgeEnds(i JobEdgeID) (source, target JobVertexID) {
	return JobVertexID(g.edgeSource[i]), JobVertexID(g.edgeTarget[i])
}

// InEdges returns the indexes of the edges into vertex v, in declaration
// order (read-only).
func (g *JobGraph) InEdges(v JobVertexID) []JobEdgeID { return g.inEdges[v] }

// OutEdges returns the indexes of the edges out of vertex v, in
// declaration order (read-only).
func (g *JobGraph) OutEdges(v JobVertexID) []JobEdgeID { return g.outEdges[v] }

// TopologicalOrder returns the vertex indexes with every producer before
// its consumers; ties keep declaration order (read-only).
func (g *JobGraph) TopologicalOrder() []JobVertexID { return g.topoOrder }

// TopologicalRank returns vertex v's position in TopologicalOrder.
func (g *JobGraph) TopologicalRank(v JobVertexID) int { return int(g.topoRank[v]) }

// Submission returns the multi-job submission fields.
func (g *JobGraph) Submission() Submission { return g.submission }

// NumSubtasks returns the sum of all parallelisms.
func (g *JobGraph) NumSubtasks() int {
	n := 0
	for _, v := range g.vertices {
		n += v.Parallelism
	}
	return n
}

// BlockingEdges returns how many job edges are blocking under mode m.
// Hybrid edges, which separate regions too, are counted by HybridEdges.
func (g *JobGraph) BlockingEdges(m exchange.Mode) int {
	return g.countEdges(m, func(t exchange.ResultPartitionType) bool { return t == exchange.Blocking })
}

// HybridEdges returns how many job edges are hybrid (full or selective)
// under mode m.
func (g *JobGraph) HybridEdges(m exchange.Mode) int {
	return g.countEdges(m, exchange.ResultPartitionType.IsHybrid)
}

// PipelinedEdges returns how many job edges are pipelined under mode m:
// the edges that glue subtasks into regions. The others (blocking and
// hybrid) separate regions.
func (g *JobGraph) PipelinedEdges(m exchange.Mode) int {
	return g.countEdges(m, exchange.ResultPartitionType.IsPipelined)
}

// countEdges returns how many job edges have, under mode m, a result
// partition type that is.
func (g *JobGraph) countEdges(m exchange.Mode, is func(exchange.ResultPartitionType) bool) int {
	n := 0
	for _, e := range g.edges {
		if is(e.PartitionType(m)) {
			n++
		}
	}
	return n
}
