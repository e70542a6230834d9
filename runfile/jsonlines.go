package runfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/regionsched/regionsched/internal/jsontext"
)

// maxLine bounds the length of one line of a JSON Lines file (an events
// file, a trace).
const maxLine = 1 << 20

// What is wrong with a line of an events file or a trace, matched with
// errors.Is through an *EventError.
var (
	// ErrEventJSON: the line is not one strict JSON object (a syntax
	// error, a value of the wrong type, an unknown or repeated field, a
	// field given null, anything after the object).
	ErrEventJSON = errors.New("malformed event")
	// ErrEventMissing: a field the event needs is absent (or null).
	ErrEventMissing = errors.New("missing field")
	// ErrEventRange: a number is outside its range.
	ErrEventRange = errors.New("out of range")
	// ErrEventValue: a field has a value it may not have (an empty name,
	// an unknown event kind, a priority on a kill, a slot on a trace's
	// reclaim).
	ErrEventValue = errors.New("invalid value")
	// ErrEventJob: an event of an events file names no job of the run.
	ErrEventJob = errors.New("no such job")
)

// EventError is a bad line of an events file or a trace: it names the
// file, the line, the column where the decoder can tell it, and the field
// at fault.
type EventError struct {
	// File says what the file is: "events file" or "trace".
	File string
	// Path names the file, as given to ReadEvents or NewTraceReader.
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
// `events file PATH line N, column C: field "F": DETAIL` (`trace PATH
// line N ...` for a trace).
func (e *EventError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s line %d", e.File, e.Path, e.Line)
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

// lineScanner yields the non-blank lines of a JSON Lines file and makes
// the errors of its lines.
type lineScanner struct {
	file, path string // for EventError
	sc         *bufio.Scanner
	n          int // the number of the last line scanned
}

func newLineScanner(r io.Reader, file, path string) *lineScanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &lineScanner{file: file, path: path, sc: sc}
}

// next returns the next non-blank line (valid until the next call); ok
// is false at the end of the input or on an error (err).
func (s *lineScanner) next() (line []byte, ok bool) {
	for s.sc.Scan() {
		s.n++
		if len(bytes.TrimSpace(s.sc.Bytes())) > 0 {
			return s.sc.Bytes(), true
		}
	}
	return nil, false
}

// at names the file and the last line returned in e.
func (s *lineScanner) at(e *EventError) *EventError {
	e.File, e.Path, e.Line = s.file, s.path, s.n
	return e
}

// err returns, once next has returned false, nil at the end of the
// input, an *EventError for a line longer than maxLine, or the reader's
// error as it is.
func (s *lineScanner) err() error {
	err := s.sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return &EventError{File: s.file, Path: s.path, Line: s.n + 1, Kind: ErrEventJSON, Err: err,
			Detail: fmt.Sprintf("longer than %d bytes: one event per line", maxLine)}
	}
	return err
}

// lineError turns jsontext.Decode's error for line into an *EventError
// (its file and line left to the lineScanner) with the column of a
// syntax error or of trailing data; valid says what each field takes,
// and null what a field that may be left out takes instead of null (by
// default: the valid values, if known), for messages.
func lineError(line []byte, err error, valid, null map[string]string) *EventError {
	e := &EventError{Kind: ErrEventJSON, Err: err, Detail: err.Error()}
	var de *jsontext.DecodeError
	if !errors.As(err, &de) {
		return e
	}
	e.Field, e.Detail = de.Path, de.Detail
	var syntaxErr *json.SyntaxError
	switch {
	case de.Kind == jsontext.ErrUnknownKey || de.Kind == jsontext.ErrDuplicateKey:
		e.Detail = fmt.Sprintf("%v: %s", de.Kind, de.Detail)
	case de.Kind == jsontext.ErrNull:
		if n, ok := null[de.Path]; ok {
			e.Detail = n
		} else if v, ok := valid[de.Path]; ok {
			e.Detail = fmt.Sprintf("null is not a value (valid: %s); leave the field out where the line has none", v)
		} else {
			e.Detail = "null is not a value; leave the field out where the line has none"
		}
	case de.Kind == jsontext.ErrType:
		if v, ok := valid[de.Path]; ok {
			e.Detail += " (valid: " + v + ")"
		}
	case de.Kind == jsontext.ErrRange:
		e.Kind = ErrEventRange
		if v, ok := valid[de.Path]; ok {
			e.Detail = fmt.Sprintf("%s is out of range (valid: %s)", de.Number, v)
		}
	case errors.As(de.Err, &syntaxErr):
		// Offset counts the bytes read up to and including the bad one.
		e.Column, e.Detail = int(syntaxErr.Offset), "malformed JSON: "+syntaxErr.Error()
	case de.Kind == jsontext.ErrMalformed: // the line ends inside the object
		e.Column, e.Detail = len(bytes.TrimRight(line, " \t\r"))+1, "malformed JSON: the line ends before the object does"
	case de.Kind == jsontext.ErrTrailing:
		e.Column, e.Detail = trailingColumn(line), "unexpected data after the JSON object (one event per line)"
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

// quoteJSON quotes a value from a file as JSON would write it.
func quoteJSON(s string) string { return string(jsontext.AppendString(nil, s)) }
