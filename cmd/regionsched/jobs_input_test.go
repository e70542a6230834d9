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
