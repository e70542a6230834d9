package scheduler

import (
	"fmt"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
)

// What the scheduler's API shows of the region scheduling strategy inside
// it: the state of a task, and the errors of a report the strategy
// refuses. They are the scheduler's own types; the sentinels are the
// strategy's values, so errors.Is matches them, and errors.As finds the
// struct errors below in what the scheduler returns.

// TaskState is the state of a task in the current attempt of its region.
// The scheduler sets TaskCreated, TaskScheduled (its region asked for
// slots) and TaskDeploying (the region's slots came: the task is in
// Ready.Deploy); the runtime reports TaskRunning, TaskFinished and
// TaskFailed, and the scheduler sets TaskCanceled (Ready.Cancel). A report
// is accepted from these states:
//
//	TaskRunning    from TaskDeploying
//	TaskFinished   from TaskDeploying, TaskRunning
//	TaskFailed     from TaskDeploying, TaskRunning
//
// TaskFinished, TaskFailed and TaskCanceled end the attempt: only a restart
// of the region brings the task back to TaskCreated.
type TaskState uint8

// The states of a task.
const (
	TaskCreated   TaskState = iota // not scheduled yet, or its region restarted
	TaskScheduled                  // its region waits for slots
	TaskDeploying                  // deployed in its slot (Ready.Deploy)
	TaskRunning                    // reported running
	TaskFinished                   // reported finished; its blocking partitions are complete
	TaskFailed                     // reported failed, or its slot was lost
	TaskCanceled                   // canceled (Ready.Cancel)
)

// String returns the lower-case name of the state, e.g. "running".
func (s TaskState) String() string { return strategy.ExecutionState(s).String() }

// taskState is the strategy's state st under the scheduler's name (the
// constants are in the same order, see TestTaskStatesMatchTheStrategys).
func taskState(st strategy.ExecutionState) TaskState { return TaskState(st) }

// TaskStatus is what the scheduler knows of one task (Scheduler.Task).
type TaskStatus struct {
	State TaskState
	// Attempt is the attempt of the task's region.
	Attempt Attempt
}

// The errors of a report about a task that the scheduler refuses, which
// arrive wrapped in an *OpError, each in a struct error that names the
// task or partition. A report of an attempt a restart replaced is not an
// error: it is ignored.
var (
	// ErrUnknownVertex means a task id that is not a task of the job
	// (an *UnknownVertexError).
	ErrUnknownVertex = strategy.ErrUnknownVertex
	// ErrUnknownPartition means a lost partition that is not a result
	// partition of the job (an *UnknownPartitionError).
	ErrUnknownPartition = strategy.ErrUnknownPartition
	// ErrInvalidTransition means a report the task's state does not allow,
	// e.g. a task never deployed that finishes (a *TransitionError).
	ErrInvalidTransition = strategy.ErrInvalidTransition
	// ErrUnknownAttempt means a report of an attempt that has not begun
	// (an *AttemptError).
	ErrUnknownAttempt = strategy.ErrUnknownAttempt
	// ErrEarlyFinish means a finish reported for a task that reads a
	// hybrid result whose producer has not finished (an
	// *EarlyFinishError).
	ErrEarlyFinish = strategy.ErrEarlyFinish
)

// UnknownVertexError names a task id that is not a task of the job.
type UnknownVertexError struct {
	Vertex TaskID
}

// Error names the id.
func (e *UnknownVertexError) Error() string {
	return fmt.Sprintf("%v: id %d", ErrUnknownVertex, e.Vertex)
}

// Unwrap returns ErrUnknownVertex.
func (e *UnknownVertexError) Unwrap() error { return ErrUnknownVertex }

// UnknownPartitionError names a result partition id that is not one of
// the job.
type UnknownPartitionError struct {
	Partition PartitionID
}

// Error names the id.
func (e *UnknownPartitionError) Error() string {
	return fmt.Sprintf("%v: id %d", ErrUnknownPartition, e.Partition)
}

// Unwrap returns ErrUnknownPartition.
func (e *UnknownPartitionError) Unwrap() error { return ErrUnknownPartition }

// TransitionError is a report the task's state does not allow (see
// TaskState).
type TransitionError struct {
	Vertex   TaskID
	Name     string    // "A#0"
	From, To TaskState // the task's state, the state reported
}

// Error names the task and both states.
func (e *TransitionError) Error() string {
	return fmt.Sprintf("%v: %s (id %d) from %v to %v", ErrInvalidTransition, e.Name, e.Vertex, e.From, e.To)
}

// Unwrap returns ErrInvalidTransition.
func (e *TransitionError) Unwrap() error { return ErrInvalidTransition }

// AttemptError is a report of an attempt that has not begun.
type AttemptError struct {
	Vertex  TaskID
	Name    string    // "A#0"
	State   TaskState // the state reported
	Attempt Attempt   // the attempt reported
	Current Attempt   // the region's current attempt
}

// Error names the task, the state reported and both attempts.
func (e *AttemptError) Error() string {
	return fmt.Sprintf("%v: %s (id %d) %v in attempt %d, current attempt %d",
		e.Unwrap(), e.Name, e.Vertex, e.State, e.Attempt, e.Current)
}

// Unwrap returns ErrUnknownAttempt (an attempt before the current one is
// no error: its report is ignored).
func (e *AttemptError) Unwrap() error {
	if e.Attempt >= 0 && e.Attempt < e.Current {
		return strategy.ErrStaleAttempt
	}
	return ErrUnknownAttempt
}

// EarlyFinishError refuses the finish of a task that reads a hybrid
// result whose producer has not finished: the task cannot have read all
// of its input. Nothing changed; the runtime reports the producer's
// finish first, then this one again.
type EarlyFinishError struct {
	// Vertex is the task whose finish was refused, Name its name ("B#0").
	Vertex TaskID
	Name   string
	// Producer is a producer of a hybrid result Vertex reads that has
	// not finished, ProducerName its name ("A#1").
	Producer     TaskID
	ProducerName string
	// Exchange is the partition type of the edge between them
	// (exchange.HybridFull or exchange.HybridSelective).
	Exchange exchange.ResultPartitionType
}

// Error names the task, the producer and the exchange.
func (e *EarlyFinishError) Error() string {
	return fmt.Sprintf("%v: %s (id %d) reads %s (id %d) through a %s exchange, and %s has not finished; report its finish first",
		ErrEarlyFinish, e.Name, e.Vertex, e.ProducerName, e.Producer, e.Exchange, e.ProducerName)
}

// Unwrap returns ErrEarlyFinish.
func (e *EarlyFinishError) Unwrap() error { return ErrEarlyFinish }

// ownError returns a strategy error as the scheduler's type of it (the
// others as they are).
func ownError(err error) error {
	switch e := err.(type) {
	case *strategy.UnknownVertexError:
		return &UnknownVertexError{Vertex: e.Vertex}
	case *strategy.UnknownPartitionError:
		return &UnknownPartitionError{Partition: e.Partition}
	case *strategy.TransitionError:
		return &TransitionError{Vertex: e.Vertex, Name: e.Name, From: taskState(e.From), To: taskState(e.To)}
	case *strategy.AttemptError:
		return &AttemptError{Vertex: e.Vertex, Name: e.Name, State: taskState(e.State), Attempt: Attempt(e.Attempt), Current: Attempt(e.Current)}
	case *strategy.EarlyFinishError:
		return &EarlyFinishError{Vertex: e.Vertex, Name: e.Name, Producer: e.Producer, ProducerName: e.ProducerName, Exchange: e.Exchange}
	}
	return err
}
