package pool

import (
	"errors"
	"fmt"

	"github.com/regionsched/regionsched/slotpool"
)

// The errors of a bulk's operations; those of a slot's, and the
// NoResourceAvailableError of a failed bulk, are package slotpool's.
var (
	// ErrUnknownBulk: the bulk id was never submitted, or the pool has
	// retired the bulk (failed, canceled, or every slot back).
	ErrUnknownBulk = errors.New("unknown bulk")
	// ErrDuplicateBulk: a bulk with that id was already submitted.
	ErrDuplicateBulk = errors.New("duplicate bulk")
	// ErrEmptyBulk: a bulk without requests.
	ErrEmptyBulk = errors.New("empty bulk")
)

// BulkError reports a rejected operation on one bulk.
type BulkError struct {
	Op   string // "submit", "cancel"
	Bulk slotpool.BulkID
	Err  error // one of the sentinel errors
}

// Error renders e.g. "slotpool: submit bulk 7: duplicate bulk".
func (e *BulkError) Error() string {
	return fmt.Sprintf("slotpool: %s bulk %d: %v", e.Op, e.Bulk, e.Err)
}

// Unwrap returns the sentinel error.
func (e *BulkError) Unwrap() error { return e.Err }
