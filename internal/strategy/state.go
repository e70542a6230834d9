package strategy

import "strconv"

// ExecutionState is the state of one execution vertex (subtask) in its
// current attempt. The strategy sets TaskCreated and TaskScheduled; the runtime
// reports the others through UpdateState. Allowed reports, by target state:
//
//	TaskDeploying  from TaskScheduled
//	TaskRunning    from TaskScheduled, TaskDeploying
//	TaskFinished   from TaskScheduled, TaskDeploying, TaskRunning
//	TaskFailed     from TaskScheduled, TaskDeploying, TaskRunning
//	TaskCanceled   from TaskCreated, TaskScheduled, TaskDeploying, TaskRunning
//
// TaskFinished, TaskFailed and TaskCanceled are terminal for the attempt: only a
// Restart of the region brings the vertex back to TaskCreated. TaskScheduled
// means the strategy has handed the vertex's region out for deployment,
// so a vertex still TaskCreated has never been deployed and cannot finish.
type ExecutionState uint8

const (
	// TaskCreated is the initial state, and the state after a Restart.
	TaskCreated ExecutionState = iota
	// TaskScheduled means the vertex's region was returned in Decisions.Deploy.
	TaskScheduled
	// TaskDeploying means the runtime is deploying the task.
	TaskDeploying
	// TaskRunning means the task runs.
	TaskRunning
	// TaskFinished means the task finished; its blocking partitions are complete.
	TaskFinished
	// TaskFailed means the task failed; the runtime asks RegionsToRestart.
	TaskFailed
	// TaskCanceled means the runtime canceled the task.
	TaskCanceled
)

var executionStateNames = [...]string{"created", "scheduled", "deploying", "running", "finished", "failed", "canceled"}

// String returns the lower-case name, e.g. "running".
func (s ExecutionState) String() string {
	if int(s) < len(executionStateNames) {
		return executionStateNames[s]
	}
	return "ExecutionState(" + strconv.Itoa(int(s)) + ")"
}

// allowedFrom[to] is the set of states (a bit per state) from which a
// report of `to` is accepted. TaskCreated and TaskScheduled cannot be reported.
var allowedFrom = [...]uint8{
	TaskCreated:   0,
	TaskScheduled: 0,
	TaskDeploying: 1 << TaskScheduled,
	TaskRunning:   1<<TaskScheduled | 1<<TaskDeploying,
	TaskFinished:  1<<TaskScheduled | 1<<TaskDeploying | 1<<TaskRunning,
	TaskFailed:    1<<TaskScheduled | 1<<TaskDeploying | 1<<TaskRunning,
	TaskCanceled:  1<<TaskCreated | 1<<TaskScheduled | 1<<TaskDeploying | 1<<TaskRunning,
}

// canReport reports whether a vertex in state from accepts a report of
// to: allowedFrom's rule, without TaskScheduled as a state TaskRunning,
// TaskFinished and TaskFailed come from if the strategy was made
// WithDeployedReports.
func (s *Strategy) canReport(from, to ExecutionState) bool {
	if int(to) >= len(allowedFrom) || allowedFrom[to]&(1<<from) == 0 {
		return false
	}
	return !s.deployedReports || from != TaskScheduled || to == TaskDeploying || to == TaskCanceled
}

// RegionState is the scheduling state of a region in its current attempt.
type RegionState uint8

const (
	// RegionWaiting means the region waits for its blocking inputs (or for
	// Start); it is the state after a Restart.
	RegionWaiting RegionState = iota
	// RegionScheduled means the region was returned in Decisions.Deploy.
	RegionScheduled
	// RegionFinished means every member of the region finished.
	RegionFinished
)

var regionStateNames = [...]string{"waiting", "scheduled", "finished"}

// String returns the lower-case name, e.g. "scheduled".
func (s RegionState) String() string {
	if int(s) < len(regionStateNames) {
		return regionStateNames[s]
	}
	return "RegionState(" + strconv.Itoa(int(s)) + ")"
}

// Attempt numbers the runs of a region: 0 for the first, incremented by
// every Restart of the region. All members of a region share its attempt,
// and every state report carries it, so reports of a superseded run are
// recognized and ignored.
type Attempt int32

// VertexStatus is what the strategy knows about one execution vertex.
type VertexStatus struct {
	State   ExecutionState
	Attempt Attempt // the attempt of the vertex's region
}

// RegionStatus is what the strategy knows about one region.
type RegionStatus struct {
	State   RegionState
	Attempt Attempt
	// UnsatisfiedInputs counts the consumed blocking partition groups
	// with a partition produced outside the region that is not finished,
	// and the consumed hybrid groups not consumable yet.
	UnsatisfiedInputs int
	// UnfinishedMembers counts the members not finished in this attempt.
	UnfinishedMembers int
}

// partitionState is the life of one blocking result partition.
type partitionState uint8

const (
	partitionUnfinished partitionState = iota
	partitionFinished
	partitionReleased // finished, then reported in Decisions.Release
)
