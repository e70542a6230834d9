package pool

import "github.com/regionsched/regionsched/slotpool"

// Event is something the pool tells its caller; Pool.Ready drains them in
// the order they happened. The concrete types are Fulfilled, Failed, Lost,
// and the messages to an admission (slotpool.Ask, slotpool.AskRelease,
// slotpool.SlotRelease: a slotpool.ToAdmission).
type Event any

// Fulfilled says every request of a bulk has a slot: Slots[i] serves
// Requests[i]. The caller deploys the region's tasks.
type Fulfilled struct {
	Bulk  slotpool.BulkID
	Slots []slotpool.SlotID
}

// Failed says a bulk will never be fulfilled; Err is a
// *NoResourceAvailableError. Any slot it held went back to the pool.
type Failed struct {
	Bulk slotpool.BulkID
	Err  error
}

// Lost says a slot in use disappeared (its machine is gone, or the
// admission revoked it): the task of request Request of bulk Bulk must be
// failed over.
type Lost struct {
	Slot    slotpool.SlotID
	Bulk    slotpool.BulkID
	Request int
	Reason  slotpool.Reason // ReasonLost for Pool.Lose, else the admission's reason
}

// Note is one event of the pool as the pool stores it and Link.Notes
// hands it out: a Fulfilled inline (Other is nil), any other event in
// Other. Unlike an Event, a Note of a Fulfilled costs no allocation:
// boxing a Fulfilled into the Event interface copies it to the heap, one
// allocation per fulfilled bulk, which a job of many small regions pays
// for every task.
type Note struct {
	Fulfilled Fulfilled
	Other     Event
}

// Event returns the note as an Event (a Fulfilled is boxed).
func (n Note) Event() Event {
	if n.Other != nil {
		return n.Other
	}
	return n.Fulfilled
}
