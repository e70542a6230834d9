package strategy

import (
	"errors"
	"fmt"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// Sentinel errors, matched with errors.Is. Except for ErrNotStarted and
// ErrAlreadyStarted they arrive wrapped in a struct error that names the
// vertex, region or partition. A call that returns an error has changed
// nothing.
var (
	// ErrNotStarted means an event arrived before Start.
	ErrNotStarted = errors.New("strategy: not started")
	// ErrAlreadyStarted means Start was called twice.
	ErrAlreadyStarted = errors.New("strategy: already started")
	// ErrUnknownVertex means an execution vertex id is outside the topology.
	ErrUnknownVertex = errors.New("strategy: unknown execution vertex")
	// ErrUnknownRegion means a region id is outside the region set.
	ErrUnknownRegion = errors.New("strategy: unknown region")
	// ErrUnknownPartition means a result partition id is outside the topology.
	ErrUnknownPartition = errors.New("strategy: unknown result partition")
	// ErrInvalidTransition means a state change that the current state of
	// the vertex does not allow, e.g. finishing a vertex never deployed.
	ErrInvalidTransition = errors.New("strategy: invalid execution state transition")
	// ErrStaleAttempt means an event of an attempt that a Restart has
	// superseded, e.g. a late "finished" of a canceled task. The event is
	// ignored; a runtime may treat this error as benign.
	ErrStaleAttempt = errors.New("strategy: event of a superseded attempt")
	// ErrUnknownAttempt means an event of an attempt that has not begun.
	ErrUnknownAttempt = errors.New("strategy: event of an attempt that has not begun")
	// ErrEarlyFinish means a finish reported for a task that reads a
	// hybrid result whose producer has not finished (see
	// EarlyFinishError).
	ErrEarlyFinish = errors.New("strategy: finish before a hybrid producer finished")
)

// UnknownVertexError names an execution vertex id that does not exist.
type UnknownVertexError struct {
	Vertex topology.ExecutionVertexID
}

// Error names the vertex id.
func (e *UnknownVertexError) Error() string {
	return fmt.Sprintf("%v: id %d", ErrUnknownVertex, e.Vertex)
}

// Unwrap returns ErrUnknownVertex.
func (e *UnknownVertexError) Unwrap() error { return ErrUnknownVertex }

// UnknownRegionError names a region id that does not exist.
type UnknownRegionError struct {
	Region region.ID
}

// Error names the region id.
func (e *UnknownRegionError) Error() string {
	return fmt.Sprintf("%v: id %d", ErrUnknownRegion, e.Region)
}

// Unwrap returns ErrUnknownRegion.
func (e *UnknownRegionError) Unwrap() error { return ErrUnknownRegion }

// UnknownPartitionError names a result partition id that does not exist.
type UnknownPartitionError struct {
	Partition topology.ResultPartitionID
}

// Error names the partition id.
func (e *UnknownPartitionError) Error() string {
	return fmt.Sprintf("%v: id %d", ErrUnknownPartition, e.Partition)
}

// Unwrap returns ErrUnknownPartition.
func (e *UnknownPartitionError) Unwrap() error { return ErrUnknownPartition }

// TransitionError is a state change the vertex's current state does not
// allow (see ExecutionState for the allowed transitions).
type TransitionError struct {
	Vertex   topology.ExecutionVertexID
	Name     string // "A#0"
	From, To ExecutionState
}

// Error names the vertex and both states.
func (e *TransitionError) Error() string {
	return fmt.Sprintf("%v: %s (id %d) from %v to %v", ErrInvalidTransition, e.Name, e.Vertex, e.From, e.To)
}

// Unwrap returns ErrInvalidTransition.
func (e *TransitionError) Unwrap() error { return ErrInvalidTransition }

// AttemptError is an event whose attempt is not the current attempt of
// the vertex's region. It unwraps to ErrStaleAttempt when the attempt is
// an earlier one, to ErrUnknownAttempt otherwise (newer, or negative).
type AttemptError struct {
	Vertex  topology.ExecutionVertexID
	Name    string // "A#0"
	State   ExecutionState
	Attempt Attempt // the attempt the event carried
	Current Attempt // the region's current attempt
}

// Error names the vertex, the reported state and both attempts.
func (e *AttemptError) Error() string {
	return fmt.Sprintf("%v: %s (id %d) %v in attempt %d, current attempt %d",
		e.Unwrap(), e.Name, e.Vertex, e.State, e.Attempt, e.Current)
}

// Unwrap returns ErrStaleAttempt or ErrUnknownAttempt.
func (e *AttemptError) Unwrap() error {
	if e.Attempt >= 0 && e.Attempt < e.Current {
		return ErrStaleAttempt
	}
	return ErrUnknownAttempt
}
