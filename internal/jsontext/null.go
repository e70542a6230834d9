package jsontext

import (
	"errors"
	"fmt"
	"slices"
)

// ErrNull means an object member is JSON null: the file formats take a
// value or the member left out (for its default), never null, so that
// null cannot silently stand for a default or a zero. It is the Kind of
// a *DecodeError and what a *NullError wraps.
var ErrNull = errors.New("null value")

// NullDetail is the Detail of a null member when nothing more precise
// is known about the field.
const NullDetail = "null is not a value; leave the field out for its default"

// NullError reports an object member whose value is JSON null.
type NullError struct {
	// Object is the path of the object within the decoded value, "" for
	// the value itself ("extended" for a profile's extended resources).
	Object string
	// Key is the member's name.
	Key string
	// Detail says, in words for a user and without naming the field,
	// what the field takes instead and what leaving it out means; ""
	// for NullDetail.
	Detail string
}

// Field returns the path of the null member: Object.Key.
func (e *NullError) Field() string {
	if e.Object == "" {
		return e.Key
	}
	return e.Object + "." + e.Key
}

// Error names the field and says what it takes instead.
func (e *NullError) Error() string {
	return fmt.Sprintf("field %q: %s", e.Field(), e.detail())
}

// Unwrap returns ErrNull.
func (e *NullError) Unwrap() error { return ErrNull }

func (e *NullError) detail() string {
	if e.Detail == "" {
		return NullDetail
	}
	return e.Detail
}

// CheckNull returns a *NullError for the first member (in document
// order) of the object data whose value is JSON null, unless its name is
// among nullable. It returns nil when data is not a well-formed object:
// decoding it reports that better.
func CheckNull(data []byte, nullable ...string) error {
	ms, err := members(data)
	if err != nil {
		return nil
	}
	return checkNull(ms, nullable)
}

func checkNull(ms []member, nullable []string) error {
	for _, m := range ms {
		if m.null && !slices.Contains(nullable, m.key) {
			return &NullError{Key: m.key}
		}
	}
	return nil
}
