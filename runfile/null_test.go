package runfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/jsontext"
	"github.com/regionsched/regionsched/runfile"
)

// TestDecodeClusterRefusesNull: null is no value of any field of a
// cluster file: an optional field given null is refused, naming the field
// and saying what it takes, rather than read as absent (or, in a resource
// profile, as a known zero); a required field given null is missing.
func TestDecodeClusterRefusesNull(t *testing.T) {
	tests := []struct {
		name, file, field, problem string
	}{
		// Top level.
		{"queues", `{"slots": [], "queues": null}`, "queues", "null is not a list of queues; leave the field out for its default (none configured)"},
		{"users", `{"slots": [], "users": null}`, "users", "null is not a list of users; leave the field out for its default (none: every priority change and kill is refused)"},
		{"slots", `{"slots": null}`, "slots", `missing: a cluster file lists its slot groups, e.g. {"slots": [{"count": 4}]}`},

		// Slot groups.
		{"resources", `{"slots": [{"count": 1}, {"count": 1, "resources": null}]}`, "slots[1].resources",
			"null is not a resource profile; leave the field out for its default (unknown-sized: the slots fit any request)"},
		{"node", `{"slots": [{"count": 1, "node": null}]}`, "slots[0].node", "null is not a node name; leave the field out for its default (none: each slot is a machine of its own)"},
		{"count", `{"slots": [{"count": null}]}`, "slots[0].count", "missing: the number of slots of this group is required"},
		{"cpuMillis", `{"slots": [{"count": 1, "resources": {"cpuMillis": null}}]}`, "slots[0].resources.cpuMillis",
			"null is not an amount of CPU (a non-negative integer, in thousandths of a core); leave the field out for its default (0)"},
		{"memoryMB", `{"slots": [{"count": 1, "resources": {"memoryMB": null}}]}`, "slots[0].resources.memoryMB",
			"null is not an amount of memory (a non-negative integer, in MB); leave the field out for its default (0)"},
		{"extended", `{"slots": [{"count": 1, "resources": {"extended": null}}]}`, "slots[0].resources.extended",
			"null is not a map of extended resources; leave the field out for its default (none)"},
		{"an extended resource named like a queue field", `{"slots": [{"count": 1, "resources": {"extended": {"maxSlots": null}}}]}`, "slots[0].resources.extended.maxSlots",
			`null is not an amount of resource "maxSlots" (a non-negative integer); leave the resource out if there is none`},

		// Queues.
		{"policy", `{"slots": [], "queues": [{"name": "root.a", "policy": null}]}`, "queues[0].policy",
			"null is not a queue policy; leave the field out for its default (the --queue-policy one)"},
		{"maxRunningJobs", `{"slots": [], "queues": [{"name": "root.a", "maxRunningJobs": null}]}`, "queues[0].maxRunningJobs",
			"null is not a number of jobs; leave the field out for its default (0, unlimited)"},
		{"startingTimeoutMs", `{"slots": [], "queues": [{"name": "root.a", "startingTimeoutMs": null}]}`, "queues[0].startingTimeoutMs",
			"null is not a number of milliseconds; leave the field out for its default (300000)"},
		{"reclaimTimeoutMs", `{"slots": [], "queues": [{"name": "root.a"}, {"name": "root.b", "reclaimTimeoutMs": null}]}`, "queues[1].reclaimTimeoutMs",
			"null is not a number of milliseconds; leave the field out for its default (never reclaim)"},
		{"guaranteedSlots", `{"slots": [], "queues": [{"name": "root.a", "guaranteedSlots": null}]}`, "queues[0].guaranteedSlots",
			"null is not a number of slots; leave the field out for its default (0)"},
		{"maxSlots", `{"slots": [], "queues": [{"name": "root.a", "maxSlots": null}]}`, "queues[0].maxSlots",
			"null is not a number of slots; leave the field out for its default (unlimited)"},
		{"queue name", `{"slots": [], "queues": [{"name": null}]}`, "queues[0].name", `missing: a queue needs a name, e.g. "root.default"`},

		// Users.
		{"user name", `{"slots": [], "users": [{"name": null, "role": "admin"}]}`, "users[0].name", "missing: a user needs a name"},
		{"role", `{"slots": [], "users": [{"name": "bob", "role": null}]}`, "users[0].role", "missing: valid values are admin, user"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cf, err := runfile.DecodeCluster([]byte(tc.file))
			assert.Nil(t, cf)
			var ce *runfile.ClusterError
			require.True(t, errors.As(err, &ce), "%T %v", err, err)
			assert.Equal(t, tc.field, ce.Field)
			assert.Equal(t, tc.problem, ce.Problem)
			assert.Equal(t, `field "`+tc.field+`": `+tc.problem, err.Error())
		})
	}
}

// TestReadEventsRefusesNull: a priority given null is refused on a kill
// (which has none) as on a set-priority; the fields every event needs are
// missing when null.
func TestReadEventsRefusesNull(t *testing.T) {
	ok := `{"t": 1, "event": "kill", "job": "etl", "by": "alice"}` + "\n"
	tests := []struct {
		name, line string
		kind       error
		field      string
		want       string // the whole message
	}{
		{"priority on a kill", `{"t": 1, "event": "kill", "job": "etl", "priority": null, "by": "a"}`, runfile.ErrEventJSON, "priority",
			`events file ev.jsonl line 2: field "priority": null is not a priority (valid: an integer in 1 ... 10000); leave the field out of a kill event`},
		{"priority on a set-priority", `{"t": 1, "event": "set-priority", "job": "etl", "priority": null, "by": "a"}`, runfile.ErrEventJSON, "priority",
			`events file ev.jsonl line 2: field "priority": null is not a priority (valid: an integer in 1 ... 10000); leave the field out of a kill event`},
		{"t", `{"t": null, "event": "kill", "job": "etl", "by": "a"}`, runfile.ErrEventMissing, "t",
			`events file ev.jsonl line 2: field "t": missing (valid: an integer number of ms in 0 ... 9223372036854 (about 292 years))`},
		{"event", `{"t": 1, "event": null, "job": "etl", "by": "a"}`, runfile.ErrEventMissing, "event",
			`events file ev.jsonl line 2: field "event": missing (valid: set-priority, kill)`},
		{"job", `{"t": 1, "event": "kill", "job": null, "by": "a"}`, runfile.ErrEventMissing, "job",
			`events file ev.jsonl line 2: field "job": missing (valid: the name of a job of the run)`},
		{"by", `{"t": 1, "event": "kill", "job": "etl", "by": null}`, runfile.ErrEventMissing, "by",
			`events file ev.jsonl line 2: field "by": missing: the user asking (valid: a non-empty user name)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := runfile.ReadEvents(strings.NewReader(ok+tc.line+"\n"), "ev.jsonl", []string{"etl"}, 10000)
			assert.Nil(t, evs)
			var ee *runfile.EventError
			require.True(t, errors.As(err, &ee), "%T %v", err, err)
			assert.ErrorIs(t, err, tc.kind)
			if tc.kind == runfile.ErrEventJSON {
				assert.ErrorIs(t, err, jsontext.ErrNull)
			}
			assert.Equal(t, 2, ee.Line)
			assert.Equal(t, tc.field, ee.Field)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// TestTraceReaderRefusesNull: a trace line has no null either; t and
// event, which every line has, are missing when null.
func TestTraceReaderRefusesNull(t *testing.T) {
	tests := []struct {
		name, line, field, want string
		kind                    error
	}{
		{"job", `{"t": 0, "event": "request", "job": null, "task": "A#0", "region": 0, "attempt": 0}`, "job",
			`trace t.jsonl line 1: field "job": null is not a value; leave the field out where the line has none`, runfile.ErrEventJSON},
		{"slot", `{"t": 0, "event": "request", "task": "A#0", "region": 0, "slot": null, "attempt": 0}`, "slot",
			`trace t.jsonl line 1: field "slot": null is not a value (valid: a non-negative integer slot id); leave the field out where the line has none`, runfile.ErrEventJSON},
		{"t", `{"t": null, "event": "request", "task": "A#0", "region": 0, "attempt": 0}`, "t",
			`trace t.jsonl line 1: field "t": missing`, runfile.ErrEventMissing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runfile.ReadTrace(strings.NewReader(tc.line+"\n"), "t.jsonl")
			var te *runfile.EventError
			require.True(t, errors.As(err, &te), "%T %v", err, err)
			assert.ErrorIs(t, err, tc.kind)
			assert.Equal(t, tc.field, te.Field)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "%q does not start with %q", err.Error(), tc.want)
		})
	}
}
