package exchange

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, matched with errors.Is. Parse functions wrap them in a
// *ParseError that carries the rejected value and the valid ones.
var (
	// ErrUnknownMode means a global data exchange mode name was not recognised.
	ErrUnknownMode = errors.New("unknown global data exchange mode")
	// ErrUnsupportedMode means a mode of Flink's that has no equivalent in
	// pipelined-region scheduling (approximate local recovery) was asked
	// for.
	ErrUnsupportedMode = errors.New("unsupported global data exchange mode")
	// ErrUnknownShipStrategy means a ship strategy name was not recognised.
	ErrUnknownShipStrategy = errors.New("unknown ship strategy")
	// ErrUnknownPartitionType means a result partition type (an edge's
	// "exchange") was not recognised.
	ErrUnknownPartitionType = errors.New("unknown exchange")
)

// ParseError reports a name that is not one of the valid values.
type ParseError struct {
	// Kind is the sentinel error for the kind of name (ErrUnknownMode, ...).
	Kind error
	// Value is the rejected input.
	Value string
	// Reason says why a recognised but unsupported value is refused
	// (empty for unknown values).
	Reason string
	// Valid lists the accepted spellings (canonical names first).
	Valid []string
}

// Error names the rejected value and the valid ones.
func (e *ParseError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("%v %q: %s (valid: %s)", e.Kind, e.Value, e.Reason, strings.Join(e.Valid, ", "))
	}
	return fmt.Sprintf("%v %q (valid: %s)", e.Kind, e.Value, strings.Join(e.Valid, ", "))
}

// Unwrap returns the sentinel Kind so errors.Is works.
func (e *ParseError) Unwrap() error { return e.Kind }
