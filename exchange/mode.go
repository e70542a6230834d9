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
)

var modeNames = [...]string{"all-blocking", "forward-pipelined-only", "pointwise-pipelined-only", "all-pipelined"}

// modeAliases maps every accepted spelling (lower case) to its mode.
var modeAliases = map[string]Mode{
	"all-blocking": AllBlocking, "all_edges_blocking": AllBlocking, "batch": AllBlocking,
	"forward-pipelined-only": ForwardPipelinedOnly, "forward_edges_pipelined": ForwardPipelinedOnly,
	"pointwise-pipelined-only": PointwisePipelinedOnly, "pointwise_edges_pipelined": PointwisePipelinedOnly,
	"all-pipelined": AllPipelined, "all_edges_pipelined": AllPipelined, "pipelined": AllPipelined,
}

// Modes returns the four modes in order of growing pipelining.
func Modes() []Mode {
	return []Mode{AllBlocking, ForwardPipelinedOnly, PointwisePipelinedOnly, AllPipelined}
}

// ModeNames returns every accepted spelling, canonical names first.
func ModeNames() []string {
	return []string{
		"all-blocking", "forward-pipelined-only", "pointwise-pipelined-only", "all-pipelined",
		"ALL_EDGES_BLOCKING", "FORWARD_EDGES_PIPELINED", "POINTWISE_EDGES_PIPELINED", "ALL_EDGES_PIPELINED",
		"batch", "pipelined",
	}
}

// String returns the canonical name, e.g. "pointwise-pipelined-only".
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode parses a mode by canonical name or alias, case-insensitively
// (SPEC.md section 2). The error lists every valid spelling.
func ParseMode(s string) (Mode, error) {
	if m, ok := modeAliases[strings.ToLower(strings.TrimSpace(s))]; ok {
		return m, nil
	}
	return 0, &ParseError{Kind: ErrUnknownMode, Value: s, Valid: ModeNames()}
}

// PartitionType returns the partition type the mode gives an edge with the
// given ship strategy. "Pipelined" in a mode means PipelinedBounded.
func (m Mode) PartitionType(s ShipStrategy) ResultPartitionType {
	pipelined := false
	switch m {
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
