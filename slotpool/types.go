package slotpool

import "github.com/regionsched/regionsched/resource"

// SlotID names a slot. It is chosen by whoever provides the slot (a
// static cluster, an admission, the runtime) and must be unique among the
// slots in the pool; it may be reused once the slot has left the pool.
type SlotID int64

// Slot is a unit of resources a task can run in. A slot of unknown size,
// which serves any request, is slotpool.Slot{ID: 1}; Slots makes several.
type Slot struct {
	ID      SlotID
	Profile resource.Profile // resource.Unknown serves any request
	// Node optionally names the machine the slot is on ("": not told;
	// the slot then counts as a machine of its own). The pool keeps it
	// and reports it (Slot, FreeSlots, FreeSlotFor); what it is for is
	// its users' business: the scheduler keeps speculative attempts off
	// the nodes it blocked.
	Node string
}

// Slots returns n slots of unknown size (they serve any request) with ids
// 1 ... n: what a runtime without resource profiles offers a scheduler,
// s.Offer(now, slotpool.Slots(4)...).
func Slots(n int) []Slot {
	out := make([]Slot, max(n, 0))
	for i := range out {
		out[i] = Slot{ID: SlotID(i + 1), Profile: resource.Unknown}
	}
	return out
}

// BulkID names a bulk. An id stays taken while the pool remembers the
// bulk; once the pool retired it (failed, canceled, or every slot back)
// it may be submitted again.
type BulkID int64

// Stats counts slots and bulks.
type Stats struct {
	Slots     int // free + held + in use
	Free      int
	Held      int
	InUse     int
	Releasing int
	Waiting   int // waiting bulks
	Shapes    int // distinct demand shapes among waiting bulks
}
