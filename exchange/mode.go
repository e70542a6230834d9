package exchange

import (
	"strconv"
	"strings"
)

// Mode is a global data exchange mode (FLIP-119): it decides the result
// partition type of every edge that does not pin one. The zero value is
// AllBlocking, the default.
type Mode uint8

const (
	// AllBlocking makes every edge blocking: every subtask is its own region.
	AllBlocking Mode = iota
	// ForwardPipelinedOnly pipelines forward edges only: every region needs one slot.
	ForwardPipelinedOnly
	// PointwisePipelinedOnly pipelines forward and rescale edges.
	PointwisePipelinedOnly
	// AllPipelined pipelines every edge.
	AllPipelined
	// AllHybridFull makes every edge HybridFull (Flink's
	// ALL_EXCHANGES_HYBRID_FULL): regions as in AllBlocking, but a
	// consumer may start once its producers are deployed and read their
	// results while they are written.
	AllHybridFull
	// AllHybridSelective makes every edge HybridSelective (Flink's
	// ALL_EXCHANGES_HYBRID_SELECTIVE): regions as in AllBlocking; a
	// consumer starts once its producers are deployed and a share of them
	// finished.
	AllHybridSelective
)

var modeNames = [...]string{"all-blocking", "forward-pipelined-only", "pointwise-pipelined-only", "all-pipelined",
	"all-hybrid-full", "all-hybrid-selective"}

// modeAliases maps every accepted spelling (lower case) to its mode:
// the canonical names, Flink's GlobalStreamExchangeMode names
// (ALL_EDGES_BLOCKING, ...), the values of Flink's
// execution.batch-shuffle-mode (ALL_EXCHANGES_BLOCKING,
// ALL_EXCHANGES_PIPELINED, ALL_EXCHANGES_HYBRID_FULL,
// ALL_EXCHANGES_HYBRID_SELECTIVE), and FLIP-119's short names batch and
// pipelined.
var modeAliases = map[string]Mode{
	"all-blocking": AllBlocking, "all_edges_blocking": AllBlocking, "all_exchanges_blocking": AllBlocking, "batch": AllBlocking,
	"forward-pipelined-only": ForwardPipelinedOnly, "forward_edges_pipelined": ForwardPipelinedOnly,
	"pointwise-pipelined-only": PointwisePipelinedOnly, "pointwise_edges_pipelined": PointwisePipelinedOnly,
	"all-pipelined": AllPipelined, "all_edges_pipelined": AllPipelined, "all_exchanges_pipelined": AllPipelined, "pipelined": AllPipelined,
	"all-hybrid-full": AllHybridFull, "all_edges_hybrid_full": AllHybridFull, "all_exchanges_hybrid_full": AllHybridFull,
	"all-hybrid-selective": AllHybridSelective, "all_edges_hybrid_selective": AllHybridSelective,
	"all_exchanges_hybrid_selective": AllHybridSelective,
}

// unsupportedModes are Flink's modes without an equivalent here (lower
// case), with the reason given when one is asked for.
var unsupportedModes = map[string]string{
	"all_edges_pipelined_approximate": "approximate local recovery (PIPELINED_APPROXIMATE results, restarting single tasks) " +
		"has no equivalent in region failover; use all-pipelined",
}

// Modes returns the six modes: the four of growing pipelining, then the
// two hybrid ones.
func Modes() []Mode {
	return []Mode{AllBlocking, ForwardPipelinedOnly, PointwisePipelinedOnly, AllPipelined, AllHybridFull, AllHybridSelective}
}

// ModeNames returns every accepted spelling, canonical names first.
func ModeNames() []string {
	return []string{
		"all-blocking", "forward-pipelined-only", "pointwise-pipelined-only", "all-pipelined",
		"all-hybrid-full", "all-hybrid-selective",
		"ALL_EDGES_BLOCKING", "FORWARD_EDGES_PIPELINED", "POINTWISE_EDGES_PIPELINED", "ALL_EDGES_PIPELINED",
		"ALL_EDGES_HYBRID_FULL", "ALL_EDGES_HYBRID_SELECTIVE",
		"ALL_EXCHANGES_BLOCKING", "ALL_EXCHANGES_PIPELINED", "ALL_EXCHANGES_HYBRID_FULL", "ALL_EXCHANGES_HYBRID_SELECTIVE",
		"batch", "pipelined",
	}
}

// IsHybrid reports whether m is AllHybridFull or AllHybridSelective.
func (m Mode) IsHybrid() bool { return m == AllHybridFull || m == AllHybridSelective }

// String returns the canonical name, e.g. "pointwise-pipelined-only".
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode parses a mode by canonical name or alias, case-insensitively
// (docs/job-file.md), including every value of Flink's
// execution.batch-shuffle-mode. Flink's ALL_EDGES_PIPELINED_APPROXIMATE
// is refused with ErrUnsupportedMode and the reason; any other name with
// ErrUnknownMode. The error lists every valid spelling.
func ParseMode(s string) (Mode, error) {
	key := strings.ToLower(strings.TrimSpace(s))
	if m, ok := modeAliases[key]; ok {
		return m, nil
	}
	if reason, ok := unsupportedModes[key]; ok {
		return 0, &ParseError{Kind: ErrUnsupportedMode, Value: s, Reason: reason, Valid: ModeNames()}
	}
	return 0, &ParseError{Kind: ErrUnknownMode, Value: s, Valid: ModeNames()}
}

// PartitionType returns the partition type the mode gives an edge with the
// given ship strategy. "Pipelined" in a mode means PipelinedBounded; the
// hybrid modes give every edge their hybrid type.
func (m Mode) PartitionType(s ShipStrategy) ResultPartitionType {
	pipelined := false
	switch m {
	case AllHybridFull:
		return HybridFull
	case AllHybridSelective:
		return HybridSelective
	case ForwardPipelinedOnly:
		pipelined = s == Forward
	case PointwisePipelinedOnly:
		pipelined = s.Pattern() == Pointwise
	case AllPipelined:
		pipelined = true
	}
	if pipelined {
		return PipelinedBounded
	}
	return Blocking
}

// MarshalText encodes the canonical name.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText decodes with ParseMode.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}
