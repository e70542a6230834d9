package slotpool

// Event is something the pool tells its caller; Pool.Ready drains them in
// the order they happened. The concrete types are Fulfilled, Failed, Lost,
// and the messages to an admission (Ask, AskRelease, SlotRelease).
type Event interface{ isEvent() }

// Fulfilled says every request of a bulk has a slot: Slots[i] serves
// Requests[i]. The caller deploys the region's tasks.
type Fulfilled struct {
	Bulk  BulkID
	Slots []SlotID
}

// Failed says a bulk will never be fulfilled; Err is a
// *NoResourceAvailableError. Any slot it held went back to the pool.
type Failed struct {
	Bulk BulkID
	Err  error
}

// Lost says a slot in use disappeared (its machine is gone, or the
// admission revoked it): the task of request Request of bulk Bulk must be
// failed over.
type Lost struct {
	Slot    SlotID
	Bulk    BulkID
	Request int
	Reason  Reason // ReasonLost for Pool.Lose, else the admission's reason
}

func (Fulfilled) isEvent() {}
func (Failed) isEvent()    {}
func (Lost) isEvent()      {}
