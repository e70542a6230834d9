package runfile_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/runfile"
)

// traceOfEveryKind has an event of every Traced kind, with every field a
// trace line carries.
var traceOfEveryKind = []runfile.Event{
	{At: 0, Kind: runfile.Request, Task: "A#0", Region: 0, Slot: runfile.NoSlot},
	{At: 0, Kind: runfile.Deploy, Job: "etl", Task: runfile.DriverTask, Region: runfile.NoRegion, Slot: 3},
	{At: time.Millisecond, Kind: runfile.Deploy, Task: "B#1", Region: 2, Slot: 1, Shared: true},
	{At: time.Second, Kind: runfile.Finish, Task: "A#0", Region: 0, Slot: 0, Attempt: 2},
	{At: time.Second, Kind: runfile.Fail, Task: "A#1", Region: 1, Slot: 2},
	{At: time.Second, Kind: runfile.Cancel, Task: "C\"#0\n", Region: 1, Slot: 2},
	{At: 2 * time.Second, Kind: runfile.Release, Task: "A#0", Region: 0, Slot: 0},
	{At: 3 * time.Second, Kind: runfile.Refused, Job: "etl", By: "bob", Reason: "kill: role user may change only their own jobs", Slot: runfile.NoSlot, Region: runfile.NoRegion},
	{At: 3 * time.Second, Kind: runfile.Refused, By: "bob", Reason: "no job", Slot: runfile.NoSlot, Region: runfile.NoRegion},
	{At: 4 * time.Second, Kind: runfile.Reclaim, Job: "high", Victim: "low", Slots: 2, Reason: "priority 9000 over 1000", Slot: runfile.NoSlot, Region: runfile.NoRegion},
	{At: 5 * time.Second, Kind: runfile.Speculate, Task: "X#5", Region: 5, Slot: runfile.NoSlot, Attempt: 1, Speculative: true},
	{At: 6 * time.Second, Kind: runfile.Win, Task: "X#5", Region: 5, Slot: 42, Attempt: 1, Speculative: true},
}

// TestTraceRoundTrip: what TraceWriter and WriteTrace write, ReadTrace
// reads back, event for event; the kinds only for pictures are left out.
func TestTraceRoundTrip(t *testing.T) {
	var written, streamed bytes.Buffer
	withDetail := append([]runfile.Event{{Kind: runfile.Progress, Task: "A#0", Slot: 0}}, traceOfEveryKind...)
	require.NoError(t, runfile.WriteTrace(&written, withDetail))
	tw := runfile.NewTraceWriter(&streamed)
	for _, e := range withDetail {
		tw.Event(e)
	}
	require.NoError(t, tw.Flush())
	assert.Equal(t, written.String(), streamed.String())
	assert.Equal(t, len(traceOfEveryKind), strings.Count(written.String(), "\n"))

	got, err := runfile.ReadTrace(&written, "trace.jsonl")
	require.NoError(t, err)
	assert.Equal(t, traceOfEveryKind, got)

	// blank lines are skipped; false flags are absent ones
	got, err = runfile.ReadTrace(strings.NewReader("\n  \n"+`{"t": 7, "event": "deploy", "task": "A#0", "region": 0, "slot": 1, "attempt": 0, "speculative": false}`+"\n\n"), "t")
	require.NoError(t, err)
	assert.Equal(t, []runfile.Event{{At: 7 * time.Millisecond, Kind: runfile.Deploy, Task: "A#0", Slot: 1}}, got)

	got, err = runfile.ReadTrace(strings.NewReader(""), "empty")
	require.NoError(t, err)
	assert.Empty(t, got)
}

// TestTraceReaderErrors: a bad line is an *EventError naming the file,
// the line, the column where one place is at fault and the field, of a
// kind matched with errors.Is.
func TestTraceReaderErrors(t *testing.T) {
	ok := `{"t": 0, "event": "request", "task": "A#0", "region": 0, "attempt": 0}` + "\n"
	tests := []struct {
		name, line string
		kind       error
		column     int
		field      string
		want       string
	}{
		{"syntax error", `{"t": 0, "event": deploy}`, runfile.ErrEventJSON, 19, "", "trace t.jsonl line 2, column 19: malformed JSON: invalid character 'd'"},
		{"trailing data", `{"t": 0, "event": "request", "task": "A#0", "region": 0, "attempt": 0} 1`, runfile.ErrEventJSON, 72, "",
			"trace t.jsonl line 2, column 72: unexpected data after the JSON object (one event per line)"},
		{"unknown field", `{"t": 0, "event": "request", "task": "A#0", "region": 0, "attempt": 0, "node": "n"}`, runfile.ErrEventJSON, 0, "node", `trace t.jsonl line 2: field "node": unknown field`},
		{"upper-case field", `{"T": 0, "event": "request", "task": "A#0", "region": 0, "attempt": 0}`, runfile.ErrEventJSON, 0, "T", `did you mean "t"`},
		{"repeated field", `{"t": 0, "t": 1, "event": "request", "task": "A#0", "region": 0, "attempt": 0}`, runfile.ErrEventJSON, 0, "t", `trace t.jsonl line 2: field "t": duplicate field`},
		{"string time", `{"t": "0", "event": "request", "task": "A#0", "region": 0, "attempt": 0}`, runfile.ErrEventJSON, 0, "t", "expected an integer, got JSON string (valid: an integer number of ms in"},
		{"negative time", `{"t": -1, "event": "request", "task": "A#0", "region": 0, "attempt": 0}`, runfile.ErrEventRange, 0, "t", `trace t.jsonl line 2: field "t": -1 is not in 0 ... 9223372036854`},
		{"missing event", `{"t": 0, "task": "A#0", "region": 0, "attempt": 0}`, runfile.ErrEventMissing, 0, "event", `trace t.jsonl line 2: field "event": missing (valid: request, deploy, finish, fail, cancel, release, refused, reclaim, speculate, win)`},
		{"kind only for pictures", `{"t": 0, "event": "progress", "task": "A#0", "region": 0, "attempt": 0}`, runfile.ErrEventValue, 0, "event", `"progress" is not an event of a trace`},
		{"missing task", `{"t": 0, "event": "deploy", "region": 0, "slot": 0, "attempt": 0}`, runfile.ErrEventMissing, 0, "task", `trace t.jsonl line 2: field "task": missing`},
		{"negative slot", `{"t": 0, "event": "deploy", "task": "A#0", "region": 0, "slot": -1, "attempt": 0}`, runfile.ErrEventRange, 0, "slot", `-1 is not a non-negative integer slot id`},
		{"region below -1", `{"t": 0, "event": "deploy", "task": "A#0", "region": -2, "slot": 0, "attempt": 0}`, runfile.ErrEventRange, 0, "region", `-2 is not an integer region id, or -1 for a driver`},
		{"negative attempt", `{"t": 0, "event": "deploy", "task": "A#0", "region": 0, "slot": 0, "attempt": -1}`, runfile.ErrEventRange, 0, "attempt", `-1 is not a non-negative integer`},
		{"victim on a deploy", `{"t": 0, "event": "deploy", "task": "A#0", "region": 0, "slot": 0, "attempt": 0, "victim": "x"}`, runfile.ErrEventValue, 0, "victim", `a deploy event has none`},
		{"task on a reclaim", `{"t": 0, "event": "reclaim", "job": "a", "victim": "b", "slots": 1, "reason": "r", "task": "A#0"}`, runfile.ErrEventValue, 0, "task", `a reclaim event has none`},
		{"reclaim without victim", `{"t": 0, "event": "reclaim", "job": "a", "slots": 1, "reason": "r"}`, runfile.ErrEventMissing, 0, "victim", `missing`},
		{"negative slots", `{"t": 0, "event": "reclaim", "job": "a", "victim": "b", "slots": -1, "reason": "r"}`, runfile.ErrEventRange, 0, "slots", `-1 is not a non-negative integer`},
		{"refused without by", `{"t": 0, "event": "refused", "job": "a", "reason": "r"}`, runfile.ErrEventMissing, 0, "by", `missing`},
		{"slot on a refusal", `{"t": 0, "event": "refused", "job": "a", "by": "b", "reason": "r", "slot": 1}`, runfile.ErrEventValue, 0, "slot", `a refused event has none`},
		{"region out of range", `{"t": 0, "event": "deploy", "task": "A#0", "region": 99999999999999999999, "slot": 0, "attempt": 0}`, runfile.ErrEventRange, 0, "region",
			"99999999999999999999 is out of range (valid: an integer region id, or -1 for a driver)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := runfile.NewTraceReader(strings.NewReader(ok+tc.line+"\n"+ok), "t.jsonl")
			_, err := tr.Next()
			require.NoError(t, err)
			_, err = tr.Next()
			var te *runfile.EventError
			require.True(t, errors.As(err, &te), "%T %v", err, err)
			assert.ErrorIs(t, err, tc.kind)
			assert.Equal(t, "trace", te.File)
			assert.Equal(t, "t.jsonl", te.Path)
			assert.Equal(t, 2, te.Line)
			assert.Equal(t, tc.column, te.Column)
			assert.Equal(t, tc.field, te.Field)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestTraceReaderLimits: a line too long is an *EventError; an error of
// the reader is returned as it is; after the last event, io.EOF.
func TestTraceReaderLimits(t *testing.T) {
	_, err := runfile.ReadTrace(strings.NewReader(strings.Repeat(" ", 2<<20)), "t.jsonl")
	var te *runfile.EventError
	require.True(t, errors.As(err, &te), "%T %v", err, err)
	assert.ErrorIs(t, err, runfile.ErrEventJSON)
	assert.Equal(t, "trace t.jsonl line 1: longer than 1048576 bytes: one event per line", err.Error())

	broken := errors.New("disk gone")
	_, err = runfile.ReadTrace(io.MultiReader(strings.NewReader("\n"), errReader{broken}), "t.jsonl")
	assert.Same(t, broken, err)

	tr := runfile.NewTraceReader(strings.NewReader(`{"t": 0, "event": "request", "task": "A#0", "region": 0, "attempt": 0}`), "t.jsonl")
	_, err = tr.Next()
	require.NoError(t, err)
	for range 2 {
		_, err = tr.Next()
		assert.Equal(t, io.EOF, err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
