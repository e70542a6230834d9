package runfile

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/jsontext"
	"github.com/regionsched/regionsched/topology"
)

// What is wrong with a line of an events file, matched with errors.Is
// through an *EventError.
var (
	// ErrEventJSON: the line is not one strict JSON object (a syntax
	// error, a value of the wrong type, an unknown or repeated field,
	// anything after the object).
	ErrEventJSON = errors.New("malformed event")
	// ErrEventMissing: a field the event needs is absent (or null).
	ErrEventMissing = errors.New("missing field")
	// ErrEventRange: a number is outside its range.
	ErrEventRange = errors.New("out of range")
	// ErrEventValue: a field has a value it may not have (an empty name,
	// an unknown event kind, a priority on a kill).
	ErrEventValue = errors.New("invalid value")
	// ErrEventJob: the event names no job of the run.
	ErrEventJob = errors.New("no such job")
)

// eventValid says what each field of an event takes, for messages.
var eventValid = map[string]string{
	"t":        "an integer number of ms in " + jsontext.MillisRange,
	"event":    strings.Join(eventKinds, ", "),
	"job":      "the name of a job of the run",
	"priority": fmt.Sprintf("an integer in 1 ... %d", topology.MaxPriority),
	"by":       "a non-empty user name",
}

// eventKinds are the values of an event's "event" field.
var eventKinds = []string{"set-priority", "kill"}

// eventFields are the fields of an event, in documentation order.
var eventFields = []string{"t", "event", "job", "priority", "by"}

// EventError is a bad line of an events file: it names the file, the
// line, the column where the decoder can tell it, and the field at fault.
type EventError struct {
	// Path names the file, as given to ReadEvents.
	Path string
	// Line is the 1-based line number.
	Line int
	// Column is the 1-based byte column in the line; 0 when no one place
	// is at fault.
	Column int
	// Field is the field at fault; "" when the line as a whole is.
	Field string
	// Kind is one of the ErrEvent sentinels.
	Kind error
	// Detail says what is wrong and what would be valid.
	Detail string
	// Err is the decoder's error, if any.
	Err error
}

// Error names the file, line, column and field, then what is wrong:
// `events file PATH line N, column C: field "F": DETAIL`.
func (e *EventError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "events file %s line %d", e.Path, e.Line)
	if e.Column > 0 {
		fmt.Fprintf(&b, ", column %d", e.Column)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	b.WriteString(": " + e.Detail)
	return b.String()
}

// Unwrap returns the kind of problem and, if any, the decoder's error.
func (e *EventError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// eventWire is an event line as written; pointers tell absent from zero.
type eventWire struct {
	T        *int64  `json:"t"`
	Event    *string `json:"event"`
	Job      *string `json:"job"`
	Priority *int64  `json:"priority"`
	By       *string `json:"by"`
}

// ReadEvents reads an events file (docs/job-file.md) from r: JSON Lines
// of {"t": ms, "event": "set-priority" | "kill", "job", "priority", "by"},
// returned sorted by time (stably: lines of the same time keep their
// order); blank lines are skipped. Each line is strict like a job file
// (exact field names, each once, nothing after the object, at most 1 MiB)
// and range-checked (a priority in 1 ... maxPriority: the admission's
// range, topology.MaxPriority, or the backend's); an event naming none of
// jobs (if jobs is not nil) is refused. The error of a bad line is an
// *EventError naming the file (path, used only in errors), the line and
// the field; an error reading r is returned as it is.
func ReadEvents(r io.Reader, path string, jobs []string, maxPriority int64) ([]JobEvent, error) {
	var evs []JobEvent
	lines := newLineScanner(r)
	for {
		line, n, ok := lines.next()
		if !ok {
			break
		}
		ev, err := decodeEvent(line, jobs, maxPriority)
		if err != nil {
			err.Path, err.Line = path, n
			return nil, err
		}
		evs = append(evs, ev)
	}
	if n, tooLong, err := lines.err(); tooLong != "" {
		return nil, &EventError{Path: path, Line: n, Kind: ErrEventJSON, Err: err, Detail: tooLong}
	} else if err != nil {
		return nil, err
	}
	slices.SortStableFunc(evs, func(a, b JobEvent) int { return cmp.Compare(a.At, b.At) })
	return evs, nil
}

// decodeEvent decodes and checks one line; the error's path and line are
// left to the caller.
func decodeEvent(line []byte, jobs []string, maxPriority int64) (JobEvent, *EventError) {
	var w eventWire
	if err := jsontext.Decode(line, &w, "", eventFields); err != nil {
		return JobEvent{}, decodeEventError(line, err)
	}
	bad := func(field string, kind error, format string, a ...any) (JobEvent, *EventError) {
		return JobEvent{}, &EventError{Field: field, Kind: kind, Detail: fmt.Sprintf(format, a...)}
	}
	missing := func(field, why string) (JobEvent, *EventError) {
		return bad(field, ErrEventMissing, "missing%s (valid: %s)", why, eventValid[field]) // why: "" or ": ..."
	}
	var out JobEvent
	switch {
	case w.Event == nil:
		return missing("event", "")
	case strings.EqualFold(*w.Event, "set-priority"):
		out.Action = admission.ActionSetPriority
	case strings.EqualFold(*w.Event, "kill"):
		out.Action = admission.ActionKill
	default:
		return bad("event", ErrEventValue, "%s is not an event (valid: %s)", quoteJSON(*w.Event), eventValid["event"])
	}
	switch {
	case w.T == nil:
		return missing("t", "")
	case *w.T < 0 || *w.T > jsontext.MaxMillis:
		return bad("t", ErrEventRange, "%d is not in %s (the time of the event, in ms)", *w.T, jsontext.MillisRange)
	}
	out.At = time.Duration(*w.T) * time.Millisecond
	switch {
	case w.Job == nil:
		return missing("job", "")
	case *w.Job == "":
		return bad("job", ErrEventValue, "must not be empty (valid: %s)", eventValid["job"])
	case jobs != nil && !slices.Contains(jobs, *w.Job):
		return bad("job", ErrEventJob, "%s names no job of the run (jobs: %s)", quoteJSON(*w.Job), listJobs(jobs, 12))
	}
	out.Job = *w.Job
	switch {
	case w.By == nil:
		return missing("by", ": the user asking")
	case *w.By == "":
		return bad("by", ErrEventValue, "must not be empty (valid: %s)", eventValid["by"])
	}
	out.By = *w.By
	switch {
	case out.Action == admission.ActionKill && w.Priority != nil:
		return bad("priority", ErrEventValue, "a kill event has none")
	case out.Action == admission.ActionKill:
	case w.Priority == nil:
		return missing("priority", ": a set-priority event needs it")
	case *w.Priority < 1 || *w.Priority > maxPriority:
		return bad("priority", ErrEventRange, "%d is not in 1 ... %d", *w.Priority, maxPriority)
	default:
		out.Priority = int(*w.Priority)
	}
	return out, nil
}

// decodeEventError turns jsontext.Decode's error for line into an
// *EventError with the column of a syntax error or of trailing data.
func decodeEventError(line []byte, err error) *EventError {
	p := describeLine(line, err, eventValid)
	e := &EventError{Kind: ErrEventJSON, Err: err, Column: p.column, Field: p.field, Detail: p.detail}
	if p.outOfRange {
		e.Kind = ErrEventRange
	}
	return e
}

// listJobs lists at most limit job names.
func listJobs(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:limit], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
}
