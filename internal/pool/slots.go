package pool

import (
	"math/bits"
	"time"

	"github.com/regionsched/regionsched/slotpool"
)

// slotRec is one slot in the pool, in a dense table indexed by int32.
type slotRec struct {
	id      slotpool.SlotID
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
func (p *Pool) slotIndex(id slotpool.SlotID) (int32, bool) {
	i, ok := p.slotDense.get(id)
	return i - 1, ok
}

// addSlot puts a new slot into the table (state to be set by the caller)
// and returns its index and record.
func (p *Pool) addSlot(s slotpool.Slot) (int32, *slotRec) {
	pr := p.profiles.intern(s.Profile)
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
	p.profiles.recs[pr].total++
	p.shapes.reusableAdded(pr)
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
	rec := &p.profiles.recs[s.profile]
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
	free := p.profiles.recs[pr].free
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
	p.unlink(&p.profiles.recs[s.profile].free, idx)
	p.nFree--
	if s.idle != nil {
		p.timers.cancel(s.idle)
		s.idle = nil
	}
}

// pushHeld makes a slot held by the head bulk.
func (p *Pool) pushHeld(idx int32) {
	s := p.slot(idx)
	rec := &p.profiles.recs[s.profile]
	s.state, s.bulk, s.request = SlotHeld, p.head, -1
	s.pos = int32(len(rec.held))
	rec.held = append(rec.held, idx)
	p.nHeld++
	p.heldVersion++
}

// popHeld takes a held slot of a profile.
func (p *Pool) popHeld(pr int32) int32 {
	held := p.profiles.recs[pr].held
	idx := held[len(held)-1]
	p.removeHeld(idx)
	return idx
}

// removeHeld takes a held slot out of the head's held set.
func (p *Pool) removeHeld(idx int32) {
	p.unlink(&p.profiles.recs[p.slot(idx).profile].held, idx)
	p.nHeld--
	p.heldVersion++
}
