package pool

import (
	"fmt"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// CheckInvariants verifies the pool's internal consistency from scratch,
// without trusting any cached verdict, and returns the first violation
// found. It costs O(slots + bulks + shapes): for tests, which call it after
// every step, and for debugging, not for a hot path.
func (p *Pool) CheckInvariants() error {
	ids, err := p.slotIDs()
	if err != nil {
		return err
	}
	t, err := p.checkSlots(ids)
	if err != nil {
		return err
	}
	if err := p.checkTally(t); err != nil {
		return err
	}
	if err := p.checkBulks(t.inUse); err != nil {
		return err
	}
	waiting, err := p.checkQueue()
	if err != nil {
		return err
	}
	if err := p.shapes.checkInvariants(waiting); err != nil {
		return err
	}
	if err := p.checkHead(ids, t.held); err != nil {
		return err
	}
	return p.checkLiveShapes(ids)
}

// slotTally counts the slots of the table as checkSlots finds them.
type slotTally struct {
	free, held, inUse, releasing int
	total                        []int // slots per profile, releasing ones left out
	fixed                        []int // in-use slots per profile that are unbounded or reclaimed
}

// checkSlots checks every slot of the table (ids, from slotIDs) against
// the position its state records, and counts them.
func (p *Pool) checkSlots(ids map[slotpool.SlotID]int32) (slotTally, error) {
	t := slotTally{total: make([]int, len(p.profiles.recs)), fixed: make([]int, len(p.profiles.recs))}
	for id, idx := range ids {
		if err := p.checkSlot(id, idx, &t); err != nil {
			return t, err
		}
	}
	return t, nil
}

// checkSlot checks the slot id at table index idx, counting it in t: a
// free slot is at its free position without a bulk, a held one at its
// held position held by the head, an in-use one used by its bulk
// (checkInUseSlot).
func (p *Pool) checkSlot(id slotpool.SlotID, idx int32, t *slotTally) error {
	s := p.slot(idx)
	rec := &p.profiles.recs[s.profile]
	switch s.state {
	case SlotFree:
		t.free++
		t.total[s.profile]++
		if int(s.pos) >= len(rec.free) || rec.free[s.pos] != idx {
			return fmt.Errorf("slot %d: not at its free position", id)
		}
		if s.bulk != nil {
			return fmt.Errorf("free slot %d has a bulk", id)
		}
	case SlotHeld:
		t.held++
		t.total[s.profile]++
		if int(s.pos) >= len(rec.held) || rec.held[s.pos] != idx {
			return fmt.Errorf("slot %d: not at its held position", id)
		}
		if p.head == nil || s.bulk != p.head {
			return fmt.Errorf("slot %d held by a bulk that is not the head", id)
		}
	case SlotInUse:
		t.inUse++
		t.total[s.profile]++
		if s.unbounded || s.reclaimed {
			t.fixed[s.profile]++
		}
		return p.checkInUseSlot(id, idx, s)
	case SlotReleasing:
		t.releasing++
	}
	return nil
}

// checkInUseSlot checks that the in-use slot s (id, at table index idx)
// is used by a fulfilled live bulk, whose request it fills points back to
// it and is one the slot serves.
func (p *Pool) checkInUseSlot(id slotpool.SlotID, idx int32, s *slotRec) error {
	b := s.bulk
	if b == nil || p.bulkAt(b.id) != b || b.state != BulkFulfilled {
		return fmt.Errorf("in-use slot %d: bulk not fulfilled and active", id)
	}
	if b.slotList()[s.request] != idx {
		return fmt.Errorf("in-use slot %d: bulk %d request %d points elsewhere", id, b.id, s.request)
	}
	rec := &p.profiles.recs[s.profile]
	if !p.cfg.Matching.Serves(rec.profile, p.profiles.recs[b.shape.classProf[b.classes()[s.request]]].profile) {
		return fmt.Errorf("slot %d (%v) does not serve bulk %d request %d", id, rec.profile, b.id, s.request)
	}
	return nil
}

// checkTally checks the slots counted (t) against the counts the pool
// and its profiles record.
func (p *Pool) checkTally(t slotTally) error {
	if t.free != p.nFree || t.held != p.nHeld || t.inUse != p.nInUse || t.releasing != p.nRelease {
		return fmt.Errorf("counts free/held/inuse/releasing %d/%d/%d/%d, recorded %d/%d/%d/%d",
			t.free, t.held, t.inUse, t.releasing, p.nFree, p.nHeld, p.nInUse, p.nRelease)
	}
	for i := range p.profiles.recs {
		if p.profiles.recs[i].total != t.total[i] || p.profiles.recs[i].fixed != t.fixed[i] {
			return fmt.Errorf("profile %v: total/fixed %d/%d, recorded %d/%d",
				p.profiles.recs[i].profile, t.total[i], t.fixed[i], p.profiles.recs[i].total, p.profiles.recs[i].fixed)
		}
	}
	return nil
}

// checkBulks checks every live bulk (checkBulk) and that the fulfilled
// ones use as many slots as are in use (nInUse).
func (p *Pool) checkBulks(nInUse int) error {
	inUse := 0
	var bulkErr error
	p.bulks.each(func(id slotpool.BulkID, h int32) {
		if bulkErr == nil {
			bulkErr = p.checkBulk(id, p.bulkRecs.at(h-1), &inUse)
		}
	})
	if bulkErr != nil {
		return bulkErr
	}
	if inUse != nInUse {
		return fmt.Errorf("bulks use %d slots, slots say %d", inUse, nInUse)
	}
	return nil
}

// checkQueue checks the queue of waiting bulks: in order of arrival, each
// waiting, live and of a live shape, the head its front. It returns how
// many bulks wait.
func (p *Pool) checkQueue() (int, error) {
	var prev uint64
	waiting := 0
	for b := p.queue.Front(); b != nil; b = p.queue.Next(b) {
		waiting++
		if b.seq <= prev || b.state != BulkWaiting || p.bulkAt(b.id) != b {
			return waiting, fmt.Errorf("queue out of order or stale at bulk %d", b.id)
		}
		prev = b.seq
		if s, _ := p.shapes.index.get([]byte(b.shape.key)); s != b.shape {
			return waiting, fmt.Errorf("bulk %d: shape not live", b.id)
		}
	}
	if p.head != nil && (p.queue.Len() == 0 || p.queue.Front() != p.head) {
		return waiting, fmt.Errorf("head is not the oldest waiting bulk")
	}
	if p.head == nil && p.queue.Len() > 0 {
		return waiting, fmt.Errorf("bulks wait but there is no head")
	}
	return waiting, nil
}

// checkHead checks the head (nHeld slots held): it holds only slots it
// can use, and no free slot it could use; it is not complete; its
// recorded matching of held slots to classes is a matching
// (checkHeadPairs). Without a head no slot is held.
func (p *Pool) checkHead(ids map[slotpool.SlotID]int32, nHeld int) error {
	h := p.head
	if h == nil {
		if nHeld != 0 {
			return fmt.Errorf("held slots without a head")
		}
		return nil
	}
	held := counts(p, ids, func(s *slotRec) bool { return s.state == SlotHeld })
	both := counts(p, ids, func(s *slotRec) bool { return s.state == SlotHeld || s.state == SlotFree })
	if m := resource.Assign(h.shape.demand, held, p.cfg.Matching).Matched; m != nHeld {
		return fmt.Errorf("head %d holds %d slots but can use only %d", h.id, nHeld, m)
	}
	if m := resource.Assign(h.shape.demand, both, p.cfg.Matching).Matched; m != nHeld {
		return fmt.Errorf("head %d holds %d slots but could use %d with the free ones", h.id, nHeld, m)
	}
	if nHeld >= h.shape.size {
		return fmt.Errorf("head %d complete but waiting", h.id)
	}
	return p.checkHeadPairs(h)
}

// checkHeadPairs checks that the recorded matching of the head h's held
// slots to its classes is a matching: every pair a profile serving its
// class, the pairs serving each class as recorded and no more than it
// asks, and using each profile's held slots.
func (p *Pool) checkHeadPairs(h *bulk) error {
	perClass := make([]int, len(h.shape.demand))
	perProf := make([]int, len(p.profiles.recs))
	for _, hp := range p.headPairs {
		if hp.n <= 0 || !p.profiles.serves(hp.prof, h.shape.classProf[hp.class]) {
			return fmt.Errorf("head %d: bad recorded pair %+v", h.id, hp)
		}
		perClass[hp.class] += hp.n
		perProf[hp.prof] += hp.n
	}
	for c, n := range perClass {
		if n != p.headServed[c] || n > h.shape.demand[c].N {
			return fmt.Errorf("head %d class %d: pairs serve %d, recorded %d of %d", h.id, c, n, p.headServed[c], h.shape.demand[c].N)
		}
	}
	for q, n := range perProf {
		if n != len(p.profiles.recs[q].held) {
			return fmt.Errorf("head %d: pairs use %d slots of %v, %d held", h.id, n, p.profiles.recs[q].profile, len(p.profiles.recs[q].held))
		}
	}
	return nil
}

// checkLiveShapes checks the cached verdicts of the shapes against the
// slots that could be reused (checkVerdicts), that no bulk younger than
// the head could be completed from the free slots, and that a bulk's
// timer is armed exactly when its shape cannot be fulfilled.
func (p *Pool) checkLiveShapes(ids map[slotpool.SlotID]int32) error {
	reusable := counts(p, ids, func(s *slotRec) bool {
		return s.state != SlotReleasing && !(s.state == SlotInUse && (s.unbounded || s.reclaimed))
	})
	if err := p.shapes.checkVerdicts(reusable); err != nil {
		return err
	}
	free := counts(p, ids, func(s *slotRec) bool { return s.state == SlotFree })
	for _, s := range p.shapes.live {
		if y := s.firstYounger(p.head); y != nil && resource.Assign(s.demand, free, p.cfg.Matching).Complete() {
			return fmt.Errorf("younger bulk %d could be completed from free slots", y.id)
		}
		for b := s.bulks.Front(); b != nil; b = s.bulks.Next(b) {
			if (b.deadline != nil) == s.fulfillable {
				return fmt.Errorf("bulk %d: fulfillable %v but timer armed %v", b.id, s.fulfillable, b.deadline != nil)
			}
		}
	}
	return nil
}

// counts counts the slots of the table (ids) that keep keeps, per
// profile.
func counts(p *Pool, ids map[slotpool.SlotID]int32, keep func(*slotRec) bool) []resource.Count {
	n := make([]int, len(p.profiles.recs))
	for _, idx := range ids {
		if s := p.slot(idx); keep(s) {
			n[s.profile]++
		}
	}
	var out []resource.Count
	for i, c := range n {
		if c > 0 {
			out = append(out, resource.Count{Profile: p.profiles.recs[i].profile, N: c})
		}
	}
	return out
}

// checkBulk checks one live bulk, adding the slots a fulfilled one uses
// to inUse.
func (p *Pool) checkBulk(id slotpool.BulkID, b *bulk, inUse *int) error {
	switch b.state {
	case BulkWaiting:
		if !b.inQueue {
			return fmt.Errorf("waiting bulk %d not queued", id)
		}
	case BulkFulfilled:
		n := 0
		for _, idx := range b.slotList() {
			if idx >= 0 {
				n++
			}
		}
		if n != int(b.inUse) || n == 0 {
			return fmt.Errorf("fulfilled bulk %d: %d slots in use, recorded %d", id, n, b.inUse)
		}
		*inUse += n
	default:
		return fmt.Errorf("bulk %d active in state %v", id, b.state)
	}
	return nil
}

// bulkAt returns the live bulk with id, or nil.
func (p *Pool) bulkAt(id slotpool.BulkID) *bulk {
	b, _ := p.liveBulk(id)
	return b
}

// slotIDs walks the slot table (its recycled entries skipped) into a map
// from slot id to table index, checked against the dense index both ways:
// every slot found there, and nothing else.
func (p *Pool) slotIDs() (map[slotpool.SlotID]int32, error) {
	recycled := make(map[int32]bool, len(p.recycled))
	for _, idx := range p.recycled {
		recycled[idx] = true
	}
	ids := make(map[slotpool.SlotID]int32, int(p.nSlots)-len(p.recycled))
	for idx := range p.nSlots {
		if recycled[idx] {
			continue
		}
		id := p.slot(idx).id
		if _, dup := ids[id]; dup {
			return nil, fmt.Errorf("slot %d twice in the slot table", id)
		}
		ids[id] = idx
		if i, ok := p.slotIndex(id); !ok || i != idx {
			return nil, fmt.Errorf("slot %d: table index %d, dense index %d", id, idx, i)
		}
	}
	if p.slotDense.n != len(ids) {
		return nil, fmt.Errorf("%d slots in the table, %d ids in the dense index", len(ids), p.slotDense.n)
	}
	return ids, nil
}
