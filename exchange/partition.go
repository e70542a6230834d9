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
	// HybridFull results (Flink's hybrid shuffle, full spilling) may be
	// read while they are produced and after: the producer never waits for
	// its consumers, and everything it writes is also persisted, so a
	// consumer that restarts reads it again without restarting the
	// producer. A hybrid edge separates regions as a blocking one does;
	// its consumers may start once its producers are deployed.
	HybridFull
	// HybridSelective results (hybrid shuffle, selective spilling) are
	// HybridFull ones of which only what the consumers did not read in
	// time is persisted: a consumer that read some of it live and restarts
	// needs the producer to run again. Its consumers start once its
	// producers are deployed and a share of them finished (package
	// strategy).
	HybridSelective
)

var partitionTypeNames = [...]string{"blocking", "pipelined", "pipelined-bounded", "hybrid-full", "hybrid-selective"}

// String returns the canonical name ("blocking", "pipelined",
// "pipelined-bounded", "hybrid-full", "hybrid-selective").
func (t ResultPartitionType) String() string {
	if int(t) < len(partitionTypeNames) {
		return partitionTypeNames[t]
	}
	return "ResultPartitionType(" + strconv.Itoa(int(t)) + ")"
}

// IsPipelined reports whether the result must be consumed while it is
// produced, so producer and consumers belong to one pipelined region.
func (t ResultPartitionType) IsPipelined() bool { return t == Pipelined || t == PipelinedBounded }

// IsHybrid reports whether the result is a hybrid one (HybridFull or
// HybridSelective): it separates regions, and its consumers may read it
// while it is produced.
func (t ResultPartitionType) IsHybrid() bool { return t == HybridFull || t == HybridSelective }

// PartitionTypeNames returns the valid partition type names, as a job
// file's "exchange" field takes them: the canonical names, then "hybrid",
// short for "hybrid-full".
func PartitionTypeNames() []string {
	return []string{"pipelined", "pipelined-bounded", "blocking", "hybrid-full", "hybrid-selective", "hybrid"}
}

// ParsePartitionType parses a partition type name (case-insensitive): a
// canonical name, or "hybrid" for HybridFull. Any other name returns a
// *ParseError that unwraps to ErrUnknownPartitionType and lists the valid
// names.
func ParsePartitionType(s string) (ResultPartitionType, error) {
	for i, n := range partitionTypeNames {
		if strings.EqualFold(s, n) {
			return ResultPartitionType(i), nil
		}
	}
	if strings.EqualFold(s, "hybrid") {
		return HybridFull, nil
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
