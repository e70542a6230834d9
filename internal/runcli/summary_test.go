package runcli_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/runcli"
	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// restartingBackend runs one task of each job that fails at 100 ms and
// runs again to 300 ms (a run of one job names no job in its events), and
// reports the failovers as recorded when record says so; events are the
// outcomes of the events file it reports.
func restartingBackend(record bool, events []summary.EventOutcome) runcli.Backend {
	return runcli.Backend{Name: "Fake", MaxPriority: 10000, Run: func(_ context.Context, in runcli.Input) (runcli.Result, error) {
		res := runcli.Result{Slots: len(in.Jobs), Events: events, RestartsRecorded: record}
		for i, j := range in.Jobs {
			job := j.Name
			if len(in.Jobs) == 1 {
				job = ""
			}
			for _, e := range []runfile.Event{
				{At: 0, Kind: runfile.Deploy, Job: job, Task: "A#0", Slot: i},
				{At: 100 * time.Millisecond, Kind: runfile.Fail, Job: job, Task: "A#0", Slot: i},
				{At: 100 * time.Millisecond, Kind: runfile.Release, Job: job, Task: "A#0", Slot: i},
				{At: 100 * time.Millisecond, Kind: runfile.Request, Job: job, Task: "A#0", Slot: runfile.NoSlot, Attempt: 1},
				{At: 150 * time.Millisecond, Kind: runfile.Deploy, Job: job, Task: "A#0", Slot: i, Attempt: 1},
				{At: 300 * time.Millisecond, Kind: runfile.Finish, Job: job, Task: "A#0", Slot: i, Attempt: 1},
				{At: 300 * time.Millisecond, Kind: runfile.Release, Job: job, Task: "A#0", Slot: i, Attempt: 1},
			} {
				in.Trace(e)
			}
			res.Jobs = append(res.Jobs, runcli.Outcome{Name: j.Name, End: 300 * time.Millisecond})
			// The failover restarted the task's region and, say, two
			// regions downstream not deployed yet: the trace cannot tell.
			res.Restarts = append(res.Restarts, summary.Restart{Job: job, At: 100 * time.Millisecond, Task: "A#0", Regions: []int{0, 1, 2}})
		}
		return res, nil
	}}
}

// A run of one job lists its failovers under the restarts line, as
// simulate does; the counts are the recorded failovers', not the trace's
// (which shows the failed task, not the regions restarted).
func TestRunSummaryRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "etl.json")
	writeFile(t, path, jobText)
	code, stdout, stderr := executeFiles(t, restartingBackend(true, nil), path)
	require.Equal(t, runcli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "\nrestarts:          1 (regions restarted: 3)\n  at 100 ms A#0 failed: restarted regions 0-2\nfinished:")

	code, stdout, stderr = executeFiles(t, restartingBackend(false, nil), path)
	require.Equal(t, runcli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "\nrestarts:          1 (regions restarted: 1)\nfinished:", "without records: the trace's fail events and attempts")

	// Several jobs: counted, not listed.
	other := filepath.Join(t.TempDir(), "adhoc.json")
	writeFile(t, other, strings.Replace(jobText, `"etl"`, `"adhoc"`, 1))
	code, stdout, stderr = executeFiles(t, restartingBackend(true, nil), path, other)
	require.Equal(t, runcli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "\nrestarts:          2 (regions restarted: 6)\nfinished:")
}

// The outcomes of the events file are listed under the job lines, as
// simulate lists them.
func TestRunSummaryEvents(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "etl.json")
	writeFile(t, path, jobText)
	events := filepath.Join(dir, "events.jsonl")
	writeFile(t, events, `{"t": 50, "event": "set-priority", "job": "etl", "priority": 9, "by": "alice"}`+"\n"+
		`{"t": 60, "event": "kill", "job": "etl", "by": "bob"}`+"\n")
	outcomes := []summary.EventOutcome{
		{At: 50 * time.Millisecond, By: "alice", Action: admission.ActionSetPriority, Job: "etl", Priority: 9, Old: 5000, Applied: true},
		{At: 60 * time.Millisecond, By: "bob", Action: admission.ActionKill, Job: "etl", Reason: "role user may change only their own jobs"},
	}
	code, stdout, stderr := executeFiles(t, restartingBackend(true, outcomes), "--events", events, path)
	require.Equal(t, runcli.ExitOK, code, stderr)
	assert.Contains(t, stdout, `job "etl": submitted 0 ms, first deploy 0 ms, finished 300 ms, wait 0 ms, makespan 300 ms; finished
event 50 ms: alice set-priority etl 5000 -> 9: applied
event 60 ms: bob kill etl: refused: role user may change only their own jobs
makespan:`)
}

// A backend with an admission of its own (Queues) refuses a job in a
// queue with children as bad input naming the job file and its field,
// before it runs anything.
func TestRunRefusesJobInParentQueue(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "j.json")
	writeFile(t, j, `{"name": "j", "queue": "root.p", "vertices": [{"id": "v", "parallelism": 1}]}`)
	ran := false
	b := runcli.Backend{Name: "Fake", Queues: func() []admission.QueueConfig { return []admission.QueueConfig{{Name: "root.p.x"}} },
		Run: func(context.Context, runcli.Input) (runcli.Result, error) {
			ran = true
			return runcli.Result{}, errors.New("ran")
		}}
	code, _, stderr := executeFiles(t, b, j)
	assert.Equal(t, runcli.ExitBadInput, code)
	assert.False(t, ran)
	assert.Equal(t, "x run: "+j+`: job file field "queue": queue root.p has the child queue root.p.x and may not hold job "j": `+
		"jobs run in queues without children (name one, e.g. root.p.x)\n", stderr)
	var qe *runcli.JobQueueError
	err := runcli.CheckJobQueues([]string{j}, []runfile.Job{{Name: "j", Job: mustJob(t, j)}}, []admission.QueueConfig{{Name: "root.p.x"}})
	require.ErrorAs(t, err, &qe)
	assert.ErrorIs(t, err, admission.ErrParentQueue)
}

// A run that deadlocks names the jobs rejected before the deadlock too,
// as simulate's verdict does: a rejected job is named whatever else went
// wrong in the run.
func TestRunSummaryDeadlockNamesRejectedJobs(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"big", "d1", "d2"} {
		p := filepath.Join(dir, name+".json")
		writeFile(t, p, strings.Replace(jobText, `"etl"`, `"`+name+`"`, 1))
		paths = append(paths, p)
	}
	deadlock := errors.New("deadlock: at 0 ms jobs d1, d2 never finish: d1:A#0, d2:A#0 wait for a slot")
	b := runcli.Backend{Name: "Fake", Run: func(_ context.Context, in runcli.Input) (runcli.Result, error) {
		rejected := &admission.RejectedError{Job: "big", Queue: "root.a", Reason: "its gang of 3 slots can never be reserved"}
		return runcli.Result{Slots: 2, Deadlock: deadlock, Jobs: []runcli.Outcome{
			{Name: "big", Err: rejected}, {Name: "d1", Err: deadlock}, {Name: "d2", Err: deadlock}}}, nil
	}}
	code, stdout, stderr := executeFiles(t, b, paths...)
	require.Equal(t, runcli.ExitNegative, code, stderr)
	assert.True(t, strings.HasSuffix(stdout, "\n"+deadlock.Error()+`; failed: 1 of 3 jobs: big rejected: admission: job rejected: job "big" in queue root.a: `+
		"its gang of 3 slots can never be reserved\n"), stdout)
}

// writeFile writes a file of the test.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

// mustJob reads a job file.
func mustJob(t *testing.T, path string) *topology.JobGraph {
	t.Helper()
	g, err := runcli.LoadJob(path, nil)
	require.NoError(t, err)
	return g
}
