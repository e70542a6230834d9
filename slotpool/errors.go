package slotpool

import (
	"errors"
	"fmt"
	"time"

	"github.com/regionsched/regionsched/resource"
)

// Sentinel errors of the slot pool, as a scheduler returns them (in an
// OpError) and admissions too: callers test with errors.Is; SlotError and
// NoResourceAvailableError (errors.As) name the offending slot or bulk.
var (
	// ErrUnknownSlot: the slot id is not in the pool (never offered, lost,
	// or already given back to the admission).
	ErrUnknownSlot = errors.New("unknown slot")
	// ErrDuplicateSlot: a slot with that id is already in the pool (or
	// twice in one call).
	ErrDuplicateSlot = errors.New("duplicate slot")
	// ErrSlotNotInUse: the pool was told that the task in a slot ended,
	// and no task occupies it (free, held by a waiting bulk, or being
	// given back).
	ErrSlotNotInUse = errors.New("slot not in use")
	// ErrSlotNotReleasing: an admission confirmed the release of a slot the
	// pool did not release.
	ErrSlotNotReleasing = errors.New("slot not being released")
	// ErrNoResourceAvailable: a bulk cannot be served, either because it
	// stayed unfulfillable for the whole timeout or because it can never
	// fit the cluster. Wrapped in a *NoResourceAvailableError.
	ErrNoResourceAvailable = errors.New("no resource available")
	// ErrUnknownMessage: a message of a type the pool or the admission
	// does not know.
	ErrUnknownMessage = errors.New("unknown admission message")
	// ErrSpeculativeAsk: an admission that does not grant speculative
	// asks (Ask.Speculative) was sent one.
	ErrSpeculativeAsk = errors.New("speculative asks not supported by this admission")
)

// SlotError reports a rejected operation on one slot.
type SlotError struct {
	Op   string // "offer", "release", "lose", "grant", "revoke", "reclaim", "confirm"
	Slot SlotID
	Err  error // one of the sentinel errors
}

// Error renders e.g. "slotpool: release slot 12: unknown slot".
func (e *SlotError) Error() string {
	return fmt.Sprintf("slotpool: %s slot %d: %v", e.Op, e.Slot, e.Err)
}

// Unwrap returns the sentinel error.
func (e *SlotError) Unwrap() error { return e.Err }

// NoResourceAvailableError says why a bulk failed: which of its requests
// could not be served, and whether it timed out or can never fit the
// cluster.
type NoResourceAvailableError struct {
	Bulk BulkID
	// Missing lists the requests that could not be matched, per profile.
	Missing []resource.Count
	// Never is true when the bulk can never fit the cluster's capacity and
	// failed at once; false when it stayed unfulfillable for Timeout.
	Never bool
	// Timeout is the fulfillability timeout that expired (zero if Never).
	Timeout time.Duration
}

// Error renders e.g. "slotpool: bulk 7: 2 x {cpu=1000m mem=2048MB} cannot
// be served: no resource available (unfulfillable for 5m0s)".
func (e *NoResourceAvailableError) Error() string {
	a := resource.Assignment{Missing: e.Missing}
	why := fmt.Sprintf("unfulfillable for %v", e.Timeout)
	if e.Never {
		why = "larger than the cluster"
	}
	return fmt.Sprintf("slotpool: bulk %d: %s cannot be served: %v (%s)", e.Bulk, a.MissingString(), ErrNoResourceAvailable, why)
}

// Unwrap returns ErrNoResourceAvailable.
func (e *NoResourceAvailableError) Unwrap() error { return ErrNoResourceAvailable }
