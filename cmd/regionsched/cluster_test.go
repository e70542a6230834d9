package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// goInternals are fragments of encoding/json and Go type names that must
// never reach a user reading a cluster file error.
var goInternals = []string{"Go struct", "Go value", "json:", "int64", "RawMessage", "SlotGroup", "runfile.",
	"Wire", "resource.Profile", "map["}

// TestClusterFileErrors: every problem in a cluster file is exit 2 with a
// message `cluster file PATH: field "JSON path": problem` naming the bad
// value and the valid ones, in JSON terms.
func TestClusterFileErrors(t *testing.T) {
	tests := []struct {
		name     string
		cluster  string
		contains []string
	}{
		// Examples.
		{"fractional count", `{"slots": [{"count": 1.5}]}`,
			[]string{`field "slots[0].count"`, "expected an integer", "1.5"}},
		{"unknown resource field in the second group", `{"slots": [{"count": 2}, {"count": 1, "resources": {"gpu": 1}}]}`,
			[]string{`field "slots[1].resources.gpu"`, "unknown field", "valid fields: cpuMillis, memoryMB, extended"}},

		// Types, with the path.
		{"count too large", `{"slots": [{"count": 1e30}]}`, []string{`field "slots[0].count"`, "expected an integer", "1e30"}},
		{"count beyond any integer", `{"slots": [{"count": 99999999999999999999}]}`,
			[]string{`field "slots[0].count": 99999999999999999999 is out of range (valid: an integer in 0 ... 1099511627776)`}},
		{"reclaim timeout beyond any integer", `{"slots": [{"count": 1}], "queues": [{"name": "root.a", "reclaimTimeoutMs": 99999999999999999999}]}`,
			[]string{`field "queues[0].reclaimTimeoutMs": 99999999999999999999 is out of range (valid: an integer number of ms in 0 ... 9223372036854 (about 292 years))`}},
		{"malformed on a later line", "{\"slots\":\n [{\"count\":1},,]}", []string{"malformed JSON", "at line 2, column 15"}},
		{"string count", `{"slots": [{"count": "4"}]}`, []string{`field "slots[0].count"`, "expected an integer", "string"}},
		{"slots not a list", `{"slots": {"count": 4}}`, []string{`field "slots"`, "expected an array", "object"}},
		{"file not an object", `[{"count": 4}]`, []string{"expected an object", "array"}},
		{"null slot group", `{"slots": [null]}`, []string{`field "slots[0]"`, "expected an object", "null"}},
		{"resources not an object", `{"slots": [{"count": 1, "resources": "big"}]}`,
			[]string{`field "slots[0].resources"`, "expected an object", "string"}},
		{"fractional memory", `{"slots": [{"count": 1, "resources": {"memoryMB": 0.5}}]}`,
			[]string{`field "slots[0].resources.memoryMB"`, "expected an integer", "0.5"}},
		{"fractional extended amount", `{"slots": [{"count": 1, "resources": {"extended": {"gpu": 1, "tpu": 0.5}}}]}`,
			[]string{`field "slots[0].resources.extended.tpu"`, "expected an integer", "0.5"}},
		{"extended not an object", `{"slots": [{"count": 1, "resources": {"extended": ["gpu"]}}]}`,
			[]string{`field "slots[0].resources.extended"`, "expected an object", "array"}},
		{"string queue limit", `{"slots": [{"count": 1}], "queues": [{"name": "q", "maxRunningJobs": "3"}]}`,
			[]string{`field "queues[0].maxRunningJobs"`, "expected an integer", "string"}},
		{"numeric role", `{"slots": [{"count": 1}], "users": [{"name": "a", "role": 1}]}`,
			[]string{`field "users[0].role"`, "expected a string", "number"}},

		// Values.
		{"negative count", `{"slots": [{"count": 1}, {"count": -2}]}`,
			[]string{`field "slots[1].count"`, "-2", "non-negative integer"}},
		{"negative memory", `{"slots": [{"count": 2, "resources": {"cpuMillis": 1, "memoryMB": -5}}]}`,
			[]string{`field "slots[0].resources.memoryMB"`, "-5", "non-negative integer"}},
		{"negative gpu", `{"slots": [{"count": 2, "resources": {"extended": {"gpu": -1}}}]}`,
			[]string{`field "slots[0].resources.extended.gpu"`, "-1", "non-negative integer"}},
		{"empty extended name", `{"slots": [{"count": 2, "resources": {"extended": {"": 1}}}]}`,
			[]string{`field "slots[0].resources.extended"`, `extended resource name ""`, "empty", "'='", "';'"}},
		{"extended name with =", `{"slots": [{"count": 2, "resources": {"extended": {"gpu=1": 1}}}]}`,
			[]string{`field "slots[0].resources.extended.gpu=1"`, `extended resource name "gpu=1"`, "contains '=' or ';'"}},
		{"bad policy", `{"slots": [{"count": 1}], "queues": [{"name": "root.a", "policy": "lifo"}]}`,
			[]string{`field "queues[0].policy"`, `"lifo"`, "fifo, priority, fairshare, stateaware"}},
		{"upper-case policy value", `{"slots": [{"count": 1}], "queues": [{"name": "root.a", "policy": "FIFO"}]}`,
			[]string{`field "queues[0].policy"`, `"FIFO"`, "fifo, priority"}},
		{"empty policy", `{"slots": [{"count": 1}], "queues": [{"name": "root.a", "policy": ""}]}`,
			[]string{`field "queues[0].policy"`, `""`, "fifo, priority"}},
		{"negative queue limit", `{"slots": [{"count": 1}], "queues": [{"name": "q", "maxRunningJobs": -1}]}`,
			[]string{`field "queues[0].maxRunningJobs"`, "-1", "non-negative"}},
		{"negative starting timeout", `{"slots": [{"count": 1}], "queues": [{"name": "q", "startingTimeoutMs": -5}]}`,
			[]string{`field "queues[0].startingTimeoutMs"`, "-5", "milliseconds"}},
		{"negative reclaim timeout", `{"slots": [{"count": 1}], "queues": [{"name": "q", "reclaimTimeoutMs": -5}]}`,
			[]string{`field "queues[0].reclaimTimeoutMs"`, "-5", "milliseconds"}},
		{"bad role", `{"slots": [{"count": 1}], "users": [{"name": "alice", "role": "admin"}, {"name": "bob", "role": "root"}]}`,
			[]string{`field "users[1].role"`, `"root"`, "admin, user"}},
		{"control character in a value", `{"slots": [{"count": 1}], "users": [{"name": "a", "role": "ad\u0001min"}]}`,
			[]string{`field "users[0].role"`, `"ad\u0001min"`}},
		{"queue configured twice", `{"slots": [{"count": 1}], "queues": [{"name": "root.q"}, {"name": "root.r"}, {"name": "root.q", "policy": "fifo"}]}`,
			[]string{`field "queues[2].name"`, `"root.q"`, "queues[0]"}},
		{"user configured twice", `{"slots": [{"count": 1}], "users": [{"name": "a", "role": "user"}, {"name": "a", "role": "admin"}]}`,
			[]string{`field "users[1].name"`, `"a"`, "users[0]"}},

		// Missing fields.
		{"missing slots", `{"queues": []}`, []string{`field "slots"`, "missing"}},
		{"null slots", `{"slots": null}`, []string{`field "slots"`, "missing"}},
		{"missing count", `{"slots": [{"count": 1}, {"resources": {"cpuMillis": 1}}]}`, []string{`field "slots[1].count"`, "missing"}},
		{"missing queue name", `{"slots": [{"count": 1}], "queues": [{"policy": "fifo"}]}`, []string{`field "queues[0].name"`, "missing"}},
		{"empty queue name", `{"slots": [{"count": 1}], "queues": [{"name": ""}]}`, []string{`field "queues[0].name"`, "empty"}},
		{"missing user name", `{"slots": [{"count": 1}], "users": [{"role": "user"}]}`, []string{`field "users[0].name"`, "missing"}},
		{"missing role", `{"slots": [{"count": 1}], "users": [{"name": "a"}]}`, []string{`field "users[0].role"`, "missing", "admin, user"}},

		// Unknown and repeated fields, exact names.
		{"unknown top-level field", `{"slots": [{"count": 1}], "nodes": 3}`,
			[]string{`field "nodes"`, "unknown field", "valid fields: slots, queues, users"}},
		{"upper-case slots", `{"Slots": [{"count": 1}]}`, []string{`field "Slots"`, `did you mean "slots"`}},
		{"unknown slot group field", `{"slots": [{"count": 2, "size": 4}]}`,
			[]string{`field "slots[0].size"`, "unknown field", "valid fields: count, resources"}},
		{"upper-case count", `{"slots": [{"count": 2, "Count": 3}]}`,
			[]string{`field "slots[0].Count"`, `did you mean "count"`, "case-sensitive"}},
		{"upper-case cpuMillis", `{"slots": [{"count": 2, "resources": {"CPUMILLIS": 1}}]}`,
			[]string{`field "slots[0].resources.CPUMILLIS"`, `did you mean "cpuMillis"`}},
		{"unknown queue field", `{"slots": [{"count": 1}], "queues": [{"name": "q", "maxJobs": 3}]}`,
			[]string{`field "queues[0].maxJobs"`, "unknown field", "name, policy, maxRunningJobs, startingTimeoutMs, reclaimTimeoutMs"}},
		{"unknown user field", `{"slots": [{"count": 1}], "users": [{"name": "a", "role": "user", "group": "x"}]}`,
			[]string{`field "users[0].group"`, "valid fields: name, role"}},
		{"duplicate slots", `{"slots": [{"count": 1}], "slots": [{"count": 100}]}`, []string{`field "slots"`, "duplicate field"}},
		{"duplicate count", `{"slots": [{"count": 1, "count": 100}]}`, []string{`field "slots[0].count"`, "duplicate field"}},
		{"duplicate memory", `{"slots": [{"count": 1, "resources": {"memoryMB": 1, "memoryMB": 2}}]}`,
			[]string{`field "slots[0].resources.memoryMB"`, "duplicate field"}},
		{"duplicate extended resource", `{"slots": [{"count": 1, "resources": {"extended": {"gpu": 1, "gpu": 8}}}]}`,
			[]string{`field "slots[0].resources.extended.gpu"`, "duplicate field"}},
		{"duplicate policy", `{"slots": [{"count": 1}], "queues": [{"name": "q", "policy": "fifo", "policy": "priority"}]}`,
			[]string{`field "queues[0].policy"`, "duplicate field"}},
		{"duplicate role", `{"slots": [{"count": 1}], "users": [{"name": "a", "role": "user", "role": "admin"}]}`,
			[]string{`field "users[0].role"`, "duplicate field"}},

		// Malformed.
		{"empty file", ``, []string{"empty"}},
		{"truncated", `{"slots": [{"count": 1}`, []string{"malformed JSON", "end of input"}},
		{"syntax error", `{"slots": [{"count": 1,}]}`, []string{"malformed JSON", "at line 1, column 24"}},
		{"trailing data", `{"slots": [{"count": 1}]} {"slots": []}`, []string{"malformed JSON", "after the JSON value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "cluster.json", tc.cluster)
			for _, cmd := range []string{"check", "simulate"} {
				res := execCLI(t, "", cmd, "--cluster", path, flip119Path)
				assert.Equal(t, 2, res.code, "%s: stdout: %s\nstderr: %s", cmd, res.stdout, res.stderr)
				assert.Empty(t, res.stdout, "no verdict on bad input")
				assert.Contains(t, res.stderr, "cluster file "+path+": ")
				for _, s := range tc.contains {
					assert.Contains(t, res.stderr, s, cmd)
				}
				_, msg, _ := strings.Cut(res.stderr, "cluster file "+path+": ")
				for _, s := range goInternals {
					assert.NotContains(t, msg, s, "%s: Go internals in %q", cmd, msg)
				}
				assert.Equal(t, 1, strings.Count(res.stderr, "\n"), "one line: %q", res.stderr)
			}
		})
	}
}

// TestClusterFileAcceptsEveryField: the cluster file of docs/job-file.md,
// using every field as documented, is accepted by the command (the
// decoder's reading of it is tested in package runfile).
func TestClusterFileAcceptsEveryField(t *testing.T) {
	const full = `{"slots": [{"count": 2, "resources": {"cpuMillis": 1000, "memoryMB": 2048, "extended": {"gpu": 1, "GPU": 2}}},
	                        {"count": 3}, {"count": 1}, {"count": 0}],
	 "queues": [{"name": "root.default", "policy": "fifo", "maxRunningJobs": 0, "startingTimeoutMs": 300000, "reclaimTimeoutMs": 0},
	            {"name": "root.batch", "policy": "fairshare"}, {"name": "root.x", "policy": "stateaware", "maxRunningJobs": 2},
	            {"name": "root.y", "policy": "priority", "reclaimTimeoutMs": 1000}],
	 "users": [{"name": "alice", "role": "admin"}, {"name": "bob", "role": "user"}]}`
	res := execCLI(t, "", "check", "--mode", "all-blocking", "--cluster", writeTemp(t, "full.json", full), flip119Path)
	assert.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.True(t, strings.HasPrefix(res.stdout, "deadlock-free:"), res.stdout)
}
