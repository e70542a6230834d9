// Package jsontext holds the small pieces of JSON handling that
// encoding/json does not do the way regionsched's file formats need:
// exact, duplicate-free object keys (encoding/json matches field names
// case-insensitively and lets the last duplicate win), strict decoding
// whose errors name the JSON path of the culprit (Decode), JSON string
// escaping for hand-written output, and naming the JSON form of a Go type
// in error messages.
package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// ErrNotObject means Keys was given a JSON value that is not an object.
var ErrNotObject = errors.New("not a JSON object")

// Sentinels wrapped by a *KeyError.
var (
	// ErrUnknownKey means an object has a member name that is not exactly
	// (case-sensitively) one of the allowed names.
	ErrUnknownKey = errors.New("unknown field")
	// ErrDuplicateKey means an object has the same member name twice.
	ErrDuplicateKey = errors.New("duplicate field")
)

// Keys returns the member names of the JSON object data starts with, in
// document order, duplicates included, as encoding/json would see them
// (escapes resolved). It returns ErrNotObject if the value is not an
// object (null included) and encoding/json's error if data is malformed.
// Data after the first value is not looked at.
func Keys(data []byte) ([]string, error) {
	ms, err := members(data)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, m := range ms {
		keys = append(keys, m.key)
	}
	return keys, nil
}

// member is a member of an object as members reads it: its name and
// whether its value is JSON null.
type member struct {
	key  string
	null bool
}

// members returns the members of the JSON object data starts with, in
// document order, duplicates included; errors as Keys.
func members(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, ErrNotObject
	}
	var ms []member
	var value json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok { // unreachable: the decoder rejects non-string keys
			return nil, fmt.Errorf("object key %v is not a string", tok)
		}
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		ms = append(ms, member{key: key, null: bytes.Equal(bytes.TrimSpace(value), []byte("null"))})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	return ms, nil
}

// KeyError reports a member name that is not allowed or given twice.
type KeyError struct {
	// Object is the path of the object within the decoded value, "" for
	// the value itself ("extended" for a profile's extended resources).
	Object string
	// Key is the offending member name.
	Key string
	// Duplicate tells a repeated name from an unknown one.
	Duplicate bool
	// Allowed are the valid names, in documentation order (nil when any
	// name is allowed).
	Allowed []string
}

// Field returns the path of the offending member: Object.Key.
func (e *KeyError) Field() string {
	if e.Object == "" {
		return e.Key
	}
	return e.Object + "." + e.Key
}

// Detail explains the problem without naming the field: the valid
// fields (with a hint when only the case is wrong), or why a duplicate
// is refused.
func (e *KeyError) Detail() string {
	if e.Duplicate {
		return "given more than once (each name may appear only once in an object)"
	}
	valid := "valid fields: " + strings.Join(e.Allowed, ", ")
	for _, a := range e.Allowed {
		if strings.EqualFold(a, e.Key) {
			return fmt.Sprintf("field names are case-sensitive, did you mean %q? %s", a, valid)
		}
	}
	return valid
}

// Error names the field and the problem.
func (e *KeyError) Error() string {
	return fmt.Sprintf("%v %q: %s", e.Unwrap(), e.Field(), e.Detail())
}

// Unwrap returns ErrUnknownKey or ErrDuplicateKey.
func (e *KeyError) Unwrap() error {
	if e.Duplicate {
		return ErrDuplicateKey
	}
	return ErrUnknownKey
}

// CheckKeys returns a *KeyError for the first member name of the object
// data that is not exactly one of allowed or that repeats an earlier
// name. It returns nil when data is not a well-formed object: decoding it
// reports that better (a type or syntax error).
func CheckKeys(data []byte, allowed ...string) error {
	return check(data, allowed, true)
}

// CheckUnique is CheckKeys for an object whose member names are free (a
// map): it only rejects a repeated name.
func CheckUnique(data []byte) error {
	return check(data, nil, false)
}

func check(data []byte, allowed []string, restricted bool) error {
	ms, err := members(data)
	if err != nil {
		return nil
	}
	return checkMembers(ms, allowed, restricted)
}

func checkMembers(ms []member, allowed []string, restricted bool) error {
	seen := make(map[string]bool, len(ms))
	for _, m := range ms {
		switch {
		case restricted && !slices.Contains(allowed, m.key):
			return &KeyError{Key: m.key, Allowed: allowed}
		case seen[m.key]:
			return &KeyError{Key: m.key, Duplicate: true, Allowed: allowed}
		}
		seen[m.key] = true
	}
	return nil
}

// Kind names the JSON form of a Go type for error messages ("an object",
// "an integer"), not the Go type, which means nothing to a user.
func Kind(t reflect.Type) string {
	if t == nil {
		return "a different value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return Kind(t.Elem())
	}
	return "a different value"
}
