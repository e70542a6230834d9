package topology

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors for invalid job graphs, matched with errors.Is. They
// arrive wrapped in a *VertexError, *EdgeError, *CycleError or
// *DecodeError that names the culprit.
var (
	// ErrEmptyJob means the job has no vertices.
	ErrEmptyJob = errors.New("job has no vertices")
	// ErrInvalidVertexID means a vertex id is empty or contains '#' or whitespace.
	ErrInvalidVertexID = errors.New("invalid vertex id")
	// ErrDuplicateVertex means two vertices share an id.
	ErrDuplicateVertex = errors.New("duplicate vertex id")
	// ErrInvalidParallelism means a parallelism is outside 1 ... MaxParallelism.
	ErrInvalidParallelism = errors.New("invalid parallelism")
	// ErrInvalidField means a field has a value outside its valid range.
	ErrInvalidField = errors.New("invalid field value")
	// ErrUnknownVertex means an edge names a vertex that does not exist.
	ErrUnknownVertex = errors.New("edge refers to an unknown vertex")
	// ErrForwardParallelism means a forward edge connects unequal parallelisms.
	ErrForwardParallelism = errors.New("forward edge with unequal parallelism")
	// ErrUnknownSubtask means an execution vertex name ("ID#i") does not
	// name a subtask of the job.
	ErrUnknownSubtask = errors.New("unknown subtask")
	// ErrCycle means the job graph has a directed cycle.
	ErrCycle = errors.New("job graph is cyclic")
	// ErrTooLarge means the job has more subtasks or partitions than fit
	// in int32 ids.
	ErrTooLarge = errors.New("job graph too large")
	// ErrMalformedJSON means the job file is empty or not valid JSON.
	ErrMalformedJSON = errors.New("malformed job file")
	// ErrUnknownField means the job file has a field this version does not know.
	ErrUnknownField = errors.New("unknown field")
	// ErrDuplicateField means an object of the job file gives the same field
	// twice (encoding/json would silently keep the last); it arrives wrapped
	// in a *DecodeError whose Field is the JSON path, e.g.
	// "vertices[0].parallelism" or "vertices[0].resources.extended.gpu".
	ErrDuplicateField = errors.New("duplicate field")
	// ErrMissingField means a required field is absent.
	ErrMissingField = errors.New("missing required field")
	// ErrInvalidQueueName means a job's queue is not a full queue name
	// (see ValidQueueName); it arrives wrapped in a *DecodeError whose
	// Field is "queue".
	ErrInvalidQueueName = errors.New("invalid queue name")
)

// VertexError is an error about one job vertex.
type VertexError struct {
	Vertex string // the vertex id as given
	Index  int    // position in the job's vertex list
	Field  string // the offending field, e.g. "parallelism"
	Err    error  // a sentinel (ErrInvalidParallelism, ...) or a wrapped cause
	Detail string // what was wrong, e.g. "0 is not in 1 ... 1000000"
}

// Error names the vertex, the field and what was wrong.
func (e *VertexError) Error() string {
	return describe(fmt.Sprintf("vertex %q (vertices[%d])", e.Vertex, e.Index), e.Field, e.Err, e.Detail)
}

// Unwrap returns the sentinel or cause.
func (e *VertexError) Unwrap() error { return e.Err }

// EdgeError is an error about one job edge.
type EdgeError struct {
	Index          int // position in the job's edge list
	Source, Target string
	Field          string // the offending field, e.g. "shipStrategy"
	Err            error
	Detail         string
}

// Error names the edge, the field and what was wrong.
func (e *EdgeError) Error() string {
	subject := fmt.Sprintf("edge %s -> %s (edges[%d])", quoteOrBlank(e.Source), quoteOrBlank(e.Target), e.Index)
	return describe(subject, e.Field, e.Err, e.Detail)
}

// Unwrap returns the sentinel or cause.
func (e *EdgeError) Unwrap() error { return e.Err }

func quoteOrBlank(s string) string {
	if s == "" {
		return "<missing>"
	}
	return fmt.Sprintf("%q", s)
}

// CycleError reports a directed cycle; Vertices are the ids of one
// strongly connected component of the job graph, in the order of a cycle
// where one could be traced. A single vertex is a self-loop: an edge from
// the vertex to itself.
type CycleError struct {
	Vertices []string
}

// Error names the cycle by its edges: "job graph is cyclic: edge a -> a is
// a self-loop", or "job graph is cyclic: vertices a, b, c form the cycle
// a -> b -> c -> a".
func (e *CycleError) Error() string {
	switch len(e.Vertices) {
	case 0:
		return ErrCycle.Error()
	case 1:
		return fmt.Sprintf("%v: edge %s -> %s is a self-loop", ErrCycle, e.Vertices[0], e.Vertices[0])
	}
	return fmt.Sprintf("%v: vertices %s form the cycle %s -> %s", ErrCycle, strings.Join(e.Vertices, ", "),
		strings.Join(e.Vertices, " -> "), e.Vertices[0])
}

// Unwrap returns ErrCycle.
func (e *CycleError) Unwrap() error { return ErrCycle }

// DecodeError is an error in the job file that is not about one vertex or
// edge: bad JSON, an unknown or missing field, a bad top-level value.
type DecodeError struct {
	Field  string // JSON path of the field, e.g. "vertices[2].paralelism"; "" for the whole file
	Err    error  // ErrMalformedJSON, ErrUnknownField, ErrMissingField, ErrInvalidField, ErrInvalidQueueName or a cause
	Detail string
}

// Error names the field and the problem.
func (e *DecodeError) Error() string { return describe("job file", e.Field, e.Err, e.Detail) }

// Unwrap returns the sentinel or cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// describe renders `subject field "f": cause: detail`, leaving out an
// empty field or detail.
func describe(subject, field string, cause error, detail string) string {
	var b strings.Builder
	b.WriteString(subject)
	if field != "" {
		fmt.Fprintf(&b, " field %q", field)
	}
	fmt.Fprintf(&b, ": %v", cause)
	if detail != "" {
		b.WriteString(": " + detail)
	}
	return b.String()
}
