package resource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidAmount means a resource amount in a document is negative or a
// resource name is malformed; it is wrapped in an *AmountError.
var ErrInvalidAmount = errors.New("invalid resource amount")

// AmountError names the field whose amount was rejected.
type AmountError struct {
	Field string // "cpuMillis", "memoryMB" or "extended.<name>"
	Value int64
}

// Error names the field and the value.
func (e *AmountError) Error() string {
	return fmt.Sprintf("%v: %s = %d (must be a non-negative integer)", ErrInvalidAmount, e.Field, e.Value)
}

// Unwrap returns ErrInvalidAmount.
func (e *AmountError) Unwrap() error { return ErrInvalidAmount }

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

// UnmarshalJSON decodes the form of MarshalJSON; null is Unknown. Unknown
// fields and negative amounts are errors.
func (p *Profile) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*p = Unknown
		return nil
	}
	var raw profileJSON
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
	for name, v := range raw.Extended {
		if v < 0 || name == "" || strings.ContainsAny(name, "=;") {
			return &AmountError{Field: "extended." + name, Value: v}
		}
		q = q.WithExtended(name, v)
	}
	*p = q
	return nil
}
