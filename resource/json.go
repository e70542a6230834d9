package resource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/regionsched/regionsched/internal/jsontext"
)

// ErrUnknownField and ErrDuplicateField are matched with errors.Is on the
// error of a profile document with a field name other than cpuMillis,
// memoryMB or extended (names are case-sensitive), or a name given twice.
var (
	ErrUnknownField   = jsontext.ErrUnknownKey
	ErrDuplicateField = jsontext.ErrDuplicateKey
)

// ErrInvalidAmount means a resource amount in a document is negative or a
// resource name is malformed; it is wrapped in an *AmountError.
var ErrInvalidAmount = errors.New("invalid resource amount")

// AmountError names the field whose amount or extended resource name was
// rejected.
type AmountError struct {
	Field string // "cpuMillis", "memoryMB" or "extended.<name>"
	Value int64
	// InvalidName means the amount is not the problem: the extended
	// resource name (Field after "extended.") is empty or contains '='
	// or ';'.
	InvalidName bool
}

// Error names the field and the value, or the bad name and the rule.
func (e *AmountError) Error() string {
	if e.InvalidName {
		name := strings.TrimPrefix(e.Field, "extended.")
		why := "it contains '=' or ';'"
		if name == "" {
			why = "it is empty"
		}
		return fmt.Sprintf("invalid extended resource name %q (field %q): %s; a name must be non-empty and must not contain '=' or ';'",
			name, e.Field, why)
	}
	return fmt.Sprintf("%v: %s = %d (must be a non-negative integer)", ErrInvalidAmount, e.Field, e.Value)
}

// Unwrap returns ErrInvalidAmount.
func (e *AmountError) Unwrap() error { return ErrInvalidAmount }

// profileFields are the member names of a profile object, exactly.
var profileFields = []string{"cpuMillis", "memoryMB", "extended"}

type profileJSON struct {
	CPUMillis int64            `json:"cpuMillis"`
	MemoryMB  int64            `json:"memoryMB"`
	Extended  map[string]int64 `json:"extended,omitempty"`
}

// MarshalJSON encodes a known profile as {"cpuMillis":..,"memoryMB":..,
// "extended":{..}} and Unknown as null.
func (p Profile) MarshalJSON() ([]byte, error) {
	if !p.known {
		return []byte("null"), nil
	}
	return json.Marshal(profileJSON{CPUMillis: p.cpuMillis, MemoryMB: p.memoryMB, Extended: p.Extended()})
}

// UnmarshalJSON decodes the form of MarshalJSON; null is Unknown. Field
// names are matched exactly (not case-insensitively, as encoding/json
// would); unknown or repeated fields (a *jsontext.KeyError, whose Object
// is "extended" for a repeated resource name), a field or an extended
// resource given null (a *jsontext.NullError: null is no amount, leave
// it out for 0), negative amounts and malformed names (an *AmountError)
// are errors.
func (p *Profile) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*p = Unknown
		return nil
	}
	if err := jsontext.CheckKeys(b, profileFields...); err != nil {
		return err
	}
	if err := jsontext.CheckNull(b); err != nil {
		var ne *jsontext.NullError
		if errors.As(err, &ne) {
			ne.Detail = nullDetails[ne.Key]
		}
		return err
	}
	var raw struct {
		CPUMillis int64           `json:"cpuMillis"`
		MemoryMB  int64           `json:"memoryMB"`
		Extended  json.RawMessage `json:"extended"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if raw.CPUMillis < 0 {
		return &AmountError{Field: "cpuMillis", Value: raw.CPUMillis}
	}
	if raw.MemoryMB < 0 {
		return &AmountError{Field: "memoryMB", Value: raw.MemoryMB}
	}
	q := New(raw.CPUMillis, raw.MemoryMB)
	ext, err := decodeExtended(raw.Extended)
	if err != nil {
		return err
	}
	for _, e := range ext {
		if e.name == "" || strings.ContainsAny(e.name, "=;") {
			return &AmountError{Field: "extended." + e.name, Value: e.n, InvalidName: true}
		}
		if e.n < 0 {
			return &AmountError{Field: "extended." + e.name, Value: e.n}
		}
		q = q.WithExtended(e.name, e.n)
	}
	*p = q
	return nil
}

// nullDetails say what the fields of a profile take instead of null.
var nullDetails = map[string]string{
	"cpuMillis": "null is not an amount of CPU (a non-negative integer, in thousandths of a core); leave the field out for its default (0)",
	"memoryMB":  "null is not an amount of memory (a non-negative integer, in MB); leave the field out for its default (0)",
	"extended":  "null is not a map of extended resources; leave the field out for its default (none)",
}

type namedAmount struct {
	name string
	n    int64
}

// decodeExtended decodes the extended object of a profile document
// (absent is empty; the caller refuses null) in document order. A name
// given twice is a *jsontext.KeyError; a value that is null a
// *jsontext.NullError, one that is not an integer an
// *json.UnmarshalTypeError whose Field is "extended.<name>".
func decodeExtended(data json.RawMessage) ([]namedAmount, error) {
	if data == nil || bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, nil
	}
	if err := jsontext.CheckUnique(data); err != nil {
		var ke *jsontext.KeyError
		if errors.As(err, &ke) {
			ke.Object = "extended"
		}
		return nil, err
	}
	if err := jsontext.CheckNull(data); err != nil {
		var ne *jsontext.NullError
		if errors.As(err, &ne) {
			ne.Object = "extended"
			ne.Detail = fmt.Sprintf("null is not an amount of resource %s (a non-negative integer); leave the resource out if there is none",
				jsontext.AppendString(nil, ne.Key))
		}
		return nil, err
	}
	names, err := jsontext.Keys(data)
	if err != nil {
		if errors.Is(err, jsontext.ErrNotObject) {
			return nil, &json.UnmarshalTypeError{Value: jsonForm(data), Type: reflect.TypeFor[map[string]int64](), Field: "extended"}
		}
		return nil, err
	}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(data, &values); err != nil {
		return nil, err
	}
	out := make([]namedAmount, 0, len(names))
	for _, name := range names {
		var n int64
		if err := json.Unmarshal(values[name], &n); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				te.Field = "extended." + name
			}
			return nil, err
		}
		out = append(out, namedAmount{name, n})
	}
	return out, nil
}

// jsonForm names the kind of the JSON value data as encoding/json does in
// an UnmarshalTypeError ("array", "string", "number 1.5").
func jsonForm(data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return "value"
	}
	switch data[0] {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case '{':
		return "object"
	}
	return "number " + string(data)
}
