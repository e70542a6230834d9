package runfile

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/regionsched/regionsched/internal/jsontext"
)

// ErrTrace is the kind of every *TraceError, matched with errors.Is.
var ErrTrace = errors.New("bad trace line")

// TraceError is a bad line of a trace: it names the file, the line, the
// column where the decoder can tell it, and the field at fault.
type TraceError struct {
	// Path names the file, as given to NewTraceReader or ReadTrace.
	Path string
	// Line is the 1-based line number.
	Line int
	// Column is the 1-based byte column in the line; 0 when no one place
	// is at fault.
	Column int
	// Field is the field at fault; "" when the line as a whole is.
	Field string
	// Detail says what is wrong and what would be valid.
	Detail string
	// Err is the decoder's error, if any.
	Err error
}

// Error names the file, line, column and field, then what is wrong:
// `trace PATH line N, column C: field "F": DETAIL`.
func (e *TraceError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "trace %s line %d", e.Path, e.Line)
	if e.Column > 0 {
		fmt.Fprintf(&b, ", column %d", e.Column)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	b.WriteString(": " + e.Detail)
	return b.String()
}

// Unwrap returns ErrTrace and, if any, the decoder's error.
func (e *TraceError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrTrace}
	}
	return []error{ErrTrace, e.Err}
}

// traceWire is a trace line as written; pointers tell absent from zero.
type traceWire struct {
	T           *int64  `json:"t"`
	Event       *string `json:"event"`
	Job         *string `json:"job"`
	Task        *string `json:"task"`
	Region      *int    `json:"region"`
	Slot        *int    `json:"slot"`
	Attempt     *int    `json:"attempt"`
	Speculative *bool   `json:"speculative"`
	Shared      *bool   `json:"shared"`
	By          *string `json:"by"`
	Reason      *string `json:"reason"`
	Victim      *string `json:"victim"`
	Slots       *int    `json:"slots"`
}

// traceFields are the fields of a trace line, in the order AppendJSON
// writes them.
var traceFields = []string{"t", "event", "job", "victim", "slots", "by", "reason", "task", "region", "slot", "attempt", "speculative", "shared"}

// traceKinds are the values of a trace line's "event" field.
var traceKinds = func() []string {
	var out []string
	for k := range Kind(len(kindNames)) {
		if k.Traced() {
			out = append(out, k.String())
		}
	}
	return out
}()

// traceValid says what each field of a trace line takes, for messages.
var traceValid = map[string]string{
	"t":       "an integer number of ms in " + jsontext.MillisRange,
	"event":   strings.Join(traceKinds, ", "),
	"region":  "an integer region id, or -1 for a driver",
	"slot":    "a non-negative integer slot id",
	"attempt": "a non-negative integer",
	"slots":   "a non-negative integer",
}

// TraceReader reads a trace (docs/job-file.md), the JSON Lines that
// TraceWriter and WriteTrace write, one event at a time: memory does
// not grow with the trace.
type TraceReader struct {
	path  string
	lines *lineScanner
}

// NewTraceReader returns a TraceReader reading from r; path names the
// file in errors only.
func NewTraceReader(r io.Reader, path string) *TraceReader {
	return &TraceReader{path: path, lines: newLineScanner(r)}
}

// Next returns the next event of the trace, and io.EOF after the last
// one; blank lines are skipped. Each line is strict: exact field names,
// each once, nothing after the object, a kind that is Traced, and the
// fields of its kind as AppendJSON writes them (a reclaim has job,
// victim, slots and reason; a refused change by and reason, and maybe
// job; a task's event task, region, attempt and maybe job, slot,
// speculative and shared), with Slot NoSlot (and Region NoRegion for a
// reclaim or refusal) where the line has none. The error of a bad line
// is a *TraceError; an error reading is returned as it is.
func (t *TraceReader) Next() (Event, error) {
	line, n, ok := t.lines.next()
	if !ok {
		if n, tooLong, err := t.lines.err(); tooLong != "" {
			return Event{}, &TraceError{Path: t.path, Line: n, Err: err, Detail: tooLong}
		} else if err != nil {
			return Event{}, err
		}
		return Event{}, io.EOF
	}
	e, err := decodeTraceLine(line)
	if err != nil {
		err.Path, err.Line = t.path, n
		return Event{}, err
	}
	return e, nil
}

// ReadTrace reads a whole trace with a TraceReader (see Next).
func ReadTrace(r io.Reader, path string) ([]Event, error) {
	tr := NewTraceReader(r, path)
	var out []Event
	for {
		e, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
}

// decodeTraceLine decodes and checks one line; the error's path and line
// are left to the caller.
func decodeTraceLine(line []byte) (Event, *TraceError) {
	var w traceWire
	if err := jsontext.Decode(line, &w, "", traceFields); err != nil {
		p := describeLine(line, err, traceValid)
		return Event{}, &TraceError{Err: err, Column: p.column, Field: p.field, Detail: p.detail}
	}
	e := Event{Slot: NoSlot, Region: NoRegion}
	switch {
	case w.Event == nil:
		return traceMissing("event")
	case w.T == nil:
		return traceMissing("t")
	case *w.T < 0 || *w.T > jsontext.MaxMillis:
		return traceBad("t", "%d is not in %s (the time of the event, in ms)", *w.T, jsontext.MillisRange)
	}
	e.At = time.Duration(*w.T) * time.Millisecond
	k, ok := parseTracedKind(*w.Event)
	if !ok {
		return traceBad("event", "%s is not an event of a trace (valid: %s)", quoteJSON(*w.Event), traceValid["event"])
	}
	e.Kind = k
	if w.Job != nil {
		e.Job = *w.Job
	}
	var err *TraceError
	switch k {
	case Reclaim:
		err = decodeReclaim(&w, &e)
	case Refused:
		err = decodeRefused(&w, &e)
	default:
		err = decodeTaskEvent(&w, &e)
	}
	if err != nil {
		return Event{}, err
	}
	return e, nil
}

// parseTracedKind returns the Traced kind named s.
func parseTracedKind(s string) (Kind, bool) {
	for k := range Kind(len(kindNames)) {
		if k.Traced() && k.String() == s {
			return k, true
		}
	}
	return 0, false
}

// field is a field of a trace line: its name and whether it is present.
type field struct {
	name    string
	present bool
}

// checkFields refuses a field of others present (a field the kind's
// lines never have) and a field of needs absent.
func checkFields(k Kind, needs, others []field) *TraceError {
	for _, f := range needs {
		if !f.present {
			_, err := traceMissing(f.name)
			return err
		}
	}
	for _, f := range others {
		if f.present {
			_, err := traceBad(f.name, "a %s event has none", k)
			return err
		}
	}
	return nil
}

func decodeReclaim(w *traceWire, e *Event) *TraceError {
	if err := checkFields(Reclaim, []field{{"job", w.Job != nil}, {"victim", w.Victim != nil}, {"slots", w.Slots != nil}, {"reason", w.Reason != nil}},
		[]field{{"by", w.By != nil}, {"task", w.Task != nil}, {"region", w.Region != nil}, {"slot", w.Slot != nil}, {"attempt", w.Attempt != nil},
			{"speculative", w.Speculative != nil}, {"shared", w.Shared != nil}}); err != nil {
		return err
	}
	if *w.Slots < 0 {
		_, err := traceBad("slots", "%d is not %s", *w.Slots, traceValid["slots"])
		return err
	}
	e.Victim, e.Slots, e.Reason = *w.Victim, *w.Slots, *w.Reason
	return nil
}

func decodeRefused(w *traceWire, e *Event) *TraceError {
	if err := checkFields(Refused, []field{{"by", w.By != nil}, {"reason", w.Reason != nil}},
		[]field{{"victim", w.Victim != nil}, {"slots", w.Slots != nil}, {"task", w.Task != nil}, {"region", w.Region != nil}, {"slot", w.Slot != nil},
			{"attempt", w.Attempt != nil}, {"speculative", w.Speculative != nil}, {"shared", w.Shared != nil}}); err != nil {
		return err
	}
	e.By, e.Reason = *w.By, *w.Reason
	return nil
}

func decodeTaskEvent(w *traceWire, e *Event) *TraceError {
	if err := checkFields(e.Kind, []field{{"task", w.Task != nil}, {"region", w.Region != nil}, {"attempt", w.Attempt != nil}},
		[]field{{"victim", w.Victim != nil}, {"slots", w.Slots != nil}, {"by", w.By != nil}, {"reason", w.Reason != nil}}); err != nil {
		return err
	}
	var err *TraceError
	switch {
	case *w.Region < NoRegion:
		_, err = traceBad("region", "%d is not %s", *w.Region, traceValid["region"])
	case *w.Attempt < 0:
		_, err = traceBad("attempt", "%d is not %s", *w.Attempt, traceValid["attempt"])
	case w.Slot != nil && *w.Slot < 0:
		_, err = traceBad("slot", "%d is not %s", *w.Slot, traceValid["slot"])
	}
	if err != nil {
		return err
	}
	e.Task, e.Region, e.Attempt = *w.Task, *w.Region, *w.Attempt
	if w.Slot != nil {
		e.Slot = *w.Slot
	}
	e.Speculative = w.Speculative != nil && *w.Speculative
	e.Shared = w.Shared != nil && *w.Shared
	return nil
}

func traceMissing(name string) (Event, *TraceError) {
	detail := "missing"
	if v, ok := traceValid[name]; ok {
		detail += " (valid: " + v + ")"
	}
	return Event{}, &TraceError{Field: name, Detail: detail}
}

func traceBad(name, format string, a ...any) (Event, *TraceError) {
	return Event{}, &TraceError{Field: name, Detail: fmt.Sprintf(format, a...)}
}
