package runfile

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/jsontext"
	"github.com/regionsched/regionsched/topology"
)

// eventValid says what each field of an event takes, for messages.
var eventValid = map[string]string{
	"t":        "an integer number of ms in " + jsontext.MillisRange,
	"event":    strings.Join(eventKinds, ", "),
	"job":      "the name of a job of the run",
	"priority": fmt.Sprintf("an integer in 1 ... %d", topology.MaxPriority),
	"by":       "a non-empty user name",
}

// eventNull says what the fields of an event that may be left out take
// instead of null.
var eventNull = map[string]string{
	"priority": fmt.Sprintf("null is not a priority (valid: an integer in 1 ... %d); leave the field out of a kill event", topology.MaxPriority),
}

// eventKinds are the values of an event's "event" field.
var eventKinds = []string{"set-priority", "kill"}

// eventFields are the fields of an event, in documentation order.
var eventFields = []string{"t", "event", "job", "priority", "by"}

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
// (exact field names, each once, no null, nothing after the object, at
// most 1 MiB)
// and range-checked (a priority in 1 ... maxPriority: the admission's
// range, topology.MaxPriority, or the backend's); an event naming none of
// jobs (if jobs is not nil) is refused. The error of a bad line is an
// *EventError naming the file (path, used only in errors), the line and
// the field; an error reading r is returned as it is.
func ReadEvents(r io.Reader, path string, jobs []string, maxPriority int64) ([]JobEvent, error) {
	var evs []JobEvent
	lines := newLineScanner(r, "events file", path)
	for {
		line, ok := lines.next()
		if !ok {
			break
		}
		ev, err := decodeEvent(line, jobs, maxPriority)
		if err != nil {
			return nil, lines.at(err)
		}
		evs = append(evs, ev)
	}
	if err := lines.err(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(evs, func(a, b JobEvent) int { return cmp.Compare(a.At, b.At) })
	return evs, nil
}

// decodeEvent decodes and checks one line; the error's path and line are
// left to the caller.
func decodeEvent(line []byte, jobs []string, maxPriority int64) (JobEvent, *EventError) {
	var w eventWire
	// null is reported as missing for the fields every event needs
	if err := jsontext.Decode(line, &w, "", eventFields, "t", "event", "job", "by"); err != nil {
		return JobEvent{}, lineError(line, err, eventValid, eventNull)
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

// listJobs lists at most limit job names.
func listJobs(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:limit], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
}
