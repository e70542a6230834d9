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
	var nFree, nHeld, nInUse, nRel int
	total := make([]int, len(p.profiles.recs))
	fixed := make([]int, len(p.profiles.recs))
	ids, err := p.slotIDs()
	if err != nil {
		return err
	}
	for id, idx := range ids {
		s := p.slot(idx)
		rec := &p.profiles.recs[s.profile]
		switch s.state {
		case SlotFree:
			nFree++
			total[s.profile]++
			if int(s.pos) >= len(rec.free) || rec.free[s.pos] != idx {
				return fmt.Errorf("slot %d: not at its free position", id)
			}
			if s.bulk != nil {
				return fmt.Errorf("free slot %d has a bulk", id)
			}
		case SlotHeld:
			nHeld++
			total[s.profile]++
			if int(s.pos) >= len(rec.held) || rec.held[s.pos] != idx {
				return fmt.Errorf("slot %d: not at its held position", id)
			}
			if p.head == nil || s.bulk != p.head {
				return fmt.Errorf("slot %d held by a bulk that is not the head", id)
			}
		case SlotInUse:
			nInUse++
			total[s.profile]++
			b := s.bulk
			if b == nil || p.bulkAt(b.id) != b || b.state != BulkFulfilled {
				return fmt.Errorf("in-use slot %d: bulk not fulfilled and active", id)
			}
			if b.slotList()[s.request] != idx {
				return fmt.Errorf("in-use slot %d: bulk %d request %d points elsewhere", id, b.id, s.request)
			}
			if s.unbounded || s.reclaimed {
				fixed[s.profile]++
			}
			if !p.cfg.Matching.Serves(rec.profile, p.profiles.recs[b.shape.classProf[b.classes()[s.request]]].profile) {
				return fmt.Errorf("slot %d (%v) does not serve bulk %d request %d", id, rec.profile, b.id, s.request)
			}
		case SlotReleasing:
			nRel++
		}
	}
	if nFree != p.nFree || nHeld != p.nHeld || nInUse != p.nInUse || nRel != p.nRelease {
		return fmt.Errorf("counts free/held/inuse/releasing %d/%d/%d/%d, recorded %d/%d/%d/%d",
			nFree, nHeld, nInUse, nRel, p.nFree, p.nHeld, p.nInUse, p.nRelease)
	}
	for i := range p.profiles.recs {
		if p.profiles.recs[i].total != total[i] || p.profiles.recs[i].fixed != fixed[i] {
			return fmt.Errorf("profile %v: total/fixed %d/%d, recorded %d/%d",
				p.profiles.recs[i].profile, total[i], fixed[i], p.profiles.recs[i].total, p.profiles.recs[i].fixed)
		}
	}
	// Bulks.
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
	var prev uint64
	waiting := 0
	for b := p.queue.Front(); b != nil; b = p.queue.Next(b) {
		waiting++
		if b.seq <= prev || b.state != BulkWaiting || p.bulkAt(b.id) != b {
			return fmt.Errorf("queue out of order or stale at bulk %d", b.id)
		}
		prev = b.seq
		if p.shapes.index[b.shape.key] != b.shape {
			return fmt.Errorf("bulk %d: shape not live", b.id)
		}
	}
	if p.head != nil && (p.queue.Len() == 0 || p.queue.Front() != p.head) {
		return fmt.Errorf("head is not the oldest waiting bulk")
	}
	if p.head == nil && p.queue.Len() > 0 {
		return fmt.Errorf("bulks wait but there is no head")
	}
	if err := p.shapes.checkInvariants(waiting); err != nil {
		return err
	}
	// The head holds only slots it can use, and no free slot it could use;
	// it is not complete.
	held := counts(p, ids, func(s *slotRec) bool { return s.state == SlotHeld })
	free := counts(p, ids, func(s *slotRec) bool { return s.state == SlotFree })
	reusable := counts(p, ids, func(s *slotRec) bool {
		return s.state != SlotReleasing && !(s.state == SlotInUse && (s.unbounded || s.reclaimed))
	})
	both := counts(p, ids, func(s *slotRec) bool { return s.state == SlotHeld || s.state == SlotFree })
	if h := p.head; h != nil {
		if m := resource.Assign(h.shape.demand, held, p.cfg.Matching).Matched; m != nHeld {
			return fmt.Errorf("head %d holds %d slots but can use only %d", h.id, nHeld, m)
		}
		if m := resource.Assign(h.shape.demand, both, p.cfg.Matching).Matched; m != nHeld {
			return fmt.Errorf("head %d holds %d slots but could use %d with the free ones", h.id, nHeld, m)
		}
		if nHeld >= h.shape.size {
			return fmt.Errorf("head %d complete but waiting", h.id)
		}
		// The recorded matching of held slots to classes is a matching.
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
	} else if nHeld != 0 {
		return fmt.Errorf("held slots without a head")
	}
	if err := p.shapes.checkVerdicts(reusable); err != nil {
		return err
	}
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
