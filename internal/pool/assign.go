package pool

import (
	"slices"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// This file moves available slots to waiting bulks:
//
//   - the head (the oldest waiting bulk) takes every available slot that
//     raises the number of its requests it can serve (offerToHead), and is
//     the only bulk that holds slots while it waits. Its held set is not
//     bound to requests: it is matched with resource.Assign when the bulk
//     commits, over held and free slots together, so the smallest slots
//     are used and the rest goes back;
//   - a slot the head cannot use stays free, and a younger bulk is
//     committed when it can be completed at once from free slots
//     (completeYounger), the oldest such bulk first.

// ensureHead makes the oldest waiting bulk the head and lets it take the
// free slots it can use, committing heads that complete, until the head
// must wait or no bulk waits.
func (p *Pool) ensureHead(now time.Time) {
	for p.head == nil && p.queue.Len() > 0 {
		p.head = p.queue.Front()
		p.rebuildHead(now)
	}
}

// rebuildHead recomputes the head's held set as a maximum matching of its
// requests over held and free slots, preferring small slots, and commits
// the head if that matching is complete. Used when a bulk becomes the head
// and when the head lost a held slot.
func (p *Pool) rebuildHead(now time.Time) {
	h := p.head
	sh := h.shape
	if p.nHeld == 0 && sh.size == 1 && p.nFree > 0 {
		// A head of one request and free slots (a burst of submits on an
		// idle cluster): when the free slots that serve it are all of
		// one profile, any matching takes one of them, and no matching
		// needs to be computed.
		if pr, n := p.freeServing(sh.classProf[0]); n == 1 {
			p.profiles.supplyProf = append(p.profiles.supplyProf[:0], pr)
			p.pairBuf = append(p.pairBuf[:0], resource.Pair{Request: 0, Slot: 0, N: 1})
			p.fulfill(now, h, resource.Assignment{Matched: 1, Pairs: p.pairBuf})
			return
		}
	}
	if p.nHeld == 0 && (p.nFree == 0 || p.shapes.classBound(sh, false) == sh.size) {
		// No free slot serves any of its requests.
		p.resetHead()
		p.clearHeadRejected()
		return
	}
	a := p.profiles.assign(sh.demand, p.profiles.supply(true, true, false))
	if a.Complete() {
		p.fulfill(now, h, a)
		return
	}
	want := zeroed(p.wantBuf, len(p.profiles.supplyProf))
	for _, pair := range a.Pairs {
		want[pair.Slot] += pair.N
	}
	p.wantBuf = want
	for k, pr := range p.profiles.supplyProf {
		rec := &p.profiles.recs[pr]
		for len(rec.held) > want[k] {
			p.pushFree(now, p.popHeld(pr))
			p.noteFree(pr)
		}
		for len(rec.held) < want[k] {
			p.pushHeld(p.popFree(pr))
		}
	}
	p.setHeadServed(a)
	p.clearHeadRejected()
}

func (p *Pool) clearHeadRejected() {
	for i := range p.profiles.recs {
		p.profiles.recs[i].headRejected = false
	}
}

// setHeadServed records the matching a (over the supply in p.profiles.supplyProf)
// of the head's held slots to its classes.
func (p *Pool) setHeadServed(a resource.Assignment) {
	p.resetHead()
	for _, pair := range a.Pairs {
		p.headServed[pair.Request] += pair.N
		p.addHeadPair(int32(pair.Request), p.profiles.supplyProf[pair.Slot], pair.N)
	}
}

// resetHead clears the recorded matching of the head.
func (p *Pool) resetHead() {
	p.headServed = zeroed(p.headServed, len(p.head.shape.demand))
	p.headPairs = p.headPairs[:0]
}

// zeroed returns buf resized to n zeroes, reusing its storage. Its callers'
// n is a number of classes or profiles, small: stores, not clear's call
// (which a loop over the slice would compile to).
func zeroed[T int | int32](buf []T, n int) []T {
	buf = slices.Grow(buf[:0], n)[:n]
	for i := range n {
		buf[i] = 0
	}
	return buf
}

// offerToHead gives one available slot (index idx, record s; in no list
// yet) to the head if it can use it, and commits the head when complete.
// It reports whether the head took the slot.
func (p *Pool) offerToHead(now time.Time, idx int32, s *slotRec) bool {
	p.ensureHead(now)
	h := p.head
	if h == nil {
		return false
	}
	pr := s.profile
	if p.profiles.recs[pr].headRejected {
		// The held set only grew since the head last refused this profile,
		// and a slot that extends no matching of a set extends none of a
		// superset: no need to ask again.
		return false
	}
	sh := h.shape
	if sh.size == 1 && p.nHeld == 0 && p.profiles.serves(pr, sh.classProf[0]) && (p.nFree == 0 || !p.freeServesInstead(pr, sh.classProf[0])) {
		// A head of one request that the slot serves: fulfilled at once,
		// as commitHead would (no free slot of another profile could
		// serve it instead; with no slot free, none is looked for).
		p.fulfillOne(h, idx, s)
		return true
	}
	taken := false
	for _, c := range sh.fitOrder {
		if p.headServed[c] < sh.demand[c].N && p.profiles.serves(pr, sh.classProf[c]) {
			p.headServed[c]++
			p.addHeadPair(c, pr, 1)
			taken = true
			break
		}
	}
	if !taken {
		// Maybe a re-matching of the held slots makes room for it: an
		// augmenting path ends with a held slot moving to a class not yet
		// fully served, so without such a held slot there is none.
		if !p.heldCanMove() {
			p.profiles.recs[pr].headRejected = true
			return false
		}
		sup := p.profiles.supply(true, false, false)
		k := p.profiles.supplyIndex(pr)
		if k < 0 {
			sup = append(sup, resource.Count{Profile: p.profiles.recs[pr].profile})
			p.profiles.supplyProf = append(p.profiles.supplyProf, pr)
			k = len(sup) - 1
		}
		sup[k].N++
		a := p.profiles.assign(sh.demand, sup)
		if a.Matched <= p.nHeld {
			p.profiles.recs[pr].headRejected = true
			return false
		}
		p.setHeadServed(a)
	}
	p.pushHeld(idx)
	if p.nHeld == sh.size {
		p.commitHead(now)
	}
	return true
}

// freeServing returns how many profiles have free slots that serve
// requests of profile index class, and the last of them.
func (p *Pool) freeServing(class int32) (pr int32, n int) {
	for q := range p.profiles.recs {
		if len(p.profiles.recs[q].free) > 0 && p.profiles.serves(int32(q), class) {
			pr, n = int32(q), n+1
		}
	}
	return pr, n
}

// freeServesInstead reports whether a free slot of a profile other than
// pr serves requests of profile index class.
func (p *Pool) freeServesInstead(pr, class int32) bool {
	for q := range p.profiles.recs {
		if int32(q) != pr && len(p.profiles.recs[q].free) > 0 && p.profiles.serves(int32(q), class) {
			return true
		}
	}
	return false
}

// commitHead fulfills the head once its held slots serve every request.
// If a free slot could replace a held one for some class, resource.Assign
// over held and free slots picks the smallest; otherwise every held slot
// is needed and the recorded matching is used as it is.
func (p *Pool) commitHead(now time.Time) {
	h := p.head
	sh := h.shape
	for _, hp := range p.headPairs {
		if p.freeServesInstead(hp.prof, sh.classProf[hp.class]) {
			p.fulfill(now, h, p.profiles.assign(sh.demand, p.profiles.supply(true, true, false)))
			return
		}
	}
	p.profiles.supplyProf = p.profiles.supplyProf[:0]
	a := resource.Assignment{Matched: sh.size, Pairs: p.pairBuf[:0]} // fulfill keeps nothing of it
	for _, hp := range p.headPairs {
		k := p.profiles.supplyIndex(hp.prof)
		if k < 0 {
			k = len(p.profiles.supplyProf)
			p.profiles.supplyProf = append(p.profiles.supplyProf, hp.prof)
		}
		a.Pairs = append(a.Pairs, resource.Pair{Request: int(hp.class), Slot: k, N: hp.n})
	}
	p.pairBuf = a.Pairs
	p.fulfill(now, h, a)
}

// headPair says that n held slots of profile prof serve class class of
// the head.
type headPair struct {
	class, prof int32
	n           int
}

// addHeadPair records n more held slots of profile pr serving class c.
func (p *Pool) addHeadPair(c, pr int32, n int) {
	for i := range p.headPairs {
		if hp := &p.headPairs[i]; hp.class == c && hp.prof == pr {
			hp.n += n
			return
		}
	}
	p.headPairs = append(p.headPairs, headPair{class: c, prof: pr, n: n})
}

// heldCanMove reports whether some held slot serves a class of the head
// that is not fully served.
func (p *Pool) heldCanMove() bool {
	sh := p.head.shape
	for c, d := range sh.demand {
		if p.headServed[c] >= d.N {
			continue
		}
		for pr := range p.profiles.recs {
			if len(p.profiles.recs[pr].held) > 0 && p.profiles.serves(int32(pr), sh.classProf[c]) {
				return true
			}
		}
	}
	return false
}

// makeAvailable routes a slot that just became available (offered,
// granted, released by its task, returned by a canceled bulk): to the head
// if it can use it, else to the free slots, where younger bulks look.
func (p *Pool) makeAvailable(now time.Time, idx int32, s *slotRec) {
	if !p.offerToHead(now, idx, s) {
		p.pushFree(now, idx)
		p.noteFree(s.profile)
	}
}

// noteFree records that a slot of profile pr became free, for the cached
// completion verdicts of the shapes.
func (p *Pool) noteFree(pr int32) {
	rec := &p.profiles.recs[pr]
	if rec.freeAdds == 0 {
		p.dirtyFree = append(p.dirtyFree, pr)
	}
	rec.freeAdds++
}

// completeYounger commits, oldest first, every waiting bulk other than the
// head that can be completed at once from free slots. A shape is checked
// with resource.Matched only if enough usable free slots arrived since its
// last check to cover what was then missing: one slot raises a maximum
// matching by at most one, and removals never raise it.
func (p *Pool) completeYounger(now time.Time) {
	if p.nFree == 0 && len(p.dirtyFree) == 0 {
		// No free slot arrived to count, and none to complete a bulk
		// from. The shapes keep the verdicts of their last check, which
		// may ask for more checks than a pass here would have, never
		// fewer: decisions are the same.
		return
	}
	for _, pr := range p.dirtyFree {
		rec := &p.profiles.recs[pr]
		for _, s := range p.shapes.live {
			if p.profiles.relevant(pr, s) {
				s.freeAdds += rec.freeAdds
			}
		}
		rec.freeAdds = 0
	}
	p.dirtyFree = p.dirtyFree[:0]
	for {
		var best *bulk
		// The free supply, built once a pass: nothing below changes the
		// free slots before fulfill, which reads it (and p.profiles.supplyProf).
		var free []resource.Count
		for _, s := range p.shapes.live {
			y := s.firstYounger(p.head)
			if y == nil || (s.freeMissing > 0 && s.freeAdds < s.freeMissing) {
				continue
			}
			if bound := p.shapes.classBound(s, false); bound > 0 {
				s.freeMissing, s.freeAdds = bound, 0
				continue
			}
			if free == nil {
				free = p.profiles.supply(false, true, false)
			}
			m := resource.Matched(s.demand, free, p.cfg.Matching)
			s.freeMissing, s.freeAdds = s.size-m, 0
			if s.freeMissing == 0 && (best == nil || y.seq < best.seq) {
				best = y
			}
		}
		if best == nil {
			return
		}
		p.fulfill(now, best, p.profiles.assign(best.shape.demand, free))
	}
}

// fulfill commits a complete assignment a (over the supply last built in
// p.profiles.supplyProf) to bulk b: held slots of a profile are used before free
// ones, unused held slots go back to the free slots, and the Fulfilled
// event is emitted.
func (p *Pool) fulfill(now time.Time, b *bulk, a resource.Assignment) {
	sh := b.shape
	// Bucket the request indexes by class: order lists them class by
	// class, next[c] is where class c's next request is in order. A bulk of
	// one class (the usual case) needs no bucketing: order is the identity.
	order, next := p.orderBuf[:0], p.nextBuf[:0]
	if len(sh.demand) > 1 {
		start := zeroed(p.startBuf, len(sh.demand)+1)
		for _, c := range b.classes() {
			start[c+1]++
		}
		for c := 1; c < len(start); c++ {
			start[c] += start[c-1]
		}
		order = slices.Grow(order, int(b.n))[:b.n] // every entry is written below
		next = append(next, start[:len(sh.demand)]...)
		for i, c := range b.classes() {
			order[next[c]] = int32(i)
			next[c]++
		}
		copy(next, start[:len(sh.demand)])
		p.startBuf, p.orderBuf = start, order
	} else {
		next = append(next, 0)
	}
	p.nextBuf = next

	isHead := p.head == b
	n := int(b.n)
	b.placed = true // slotList has them now
	ids := p.newIDs(n)
	for _, pair := range a.Pairs {
		pr := p.profiles.supplyProf[pair.Slot]
		for range pair.N {
			var idx int32
			if isHead && len(p.profiles.recs[pr].held) > 0 {
				idx = p.popHeld(pr)
			} else {
				idx = p.popFree(pr)
			}
			r := next[pair.Request]
			if len(order) > 0 {
				r = order[r]
			}
			next[pair.Request]++
			s := p.slot(idx)
			p.occupy(idx, s, b, r)
			ids[r] = s.id
		}
	}
	if isHead {
		p.returnHeld(now) // held slots the commit did not need
	}
	p.fulfilled(b, ids)
}

// fulfillOne fulfills the head, a bulk of one request holding no slot,
// with slot idx, record s (available: in no list).
func (p *Pool) fulfillOne(b *bulk, idx int32, s *slotRec) {
	b.placed = true
	ids := p.newIDs(1)
	p.occupy(idx, s, b, 0)
	ids[0] = s.id
	p.fulfilled(b, ids)
}

// fulfilled ends the wait of a bulk whose requests all have slots (ids):
// the Fulfilled event, and out of the queue.
func (p *Pool) fulfilled(b *bulk, ids []slotpool.SlotID) {
	p.emitFulfilled(Fulfilled{Bulk: b.id, Slots: ids})
	p.leaveWaiting(b, slotpool.ReasonStopped)
	b.state = BulkFulfilled
	b.inUse = int32(len(ids))
	p.logDebug("bulk fulfilled", b.id)
}

// returnHeld gives every slot the head holds back to the free lists (the
// head committed, failed or was canceled).
func (p *Pool) returnHeld(now time.Time) {
	for pr := range p.profiles.recs {
		for len(p.profiles.recs[pr].held) > 0 {
			p.pushFree(now, p.popHeld(int32(pr)))
			p.noteFree(int32(pr))
		}
	}
}

// occupy puts request r of bulk b into slot idx, record s.
func (p *Pool) occupy(idx int32, s *slotRec, b *bulk, r int32) {
	s.state, s.bulk, s.request = SlotInUse, b, r
	s.unbounded = b.isUnbounded(r)
	if s.unbounded {
		p.fixSlot(s.profile)
	}
	b.setSlot(r, idx)
	p.nInUse++
}

// fixSlot records that an in-use slot of profile pr will not come back.
func (p *Pool) fixSlot(pr int32) {
	p.profiles.recs[pr].fixed++
	p.shapes.reusableLost(pr)
}
