package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// Kinds of *DecodeError besides ErrUnknownKey and ErrDuplicateKey,
// matched with errors.Is.
var (
	// ErrMalformed means the data is not valid JSON: a syntax error or
	// an unexpected end of input.
	ErrMalformed = errors.New("malformed JSON")
	// ErrTrailing means there is more than whitespace after the value.
	ErrTrailing = errors.New("trailing data")
	// ErrType means a value is not of the JSON type the Go value needs,
	// e.g. a string where an integer belongs.
	ErrType = errors.New("wrong JSON type")
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

// DecodeError is a problem found by Decode.
type DecodeError struct {
	// Path is the JSON path of the offending value, e.g.
	// "vertices[2].paralelism" for a field name, or the path given to
	// Decode when the problem is the whole value; "" for the document.
	Path string
	// Kind is ErrUnknownKey, ErrDuplicateKey, ErrType, ErrMalformed,
	// ErrTrailing or ErrInvalid.
	Kind error
	// Detail says what is wrong without naming the path, in words for a
	// user: "valid fields: id, parallelism", "expected an integer, got
	// JSON string", "unexpected end of input" (for ErrInvalid, the
	// message of Err).
	Detail string
	// Err is the cause: a *KeyError, *json.UnmarshalTypeError,
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

// Decode decodes the single JSON value data into v, strictly: the member
// names of an object must be exactly (case-sensitively) among fields and
// appear once each (nil fields: v checks its own names, as a type with
// an UnmarshalJSON method such as resource.Profile does), and nothing but
// whitespace may follow the value. Every error is a *DecodeError whose
// Path is under path (the JSON path of data within its document, "" for
// the document itself).
func Decode(data []byte, v any, path string, fields []string) error {
	var ke *KeyError
	if fields != nil {
		if err := CheckKeys(data, fields...); errors.As(err, &ke) {
			return keyError(path, ke)
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
		case errors.As(err, &typeErr):
			return &DecodeError{Path: JoinPath(path, typeErr.Field), Kind: ErrType, Err: err,
				Detail: fmt.Sprintf("expected %s, got JSON %s", Kind(typeErr.Type), typeErr.Value)}
		case errors.As(err, &syntaxErr):
			return &DecodeError{Path: path, Kind: ErrMalformed, Err: err,
				Detail: fmt.Sprintf("%v (at byte %d)", err, syntaxErr.Offset)}
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

// keyError places a *KeyError found in data at path in its document.
func keyError(path string, ke *KeyError) *DecodeError {
	return &DecodeError{Path: JoinPath(path, ke.Field()), Kind: ke.Unwrap(), Detail: ke.Detail(), Err: ke}
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
