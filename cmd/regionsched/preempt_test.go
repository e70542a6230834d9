package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A queue's reclaimTimeoutMs: a high-priority job
// arrives at 100 ms while a low-priority one holds all 4 slots with 1 s
// tasks. A reclaim serves everything it waits for: both its regions (one
// task each). With 0 it deploys at once and two of the low job's tasks
// are cancelled and run again; with 300 it deploys when the timeout
// expires (two cancelled then); absent, it waits for the tasks to end. The low job finishes every
// time.
func TestSimulateReclaimTimeouts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	low := write("low.json", `{"name":"low","priority":1000,"vertices":[{"id":"A","parallelism":4,"durationMs":1000}],"edges":[]}`)
	high := write("high.json", `{"name":"high","priority":9000,"submitAtMs":100,"vertices":[{"id":"B","parallelism":2,"durationMs":100}],"edges":[]}`)
	for _, c := range []struct {
		name, timeout, deploy string
		cancels               int
	}{
		{"at once", `, "reclaimTimeoutMs": 0`, "100 ms", 2},
		// (both its regions are waiting at 100 ms: the reclaim serves
		// both, and two tasks are cancelled at 400 ms)
		{"after the timeout", `, "reclaimTimeoutMs": 300`, "400 ms", 2},
		{"never", ``, "1000 ms", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cluster := write("cluster.json", fmt.Sprintf(`{"slots":[{"count":4}],"queues":[{"name":"root.default","policy":"priority"%s}]}`, c.timeout))
			trace := filepath.Join(dir, "trace.jsonl")
			res := execCLI(t, "", "simulate", "--cluster", cluster, "--trace", trace, low, high)
			require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
			lines := jobLines(t, res.stdout)
			assert.Equal(t, c.deploy, lines["high"][1], res.stdout)
			assert.Equal(t, "finished", lines["low"][5])
			tr, err := os.ReadFile(trace)
			require.NoError(t, err)
			assert.Equal(t, c.cancels, strings.Count(string(tr), `"event": "cancel", "job": "low"`), string(tr))
		})
	}
}

// A hard gang that cannot be reserved within its timeout fails its job
// (exit 1, the message names the job and says it timed out) while the
// other job finishes; the same job with a soft gang finishes, after the
// requeue backoff.
func TestSimulateGangTimeouts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	busy := write("busy.json", `{"name":"busy","vertices":[{"id":"A","parallelism":3,"durationMs":5000}],"edges":[]}`)
	for _, style := range []string{"hard", "soft"} {
		t.Run(style, func(t *testing.T) {
			g := write("gang.json", fmt.Sprintf(`{"name":"gangjob","submitAtMs":100,"gang":{"minSlots":4,"style":%q,"timeoutMs":1000},
				"vertices":[{"id":"G","parallelism":1,"durationMs":100}],"edges":[]}`, style))
			res := execCLI(t, "", "simulate", "--slots", "4", busy, g)
			lines := jobLines(t, res.stdout)
			assert.Equal(t, "finished", lines["busy"][5])
			if style == "hard" {
				require.Equal(t, 1, res.code, res.stdout)
				assert.Contains(t, lastLine(res.stdout), `gangjob failed: admission: job "gangjob": its gang of 4 slots could not be reserved within 1s (hard gang): timed out`)
				return
			}
			require.Equal(t, 0, res.code, res.stdout)
			assert.Equal(t, "11100 ms", lines["gangjob"][1], "after the 1 s timeout from its arrival and the default 10 s backoff")
		})
	}
}

// The events file (docs/job-file.md): in this time order a user raises
// their own job above 5000 (refused), an admin raises it (accepted), a
// user changes another user's job (refused): the audit has exactly those
// three records, accepted false/true/false, in time order; the trace has
// two refused events; the run goes on and every job finishes. A kill by
// the job's owner cancels its tasks; it is reported killed and the run
// exits 0, the other job finished; a kill by another user is refused.
func TestSimulateEventsAuditAndKill(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	cluster := write("cluster.json", `{"slots":[{"count":2}],"queues":[{"name":"root.default","policy":"priority"}],
		"users":[{"name":"alice","role":"admin"},{"name":"bob","role":"user"},{"name":"carol","role":"user"}]}`)
	mine := write("mine.json", `{"name":"mine","user":"bob","priority":3000,"vertices":[{"id":"A","parallelism":2,"durationMs":1000},
		{"id":"B","parallelism":2,"durationMs":1000}],"edges":[{"source":"A","target":"B","shipStrategy":"hash"}]}`)
	theirs := write("theirs.json", `{"name":"theirs","user":"carol","priority":4000,"vertices":[{"id":"C","parallelism":2,"durationMs":1000}],"edges":[]}`)
	t.Run("priorities", func(t *testing.T) {
		events := write("events.jsonl", `{"t": 100, "event": "set-priority", "job": "mine", "priority": 6000, "by": "bob"}
{"t": 200, "event": "set-priority", "job": "mine", "priority": 9000, "by": "alice"}
{"t": 300, "event": "set-priority", "job": "theirs", "priority": 100, "by": "bob"}
`)
		audit, trace := filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "trace.jsonl")
		res := execCLI(t, "", "simulate", "--cluster", cluster, "--events", events, "--audit", audit, "--trace", trace, mine, theirs)
		require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "finished: all 2 jobs finished at 3000 ms", lastLine(res.stdout))
		data, err := os.ReadFile(audit)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		require.Len(t, lines, 3, string(data))
		for i, want := range []string{`"t":100,"by":"bob"`, `"t":200,"by":"alice"`, `"t":300,"by":"bob"`} {
			assert.Contains(t, lines[i], want)
			assert.Contains(t, lines[i], map[bool]string{true: `"accepted":true`, false: `"accepted":false`}[i == 1])
		}
		tr, err := os.ReadFile(trace)
		require.NoError(t, err)
		assert.Equal(t, 2, strings.Count(string(tr), `"event": "refused"`))
		assert.Contains(t, string(tr), `{"t": 100, "event": "refused", "job": "mine", "by": "bob", "reason": "set-priority: role user may set priorities 1 ... 5000"}`)
	})
	t.Run("kill", func(t *testing.T) {
		events := write("kill.jsonl", `{"t": 1200, "event": "kill", "job": "mine", "by": "carol"}
{"t": 1500, "event": "kill", "job": "mine", "by": "bob"}
`)
		trace := filepath.Join(dir, "trace.jsonl")
		res := execCLI(t, "", "simulate", "--cluster", cluster, "--events", events, "--trace", trace, mine, theirs)
		require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "finished: 1 of 2 jobs finished at 1000 ms, mine killed at 1500 ms", lastLine(res.stdout))
		assert.Equal(t, []string{"0 ms", "1000 ms", "-", "1000 ms", "-", "killed at 1500 ms: by bob"}, jobLines(t, res.stdout)["mine"])
		tr, err := os.ReadFile(trace)
		require.NoError(t, err)
		assert.Equal(t, 2, strings.Count(string(tr), `"t": 1500, "event": "cancel", "job": "mine"`))
		assert.Contains(t, string(tr), `"t": 1200, "event": "refused", "job": "mine", "by": "carol"`)
	})
}

// A gang without minSlots reserves what the job needs to begin: here its
// two source regions of one slot each, so with 3 of 4 slots busy it
// starts only when they are back.
func TestSimulateGangDerivedMinSlots(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	busy := write("busy.json", `{"name":"busy","vertices":[{"id":"A","parallelism":3,"durationMs":500}],"edges":[]}`)
	g := write("gang.json", `{"name":"gangjob","submitAtMs":100,"gang":{},"vertices":[{"id":"G","parallelism":2,"durationMs":100}],"edges":[]}`)
	res := execCLI(t, "", "simulate", "--slots", "4", busy, g)
	require.Equal(t, 0, res.code, res.stdout)
	assert.Equal(t, "500 ms", jobLines(t, res.stdout)["gangjob"][1], "a gang of 2: one free slot is not enough")
}

// Every reclaim is a trace event before the cancels it causes, naming the
// claimant, the victim, the slots and why, and the summary counts them: a
// mid-priority job reclaims the low job's slot with a timeout and gets a
// freed slot before it (withdrawn: nothing cancelled); a high-priority
// job then reclaims again, from the lowest priority, and that one is
// carried out.
func TestSimulateReclaimsTracedAndCounted(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	cluster := write("cluster.json", `{"slots": [{"count": 2}], "queues": [{"name": "root.default", "policy": "priority", "reclaimTimeoutMs": 300}]}`)
	low := write("low.json", `{"name": "low", "priority": 1000, "vertices": [{"id": "short", "parallelism": 1, "durationMs": 200}, {"id": "long", "parallelism": 1, "durationMs": 5000}]}`)
	mid := write("mid.json", `{"name": "mid", "priority": 5000, "submitAtMs": 100, "vertices": [{"id": "a", "parallelism": 1, "durationMs": 3000}]}`)
	high := write("high.json", `{"name": "high", "priority": 9000, "submitAtMs": 500, "vertices": [{"id": "a", "parallelism": 1, "durationMs": 1000}]}`)
	trace := filepath.Join(dir, "trace.jsonl")
	res := execCLI(t, "", "simulate", "--cluster", cluster, "--trace", trace, low, mid, high)
	require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "reclaims:          2 (slots reclaimed: 2, withdrawn before the timeout: 1)\n")
	tr, err := os.ReadFile(trace)
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(tr)), "\n") {
		if strings.Contains(l, `"event": "reclaim"`) || strings.Contains(l, `"event": "cancel"`) {
			lines = append(lines, l)
		}
	}
	assert.Equal(t, []string{
		`{"t": 100, "event": "reclaim", "job": "mid", "victim": "low", "slots": 1, "reason": "priority 5000 over 1000: tasks cancelled after 300 ms unless they end"}`,
		`{"t": 500, "event": "reclaim", "job": "high", "victim": "low", "slots": 1, "reason": "priority 9000 over 1000: tasks cancelled after 300 ms unless they end"}`,
		`{"t": 800, "event": "cancel", "job": "low", "task": "long#0", "region": 1, "slot": 1, "attempt": 0}`,
	}, lines)
}
