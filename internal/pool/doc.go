// Package slotpool hands slots to the bulks of a dataflow job: one bulk
// per pipelined region, all-or-nothing, in FIFO order, with the
// fulfillability timeouts of Flink's FLIP-119 and without its resource
// deadlocks for slots of different sizes. It knows nothing of job graphs:
// it imports only package resource.
//
// # Shape of the API
//
// The Pool is a deterministic state machine, like etcd's raft: no
// goroutines, no clock. Every mutation (Offer, Submit, Release, Lose,
// Cancel, Tick, Admit, SetCapacity) takes the current time as an argument
// and records what happened as events, which the caller drains with
// Ready: Fulfilled (the slot for each request), Failed (a
// *NoResourceAvailableError), Lost (a task whose slot vanished must fail
// over), and messages for a queue-level admission (Ask, AskRelease,
// SlotRelease). Timeouts fire when the caller calls Tick at or after
// NextDeadline. Same inputs, same outputs: a simulator drives it in
// virtual time and tests need no clock at all. Bad input returns a typed
// error and changes nothing.
//
// Slots are offered by id and profile: slotpool.Slot{ID: 10, Profile: prof},
// or slotpool.Slots(n) for n slots of unknown size (ids 1 ... n) that
// serve any request.
//
//	p := slotpool.New(slotpool.Config{Timeout: time.Minute})
//	p.Submit(now, slotpool.Bulk{ID: 1, Requests: []slotpool.Request{{Profile: prof}, {Profile: prof}}})
//	p.Offer(now, slotpool.Slot{ID: 10, Profile: prof}, slotpool.Slot{ID: 11, Profile: prof})
//	for _, ev := range p.Ready() {
//		switch ev := ev.(type) {
//		case slotpool.Fulfilled: // deploy the region: ev.Slots[i] serves request i
//		case slotpool.Failed: // ev.Err says what was missing
//		case slotpool.Lost: // fail over the task of ev.Bulk, ev.Request
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
// A runtime normally does not drive a pool by hand: package scheduler
// holds the job-level state machine on top of it, and the scheduler's
// driver runs that with a clock for callers on other goroutines. Link
// couples a pool with an in-process Admission (package admission has
// StaticCluster): it carries the messages between them until both are
// quiet and merges their timers, and it is the one place that does.
//
// # Rules
//
// FIFO: a slot that becomes available (offered, granted, released by its
// task, given back by a canceled or failed bulk) goes to the oldest
// waiting bulk that can use it, not to the bulk that asked for it.
//
// Atomic bulks: only the oldest waiting bulk, the head, holds slots while
// it waits, and only slots that raise the number of its requests it can
// serve. Its held slots are not bound to requests until it commits; then
// resource.Assign matches its requests against held and free slots and
// picks the smallest, and the held slots it does not need go back. A
// younger bulk never holds slots: it is committed when free slots the head
// cannot use complete it, the oldest such bulk first. So no bulk sits on
// part of what it needs while another could run, and a wrong-size match
// is never frozen: FLIP-119's "allocated slots too small to fulfill the
// oldest request" and "slots of different sizes improperly assigned"
// deadlocks cannot happen, and with bounded tasks and a cluster that holds
// the largest bulk every bulk is eventually fulfilled (unless its timeout
// expires first), same-shaped bulks in submission order.
//
// Fulfillability: a waiting bulk is fulfillable if its requests can be
// matched against the reusable slots: every slot of the pool except those
// whose task is unbounded (Request.Unbounded, a streaming task) or that
// the admission reclaimed. An unfulfillable bulk's timeout starts
// (Config.Timeout); if it becomes fulfillable the timeout is canceled; if
// lost slots make it unfulfillable again a new timeout starts. On timeout
// the bulk fails and its slots go back. A bulk that cannot be matched
// against the declared capacity of the cluster (SetCapacity, or the
// admission's Capacity message) fails at once; with no declared capacity
// nothing fails at once, since more slots may still come.
//
// Matching: a slot serves a request if it is at least as large in every
// dimension, or (Config.Matching = resource.ExactMatch) of exactly its
// profile; resource.Unknown matches anything.
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
// refused stay refused until its held set shrinks. The admission adapter
// is described in admission.go (type Admission); its implementations live
// in package admission.
package slotpool
