package exchange

import (
	"strconv"
	"strings"
)

// ResultPartitionType is the kind of intermediate result a producer writes.
// The zero value is Blocking.
type ResultPartitionType uint8

const (
	// Blocking results are written completely before they can be consumed;
	// a blocking edge separates pipelined regions.
	Blocking ResultPartitionType = iota
	// Pipelined results are consumed while they are produced (unbounded buffers).
	Pipelined
	// PipelinedBounded results are consumed while produced, with bounded
	// buffers: the producer stalls when its consumer does not read. It is
	// what "pipelined" means in the global data exchange modes.
	PipelinedBounded
)

var partitionTypeNames = [...]string{"blocking", "pipelined", "pipelined-bounded"}

// String returns the canonical name ("blocking", "pipelined", "pipelined-bounded").
func (t ResultPartitionType) String() string {
	if int(t) < len(partitionTypeNames) {
		return partitionTypeNames[t]
	}
	return "ResultPartitionType(" + strconv.Itoa(int(t)) + ")"
}

// IsPipelined reports whether the result must be consumed while it is
// produced, so producer and consumers belong to one pipelined region.
func (t ResultPartitionType) IsPipelined() bool { return t == Pipelined || t == PipelinedBounded }

// PartitionTypeNames returns the valid partition type names, as a job
// file's "exchange" field takes them.
func PartitionTypeNames() []string { return []string{"pipelined", "pipelined-bounded", "blocking"} }

// ParsePartitionType parses a canonical partition type name (case-insensitive).
func ParsePartitionType(s string) (ResultPartitionType, error) {
	for i, n := range partitionTypeNames {
		if strings.EqualFold(s, n) {
			return ResultPartitionType(i), nil
		}
	}
	return 0, &ParseError{Kind: ErrUnknownPartitionType, Value: s, Valid: PartitionTypeNames()}
}

// MarshalText encodes the canonical name.
func (t ResultPartitionType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText decodes with ParsePartitionType.
func (t *ResultPartitionType) UnmarshalText(b []byte) error {
	v, err := ParsePartitionType(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}
