package runfile_test

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/runfile"
)

// TestReadEvents: the events of docs/job-file.md are read in time order,
// lines of the same time in file order, blank lines skipped.
func TestReadEvents(t *testing.T) {
	const file = `{"t": 6000, "event": "kill", "job": "adhoc", "by": "bob"}

{"t": 4000, "event": "set-priority", "job": "etl", "priority": 9000, "by": "alice"}
{"t": 4000, "event": "KILL", "job": "etl", "by": "alice"}
`
	evs, err := runfile.ReadEvents(strings.NewReader(file), "ev.jsonl", []string{"etl", "adhoc"}, 10000)
	require.NoError(t, err)
	assert.Equal(t, []runfile.JobEvent{
		{At: 4 * time.Second, Action: admission.ActionSetPriority, Job: "etl", Priority: 9000, By: "alice"},
		{At: 4 * time.Second, Action: admission.ActionKill, Job: "etl", By: "alice"},
		{At: 6 * time.Second, Action: admission.ActionKill, Job: "adhoc", By: "bob"},
	}, evs)

	evs, err = runfile.ReadEvents(strings.NewReader(`{"t": 1, "event": "kill", "job": "any", "by": "x"}`), "ev.jsonl", nil, 10000)
	require.NoError(t, err, "without a list of jobs, any job name is taken")
	assert.Len(t, evs, 1)
}

// TestReadEventsErrors: a bad line is an *EventError naming the file,
// the line, the column where one place is at fault and the field, of a
// kind matched with errors.Is.
func TestReadEventsErrors(t *testing.T) {
	ok := `{"t": 1, "event": "kill", "job": "etl", "by": "alice"}` + "\n"
	tests := []struct {
		name, line  string
		kind        error
		column      int
		field, want string
	}{
		{"trailing data", `{"t": 1, "event": "kill", "job": "etl", "by": "alice"} {"t": 2}`, runfile.ErrEventJSON, 56, "",
			"events file ev.jsonl line 2, column 56: unexpected data after the JSON object (one event per line)"},
		{"syntax error", `{"t": 1, "event": kill}`, runfile.ErrEventJSON, 19, "", "events file ev.jsonl line 2, column 19: malformed JSON: invalid character 'k'"},
		{"cut short", `{"t": 1, "event": "kill"`, runfile.ErrEventJSON, 25, "", "events file ev.jsonl line 2, column 25: malformed JSON: the line ends before the object does"},
		{"unknown field", `{"t": 1, "event": "kill", "job": "etl", "by": "alice", "why": 1}`, runfile.ErrEventJSON, 0, "why", `events file ev.jsonl line 2: field "why": unknown field`},
		{"missing by", `{"t": 1, "event": "kill", "job": "etl"}`, runfile.ErrEventMissing, 0, "by", `events file ev.jsonl line 2: field "by": missing: the user asking (valid: a non-empty user name)`},
		{"time out of range", `{"t": 18446744073710, "event": "kill", "job": "etl", "by": "a"}`, runfile.ErrEventRange, 0, "t",
			`events file ev.jsonl line 2: field "t": 18446744073710 is not in 0 ... 9223372036854 (about 292 years) (the time of the event, in ms)`},
		{"priority out of range", `{"t": 1, "event": "set-priority", "job": "etl", "priority": 5001, "by": "a"}`, runfile.ErrEventRange, 0, "priority",
			`events file ev.jsonl line 2: field "priority": 5001 is not in 1 ... 5000`},
		{"priority on a kill", `{"t": 1, "event": "kill", "job": "etl", "priority": 3, "by": "a"}`, runfile.ErrEventValue, 0, "priority",
			`events file ev.jsonl line 2: field "priority": a kill event has none`},
		{"unknown kind", `{"t": 1, "event": "pause", "job": "etl", "by": "a"}`, runfile.ErrEventValue, 0, "event",
			`events file ev.jsonl line 2: field "event": "pause" is not an event (valid: set-priority, kill)`},
		{"no such job", `{"t": 1, "event": "kill", "job": "web", "by": "a"}`, runfile.ErrEventJob, 0, "job",
			`events file ev.jsonl line 2: field "job": "web" names no job of the run (jobs: etl, adhoc)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := runfile.ReadEvents(strings.NewReader(ok+tc.line+"\n"), "ev.jsonl", []string{"etl", "adhoc"}, 5000)
			assert.Nil(t, evs)
			var ee *runfile.EventError
			require.True(t, errors.As(err, &ee), "%T %v", err, err)
			assert.ErrorIs(t, err, tc.kind)
			assert.Equal(t, "events file", ee.File)
			assert.Equal(t, "ev.jsonl", ee.Path)
			assert.Equal(t, 2, ee.Line)
			assert.Equal(t, tc.column, ee.Column)
			assert.Equal(t, tc.field, ee.Field)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "%q does not start with %q", err.Error(), tc.want)
		})
	}
}

// TestReadEventsLimits: a line too long is an *EventError; an error of
// the reader is returned as it is.
func TestReadEventsLimits(t *testing.T) {
	_, err := runfile.ReadEvents(strings.NewReader(strings.Repeat(" ", 2<<20)), "ev.jsonl", nil, 10000)
	var ee *runfile.EventError
	require.True(t, errors.As(err, &ee), "%T %v", err, err)
	assert.ErrorIs(t, err, runfile.ErrEventJSON)
	assert.Equal(t, "events file ev.jsonl line 1: longer than 1048576 bytes: one event per line", err.Error())

	broken := errors.New("disk gone")
	_, err = runfile.ReadEvents(iotest.ErrReader(broken), "ev.jsonl", nil, 10000)
	assert.Same(t, broken, err)
}
