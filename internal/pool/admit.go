package pool

import (
	"fmt"
	"slices"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// The pool's side of the admission protocol (package slotpool describes
// both sides): Admit applies the admission's messages, and the ask ledger
// declares the demand of the waiting bulks.

// Admit applies one message from the admission. Bad messages (unknown
// slot, duplicate granted slot id) return a *SlotError and change nothing.
func (p *Pool) Admit(now time.Time, msg slotpool.FromAdmission) error {
	switch m := msg.(type) {
	case slotpool.Grant:
		if err := p.checkNew("grant", m.Slots); err != nil {
			return err
		}
		p.grant(now, m)
	case slotpool.Revoke:
		idx, ok := p.slotIndex(m.Slot)
		if !ok {
			return &slotpool.SlotError{Op: "revoke", Slot: m.Slot, Err: slotpool.ErrUnknownSlot}
		}
		confirm := p.slot(idx).state != SlotReleasing // else our release is the answer
		p.remove(now, idx, m.Reason)
		if confirm {
			p.emit(slotpool.SlotRelease{Slot: m.Slot, Reason: m.Reason})
		}
	case slotpool.Reclaim:
		idx, ok := p.slotIndex(m.Slot)
		if !ok {
			return &slotpool.SlotError{Op: "reclaim", Slot: m.Slot, Err: slotpool.ErrUnknownSlot}
		}
		p.reclaim(idx)
	case slotpool.ReleaseConfirmed:
		idx, ok := p.slotIndex(m.Slot)
		if !ok {
			return &slotpool.SlotError{Op: "confirm", Slot: m.Slot, Err: slotpool.ErrUnknownSlot}
		}
		if p.slot(idx).state != SlotReleasing {
			return &slotpool.SlotError{Op: "confirm", Slot: m.Slot, Err: slotpool.ErrSlotNotReleasing}
		}
		p.nRelease--
		p.dropSlot(idx)
	case slotpool.Capacity:
		p.SetCapacity(now, m.Slots)
		return nil
	default:
		return fmt.Errorf("slotpool: admit %T: %w", msg, slotpool.ErrUnknownMessage)
	}
	p.settle(now)
	return nil
}

// grant offers granted slots and counts them against their ask.
func (p *Pool) grant(now time.Time, m slotpool.Grant) {
	if a, ok := p.specAsks[m.Ask]; ok && p.grantSpeculative(now, m.Ask, a, m.Slots) {
		return
	}
	if a, ok := p.asks[m.Ask]; ok {
		a.owed -= len(m.Slots)
		if a.owed <= 0 {
			p.dropAsk(a)
		}
	}
	for _, s := range m.Slots {
		idx, rec := p.addSlot(s)
		p.makeAvailable(now, idx, rec)
	}
}

// reclaim gives a slot back as soon as no task runs in it.
func (p *Pool) reclaim(idx int32) {
	s := p.slot(idx)
	switch s.state {
	case SlotFree, SlotHeld:
		p.detach(idx, slotpool.ReasonPreempted)
		p.startRelease(idx, slotpool.ReasonPreempted)
	case SlotInUse:
		if !s.reclaimed {
			s.reclaimed = true
			if !s.unbounded {
				p.fixSlot(s.profile)
			}
		}
	}
}

// startRelease sends a slot that left the pool's slots back to the
// admission; it stays "releasing" until confirmed.
func (p *Pool) startRelease(idx int32, reason slotpool.Reason) {
	s := p.slot(idx)
	s.state = SlotReleasing
	p.nRelease++
	p.emit(slotpool.SlotRelease{Slot: s.id, Reason: reason})
}

// ask is an outstanding ask of the ledger.
type ask struct {
	id     slotpool.AskID
	bulk   *bulk
	groups []slotpool.TaskGroup
	owed   int // slots asked and not granted yet
}

// askFor declares the demand of a younger bulk that has to wait after
// Submit: all its requests (the head's ask is kept by syncHeadAsk).
func (p *Pool) askFor(b *bulk) {
	if !p.cfg.Admission || p.head == b {
		return
	}
	groups := make([]slotpool.TaskGroup, len(b.shape.demand))
	for c, d := range b.shape.demand {
		groups[c] = slotpool.TaskGroup{Profile: d.Profile, MinMembers: d.N}
	}
	p.newAsk(b, groups)
}

// syncHeadAsk keeps the head's demand current: when its held slots or
// the head itself changed, what it lacks is recomputed, and unless its one
// outstanding ask asks for exactly that, its asks are withdrawn and a new
// one is made.
func (p *Pool) syncHeadAsk() {
	h := p.head
	if !p.cfg.Admission || h == nil || (h == p.synced && p.heldVersion == p.syncedVersion) {
		return
	}
	p.synced, p.syncedVersion = h, p.heldVersion
	lack := p.headLack()
	if len(h.asks) == 1 && slices.Equal(h.asks[0].groups, lack) {
		return
	}
	p.withdrawAsks(h, slotpool.ReasonStopped)
	p.newAsk(h, lack)
}

// headLack returns the requests whose slots would complete the head
// together with the slots it holds: grown one request at a time with
// resource.Matched over the held slots plus hypothetical slots of request
// profiles, least demanding first. Any slots serving these groups then
// complete the head, whichever requests its held slots serve now. (An
// Unknown request is tried with a zero-size slot, which serves only it.)
func (p *Pool) headLack() []slotpool.TaskGroup {
	sh := p.head.shape
	var groups []slotpool.TaskGroup
	if p.nHeld == 0 {
		for _, d := range sh.demand {
			groups = append(groups, slotpool.TaskGroup{Profile: d.Profile, MinMembers: d.N})
		}
		return groups
	}
	if len(sh.demand) == 1 { // one profile: the head uses every slot it holds (offerToHead and rebuildHead keep it so; CheckInvariants checks it)
		if lack := sh.size - p.nHeld; lack > 0 {
			groups = append(groups, slotpool.TaskGroup{Profile: sh.demand[0].Profile, MinMembers: lack})
		}
		return groups
	}
	base := slices.Clone(p.profiles.supply(true, false, false))
	extra := make([]int, len(sh.demand))
	for matched := p.nHeld; matched < sh.size; {
		grew := false
		for i := len(sh.fitOrder) - 1; i >= 0 && !grew; i-- {
			c := sh.fitOrder[i]
			if extra[c] == sh.demand[c].N {
				continue
			}
			extra[c]++
			sup := base
			for k, n := range extra {
				if n > 0 {
					sup = append(sup, resource.Count{Profile: hypothetical(sh.demand[k].Profile), N: n})
				}
			}
			if m := resource.Matched(sh.demand, sup, p.cfg.Matching); m > matched {
				matched, grew = m, true
			} else {
				extra[c]--
			}
		}
		if !grew {
			break // cannot happen: one more slot of an unserved request's profile always helps
		}
	}
	for c, n := range extra {
		if n > 0 {
			groups = append(groups, slotpool.TaskGroup{Profile: sh.demand[c].Profile, MinMembers: n})
		}
	}
	return groups
}

// hypothetical is the profile of a slot that serves requests of profile
// pr and as few others as possible.
func hypothetical(pr resource.Profile) resource.Profile {
	if pr.IsUnknown() {
		return resource.New(0, 0)
	}
	return pr
}

// newAsk records and emits an all-or-nothing ask for b.
func (p *Pool) newAsk(b *bulk, groups []slotpool.TaskGroup) {
	a := &ask{id: p.nextAsk, bulk: b, groups: groups}
	p.nextAsk++
	for _, g := range groups {
		a.owed += g.MinMembers
	}
	p.asks[a.id] = a
	b.asks = append(b.asks, a)
	msg := slotpool.Ask{ID: a.id, Bulk: b.id, Gang: slotpool.Gang{Groups: slices.Clone(groups), AllOrNothing: true}} // the caller owns it
	if b == p.head {
		msg.Head = true
		for pr := range p.profiles.recs {
			for _, idx := range p.profiles.recs[pr].held {
				msg.Holding = append(msg.Holding, p.slot(idx).id)
			}
		}
	}
	p.emit(msg)
}

// dropAsk forgets a fully granted ask.
func (p *Pool) dropAsk(a *ask) {
	delete(p.asks, a.id)
	a.bulk.asks = slices.DeleteFunc(a.bulk.asks, func(x *ask) bool { return x == a })
}

// withdrawAsks releases the outstanding asks of a bulk.
func (p *Pool) withdrawAsks(b *bulk, reason slotpool.Reason) {
	for _, a := range b.asks {
		delete(p.asks, a.id)
		p.emit(slotpool.AskRelease{ID: a.id, Reason: reason})
	}
	b.asks = b.asks[:0]
}
