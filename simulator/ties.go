package simulator

import (
	"errors"
	"fmt"
	"strings"
)

// TieOrder is the order in which a run handles events due at the same
// virtual time: the ends of a wave of tasks that started together and run
// as long, a timeout falling on a task's end, a job arriving as another
// one's driver starts.
type TieOrder uint8

const (
	// TiesInOrder handles same-time events in the order they were
	// scheduled, the usual rule of discrete-event simulation: of the tasks
	// that end together, the one whose end was scheduled first (the one
	// deployed first, unless a task paused and resumed since) ends first,
	// as in a runtime that starts them one after another. It is the
	// default.
	TiesInOrder TieOrder = iota
	// TiesSeeded handles same-time events in an order the seed draws:
	// each seed tries another interleaving of a wave's ends, which is what
	// a property test over seeds explores (a runtime's tasks do end out of
	// order). It costs time on wide waves: events taken in random order
	// read their tasks' records out of order (see docs/performance.md).
	TiesSeeded
)

// String returns "order" or "seeded" ("TieOrder(N)" for another value).
func (t TieOrder) String() string {
	switch t {
	case TiesInOrder:
		return "order"
	case TiesSeeded:
		return "seeded"
	}
	return fmt.Sprintf("TieOrder(%d)", uint8(t))
}

// ErrUnknownTieOrder means a tie order's name is not "order" or "seeded".
var ErrUnknownTieOrder = errors.New("unknown tie order")

// ParseTieOrder parses "order" or "seeded" (case-insensitive).
func ParseTieOrder(s string) (TieOrder, error) {
	switch strings.ToLower(s) {
	case "order":
		return TiesInOrder, nil
	case "seeded":
		return TiesSeeded, nil
	}
	return 0, fmt.Errorf("%w %q (valid: order, seeded)", ErrUnknownTieOrder, s)
}

// checkTies rejects a Ties value that is none of the constants.
func checkTies(t TieOrder) error {
	if t > TiesSeeded {
		return fmt.Errorf("simulator: Ties: %w %d (valid: TiesInOrder, TiesSeeded)", ErrUnknownTieOrder, t)
	}
	return nil
}
