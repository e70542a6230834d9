package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"time"
)

// Kinds of *DecodeError besides ErrUnknownKey, ErrDuplicateKey and
// ErrNull, matched with errors.Is.
var (
	// ErrMalformed means the data is not valid JSON: a syntax error or
	// an unexpected end of input.
	ErrMalformed = errors.New("malformed JSON")
	// ErrTrailing means there is more than whitespace after the value.
	ErrTrailing = errors.New("trailing data")
	// ErrType means a value is not of the JSON type the Go value needs,
	// e.g. a string where an integer belongs.
	ErrType = errors.New("wrong JSON type")
	// ErrRange means an integer is written as one but does not fit the Go
	// integer it is read into, e.g. 99999999999999999999 (DecodeError.Number
	// holds it as written).
	ErrRange = errors.New("number out of range")
	// ErrInvalid means a value was refused for another reason: by its
	// own UnmarshalJSON method (DecodeError.Err is the method's error,
	// e.g. a *resource.AmountError) or by encoding/json for a reason not
	// covered by the other kinds (e.g. an unknown struct field when no
	// field names were given to Decode).
	ErrInvalid = errors.New("invalid value")
)

// MaxMillis is the largest number of milliseconds a time.Duration
// holds: the upper bound of every millisecond field of a file.
const MaxMillis = int64(math.MaxInt64) / int64(time.Millisecond)

// MillisRange is the range of a millisecond field, exact and readable,
// for messages: "0 ... 9223372036854 (about 292 years)".
var MillisRange = fmt.Sprintf("0 ... %d (about %d years)", MaxMillis, int64(time.Duration(math.MaxInt64).Hours()/24/365.25))

// DecodeError is a problem found by Decode.
type DecodeError struct {
	// Path is the JSON path of the offending value, e.g.
	// "vertices[2].paralelism" for a field name, or the path given to
	// Decode when the problem is the whole value; "" for the document.
	Path string
	// Kind is ErrUnknownKey, ErrDuplicateKey, ErrNull, ErrType,
	// ErrMalformed, ErrTrailing, ErrRange or ErrInvalid.
	Kind error
	// Number is, for ErrRange, the integer as written in the data.
	Number string
	// Detail says what is wrong without naming the path, in words for a
	// user: "valid fields: id, parallelism", "expected an integer, got
	// JSON string", "99999999999999999999 is out of range (valid: an
	// integer in -9223372036854775808 ... 9223372036854775807)",
	// "invalid character ',' looking for beginning of value (at line 3,
	// column 17)", "unexpected end of input", "null is not a value;
	// leave the field out for its default" (for ErrInvalid, the message
	// of Err; for ErrNull, the Detail of the *NullError).
	Detail string
	// Err is the cause: a *KeyError, *NullError, *json.UnmarshalTypeError,
	// *json.SyntaxError, io.EOF or io.ErrUnexpectedEOF, or the error of
	// an UnmarshalJSON method; nil for ErrTrailing.
	Err error
}

// Error names the path, the kind and the detail.
func (e *DecodeError) Error() string {
	msg := fmt.Sprint(e.Kind)
	if e.Path != "" {
		msg = fmt.Sprintf("field %q: %s", e.Path, msg)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns the kind and, if there is one, the cause, so that both
// errors.Is(err, jsontext.ErrType) and errors.As on the cause work.
func (e *DecodeError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Decode decodes the single JSON value data into v, strictly: with
// fields, data must be an object (JSON null is an ErrType) whose member
// names are (case-sensitively) among fields, each once; no member may be
// JSON null (an ErrNull) unless it is among nullable (a required member,
// which the caller then reports as missing, as if it were absent); and
// nothing but whitespace may follow the value. With nil fields v checks its own names and nulls, as a type with
// an UnmarshalJSON method such as resource.Profile does (returning a
// *KeyError or a *NullError). Every error is a *DecodeError whose Path is
// under path (the JSON path of data within its document, "" for the
// document itself).
func Decode(data []byte, v any, path string, fields []string, nullable ...string) error {
	var ke *KeyError
	var ne *NullError
	if fields != nil {
		if IsNull(data) { // (json would leave v as it is: an object with every member absent)
			return &DecodeError{Path: path, Kind: ErrType, Detail: "expected an object, got JSON null"}
		}
		if ms, err := members(data); err == nil {
			if err := checkMembers(ms, fields, true); errors.As(err, &ke) {
				return keyError(path, ke)
			}
			if err := checkNull(ms, nullable); errors.As(err, &ne) {
				return nullError(path, ne)
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		switch {
		case errors.As(err, &ke):
			return keyError(path, ke)
		case errors.As(err, &ne):
			return nullError(path, ne)
		case errors.As(err, &typeErr):
			if n, ok := strings.CutPrefix(typeErr.Value, "number "); ok && isIntegerLiteral(n) && Kind(typeErr.Type) == "an integer" {
				return &DecodeError{Path: JoinPath(path, typeErr.Field), Kind: ErrRange, Err: err, Number: n,
					Detail: fmt.Sprintf("%s is out of range (valid: an integer in %s)", n, intRange(typeErr.Type))}
			}
			return &DecodeError{Path: JoinPath(path, typeErr.Field), Kind: ErrType, Err: err,
				Detail: fmt.Sprintf("expected %s, got JSON %s", Kind(typeErr.Type), typeErr.Value)}
		case errors.As(err, &syntaxErr):
			line, col := LineColumn(data, syntaxErr.Offset)
			return &DecodeError{Path: path, Kind: ErrMalformed, Err: err,
				Detail: fmt.Sprintf("%v (at line %d, column %d)", err, line, col)}
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return &DecodeError{Path: path, Kind: ErrMalformed, Err: err, Detail: "unexpected end of input"}
		default:
			return &DecodeError{Path: path, Kind: ErrInvalid, Err: err, Detail: err.Error()}
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &DecodeError{Path: path, Kind: ErrTrailing, Detail: "unexpected data after the JSON value"}
	}
	return nil
}

// LineColumn locates the byte at offset in data (the Offset of a
// *json.SyntaxError: the bytes read up to and including the bad one) as a
// 1-based line and column (in bytes) for a user.
func LineColumn(data []byte, offset int64) (line, column int) {
	offset = min(max(offset, 1), int64(len(data)))
	before := data[:offset]
	line = 1 + bytes.Count(before[:max(0, len(before)-1)], []byte{'\n'})
	start := bytes.LastIndexByte(before[:max(0, len(before)-1)], '\n') + 1
	return line, int(offset) - start
}

// isIntegerLiteral reports whether a JSON number is written as an
// integer (no fraction, no exponent).
func isIntegerLiteral(n string) bool {
	n = strings.TrimPrefix(n, "-")
	if n == "" {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// intRange is the range of the Go integer type t (or what it points to):
// "-9223372036854775808 ... 9223372036854775807".
func intRange(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	bits := t.Bits()
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("0 ... %d", uint64(math.MaxUint64)>>(64-bits))
	}
	return fmt.Sprintf("%d ... %d", int64(math.MinInt64)>>(64-bits), int64(math.MaxInt64)>>(64-bits))
}

// keyError places a *KeyError found in data at path in its document.
func keyError(path string, ke *KeyError) *DecodeError {
	return &DecodeError{Path: JoinPath(path, ke.Field()), Kind: ke.Unwrap(), Detail: ke.Detail(), Err: ke}
}

// nullError places a *NullError found in data at path in its document.
func nullError(path string, ne *NullError) *DecodeError {
	return &DecodeError{Path: JoinPath(path, ne.Field()), Kind: ErrNull, Detail: ne.detail(), Err: ne}
}

// JoinPath appends the relative JSON path field ("count",
// "resources.cpuMillis") to path ("slots[1]"), either of which may be
// empty.
func JoinPath(path, field string) string {
	switch {
	case path == "":
		return field
	case field == "":
		return path
	}
	return path + "." + field
}

// IsNull reports whether an optional raw value is absent (nil) or JSON
// null.
func IsNull(raw []byte) bool {
	return raw == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}
