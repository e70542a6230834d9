package pool

import (
	"errors"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// Errors of Take.
var (
	// ErrSlotNotFree: Take of a slot that is held by a waiting bulk, in
	// use, or being given back.
	ErrSlotNotFree = errors.New("slot not free")
	// ErrSlotTooSmall: Take of a slot that does not serve the request
	// (Config.Matching).
	ErrSlotTooSmall = errors.New("slot does not serve the request")
	// ErrNotOneRequest: Take of a bulk of other than one request.
	ErrNotOneRequest = errors.New("a taken bulk has exactly one request")
)

// Take puts the one request of bulk b into the free slot id at once,
// outside the FIFO queue: the bulk is fulfilled on return, and no
// Fulfilled event is emitted (the caller has its answer). The slot is in
// use as any other; Release gives it back, Cancel withdraws the bulk, and
// a lost slot yields a Lost event naming the bulk.
//
// It is for work that must never wait in the queue nor delay it, such as
// a speculative attempt that runs only in a slot no waiting bulk holds.
// Which free slot to take is the caller's choice (FreeSlotFor finds one).
//
// Errors: a *BulkError with ErrNotOneRequest or ErrDuplicateBulk; a
// *SlotError with ErrUnknownSlot, ErrSlotNotFree or ErrSlotTooSmall.
// Nothing changes then.
func (p *Pool) Take(now time.Time, b Bulk, id slotpool.SlotID) error {
	if len(b.Requests) != 1 {
		return &BulkError{Op: "take", Bulk: b.ID, Err: ErrNotOneRequest}
	}
	if _, ok := p.liveBulk(b.ID); ok {
		return &BulkError{Op: "take", Bulk: b.ID, Err: ErrDuplicateBulk}
	}
	idx, ok := p.slotIndex(id)
	if !ok {
		return &slotpool.SlotError{Op: "take", Slot: id, Err: slotpool.ErrUnknownSlot}
	}
	s := p.slot(idx)
	if s.state != SlotFree {
		return &slotpool.SlotError{Op: "take", Slot: id, Err: ErrSlotNotFree}
	}
	pr := p.profiles.intern(b.Requests[0].Profile)
	if !p.profiles.serves(s.profile, pr) {
		return &slotpool.SlotError{Op: "take", Slot: id, Err: ErrSlotTooSmall}
	}
	bk := p.newBulk(b)
	// A shape of its own, never live (it never waits): what the bulk's
	// one request asks, for the checks that read it.
	bk.shape = &shape{demand: []resource.Count{{Profile: b.Requests[0].Profile, N: 1}}, classProf: []int32{pr}, size: 1, pos: -1}
	p.bulks.set(bk.id, bk.handle+1)
	p.removeFree(idx)
	bk.placed = true
	p.occupy(idx, s, bk, 0)
	bk.state, bk.inUse = BulkFulfilled, 1
	p.logDebug("bulk took a free slot", bk.id)
	p.settle(now)
	return nil
}

// FreeSlotFor returns a free slot that serves a request of r's profile
// and that accept takes (nil accepts any), and whether there is one. The
// slots are tried profile by profile in the order the pool first saw the
// profiles, the most recently freed first within a profile; the answer is
// the same for the same history.
func (p *Pool) FreeSlotFor(r Request, accept func(slotpool.Slot) bool) (slotpool.Slot, bool) {
	if p.nFree == 0 {
		return slotpool.Slot{}, false
	}
	req := p.profiles.intern(r.Profile)
	for pr := range p.profiles.recs {
		rec := &p.profiles.recs[pr]
		if len(rec.free) == 0 || !p.profiles.serves(int32(pr), req) {
			continue
		}
		for i := len(rec.free) - 1; i >= 0; i-- {
			idx := rec.free[i]
			sl := slotpool.Slot{ID: p.slot(idx).id, Profile: rec.profile, Node: p.nodes[idx]}
			if accept == nil || accept(sl) {
				return sl, true
			}
		}
	}
	return slotpool.Slot{}, false
}

// setNode records the node of the slot at table index idx.
func (p *Pool) setNode(idx int32, node string) {
	if p.nodes == nil {
		p.nodes = map[int32]string{}
	}
	p.nodes[idx] = node
}
