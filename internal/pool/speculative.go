package pool

import (
	"errors"
	"slices"
	"time"

	"github.com/regionsched/regionsched/slotpool"
)

// Speculative asks: a bulk of one request that never waits in the queue
// (like Take's) asks the admission for its slot itself, when the pool has
// none free for it (with Config.ReturnFreed it never has). The granted
// slot goes straight to the bulk, not to the waiting bulks: the
// admission grants such an ask only while no regular ask it could serve
// waits (slotpool.Ask.Speculative).

// ErrNoAdmission: AskSpeculative on a pool without an admission.
var ErrNoAdmission = errors.New("the pool has no admission to ask")

// specAsk is an outstanding speculative ask.
type specAsk struct {
	bulk slotpool.BulkID
	req  Request
}

// SpeculativeGrant is a slot granted to a speculative ask: the slot is in
// use by the ask's bulk (as after Take), until Release or Cancel.
type SpeculativeGrant struct {
	Ask  slotpool.AskID
	Bulk slotpool.BulkID
	Slot slotpool.Slot
}

// AskSpeculative asks the admission for one slot for bulk b, of exactly
// one request, outside the FIFO queue: a slotpool.Ask with Speculative
// set, avoiding the nodes avoid and the slots avoidSlots. The slot
// granted is taken for b at once (SpeculativeGrants hands it out), or
// the ask is withdrawn with WithdrawSpeculative. Nothing else in the pool
// changes.
//
// Errors (nothing is asked): ErrNoAdmission without Config.Admission; a
// *BulkError with ErrNotOneRequest, or ErrDuplicateBulk for a bulk that
// is live or asked for already.
func (p *Pool) AskSpeculative(b Bulk, avoid []string, avoidSlots []slotpool.SlotID) (slotpool.AskID, error) {
	if !p.cfg.Admission {
		return 0, ErrNoAdmission
	}
	if len(b.Requests) != 1 {
		return 0, &BulkError{Op: "ask", Bulk: b.ID, Err: ErrNotOneRequest}
	}
	if _, ok := p.liveBulk(b.ID); ok {
		return 0, &BulkError{Op: "ask", Bulk: b.ID, Err: ErrDuplicateBulk}
	}
	for _, a := range p.specAsks {
		if a.bulk == b.ID {
			return 0, &BulkError{Op: "ask", Bulk: b.ID, Err: ErrDuplicateBulk}
		}
	}
	if p.specAsks == nil {
		p.specAsks = map[slotpool.AskID]specAsk{}
	}
	id := p.nextAsk
	p.nextAsk++
	p.specAsks[id] = specAsk{bulk: b.ID, req: b.Requests[0]}
	p.emit(slotpool.Ask{ID: id, Bulk: b.ID, Speculative: true,
		Gang:  slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: b.Requests[0].Profile, MinMembers: 1}}, AllOrNothing: true},
		Avoid: slices.Clone(avoid), AvoidSlots: slices.Clone(avoidSlots)})
	return id, nil
}

// WithdrawSpeculative withdraws a speculative ask not granted yet (an
// AskRelease with ReasonStopped) and reports whether there was one.
func (p *Pool) WithdrawSpeculative(id slotpool.AskID) bool {
	if _, ok := p.specAsks[id]; !ok {
		return false
	}
	delete(p.specAsks, id)
	p.emit(slotpool.AskRelease{ID: id, Reason: slotpool.ReasonStopped})
	return true
}

// SpeculativeGrants returns the speculative asks granted since the last
// call, in the order granted, and forgets them.
func (p *Pool) SpeculativeGrants() []SpeculativeGrant {
	out := p.specGranted
	p.specGranted = nil
	return out
}

// grantSpeculative takes the slot of a grant of speculative ask a for its
// bulk, and reports whether it did: a grant of other than one slot, or
// of a slot that does not serve the request, is offered like any other
// granted slot.
func (p *Pool) grantSpeculative(now time.Time, id slotpool.AskID, a specAsk, slots []slotpool.Slot) bool {
	delete(p.specAsks, id)
	if len(slots) != 1 || !p.profiles.serves(p.profiles.intern(slots[0].Profile), p.profiles.intern(a.req.Profile)) {
		return false
	}
	idx, _ := p.addSlot(slots[0])
	p.pushFree(now, idx)
	if err := p.Take(now, Bulk{ID: a.bulk, Requests: []Request{a.req}}, slots[0].ID); err != nil {
		// Only a bulk made live since it asked gets here: the slot stays
		// free, for the waiting bulks.
		p.removeFree(idx)
		p.makeAvailable(now, idx, p.slot(idx))
		return true
	}
	p.specGranted = append(p.specGranted, SpeculativeGrant{Ask: id, Bulk: a.bulk, Slot: slots[0]})
	return true
}

// HasEvents reports whether the pool has events Ready has not returned
// yet.
func (p *Pool) HasEvents() bool { return len(p.events) > 0 }

// ReturnsFreed reports whether freed slots go back to the admission at
// once (Config.ReturnFreed with an admission): the pool then never holds
// a free slot for long, and work outside the queue asks for its slot
// (AskSpeculative).
func (p *Pool) ReturnsFreed() bool { return p.cfg.ReturnFreed && p.cfg.Admission }
