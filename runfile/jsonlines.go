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

// lineScanner yields the non-blank lines of a JSON Lines file with their
// 1-based numbers.
type lineScanner struct {
	sc *bufio.Scanner
	n  int // the number of the last line scanned
}

func newLineScanner(r io.Reader) *lineScanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &lineScanner{sc: sc}
}

// next returns the next non-blank line (valid until the next call) and
// its number; ok is false at the end of the input or on an error (err).
func (s *lineScanner) next() (line []byte, n int, ok bool) {
	for s.sc.Scan() {
		s.n++
		if len(bytes.TrimSpace(s.sc.Bytes())) > 0 {
			return s.sc.Bytes(), s.n, true
		}
	}
	return nil, 0, false
}

// err returns the reader's error, or for a line longer than maxLine its
// number and a tooLong detail ("" otherwise).
func (s *lineScanner) err() (line int, tooLong string, err error) {
	err = s.sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return s.n + 1, fmt.Sprintf("longer than %d bytes: one event per line", maxLine), err
	}
	return 0, "", err
}

// lineProblem is what is wrong with one line of a JSON Lines file, as
// jsontext.Decode found it.
type lineProblem struct {
	column     int    // 1-based byte column; 0 when no one place is at fault
	field      string // "" when the line as a whole is at fault
	detail     string
	outOfRange bool // a number out of its range
}

// describeLine turns jsontext.Decode's error for line into a
// lineProblem with the column of a syntax error or of trailing data;
// valid says what each field takes, for messages.
func describeLine(line []byte, err error, valid map[string]string) lineProblem {
	p := lineProblem{detail: err.Error()}
	var de *jsontext.DecodeError
	if !errors.As(err, &de) {
		return p
	}
	p.field, p.detail = de.Path, de.Detail
	var syntaxErr *json.SyntaxError
	switch {
	case de.Kind == jsontext.ErrUnknownKey || de.Kind == jsontext.ErrDuplicateKey:
		p.detail = fmt.Sprintf("%v: %s", de.Kind, de.Detail)
	case de.Kind == jsontext.ErrType:
		if v, ok := valid[de.Path]; ok {
			p.detail += " (valid: " + v + ")"
		}
	case de.Kind == jsontext.ErrRange:
		p.outOfRange = true
		if v, ok := valid[de.Path]; ok {
			p.detail = fmt.Sprintf("%s is out of range (valid: %s)", de.Number, v)
		}
	case errors.As(de.Err, &syntaxErr):
		// Offset counts the bytes read up to and including the bad one.
		p.column, p.detail = int(syntaxErr.Offset), "malformed JSON: "+syntaxErr.Error()
	case de.Kind == jsontext.ErrMalformed: // the line ends inside the object
		p.column, p.detail = len(bytes.TrimRight(line, " \t\r"))+1, "malformed JSON: the line ends before the object does"
	case de.Kind == jsontext.ErrTrailing:
		p.column, p.detail = trailingColumn(line), "unexpected data after the JSON object (one event per line)"
	}
	return p
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
