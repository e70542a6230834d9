package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repro is the path of a file of the reproducer folder dir under
// testdata/repros.
func repro(dir, file string) string { return filepath.Join("testdata", "repros", dir, file) }

// requireBadInput checks that a run was refused as bad input (exit 2,
// nothing on standard output) with a message containing every one of want.
func requireBadInput(t *testing.T, res cliResult, want ...string) {
	t.Helper()
	require.Equal(t, 2, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Empty(t, res.stdout, "no verdict on bad input")
	for _, s := range want {
		assert.Contains(t, res.stderr, s)
	}
}

// A job file's queue that is not a full queue name ("root..a", "root.",
// "other") is refused when the file is read, naming the file and the
// field, not failed at run time.
func TestSimulateJobsQueueNameIsCheckedWhenRead(t *testing.T) {
	const dir = "queue-name-root-dot"
	t.Run("root..a", func(t *testing.T) {
		q := repro(dir, "q.json")
		res := execCLI(t, "", "simulate", "--slots", "4", repro(dir, "ok1.json"), q)
		requireBadInput(t, res, q, `field "queue"`, `"root..a"`, `"root" or "root." followed by dot-separated non-empty parts`)
	})
	for _, queue := range []string{"root.", "other", "root.a.", ""} {
		t.Run(queue, func(t *testing.T) {
			q := writeTemp(t, "q.json", `{"name": "q", "queue": `+quoteJSON(queue)+`, "vertices": [{"id": "x", "parallelism": 1, "durationMs": 100}]}`)
			res := execCLI(t, "", "simulate", "--slots", "4", repro(dir, "ok1.json"), q)
			requireBadInput(t, res, q, `field "queue"`, quoteJSON(queue), `"root" or "root." followed by dot-separated non-empty parts`)
		})
	}
}

// The other submission fields of a job file are range-checked when the
// file is read too: exit 2 naming the file, the field and the range.
func TestSimulateJobsSubmissionFieldsAreCheckedWhenRead(t *testing.T) {
	ok1 := repro("queue-name-root-dot", "ok1.json")
	cases := []struct {
		name, fields string
		want         []string
	}{
		{"priority 0", `"priority": 0`, []string{`field "priority"`, "0 is not in 1 ... 10000"}},
		{"priority 10001", `"priority": 10001`, []string{`field "priority"`, "10001 is not in 1 ... 10000"}},
		{"priority beyond an int", `"priority": 1e30`, []string{`field "priority"`, "1e30", "1 ... 10000"}},
		{"fractional priority", `"priority": 2.5`, []string{`field "priority"`, "2.5", "1 ... 10000"}},
		{"empty user", `"user": ""`, []string{`field "user"`, "must not be empty"}},
		{"negative submitAtMs", `"submitAtMs": -1`, []string{`field "submitAtMs"`, "-1 is not in 0 ... 9223372036854"}},
		{"submitAtMs beyond a time.Duration", `"submitAtMs": 9223372036855`, []string{`field "submitAtMs"`, "9223372036855 is not in 0 ... 9223372036854"}},
		{"submitAtMs beyond an int64", `"submitAtMs": 18446744073709551616`, []string{`field "submitAtMs"`, "0 ... 9223372036854"}},
		{"driver startupMs beyond a time.Duration", `"driver": {"startupMs": 9223372036855}`,
			[]string{`field "driver.startupMs"`, "9223372036855 is not in 0 ... 9223372036854"}},
		{"negative driver startupMs", `"driver": {"startupMs": -1}`, []string{`field "driver.startupMs"`, "-1 is not in 0 ... 9223372036854"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := writeTemp(t, "bad.json", `{"name": "bad", `+tc.fields+`, "vertices": [{"id": "x", "parallelism": 1}]}`)
			res := execCLI(t, "", "simulate", "--slots", "4", ok1, bad)
			requireBadInput(t, res, append([]string{bad}, tc.want...)...)
		})
	}
}

// The events file is strict like the job files: anything after the JSON
// object on a line, or a field given twice, is refused naming the file,
// the line (and the column or the field).
func TestSimulateJobsEventsFileIsStrict(t *testing.T) {
	const dir = "events-not-strict"
	args := func(events string) []string {
		return []string{"simulate", "--cluster", repro(dir, "cluster.json"), "--events", events, repro(dir, "ok1.json"), repro(dir, "ok2.json")}
	}
	t.Run("trailing data", func(t *testing.T) {
		ev := repro(dir, "events.jsonl")
		res := execCLI(t, "", args(ev)...)
		requireBadInput(t, res, "events file "+ev+" line 1, column 56: ", "unexpected data after the JSON object")
	})
	t.Run("repeated field", func(t *testing.T) {
		// The reproducer's second line alone, after a good first line.
		ev := writeTemp(t, "events.jsonl", `{"t": 1, "event": "kill", "job": "ok1", "by": "alice"}`+"\n"+
			`{"t": 1, "t": 2, "event": "kill", "job": "ok2", "by": "alice"}`+"\n")
		res := execCLI(t, "", args(ev)...)
		requireBadInput(t, res, ev+" line 2: ", `field "t": duplicate field`, "given more than once")
	})
	cases := []struct{ name, line, want string }{
		{"two objects on a line", `{"t": 1, "event": "kill", "job": "ok1", "by": "alice"} {"t": 2}`, `line 1, column 56: unexpected data after the JSON object`},
		{"syntax error", `{"t": 1, "event": kill}`, `line 1, column 19: malformed JSON: invalid character 'k'`},
		{"cut short", `{"t": 1, "event": "kill"`, `line 1, column 25: malformed JSON: the line ends before the object does`},
		{"unknown field", `{"t": 1, "event": "kill", "job": "ok1", "by": "alice", "Job": "ok2"}`,
			`line 1: field "Job": unknown field: field names are case-sensitive, did you mean "job"? valid fields: t, event, job, priority, by`},
		{"not an object", `[1]`, `line 1: expected an object`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := writeTemp(t, "events.jsonl", tc.line+"\n")
			res := execCLI(t, "", args(ev)...)
			requireBadInput(t, res, ev, tc.want)
		})
	}
	t.Run("blank lines are skipped and counted", func(t *testing.T) {
		ev := writeTemp(t, "events.jsonl", "\n   \n"+`{"t": 1, "event": "kill", "job": "ok1", "by": "alice"}x`+"\n")
		res := execCLI(t, "", args(ev)...)
		requireBadInput(t, res, ev+" line 3, column 55: ")
	})
}

// Times, priorities and names of the events file are checked when it is
// read (exit 2 naming the file, line and field), never wrapped or left
// to the run; an event naming no job of the run is bad input.
func TestSimulateJobsEventsAreRangeChecked(t *testing.T) {
	const dir = "events-time-overflow"
	args := func(events string, more ...string) []string {
		return append(append([]string{"simulate", "--cluster", repro(dir, "cluster.json"), "--events", events}, more...),
			repro(dir, "ok1.json"), repro(dir, "ok2.json"))
	}
	t.Run("t that wraps a time.Duration", func(t *testing.T) {
		ev := repro(dir, "events.jsonl")
		audit := filepath.Join(t.TempDir(), "audit.jsonl")
		res := execCLI(t, "", args(ev, "--audit", audit)...)
		requireBadInput(t, res, "events file "+ev+" line 1: ", `field "t"`, "18446744073710 is not in 0 ... 9223372036854")
	})
	kill := func(fields string) string { return `{"event": "kill", "by": "alice", ` + fields + `}` }
	setPriority := func(fields string) string {
		return `{"t": 5, "event": "set-priority", "job": "ok1", "by": "alice", ` + fields + `}`
	}
	cases := []struct{ name, line, want string }{
		{"t just beyond a time.Duration", kill(`"t": 9223372036855, "job": "ok1"`), `field "t": 9223372036855 is not in 0 ... 9223372036854`},
		{"negative t", kill(`"t": -1, "job": "ok1"`), `field "t": -1 is not in 0 ... 9223372036854`},
		{"t beyond an int64", kill(`"t": 18446744073709551616, "job": "ok1"`), `field "t": 18446744073709551616 is out of range (valid: an integer number of ms in 0 ... 9223372036854 (about 292 years))`},
		{"fractional t", kill(`"t": 1.5, "job": "ok1"`), `field "t": expected an integer, got JSON number 1.5 (valid: an integer number of ms in 0 ... 9223372036854 (about 292 years))`},
		{"t as a string", kill(`"t": "5", "job": "ok1"`), `field "t": expected an integer, got JSON string`},
		{"no t", kill(`"job": "ok1"`), `field "t": missing`},
		{"priority 0", setPriority(`"priority": 0`), `field "priority": 0 is not in 1 ... 10000`},
		{"priority 10001", setPriority(`"priority": 10001`), `field "priority": 10001 is not in 1 ... 10000`},
		{"priority that wraps an int32", setPriority(`"priority": 4294967297`), `field "priority": 4294967297 is not in 1 ... 10000`},
		{"fractional priority", setPriority(`"priority": 2.5`), `field "priority": expected an integer, got JSON number 2.5 (valid: an integer in 1 ... 10000)`},
		{"no priority", `{"t": 5, "event": "set-priority", "job": "ok1", "by": "alice"}`, `field "priority": missing: a set-priority event needs it`},
		{"a kill with a priority", kill(`"t": 1, "job": "ok1", "priority": 5`), `field "priority": a kill event has none`},
		{"no job", kill(`"t": 1`), `field "job": missing`},
		{"empty job", kill(`"t": 1, "job": ""`), `field "job": must not be empty`},
		{"job of no run", kill(`"t": 1, "job": "ok3"`), `field "job": "ok3" names no job of the run (jobs: ok1, ok2)`},
		{"job as a number", kill(`"t": 1, "job": 1`), `field "job": expected a string, got JSON number`},
		{"empty by", `{"t": 1, "event": "kill", "job": "ok1", "by": ""}`, `field "by": must not be empty`},
		{"no by", `{"t": 1, "event": "kill", "job": "ok1"}`, `field "by": missing`},
		{"unknown event", `{"t": 1, "event": "pause", "job": "ok1", "by": "alice"}`, `field "event": "pause" is not an event (valid: set-priority, kill)`},
		{"no event", `{"t": 1, "job": "ok1", "by": "alice"}`, `field "event": missing (valid: set-priority, kill)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := writeTemp(t, "events.jsonl", `{"t": 0, "event": "set-priority", "job": "ok2", "priority": 10000, "by": "alice"}`+"\n"+tc.line+"\n")
			res := execCLI(t, "", args(ev)...)
			requireBadInput(t, res, "events file "+ev+" line 2: "+tc.want)
		})
	}
	t.Run("the largest time is accepted", func(t *testing.T) {
		ev := writeTemp(t, "events.jsonl", kill(`"t": 9223372036854, "job": "ok1"`)+"\n")
		res := execCLI(t, "", args(ev)...)
		require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, []string{"0 ms", "0 ms", "100 ms", "0 ms", "100 ms", "finished"}, jobLines(t, res.stdout)["ok1"], "the kill comes after the end")
	})
}
