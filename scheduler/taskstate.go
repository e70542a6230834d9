package scheduler

import "github.com/regionsched/regionsched/internal/strategy"

// What the scheduler's API shows of the region scheduling strategy inside
// it: the state of a task, and the errors of a report the strategy
// refuses. They are the strategy's own types and values under the
// scheduler's names, so errors.Is and errors.As match them.

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
// of the region brings the task back to TaskCreated. Its String method
// returns the lower-case name, e.g. "running".
type TaskState = strategy.ExecutionState

// The states of a task.
const (
	TaskCreated   = strategy.TaskCreated   // not scheduled yet, or its region restarted
	TaskScheduled = strategy.TaskScheduled // its region waits for slots
	TaskDeploying = strategy.TaskDeploying // deployed in its slot (Ready.Deploy)
	TaskRunning   = strategy.TaskRunning   // reported running
	TaskFinished  = strategy.TaskFinished  // reported finished; its blocking partitions are complete
	TaskFailed    = strategy.TaskFailed    // reported failed, or its slot was lost
	TaskCanceled  = strategy.TaskCanceled  // canceled (Ready.Cancel)
)

// TaskStatus is what the scheduler knows of one task (Scheduler.Task): a
// struct of two fields, State (a TaskState) and Attempt (the attempt of the
// task's region).
type TaskStatus = strategy.VertexStatus

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
)

type (
	// UnknownVertexError names, in its field Vertex (a TaskID), a task id
	// that is not a task of the job. It unwraps to ErrUnknownVertex.
	UnknownVertexError = strategy.UnknownVertexError
	// UnknownPartitionError names, in its field Partition (a PartitionID),
	// a result partition id that is not one of the job. It unwraps to
	// ErrUnknownPartition.
	UnknownPartitionError = strategy.UnknownPartitionError
	// TransitionError is a report the task's state does not allow. Its
	// fields: Vertex (the TaskID), Name ("A#0"), From (the task's state)
	// and To (the state reported), both TaskStates. It unwraps to
	// ErrInvalidTransition.
	TransitionError = strategy.TransitionError
	// AttemptError is a report of an attempt that has not begun. Its
	// fields: Vertex (the TaskID), Name ("A#0"), State (the TaskState
	// reported), Attempt (the attempt reported) and Current (the region's
	// current attempt). It unwraps to ErrUnknownAttempt.
	AttemptError = strategy.AttemptError
)
