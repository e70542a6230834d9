package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A job file's "durationMs": 0 means 0 in a run of several jobs as in a
// run of the job alone: z's two regions finish at 0 ms beside y, not
// after the default second each.
func TestSimulateJobsZeroDurationMeansZero(t *testing.T) {
	const dir = "zero-duration-multijob"
	z, y := repro(dir, "z.json"), repro(dir, "y.json")
	alone := execCLI(t, "", "simulate", "--slots", "2", z)
	require.Equal(t, 0, alone.code, "stdout:\n%s\nstderr:\n%s", alone.stdout, alone.stderr)
	assert.Equal(t, "finished: all 2 tasks finished at 0 ms", lastLine(alone.stdout))
	for _, policy := range []string{"region", "eager"} {
		t.Run(policy, func(t *testing.T) {
			res := execCLI(t, "", "simulate", "--slots", "2", "--policy", policy, "--trace", "-", z, y)
			require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
			lines := jobLines(t, res.stderr) // the trace is on standard output
			assert.Equal(t, []string{"0 ms", "0 ms", "0 ms", "0 ms", "0 ms", "finished"}, lines["z"])
			assert.Equal(t, []string{"0 ms", "0 ms", "1000 ms", "0 ms", "1000 ms", "finished"}, lines["y"])
			verdict := lastLine(res.stderr)
			assert.True(t, strings.HasPrefix(verdict, "finished: all "), verdict)
			assert.True(t, strings.HasSuffix(verdict, " finished at 1000 ms"), verdict)
			for _, task := range []string{"a#0", "b#0"} {
				assert.Contains(t, res.stdout, `{"t": 0, "event": "finish", "job": "z", "task": "`+task+`"`)
			}
			assert.Equal(t, 0, strings.Count(res.stdout, `"t": 2000`), "nothing of z lasts a default second")
		})
	}
}

// A job with unbounded sources never finishes: once every other job
// finished and the stream is fully deployed, a run of several jobs is
// "running:" with exit 0, as a run of the stream alone, and the stream's
// line says it runs on, under the admission and under the eager policy.
func TestSimulateJobsStreamRunsOn(t *testing.T) {
	const dir = "streaming-job-multijob-verdict"
	st, y := repro(dir, "st.json"), repro(dir, "y.json")
	alone := execCLI(t, "", "simulate", "--slots", "2", st)
	require.Equal(t, 0, alone.code, "stdout:\n%s\nstderr:\n%s", alone.stdout, alone.stderr)
	single := lastLine(alone.stdout)
	assert.Equal(t, "running: every bounded task finished or reads an unbounded stream; 1 unbounded task keeps running", single)
	for policy, verdict := range map[string]string{
		"region": single + " (stream st); 1 of 2 jobs finished at 1000 ms",
		"eager":  single,
	} {
		t.Run(policy, func(t *testing.T) {
			res := execCLI(t, "", "simulate", "--slots", "2", "--policy", policy, st, y)
			require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
			assert.Empty(t, res.stderr)
			assert.Equal(t, verdict, lastLine(res.stdout))
			lines := jobLines(t, res.stdout)
			assert.Equal(t, []string{"0 ms", "0 ms", "-", "0 ms", "-", single}, lines["st"])
			assert.Equal(t, []string{"0 ms", "0 ms", "1000 ms", "0 ms", "1000 ms", "finished"}, lines["y"])
			assert.NotContains(t, res.stdout, "deadlock")
			assert.NotContains(t, res.stdout, "never finished")
		})
	}
}

// A stream with a driver and a bounded consumer runs on too: its driver
// is not reported as holding a slot while waiting.
func TestSimulateJobsStreamWithDriverRunsOn(t *testing.T) {
	sd := writeTemp(t, "sd.json", `{"name": "sd", "driver": {"startupMs": 500}, "vertices": [{"id": "a", "parallelism": 1, "bounded": false},
		{"id": "b", "parallelism": 1}], "edges": [{"source": "a", "target": "b", "shipStrategy": "forward", "exchange": "pipelined"}]}`)
	y := repro("streaming-job-multijob-verdict", "y.json")
	res := execCLI(t, "", "simulate", "--slots", "4", sd, y)
	require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Equal(t, "running: every bounded task finished or reads an unbounded stream; 1 unbounded task keeps running, 1 task keeps reading them (stream sd); 1 of 2 jobs finished at 1000 ms",
		lastLine(res.stdout))
	assert.NotContains(t, res.stdout, "sd:driver")
}

// A stream does not hide what is wrong with the other jobs: a job it
// leaves no slot is a deadlock naming that job only, a stream whose
// consumer can never start is a deadlock that says why, a killed job is
// named, a failed job fails the run.
func TestSimulateJobsStreamBesideOtherEnds(t *testing.T) {
	dir := "streaming-job-multijob-verdict"
	st, y := repro(dir, "st.json"), repro(dir, "y.json")
	t.Run("a job waiting for the stream's slot", func(t *testing.T) {
		res := execCLI(t, "", "simulate", "--slots", "1", st, y)
		require.Equal(t, 1, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "deadlock: at 0 ms job y never finishes: y:a#0 waits for a slot", lastLine(res.stdout))
		assert.True(t, strings.HasPrefix(jobLines(t, res.stdout)["st"][5], "running: "), res.stdout)
	})
	t.Run("a stream behind a blocking edge", func(t *testing.T) {
		sb := writeTemp(t, "sb.json", `{"name": "sb", "vertices": [{"id": "a", "parallelism": 1, "bounded": false}, {"id": "b", "parallelism": 1}],
			"edges": [{"source": "a", "target": "b", "shipStrategy": "forward"}]}`)
		res := execCLI(t, "", "simulate", "--slots", "4", sb, y)
		require.Equal(t, 1, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "deadlock: at 1000 ms job sb never finishes: sb:b#0 can never start: a result it reads (blocking, or selective hybrid from another region) is never complete", lastLine(res.stdout))
	})
	t.Run("a killed job", func(t *testing.T) {
		cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 2}], "users": [{"name": "alice", "role": "admin"}]}`)
		ev := writeTemp(t, "events.jsonl", `{"t": 500, "event": "kill", "job": "y", "by": "alice"}`+"\n")
		res := execCLI(t, "", "simulate", "--cluster", cluster, "--events", ev, st, y)
		require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "running: every bounded task finished or reads an unbounded stream; 1 unbounded task keeps running (stream st); 0 of 2 jobs finished, y killed at 500 ms",
			lastLine(res.stdout))
	})
	t.Run("a failed job", func(t *testing.T) {
		big := writeTemp(t, "big.json", `{"name": "big", "vertices": [{"id": "a", "parallelism": 3}, {"id": "b", "parallelism": 3}],
			"edges": [{"source": "a", "target": "b", "shipStrategy": "hash", "exchange": "pipelined"}]}`)
		res := execCLI(t, "", "simulate", "--slots", "2", st, big)
		require.Equal(t, 1, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.True(t, strings.HasPrefix(lastLine(res.stdout), "failed: 1 of 2 jobs: big rejected"), lastLine(res.stdout))
		assert.True(t, strings.HasPrefix(jobLines(t, res.stdout)["st"][5], "running: "), res.stdout)
	})
}

// A timeout of a queue that ends past what virtual time holds never fires,
// and the run ends with its verdict instead of waiting for it for ever.
func TestTimeoutsPastTheEndOfVirtualTimeNeverFire(t *testing.T) {
	cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 2}], "queues": [{"name": "root.default", "policy": "priority", "reclaimTimeoutMs": 9223372036000}]}`)
	stream := writeTemp(t, "s.json", `{"name": "s", "priority": 1, "vertices": [{"id": "v", "parallelism": 2, "bounded": false}]}`)
	batch := writeTemp(t, "b.json", `{"name": "b", "priority": 10000, "submitAtMs": 1000, "vertices": [{"id": "v", "parallelism": 2}]}`)
	res := execCLI(t, "", "simulate", "--cluster", cluster, stream, batch)
	require.Equal(t, 1, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Contains(t, lastLine(res.stdout), "deadlock:")
}

// A job rejected at once (its gang can never fit its queue) is named by
// the verdict even when the run ends in a deadlock of other jobs: the
// deadlock line, then the rejected job as a failed run names it.
func TestSimulateJobsDeadlockNamesRejectedJob(t *testing.T) {
	const dir = "rejected-job-beside-deadlock"
	res := execCLI(t, "", "simulate", "--cluster", repro(dir, "cluster.json"), repro(dir, "big.json"), repro(dir, "d1.json"), repro(dir, "d2.json"))
	require.Equal(t, 1, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Equal(t, "deadlock: at 1 ms jobs d1, d2 never finish: d1:driver, d2:driver hold slots while waiting; d1:v#0, d2:v#0 wait for a slot; "+
		`failed: 1 of 3 jobs: big rejected: admission: job rejected: job "big" in queue root.a: its gang of 3 slots can never be reserved: `+
		"queue root.a holds at most 2 slots (maxSlots)", lastLine(res.stdout))
	lines := jobLines(t, res.stdout)
	assert.True(t, strings.HasPrefix(lines["big"][5], "rejected at 0 ms: "), lines["big"])
	assert.Equal(t, "never finished (deadlock; stuck starting)", lines["d1"][5])
}

// The verdict of a run of several jobs names jobs, and their tasks, in
// the order of the jobs' names: it reads the same whatever the order of
// the job files.
func TestSimulateJobsVerdictWhateverTheFileOrder(t *testing.T) {
	jobs := floodJobs(t)
	reversed := slices.Clone(jobs)
	slices.Reverse(reversed)
	var verdicts []string
	for _, files := range [][]string{jobs, reversed} {
		res := execCLI(t, "", append([]string{"simulate", "--slots", "4", "--queue-policy", "fifo"}, files...)...)
		require.Equal(t, 1, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		verdicts = append(verdicts, lastLine(res.stdout))
	}
	assert.Contains(t, verdicts[0], "jobs spark-1, spark-2, spark-3, spark-4 never finish")
	assert.Contains(t, verdicts[0], "spark-1:driver, spark-2:driver, spark-3:driver, spark-4:driver hold slots while waiting")
	assert.Equal(t, verdicts[0], verdicts[1])
}
