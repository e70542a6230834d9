package strategy

import "strconv"

// ExecutionState is the state of one execution vertex (subtask) in its
// current attempt. The strategy sets Created and Scheduled; the runtime
// reports the others through UpdateState. Allowed reports, by target state:
//
//	Deploying  from Scheduled
//	Running    from Scheduled, Deploying
//	Finished   from Scheduled, Deploying, Running
//	Failed     from Scheduled, Deploying, Running
//	Canceled   from Created, Scheduled, Deploying, Running
//
// Finished, Failed and Canceled are terminal for the attempt: only a
// Restart of the region brings the vertex back to Created. Scheduled
// means the strategy has handed the vertex's region out for deployment,
// so a vertex still Created has never been deployed and cannot finish.
type ExecutionState uint8

const (
	// Created is the initial state, and the state after a Restart.
	Created ExecutionState = iota
	// Scheduled means the vertex's region was returned in Decisions.Deploy.
	Scheduled
	// Deploying means the runtime is deploying the task.
	Deploying
	// Running means the task runs.
	Running
	// Finished means the task finished; its blocking partitions are complete.
	Finished
	// Failed means the task failed; the runtime asks RegionsToRestart.
	Failed
	// Canceled means the runtime canceled the task.
	Canceled
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
// report of `to` is accepted. Created and Scheduled cannot be reported.
var allowedFrom = [...]uint8{
	Created:   0,
	Scheduled: 0,
	Deploying: 1 << Scheduled,
	Running:   1<<Scheduled | 1<<Deploying,
	Finished:  1<<Scheduled | 1<<Deploying | 1<<Running,
	Failed:    1<<Scheduled | 1<<Deploying | 1<<Running,
	Canceled:  1<<Created | 1<<Scheduled | 1<<Deploying | 1<<Running,
}

// canReport reports whether a vertex in state from accepts a report of to.
func canReport(from, to ExecutionState) bool {
	return int(to) < len(allowedFrom) && allowedFrom[to]&(1<<from) != 0
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
	// with a partition produced outside the region that is not finished.
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
