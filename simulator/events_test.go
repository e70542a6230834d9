package simulator_test

import (
	"fmt"
	"math"
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

// An event applies last in its instant: one at the instant its job's last
// task finishes finds the job completed and is refused (its task finishes,
// nothing is cancelled); an event for a killed job is refused as for a
// killed one; a killed job's driver is cancelled, not finished.
func TestEventsAtTheEndOfTheirJob(t *testing.T) {
	one := func(name string, d time.Duration, driver bool) runfile.Job {
		sub := topology.DefaultSubmission()
		if driver {
			sub.Driver = &topology.Driver{Startup: 100 * time.Millisecond}
		}
		g, err := topology.NewBuilder(name).AddVertex(topology.JobVertex{ID: "v", Parallelism: 1, Duration: d}).SetSubmission(sub).Build()
		require.NoError(t, err)
		return runfile.Job{Name: name, Job: g}
	}
	var trace []runfile.Event
	res, jobs, err := simulator.RunJobs(simulator.JobsConfig{
		Jobs:    []runfile.Job{one("a", time.Second, false), one("b", 3*time.Second, false), one("d", 5*time.Second, true)},
		Cluster: []resource.Count{{N: 4}},
		Users:   map[string]admission.Role{"adm": admission.RoleAdmin},
		Events: []runfile.JobEvent{
			{At: time.Second, Action: admission.ActionKill, Job: "a", By: "adm"},
			{At: 3 * time.Second, Action: admission.ActionSetPriority, Job: "b", Priority: 100, By: "adm"},
			{At: 2 * time.Second, Action: admission.ActionKill, Job: "d", By: "adm"},
			{At: 2500 * time.Millisecond, Action: admission.ActionSetPriority, Job: "d", Priority: 100, By: "adm"},
		},
		OnEvent: func(e runfile.Event) { trace = append(trace, e) },
	})
	require.NoError(t, err)
	require.Len(t, res.JobEvents, 4)
	assert.Equal(t, "event 1000 ms: adm kill a: refused: the job is completed", res.JobEvents[0].String())
	assert.Equal(t, "event 2000 ms: adm kill d: applied", res.JobEvents[1].String())
	assert.Equal(t, "event 2500 ms: adm set-priority d -> 100: refused: the job is killed", res.JobEvents[2].String())
	assert.Equal(t, "event 3000 ms: adm set-priority b -> 100: refused: the job is completed", res.JobEvents[3].String())
	assert.Equal(t, runfile.Finished, jobs[0].Verdict)
	assert.Equal(t, runfile.Finished, jobs[1].Verdict)
	assert.Equal(t, runfile.Killed, jobs[2].Verdict)
	var ends []string
	for _, e := range trace {
		if (e.Kind == runfile.Finish || e.Kind == runfile.Cancel) && (e.Job == "a" || e.Task == runfile.DriverTask) {
			ends = append(ends, fmt.Sprintf("%v %s %s %s", e.At, e.Kind, e.Job, e.Task))
		}
	}
	assert.Equal(t, []string{"1s finish a v#0", "2s cancel d driver"}, ends)
}

// A multi-job run whose arrivals, events and work add up to more virtual
// time than a run may last is a configuration error (ErrTooLong), not an
// overflow that silently gives wrong times; one that fits runs.
func TestRunJobsTooLongForVirtualTime(t *testing.T) {
	job := func(name string, at, d time.Duration) runfile.Job {
		sub := topology.DefaultSubmission()
		sub.SubmitAt = at
		g, err := topology.NewBuilder(name).AddVertex(topology.JobVertex{ID: "v", Parallelism: 2, Duration: d}).SetSubmission(sub).Build()
		require.NoError(t, err)
		return runfile.Job{Name: name, Job: g}
	}
	const year = 365 * 24 * time.Hour
	run := func(jobs []runfile.Job, events ...runfile.JobEvent) error {
		_, _, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Cluster: []resource.Count{{N: 2}}, Events: events,
			Users: map[string]admission.Role{"adm": admission.RoleAdmin}})
		return err
	}
	for name, tc := range map[string]struct {
		jobs   []runfile.Job
		events []runfile.JobEvent
		want   string
	}{
		"arrival":      {jobs: []runfile.Job{job("a", 0, time.Second), job("late", 100*year, time.Second)}, want: `job "late" arrives at`},
		"work":         {jobs: []runfile.Job{job("a", 0, 10*year), job("b", 0, 10*year)}, want: `vertex v of job "b": 2 subtasks of`},
		"arrival+work": {jobs: []runfile.Job{job("a", 60*year, 4*year)}, want: `vertex v of job "a"`},
	} {
		t.Run(name, func(t *testing.T) {
			err := run(tc.jobs, tc.events...)
			require.ErrorIs(t, err, simulator.ErrTooLong)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	require.NoError(t, run([]runfile.Job{job("a", 60*year, time.Second), job("b", 0, year/2)}, runfile.JobEvent{At: 70 * year, Action: admission.ActionKill, Job: "a", By: "adm"}))
	// An event may come as late as virtual time holds; one that sets work
	// going again there (a kill ending the deadlock of two drivers) fails
	// the run rather than overflow.
	end := time.Duration(math.MaxInt64).Truncate(time.Millisecond)
	require.NoError(t, run([]runfile.Job{job("a", 0, time.Second)}, runfile.JobEvent{At: end, Action: admission.ActionKill, Job: "a", By: "adm"}))
	driven := func(name string) runfile.Job {
		sub := topology.DefaultSubmission()
		sub.Driver = &topology.Driver{Startup: time.Millisecond}
		g, err := topology.NewBuilder(name).AddVertex(topology.JobVertex{ID: "v", Parallelism: 1, Duration: time.Second}).SetSubmission(sub).Build()
		require.NoError(t, err)
		return runfile.Job{Name: name, Job: g}
	}
	err := run([]runfile.Job{driven("d1"), driven("d2")}, runfile.JobEvent{At: end, Action: admission.ActionKill, Job: "d1", By: "adm"})
	require.ErrorIs(t, err, simulator.ErrTooLong)
	assert.Contains(t, err.Error(), "past the about 292 years")
}
