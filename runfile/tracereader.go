package runfile

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/regionsched/regionsched/internal/jsontext"
)

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
	lines *lineScanner
}

// NewTraceReader returns a TraceReader reading from r; path names the
// file in errors only.
func NewTraceReader(r io.Reader, path string) *TraceReader {
	return &TraceReader{lines: newLineScanner(r, "trace", path)}
}

// Next returns the next event of the trace, and io.EOF after the last
// one; blank lines are skipped. Each line is strict: exact field names,
// each once, no null, nothing after the object, a kind that is Traced,
// and the fields of its kind as AppendJSON writes them (a reclaim has job,
// victim, slots and reason; a refused change by and reason, and maybe
// job; a task's event task, region, attempt and maybe job, slot,
// speculative and shared), with Slot NoSlot (and Region NoRegion for a
// reclaim or refusal) where the line has none. The error of a bad line
// is an *EventError (its File "trace"); an error reading is returned as
// it is.
func (t *TraceReader) Next() (Event, error) {
	line, ok := t.lines.next()
	if !ok {
		if err := t.lines.err(); err != nil {
			return Event{}, err
		}
		return Event{}, io.EOF
	}
	e, err := decodeTraceLine(line)
	if err != nil {
		return Event{}, t.lines.at(err)
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
func decodeTraceLine(line []byte) (Event, *EventError) {
	var w traceWire
	// null is reported as missing for the fields every line has
	if err := jsontext.Decode(line, &w, "", traceFields, "t", "event"); err != nil {
		return Event{}, lineError(line, err, traceValid, nil)
	}
	e := Event{Slot: NoSlot, Region: NoRegion}
	switch {
	case w.Event == nil:
		return traceMissing("event")
	case w.T == nil:
		return traceMissing("t")
	case *w.T < 0 || *w.T > jsontext.MaxMillis:
		return traceBad("t", ErrEventRange, "%d is not in %s (the time of the event, in ms)", *w.T, jsontext.MillisRange)
	}
	e.At = time.Duration(*w.T) * time.Millisecond
	k, ok := parseTracedKind(*w.Event)
	if !ok {
		return traceBad("event", ErrEventValue, "%s is not an event of a trace (valid: %s)", quoteJSON(*w.Event), traceValid["event"])
	}
	e.Kind = k
	if w.Job != nil {
		e.Job = *w.Job
	}
	var err *EventError
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
func checkFields(k Kind, needs, others []field) *EventError {
	for _, f := range needs {
		if !f.present {
			_, err := traceMissing(f.name)
			return err
		}
	}
	for _, f := range others {
		if f.present {
			_, err := traceBad(f.name, ErrEventValue, "a %s event has none", k)
			return err
		}
	}
	return nil
}

func decodeReclaim(w *traceWire, e *Event) *EventError {
	if err := checkFields(Reclaim, []field{{"job", w.Job != nil}, {"victim", w.Victim != nil}, {"slots", w.Slots != nil}, {"reason", w.Reason != nil}},
		[]field{{"by", w.By != nil}, {"task", w.Task != nil}, {"region", w.Region != nil}, {"slot", w.Slot != nil}, {"attempt", w.Attempt != nil},
			{"speculative", w.Speculative != nil}, {"shared", w.Shared != nil}}); err != nil {
		return err
	}
	if *w.Slots < 0 {
		_, err := traceBad("slots", ErrEventRange, "%d is not %s", *w.Slots, traceValid["slots"])
		return err
	}
	e.Victim, e.Slots, e.Reason = *w.Victim, *w.Slots, *w.Reason
	return nil
}

func decodeRefused(w *traceWire, e *Event) *EventError {
	if err := checkFields(Refused, []field{{"by", w.By != nil}, {"reason", w.Reason != nil}},
		[]field{{"victim", w.Victim != nil}, {"slots", w.Slots != nil}, {"task", w.Task != nil}, {"region", w.Region != nil}, {"slot", w.Slot != nil},
			{"attempt", w.Attempt != nil}, {"speculative", w.Speculative != nil}, {"shared", w.Shared != nil}}); err != nil {
		return err
	}
	e.By, e.Reason = *w.By, *w.Reason
	return nil
}

func decodeTaskEvent(w *traceWire, e *Event) *EventError {
	if err := checkFields(e.Kind, []field{{"task", w.Task != nil}, {"region", w.Region != nil}, {"attempt", w.Attempt != nil}},
		[]field{{"victim", w.Victim != nil}, {"slots", w.Slots != nil}, {"by", w.By != nil}, {"reason", w.Reason != nil}}); err != nil {
		return err
	}
	var err *EventError
	switch {
	case *w.Region < NoRegion:
		_, err = traceBad("region", ErrEventRange, "%d is not %s", *w.Region, traceValid["region"])
	case *w.Attempt < 0:
		_, err = traceBad("attempt", ErrEventRange, "%d is not %s", *w.Attempt, traceValid["attempt"])
	case w.Slot != nil && *w.Slot < 0:
		_, err = traceBad("slot", ErrEventRange, "%d is not %s", *w.Slot, traceValid["slot"])
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

func traceMissing(name string) (Event, *EventError) {
	detail := "missing"
	if v, ok := traceValid[name]; ok {
		detail += " (valid: " + v + ")"
	}
	return Event{}, &EventError{Field: name, Kind: ErrEventMissing, Detail: detail}
}

func traceBad(name string, kind error, format string, a ...any) (Event, *EventError) {
	return Event{}, &EventError{Field: name, Kind: kind, Detail: fmt.Sprintf(format, a...)}
}
