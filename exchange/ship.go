package exchange

import (
	"strconv"
	"strings"
)

// DistributionPattern says how producer subtasks connect to consumer subtasks.
type DistributionPattern uint8

const (
	// Pointwise connects each consumer to a contiguous range of producers
	// (forward, rescale); see the topology package for the exact ranges.
	Pointwise DistributionPattern = iota
	// AllToAll connects every consumer to every producer (hash, rebalance, broadcast).
	AllToAll
)

// String returns "pointwise" or "all-to-all".
func (d DistributionPattern) String() string {
	if d == AllToAll {
		return "all-to-all"
	}
	return "pointwise"
}

// ShipStrategy is how an edge routes records from producers to consumers.
type ShipStrategy uint8

const (
	// Forward sends subtask i's output to consumer i; parallelism must match.
	Forward ShipStrategy = iota
	// Rescale distributes round-robin within pointwise ranges.
	Rescale
	// Hash partitions records by key across all consumers.
	Hash
	// Rebalance distributes round-robin across all consumers.
	Rebalance
	// Broadcast sends every record to every consumer.
	Broadcast
)

var shipStrategyNames = [...]string{"forward", "rescale", "hash", "rebalance", "broadcast"}

// ShipStrategyNames returns the valid ship strategy names in canonical order.
func ShipStrategyNames() []string { return append([]string(nil), shipStrategyNames[:]...) }

// String returns the canonical lower-case name.
func (s ShipStrategy) String() string {
	if int(s) < len(shipStrategyNames) {
		return shipStrategyNames[s]
	}
	return "ShipStrategy(" + strconv.Itoa(int(s)) + ")"
}

// Pattern returns Pointwise for forward and rescale, AllToAll otherwise.
func (s ShipStrategy) Pattern() DistributionPattern {
	if s == Forward || s == Rescale {
		return Pointwise
	}
	return AllToAll
}

// ParseShipStrategy parses a ship strategy name (case-insensitive).
func ParseShipStrategy(s string) (ShipStrategy, error) {
	for i, n := range shipStrategyNames {
		if strings.EqualFold(s, n) {
			return ShipStrategy(i), nil
		}
	}
	return 0, &ParseError{Kind: ErrUnknownShipStrategy, Value: s, Valid: ShipStrategyNames()}
}

// MarshalText encodes the canonical name.
func (s ShipStrategy) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes with ParseShipStrategy.
func (s *ShipStrategy) UnmarshalText(b []byte) error {
	v, err := ParseShipStrategy(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
