package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/jsontext"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// What is wrong with a line of an events file, matched with errors.Is
// through an *eventError.
var (
	// errEventJSON: the line is not one strict JSON object (a syntax
	// error, a value of the wrong type, an unknown or repeated field,
	// anything after the object).
	errEventJSON = errors.New("malformed event")
	// errEventMissing: a field the event needs is absent (or null).
	errEventMissing = errors.New("missing field")
	// errEventRange: a number is outside its range.
	errEventRange = errors.New("out of range")
	// errEventValue: a field has a value it may not have (an empty name,
	// an unknown event kind, a priority on a kill).
	errEventValue = errors.New("invalid value")
	// errEventJob: the event names no job of the run.
	errEventJob = errors.New("no such job")
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

// eventError is a bad line of an events file: it names the file, the
// line, the column where the decoder can tell it, and the field at fault.
type eventError struct {
	path   string
	line   int
	column int    // 1-based byte column in the line; 0 when no one place is at fault
	field  string // "" when the line as a whole is at fault
	kind   error  // one of the errEvent sentinels
	detail string
	cause  error // the decoder's error, if any
}

// Error names the file, line, column and field, then what is wrong.
func (e *eventError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "events file %s line %d", e.path, e.line)
	if e.column > 0 {
		fmt.Fprintf(&b, ", column %d", e.column)
	}
	if e.field != "" {
		fmt.Fprintf(&b, ": field %q", e.field)
	}
	b.WriteString(": " + e.detail)
	return b.String()
}

// Unwrap returns the kind of problem and, if any, the decoder's error.
func (e *eventError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// eventWire is an event line as written; pointers tell absent from zero.
type eventWire struct {
	T        *int64  `json:"t"`
	Event    *string `json:"event"`
	Job      *string `json:"job"`
	Priority *int64  `json:"priority"`
	By       *string `json:"by"`
}

// maxEventLine bounds the length of one line of an events file.
const maxEventLine = 1 << 20

// readEventsFor reads an events file: JSON Lines of
// {"t": ms, "event": "set-priority" | "kill", "job", "priority", "by"},
// sorted by time (stably: lines of the same time keep their order). Each
// line is strict like a job file (exact field names, each once, nothing
// after the object) and range-checked (a priority in 1 ... maxPriority:
// the admission's range, or Slurm's for run --slurm); an event naming none
// of jobs (if jobs is not nil) is refused. The error of a bad line is an
// *eventError naming the file, the line and the field.
func readEventsFor(path string, jobs []string, maxPriority int64) ([]runfile.JobEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--events: %w", err)
	}
	defer f.Close()
	var evs []runfile.JobEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	n := 1
	for ; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ev, err := decodeEvent(line, jobs, maxPriority)
		if err != nil {
			err.path, err.line = path, n
			return nil, err
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &eventError{path: path, line: n, kind: errEventJSON, cause: err,
				detail: fmt.Sprintf("longer than %d bytes: one event per line", maxEventLine)}
		}
		return nil, fmt.Errorf("--events %s: %w", path, err)
	}
	slices.SortStableFunc(evs, func(a, b runfile.JobEvent) int { return cmp.Compare(a.At, b.At) })
	return evs, nil
}

// decodeEvent decodes and checks one line; the error's path and line are
// left to the caller.
func decodeEvent(line []byte, jobs []string, maxPriority int64) (runfile.JobEvent, *eventError) {
	var w eventWire
	if err := jsontext.Decode(line, &w, "", eventFields); err != nil {
		return runfile.JobEvent{}, decodeEventError(line, err)
	}
	bad := func(field string, kind error, format string, a ...any) (runfile.JobEvent, *eventError) {
		return runfile.JobEvent{}, &eventError{field: field, kind: kind, detail: fmt.Sprintf(format, a...)}
	}
	missing := func(field, why string) (runfile.JobEvent, *eventError) {
		return bad(field, errEventMissing, "missing%s (valid: %s)", why, eventValid[field]) // why: "" or ": ..."
	}
	var out runfile.JobEvent
	switch {
	case w.Event == nil:
		return missing("event", "")
	case strings.EqualFold(*w.Event, "set-priority"):
		out.Action = admission.ActionSetPriority
	case strings.EqualFold(*w.Event, "kill"):
		out.Action = admission.ActionKill
	default:
		return bad("event", errEventValue, "%s is not an event (valid: %s)", quoteJSON(*w.Event), eventValid["event"])
	}
	switch {
	case w.T == nil:
		return missing("t", "")
	case *w.T < 0 || *w.T > jsontext.MaxMillis:
		return bad("t", errEventRange, "%d is not in %s (the time of the event, in ms)", *w.T, jsontext.MillisRange)
	}
	out.At = time.Duration(*w.T) * time.Millisecond
	switch {
	case w.Job == nil:
		return missing("job", "")
	case *w.Job == "":
		return bad("job", errEventValue, "must not be empty (valid: %s)", eventValid["job"])
	case jobs != nil && !slices.Contains(jobs, *w.Job):
		return bad("job", errEventJob, "%s names no job of the run (jobs: %s)", quoteJSON(*w.Job), listJobs(jobs, 12))
	}
	out.Job = *w.Job
	switch {
	case w.By == nil:
		return missing("by", ": the user asking")
	case *w.By == "":
		return bad("by", errEventValue, "must not be empty (valid: %s)", eventValid["by"])
	}
	out.By = *w.By
	switch {
	case out.Action == admission.ActionKill && w.Priority != nil:
		return bad("priority", errEventValue, "a kill event has none")
	case out.Action == admission.ActionKill:
	case w.Priority == nil:
		return missing("priority", ": a set-priority event needs it")
	case *w.Priority < 1 || *w.Priority > maxPriority:
		return bad("priority", errEventRange, "%d is not in 1 ... %d", *w.Priority, maxPriority)
	default:
		out.Priority = int(*w.Priority)
	}
	return out, nil
}

// decodeEventError turns jsontext.Decode's error for line into an
// *eventError with the column of a syntax error or of trailing data.
func decodeEventError(line []byte, err error) *eventError {
	e := &eventError{kind: errEventJSON, cause: err, detail: err.Error()}
	var de *jsontext.DecodeError
	if !errors.As(err, &de) {
		return e
	}
	e.field, e.detail = de.Path, de.Detail
	var syntaxErr *json.SyntaxError
	switch {
	case de.Kind == jsontext.ErrUnknownKey || de.Kind == jsontext.ErrDuplicateKey:
		e.detail = fmt.Sprintf("%v: %s", de.Kind, de.Detail)
	case de.Kind == jsontext.ErrType:
		if valid, ok := eventValid[de.Path]; ok {
			e.detail += " (valid: " + valid + ")"
		}
	case de.Kind == jsontext.ErrRange:
		e.kind = errEventRange
		if valid, ok := eventValid[de.Path]; ok {
			e.detail = fmt.Sprintf("%s is out of range (valid: %s)", de.Number, valid)
		}
	case errors.As(de.Err, &syntaxErr):
		// Offset counts the bytes read up to and including the bad one.
		e.column, e.detail = int(syntaxErr.Offset), "malformed JSON: "+syntaxErr.Error()
	case de.Kind == jsontext.ErrMalformed: // the line ends inside the object
		e.column, e.detail = len(bytes.TrimRight(line, " \t\r"))+1, "malformed JSON: the line ends before the object does"
	case de.Kind == jsontext.ErrTrailing:
		e.column, e.detail = trailingColumn(line), "unexpected data after the JSON object (one event per line)"
	}
	return e
}

// trailingColumn is the 1-based column of the first byte after the JSON
// value line starts with (and the blanks after it).
func trailingColumn(line []byte) int {
	dec := json.NewDecoder(bytes.NewReader(line))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil {
		return 0
	}
	off := int(dec.InputOffset())
	for off < len(line) && strings.IndexByte(" \t\r\n", line[off]) >= 0 {
		off++
	}
	return off + 1
}

// listJobs lists at most limit job names.
func listJobs(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:limit], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
}

// users maps the cluster file's users to their roles (none without a
// cluster file: every change is refused).
func (r *jobsRun) users() (map[string]admission.Role, error) {
	out := map[string]admission.Role{}
	if r.cluster == nil {
		return out, nil
	}
	for i, u := range r.cluster.Users {
		role, err := admission.ParseRole(u.Role)
		if err != nil { // decodeCluster admits only valid roles
			return nil, badInput(fmt.Errorf("cluster file %s: users[%d].role: %w", r.clusterPath, i, err))
		}
		out[u.Name] = role
	}
	return out, nil
}
