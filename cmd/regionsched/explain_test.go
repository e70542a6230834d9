package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// explainedRun writes a cluster with an admin and a user, two jobs and an
// events file that exercises every outcome: a change refused by the
// admission, a kill of a job that has not arrived yet, an applied change
// and a kill of a job that has ended (long after the last job's end).
func explainedRun(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		return path
	}
	cluster := write("cluster.json", `{"slots": [{"count": 2}], "queues": [{"name": "root.default", "policy": "priority"}],
 "users": [{"name": "alice", "role": "admin"}, {"name": "bob", "role": "user"}]}`)
	etl := write("etl.json", `{"name": "etl", "user": "alice", "priority": 3000, "vertices": [{"id": "a", "parallelism": 2, "durationMs": 5000}]}`)
	adhoc := write("adhoc.json", `{"name": "adhoc", "user": "bob", "submitAtMs": 1000, "vertices": [{"id": "a", "parallelism": 1, "durationMs": 2000}]}`)
	events := write("events.jsonl", `{"t": 100, "event": "set-priority", "job": "etl", "priority": 6000, "by": "bob"}
{"t": 500, "event": "kill", "job": "adhoc", "by": "bob"}
{"t": 4000, "event": "set-priority", "job": "etl", "priority": 9000, "by": "alice"}
{"t": 20000, "event": "kill", "job": "etl", "by": "alice"}
`)
	return []string{"simulate", "--cluster", cluster, "--events", events, etl, adhoc}
}

// A run with events says, without --trace or --audit, what became of each
// event: who asked what, when, and whether it was applied or why not.
// The verdict's time is when the last job ended, not the last event.
func TestSimulateJobsSummaryListsEvents(t *testing.T) {
	res := execCLI(t, "", explainedRun(t)...)
	require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Empty(t, res.stderr)
	assert.Equal(t, `2 jobs: mode all-blocking, policy region, queues root.default priority, any other queue fifo, 2 slots, seed 1
job "etl": submitted 0 ms, first deploy 0 ms, finished 5000 ms, wait 0 ms, makespan 5000 ms; finished
job "adhoc": submitted 1000 ms, first deploy 5000 ms, finished 7000 ms, wait 4000 ms, makespan 6000 ms; finished
event 100 ms: bob set-priority etl -> 6000: refused: role user may change only their own jobs; the job is alice's
event 500 ms: bob kill adhoc: refused: the job has not arrived yet (it arrives at 1000 ms)
event 4000 ms: alice set-priority etl 3000 -> 9000: applied
event 20000 ms: alice kill etl: refused: the job is completed
makespan:          20000 ms of virtual time, until the last event
slot utilization:  30.0% of slot time with work progressing
held waiting:      0.0% of slot time held by tasks that could not progress
regions scheduled: 3 deployments
restarts:          0 (regions restarted: 0)
finished: all 2 jobs finished at 7000 ms
`, res.stdout)
}

// The refusal of an event for a job that has not arrived says so in the
// trace and the audit too, not "no such job".
func TestEventBeforeArrivalIsExplainedEverywhere(t *testing.T) {
	args := explainedRun(t)
	dir := t.TempDir()
	trace, audit := filepath.Join(dir, "trace.jsonl"), filepath.Join(dir, "audit.jsonl")
	res := execCLI(t, "", append([]string{args[0], "--trace", trace, "--audit", audit}, args[1:]...)...)
	require.Equal(t, 0, res.code, res.stderr)
	const why = "the job has not arrived yet (it arrives at 1000 ms)"
	assert.Contains(t, fileText(t, trace), `{"t": 500, "event": "refused", "job": "adhoc", "by": "bob", "reason": "kill: `+why+`"}`)
	assert.Contains(t, fileText(t, audit), `{"t":500,"by":"bob","role":"user","action":"kill","job":"adhoc","accepted":false,"reason":"`+why+`"}`)
	assert.NotContains(t, fileText(t, audit), "no such job")
}

// Drivers hold slots on purpose: their time is reported on its own line,
// not as slots held by tasks that could not progress; and a job whose
// driver ran but no task has no first deploy and no wait.
func TestSimulateJobsDriversAreNotWaste(t *testing.T) {
	jobs := floodJobs(t)
	t.Run("stateaware", func(t *testing.T) {
		res := execCLI(t, "", append([]string{"simulate", "--slots", "4", "--queue-policy", "stateaware"}, jobs...)...)
		require.Equal(t, 0, res.code, res.stderr)
		assert.Equal(t, "25.0% of slot time held by job drivers", summaryLine(t, res.stdout, "drivers:"))
		assert.Equal(t, "0.0% of slot time held by tasks that could not progress", summaryLine(t, res.stdout, "held waiting:"))
		// spark-1's driver starts at 0 ms, its first task 1000 ms later
		assert.Equal(t, []string{"0 ms", "1000 ms", "4000 ms", "1000 ms", "4000 ms", "finished"}, jobLines(t, res.stdout)["spark-1"])
	})
	t.Run("fifo deadlock on drivers", func(t *testing.T) {
		res := execCLI(t, "", append([]string{"simulate", "--slots", "4", "--queue-policy", "fifo"}, jobs...)...)
		require.Equal(t, 1, res.code, res.stderr)
		// drivers from 0, 100, 200 and 300 ms to 1300 ms: 4600 of 5200 slot-ms
		assert.Equal(t, "88.5% of slot time held by job drivers", summaryLine(t, res.stdout, "drivers:"))
		assert.Equal(t, "0.0% of slot time held by tasks that could not progress", summaryLine(t, res.stdout, "held waiting:"))
		assert.Equal(t, []string{"100 ms", "-", "-", "-", "-", "never finished (deadlock; stuck starting)"}, jobLines(t, res.stdout)["spark-2"])
	})
	t.Run("no drivers, no line", func(t *testing.T) {
		res := execCLI(t, "", explainedRun(t)...)
		require.Equal(t, 0, res.code, res.stderr)
		assert.NotContains(t, res.stdout, "drivers:")
	})
}

// Counts agree with their nouns: one job, one slot.
func TestSimulateOneJobSummaryIsSingular(t *testing.T) {
	res := execCLI(t, "", "simulate", "--slots", "1", "--queue-policy", "fifo", flip119Path)
	require.Equal(t, 0, res.code, res.stderr)
	assert.True(t, strings.HasPrefix(res.stdout, "1 job: "), res.stdout)
	assert.Contains(t, res.stdout, ", 1 slot, ")
	assert.Equal(t, "finished: the only job finished at 12000 ms", lastLine(res.stdout))
	for _, plural := range []string{"1 jobs", "1 slots", "1 regions", "1 deployments", "1 restarts", "1 tasks"} {
		assert.NotContains(t, res.stdout, plural)
	}
}

// fileText returns the content of a file the run wrote.
func fileText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// A job of one subtask: every count in the output is singular.
func TestOutputOfOneOfEachIsSingular(t *testing.T) {
	one := writeTemp(t, "one.json", `{"name": "one", "vertices": [{"id": "a", "parallelism": 1}]}`)
	res := execCLI(t, "", "regions", one)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "\n1 execution vertex, 1 region, 0 blocking logical edges, minimum slots 1\n")
	res = execCLI(t, "", "simulate", "--slots", "1", "--fail", "a#0@500", one)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, `job "one": mode all-blocking, policy region, 1 slot, seed 1
makespan:          1500 ms of virtual time, until the last event
slot utilization:  100.0% of slot time with work progressing
held waiting:      0.0% of slot time held by tasks that could not progress
regions scheduled: 2 deployments of 1 region
restarts:          1 (regions restarted: 1)
  at 500 ms a#0 failed: restarted region 0
simulation steps:  2 (task progress ends and slot-request timeouts handled); 8 trace events
finished: the only task finished at 1500 ms
`, res.stdout)
	big := writeTemp(t, "big.json", `{"name": "big", "driver": {}, "vertices": [{"id": "a", "parallelism": 1}]}`)
	res = execCLI(t, "", "simulate", "--slots", "1", one, big)
	require.Equal(t, 1, res.code, res.stderr)
	assert.Contains(t, lastLine(res.stdout), "failed: 1 of 2 jobs: big rejected: ")
	assert.Contains(t, lastLine(res.stdout), "needs 2 slots at once with the driver; the queue's cluster can never give them: missing 1 slot")
}

// An event at the instant its job ends finds it ended: it is last in its
// instant, after the tasks ending then. But it is an input of its instant
// as the job's arrival is: a job that arrives then, with tasks of no
// duration, ends only after the admission decided over both, and the
// event applies.
func TestSimulateJobsEventAtTheInstantItsJobEnds(t *testing.T) {
	write := func(name, content string) string { return writeTemp(t, name, content) }
	cluster := write("cluster.json", `{"slots": [{"count": 4}], "queues": [{"name": "root.default", "policy": "priority"}],
 "users": [{"name": "alice", "role": "admin"}]}`)
	etl := write("etl.json", `{"name": "etl", "vertices": [{"id": "a", "parallelism": 2, "durationMs": 5000}]}`)
	flash := write("flash.json", `{"name": "flash", "submitAtMs": 1500, "vertices": [{"id": "a", "parallelism": 2, "durationMs": 0}]}`)
	events := write("events.jsonl", `{"t": 1500, "event": "set-priority", "job": "flash", "priority": 7000, "by": "alice"}
{"t": 5000, "event": "kill", "job": "etl", "by": "alice"}
`)
	res := execCLI(t, "", "simulate", "--cluster", cluster, "--events", events, etl, flash)
	require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, `job "flash": submitted 1500 ms, first deploy 1500 ms, finished 1500 ms, wait 0 ms, makespan 0 ms; finished`)
	assert.Contains(t, res.stdout, "event 1500 ms: alice set-priority flash 5000 -> 7000: applied\n")
	assert.Contains(t, res.stdout, "event 5000 ms: alice kill etl: refused: the job is completed\n")
	assert.Equal(t, "finished: all 2 jobs finished at 5000 ms", lastLine(res.stdout))
}
