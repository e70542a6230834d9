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
// 1 ... n: what a runtime without resource profiles offers,
// p.Offer(now, slotpool.Slots(4)...).
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

// Request asks for one slot.
type Request struct {
	Profile resource.Profile // resource.Unknown fits any slot
	// Unbounded says the task will occupy the slot indefinitely (a
	// streaming task; Flink's slotWillBeOccupiedIndefinitely), so the slot
	// does not count as reusable for other bulks while it runs.
	Unbounded bool
}

// Bulk is the all-or-nothing slot request of one pipelined region: it is
// fulfilled only when every request has a slot.
type Bulk struct {
	ID       BulkID
	Requests []Request
}

// BulkState is where a bulk is in its life.
type BulkState uint8

// The states of a bulk.
const (
	BulkUnknown   BulkState = iota // never submitted, or retired
	BulkWaiting                    // submitted, not all slots yet
	BulkFulfilled                  // every request got a slot (Fulfilled event)
	BulkFailed                     // no resource available (Failed event); retired at once
	BulkCanceled                   // canceled by the caller; retired at once
)

var bulkStateNames = [...]string{"unknown", "waiting", "fulfilled", "failed", "canceled"}

// String returns "waiting", "fulfilled", ...
func (s BulkState) String() string {
	if int(s) < len(bulkStateNames) {
		return bulkStateNames[s]
	}
	return "invalid"
}

// SlotState is what a slot in the pool is doing.
type SlotState uint8

// The states of a slot in the pool.
const (
	SlotFree      SlotState = iota // available
	SlotHeld                       // held by the oldest waiting bulk
	SlotInUse                      // a task of a fulfilled bulk runs in it
	SlotReleasing                  // given back to the admission, not yet confirmed
)

var slotStateNames = [...]string{"free", "held", "in-use", "releasing"}

// String returns "free", "held", "in-use" or "releasing".
func (s SlotState) String() string {
	if int(s) < len(slotStateNames) {
		return slotStateNames[s]
	}
	return "invalid"
}

// Placement says which slot serves which request of a bulk.
type Placement struct {
	Request int // index into Bulk.Requests
	Slot    SlotID
}

// BulkInfo is a snapshot of one bulk.
type BulkInfo struct {
	ID    BulkID
	State BulkState
	// Held lists the slots a waiting bulk holds (only the oldest waiting
	// bulk holds slots; they are matched to its requests at commit time).
	Held []SlotID
	// InUse lists the slots of a fulfilled bulk whose tasks still run, in
	// request order.
	InUse []Placement
}

// SlotInfo is a snapshot of one slot.
type SlotInfo struct {
	Slot
	State SlotState
	// Bulk and Request name the user of a held or in-use slot (Request is
	// -1 for a held slot, which is not bound to a request yet).
	Bulk    BulkID
	Request int
	// Unbounded is true if the task in the slot runs indefinitely.
	Unbounded bool
	// Reclaimed is true if the admission asked for the slot back; it
	// leaves the pool as soon as its task ends.
	Reclaimed bool
}

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
