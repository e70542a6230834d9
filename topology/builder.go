package topology

import "github.com/regionsched/regionsched/exchange"

// Builder assembles a JobGraph. Methods chain; Build validates everything
// at once and reports the first problem in declaration order.
//
// The Builder applies the defaults of the job file format (docs/job-file.md) to the zero values of a JobVertex: an empty SlotSharingGroup
// becomes DefaultSlotSharingGroup and a zero Duration becomes
// DefaultDuration; submission fields default to DefaultSubmission.
type Builder struct {
	name       string
	vertices   []JobVertex
	edges      []JobEdge
	submission Submission
}

// NewBuilder starts a job graph with the given name.
func NewBuilder(name string) *Builder {
	return &Builder{name: name, submission: DefaultSubmission()}
}

// AddVertex appends a job vertex. An empty SlotSharingGroup becomes
// DefaultSlotSharingGroup and a zero Duration becomes DefaultDuration, as
// in a job file that leaves them out.
func (b *Builder) AddVertex(v JobVertex) *Builder {
	if v.Duration == 0 {
		v.Duration = DefaultDuration
	}
	return b.addVertex(v)
}

// addVertex is AddVertex without the duration default: the JSON decoder
// has applied it already and keeps an explicit "durationMs": 0.
func (b *Builder) addVertex(v JobVertex) *Builder {
	if v.SlotSharingGroup == "" {
		v.SlotSharingGroup = DefaultSlotSharingGroup
	}
	b.vertices = append(b.vertices, v)
	return b
}

// AddGraph appends the vertices and edges of the built graph g in g's
// order, their ids (and the edges' ends) prefixed with prefix, to lay
// several jobs side by side in one graph. The vertices are kept as g has
// them: g's defaults were applied when it was built, so a zero Duration
// (a job file's "durationMs": 0) stays zero rather than becoming
// DefaultDuration as with AddVertex. g's name and submission are not
// carried over.
func (b *Builder) AddGraph(prefix string, g *JobGraph) *Builder {
	for _, v := range g.vertices {
		v.ID = prefix + v.ID
		b.addVertex(v)
	}
	for _, e := range g.edges {
		e.Source, e.Target = prefix+e.Source, prefix+e.Target
		b.AddEdge(e)
	}
	return b
}

// AddEdge appends a job edge.
func (b *Builder) AddEdge(e JobEdge) *Builder {
	b.edges = append(b.edges, e)
	return b
}

// Connect appends an edge with the given ship strategy whose partition
// type is left to the global mode.
func (b *Builder) Connect(source, target string, s exchange.ShipStrategy) *Builder {
	return b.AddEdge(JobEdge{Source: source, Target: target, ShipStrategy: s})
}

// ConnectPinned appends an edge whose partition type is pinned.
func (b *Builder) ConnectPinned(source, target string, s exchange.ShipStrategy, t exchange.ResultPartitionType) *Builder {
	return b.AddEdge(JobEdge{Source: source, Target: target, ShipStrategy: s, Pinned: true, Exchange: t})
}

// SetSubmission sets the multi-job submission fields (defaults otherwise).
func (b *Builder) SetSubmission(s Submission) *Builder {
	b.submission = s
	return b
}

// Build validates the graph and returns it. The error is one of the typed
// errors of this package (see ErrCycle and friends).
func (b *Builder) Build() (*JobGraph, error) {
	g := &JobGraph{
		name:       b.name,
		vertices:   append([]JobVertex(nil), b.vertices...),
		edges:      append([]JobEdge(nil), b.edges...),
		submission: b.submission,
	}
	if err := g.index(); err != nil {
		return nil, err
	}
	return g, nil
}
