package runfile

import (
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/topology"
)

// Job is one job of a run of several jobs on one cluster.
type Job struct {
	// Name is unique among the run's jobs; traces and results use it.
	Name string
	// Job is the job graph; its Submission gives its arrival, queue,
	// user, priority and driver.
	Job *topology.JobGraph
}

// JobEvent is a line of the events file: at At, By asks to set Job's
// priority (admission.ActionSetPriority) or to kill it
// (admission.ActionKill).
type JobEvent struct {
	At       time.Duration
	Action   admission.Action
	Job      string
	Priority int
	By       string
}
