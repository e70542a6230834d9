package slotpool

import (
	"math/bits"
	"time"

	"github.com/regionsched/regionsched/resource"
)

// profileRec aggregates the slots of one distinct profile, so that every
// matching question runs on distinct profiles, not on individual slots.
type profileRec struct {
	profile resource.Profile
	free    []int32 // free slots of this profile (a stack; slotRec.pos indexes it)
	held    []int32 // slots of this profile held by the head bulk
	// total counts the slots of this profile in the pool: free, held and in
	// use (not those being released to the admission).
	total int
	// fixed counts the in-use slots that will not come back: their task is
	// unbounded, or the admission reclaimed them.
	fixed int

	// Changes not yet folded into the shapes' cached verdicts.
	reusableAdds int  // slots that became reusable
	reusableLoss bool // a reusable slot went away
	freeAdds     int  // slots that became free
	// headRejected: the head cannot use one more slot of this profile.
	headRejected bool
	// servesRequest caches Matching.Serves(this, request profile index):
	// 0 unknown, 1 yes, 2 no.
	servesRequest []int8
}

// reusable is the number of slots of this profile that are or will become
// available: free, held, or used by bounded tasks.
func (r *profileRec) reusable() int { return r.total - r.fixed }

// slotRec is one slot in the pool, in a dense table indexed by int32.
type slotRec struct {
	id      SlotID
	profile int32
	state   SlotState
	pos     int32 // index in profiles[profile].free or .held
	// bulk and request: the user of a held (request -1) or in-use slot.
	bulk      *bulk
	request   int32
	unbounded bool
	reclaimed bool
	idle      *timer
}

// The slot table is a list of segments that double in size: segment 0
// holds indexes [0, firstSegment), segment k >= 1 holds [firstSegment <<
// (k-1), firstSegment << k). So it grows without ever moving a slot (the
// records are used by pointer), and a pool with few slots (one per job,
// many jobs on one admission) costs a few hundred bytes, not a large
// fixed chunk.
const firstSegmentBits = 4

// slotSegment returns the segment and the offset of index idx.
func slotSegment(idx int32) (seg, off int) {
	if idx < 1<<firstSegmentBits {
		return 0, int(idx)
	}
	seg = bits.Len32(uint32(idx)) - firstSegmentBits
	return seg, int(idx) - 1<<(seg+firstSegmentBits-1)
}

// segmentSize is the length of segment seg.
func segmentSize(seg int) int {
	if seg == 0 {
		return 1 << firstSegmentBits
	}
	return 1 << (seg + firstSegmentBits - 1)
}

// slot returns the slot record at index idx.
func (p *Pool) slot(idx int32) *slotRec {
	seg, off := slotSegment(idx)
	return &p.slotChunks[seg][off]
}

// slotIndex returns the table index of slot id (without hashing for dense
// ids).
func (p *Pool) slotIndex(id SlotID) (int32, bool) {
	i, ok := p.slotDense.get(id)
	return i - 1, ok
}

// internProfile returns the index of a profile, adding it if new.
func (p *Pool) internProfile(pr resource.Profile) int32 {
	// The profile interned last first: the requests of a run mostly
	// repeat a few profiles, and comparing is cheaper than hashing.
	if i := p.lastProfile; int(i) < len(p.profiles) && p.profiles[i].profile == pr {
		return i
	}
	i, ok := p.profileIdx[pr]
	if !ok {
		i = int32(len(p.profiles))
		p.profiles = append(p.profiles, profileRec{profile: pr})
		p.profileIdx[pr] = i
	}
	p.lastProfile = i
	return i
}

// serves reports whether a slot of profile slot serves a request of profile
// req, caching the answer per pair of profile indexes.
func (p *Pool) serves(slot, req int32) bool {
	rec := &p.profiles[slot]
	for int(req) >= len(rec.servesRequest) {
		rec.servesRequest = append(rec.servesRequest, 0)
	}
	switch rec.servesRequest[req] {
	case 1:
		return true
	case 2:
		return false
	}
	ok := p.cfg.Matching.Serves(rec.profile, p.profiles[req].profile)
	rec.servesRequest[req] = 2
	if ok {
		rec.servesRequest[req] = 1
	}
	return ok
}

// addSlot puts a new slot into the table (state to be set by the caller)
// and returns its index and record.
func (p *Pool) addSlot(s Slot) (int32, *slotRec) {
	pr := p.internProfile(s.Profile)
	var idx int32
	if n := len(p.recycled); n > 0 {
		idx = p.recycled[n-1]
		p.recycled = p.recycled[:n-1]
	} else {
		idx = p.nSlots
		p.nSlots++
		if seg, _ := slotSegment(idx); seg == len(p.slotChunks) {
			p.slotChunks = append(p.slotChunks, make([]slotRec, segmentSize(seg)))
		}
	}
	rec := p.slot(idx)
	*rec = slotRec{id: s.ID, profile: pr, request: -1}
	if s.Node != "" {
		p.setNode(idx, s.Node)
	}
	p.slotDense.set(s.ID, idx+1)
	p.profiles[pr].total++
	p.reusableAdded(pr)
	return idx, rec
}

// dropSlot removes a slot that is neither free nor held from the table.
func (p *Pool) dropSlot(idx int32) {
	p.slotDense.del(p.slot(idx).id)
	delete(p.nodes, idx)
	*p.slot(idx) = slotRec{}
	p.recycled = append(p.recycled, idx)
}

// pushFree makes a slot free and arms its idle timer.
func (p *Pool) pushFree(now time.Time, idx int32) {
	s := p.slot(idx)
	rec := &p.profiles[s.profile]
	s.state, s.bulk, s.request = SlotFree, nil, -1
	s.pos = int32(len(rec.free))
	rec.free = append(rec.free, idx)
	p.nFree++
	if p.cfg.IdleTimeout > 0 {
		s.idle = p.timers.add(now.Add(p.cfg.IdleTimeout), nil, idx)
	}
}

// popFree takes the most recently freed slot of a profile.
func (p *Pool) popFree(pr int32) int32 {
	free := p.profiles[pr].free
	idx := free[len(free)-1]
	p.removeFree(idx)
	return idx
}

// unlink removes slot idx from list (its profile's free or held list) in
// O(1): the last entry takes its place and learns its new position.
func (p *Pool) unlink(list *[]int32, idx int32) {
	pos := p.slot(idx).pos
	last := (*list)[len(*list)-1]
	(*list)[pos] = last
	p.slot(last).pos = pos
	*list = (*list)[:len(*list)-1]
}

// removeFree takes a free slot out of its free list.
func (p *Pool) removeFree(idx int32) {
	s := p.slot(idx)
	p.unlink(&p.profiles[s.profile].free, idx)
	p.nFree--
	if s.idle != nil {
		p.timers.cancel(s.idle)
		s.idle = nil
	}
}

// pushHeld makes a slot held by the head bulk.
func (p *Pool) pushHeld(idx int32) {
	s := p.slot(idx)
	rec := &p.profiles[s.profile]
	s.state, s.bulk, s.request = SlotHeld, p.head, -1
	s.pos = int32(len(rec.held))
	rec.held = append(rec.held, idx)
	p.nHeld++
	p.heldVersion++
}

// popHeld takes a held slot of a profile.
func (p *Pool) popHeld(pr int32) int32 {
	held := p.profiles[pr].held
	idx := held[len(held)-1]
	p.removeHeld(idx)
	return idx
}

// removeHeld takes a held slot out of the head's held set.
func (p *Pool) removeHeld(idx int32) {
	p.unlink(&p.profiles[p.slot(idx).profile].held, idx)
	p.nHeld--
	p.heldVersion++
}

// supply fills p.supplyBuf/p.supplyProf with the non-zero per-profile
// counts of the chosen slot sets, ready for resource.Assign.
func (p *Pool) supply(held, free, reusable bool) []resource.Count {
	p.supplyBuf, p.supplyProf = p.supplyBuf[:0], p.supplyProf[:0]
	for i := range p.profiles {
		rec := &p.profiles[i]
		n := 0
		if reusable {
			n = rec.reusable()
		} else {
			if held {
				n += len(rec.held)
			}
			if free {
				n += len(rec.free)
			}
		}
		if n > 0 {
			p.supplyBuf = append(p.supplyBuf, resource.Count{Profile: rec.profile, N: n})
			p.supplyProf = append(p.supplyProf, int32(i))
		}
	}
	return p.supplyBuf
}
