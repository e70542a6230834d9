// Package pool is the slot pool of one job, which package scheduler owns:
// it hands slots to the bulks of the job (one bulk per pipelined region,
// all-or-nothing, in FIFO order) by the rules of package slotpool, whose
// types it takes and returns; and Link, which couples a pool with an
// in-process slotpool.Admission. It knows nothing of job graphs: it imports
// only packages resource and slotpool.
//
// # Shape of the API
//
// The Pool is a deterministic state machine, like etcd's raft: no
// goroutines, no clock. Every mutation (Offer, Submit, Release, Lose,
// Cancel, Tick, Admit, SetCapacity) takes the current time as an argument
// and records what happened as events, which the caller drains with
// Ready: Fulfilled (the slot for each request), Failed (a
// *slotpool.NoResourceAvailableError), Lost (a task whose slot vanished
// must fail over), and messages for a queue-level admission
// (slotpool.Ask, AskRelease, SlotRelease). Timeouts fire when the caller
// calls Tick at or after NextDeadline. Same inputs, same outputs: a
// simulator drives it in virtual time and tests need no clock at all. Bad
// input returns a typed error and changes nothing.
//
//	p := pool.New(pool.Config{Timeout: time.Minute})
//	p.Submit(now, pool.Bulk{ID: 1, Requests: []pool.Request{{Profile: prof}, {Profile: prof}}})
//	p.Offer(now, slotpool.Slot{ID: 10, Profile: prof}, slotpool.Slot{ID: 11, Profile: prof})
//	for _, ev := range p.Ready() {
//		switch ev := ev.(type) {
//		case pool.Fulfilled: // deploy the region: ev.Slots[i] serves request i
//		case pool.Failed: // ev.Err says what was missing
//		case pool.Lost: // fail over the task of ev.Bulk, ev.Request
//		}
//	}
//	if t, ok := p.NextDeadline(); ok { /* call p.Tick(t) then */ }
//
// The pool retires bulks itself: a bulk that failed, was canceled, or
// whose last slot in use came back is forgotten at once (State reports
// BulkUnknown, Cancel returns ErrUnknownBulk) and its id may be submitted
// again, so a long-running caller accumulates nothing. Its Fulfilled or
// Failed event is the record of how it ended.
//
// Link couples a pool with an in-process admission: it carries the
// messages between them until both are quiet and merges their timers, and
// it is the one place that does.
//
// # Cost
//
// Slots are counted per distinct profile, and every matching question is
// answered by resource.Assign on those counts, never slot by slot. Bulks
// that ask for the same multiset of profiles share a shape, and every
// verdict is kept per shape. Verdicts are re-checked only when they can
// change: added slots can only make a shape fulfillable (and only if they
// serve it and are at least as many as the requests it missed), removed
// slots only unfulfillable (and only if its cached matching used them).
// A per-class count bound (Hall's condition on single classes) rules out
// hopeless checks without running Assign. The head takes a slot that fits
// a request class it has not filled without any matching; slots it
// refused stay refused until its held set shrinks.
//
// # Where things are
//
// The distinct profiles and the matchings over them are a profileTable
// (profiles.go); the shapes and their verdicts (fulfillable, fits the
// capacity) a shapeCache (shapes.go, fulfillability.go), which the Pool
// tells which slots became or stopped being reusable and which tells the
// Pool whose verdict flipped. The head and the commits of bulks are in
// assign.go, the slots in slots.go, the bulks and the queue in queue.go,
// the timers in timers.go, the pool's side of the admission protocol in
// admit.go.
package pool
