package simulator_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// An event naming no job of the run, or before time 0, is a bad
// configuration (ErrBadEvent), never a panic nor a run.
func TestRunJobsRefusesBadEvents(t *testing.T) {
	jobs := []runfile.Job{bigRegionJob(t, "a", 1, topology.DefaultSubmission()), bigRegionJob(t, "b", 1, topology.DefaultSubmission())}
	admin := map[string]admission.Role{"root": admission.RoleAdmin}
	for name, ev := range map[string]runfile.JobEvent{
		"kill of no job":         {At: time.Second, Action: admission.ActionKill, Job: "c", By: "root"},
		"set-priority of no job": {At: time.Second, Action: admission.ActionSetPriority, Job: "", Priority: 10, By: "root"},
		"negative time":          {At: -time.Millisecond, Action: admission.ActionKill, Job: "a", By: "root"},
	} {
		t.Run(name, func(t *testing.T) {
			var (
				res *simulator.Result
				err error
			)
			require.NotPanics(t, func() {
				res, _, err = simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Cluster: []resource.Count{{N: 2}},
					Events: []runfile.JobEvent{ev}, Users: admin})
			})
			require.ErrorIs(t, err, simulator.ErrBadEvent)
			assert.Nil(t, res)
			assert.Contains(t, err.Error(), "events[0]")
		})
	}
}
