package pool

import (
	"slices"

	"github.com/regionsched/regionsched/slotpool"
)

// bulk is a submitted bulk while it waits or has slots in use. A bulk
// of one request (a region of one slot, the usual case at scale) keeps
// its per-request data inline; a bulk of several keeps it in many.
type bulk struct {
	shape      *shape
	links      [2]bulkLinks // in Pool.queue (inQueue) and in shape.bulks, while waiting
	seq        uint64       // submission order
	deadline   *timer       // fulfillability timeout, while unfulfillable
	inQueue    bool
	rebuild    bool // head only: it lost a held slot, re-match at settle
	placed     bool // fulfilled: its requests have slots (see slotList)
	unbounded1 bool // a bulk of one request: it is Unbounded
	id         slotpool.BulkID
	many       *bulkRequests
	asks       []*ask   // outstanding admission asks
	n          int32    // requests
	inUse      int32    // requests whose slot is in use
	one        [2]int32 // a bulk of one request: its class and its slot
	handle     int32    // its place in bulkStore, for ever (see bulkStore.made)
	state      BulkState
	taken      bool // live; false once retired, free for reuse (see bulkStore)
	inSpare    bool // in bulkStore.spare
}

// bulkRequests is the per-request data of a bulk of several requests. A
// retired bulk keeps it for reuse by a later bulk of several requests.
// Pool.newBulk carves them from slabs.
type bulkRequests struct {
	// classSlots holds the class of each request in shape.demand, then
	// the in-use slot of each request once fulfilled (-1 if gone).
	classSlots []int32
	// unbounded says which requests are Unbounded; empty if none is.
	unbounded []bool
}

// reset makes a record bulkStore just handed out the bulk of b, reusing
// its storage: its requests' classes and slots, and which are unbounded.
// The store's flags stay as the store set them. A bulk of several
// requests must have its many record.
func (bk *bulk) reset(b Bulk) {
	n := len(b.Requests)
	many, asks, taken, inSpare, handle := bk.many, bk.asks[:0], bk.taken, bk.inSpare, bk.handle
	*bk = bulk{id: b.ID, n: int32(n), taken: taken, many: many, asks: asks, inSpare: inSpare, handle: handle}
	if n == 1 {
		bk.unbounded1 = b.Requests[0].Unbounded
		return
	}
	many.classSlots = slices.Grow(many.classSlots[:0], 2*n)[:2*n]
	many.unbounded = many.unbounded[:0]
	for i, r := range b.Requests {
		if r.Unbounded {
			if len(many.unbounded) == 0 {
				many.unbounded = append(many.unbounded, make([]bool, n)...)
			}
			many.unbounded[i] = true
		}
	}
}

// classes returns the class of each request in shape.demand.
func (bk *bulk) classes() []int32 {
	if bk.n == 1 {
		return bk.one[0:1:1]
	}
	return bk.many.classSlots[:bk.n:bk.n]
}

// slotList returns the slot index of each request once the bulk was
// fulfilled (-1 for a slot that came back), none before.
func (bk *bulk) slotList() []int32 {
	switch {
	case !bk.placed:
		return nil
	case bk.n == 1:
		return bk.one[1:2:2]
	}
	return bk.many.classSlots[bk.n:]
}

// setSlot records the slot index of request r (-1: it came back).
func (bk *bulk) setSlot(r, idx int32) {
	if bk.n == 1 {
		bk.one[1] = idx
		return
	}
	bk.many.classSlots[bk.n+r] = idx
}

// isUnbounded reports whether request r of the bulk is Unbounded.
func (bk *bulk) isUnbounded(r int32) bool {
	if bk.n == 1 {
		return bk.unbounded1
	}
	return len(bk.many.unbounded) > 0 && bk.many.unbounded[r]
}

// enqueue appends a bulk to the waiting queue and to its shape.
func (p *Pool) enqueue(b *bulk) {
	p.seq++
	b.seq = p.seq
	b.state = BulkWaiting
	p.queue.PushBack(b)
	b.inQueue = true
	b.shape.bulks.PushBack(b)
}

// leaveWaiting takes a bulk out of the queue, its shape and the timers,
// and withdraws its outstanding asks. The caller has already moved the
// slots it held.
func (p *Pool) leaveWaiting(b *bulk, reason slotpool.Reason) {
	p.queue.Remove(b)
	b.inQueue = false
	s := b.shape
	s.bulks.Remove(b)
	if b.deadline != nil {
		p.timers.cancel(b.deadline)
		b.deadline = nil
	}
	if s.bulks.Len() == 0 {
		p.shapes.kill(s)
	}
	if p.head == b {
		p.head = nil
	}
	p.withdrawAsks(b, reason)
}

// The two lists a waiting bulk is in: the pool's queue and its shape's.
const (
	queueList = 0
	shapeList = 1
)

// bulkLinks are a bulk's neighbours in one list.
type bulkLinks struct{ prev, next *bulk }

// bulkList is a FIFO of bulks linked through their links[list] (no
// allocation per element, unlike container/list). The zero value is an
// empty queueList.
type bulkList struct {
	front, back *bulk
	n           int
	list        int
}

// Len returns the number of bulks in the list.
func (l *bulkList) Len() int { return l.n }

// Front returns the first bulk, or nil.
func (l *bulkList) Front() *bulk { return l.front }

// Next returns the bulk after b, or nil.
func (l *bulkList) Next(b *bulk) *bulk { return b.links[l.list].next }

// PushBack appends b.
func (l *bulkList) PushBack(b *bulk) {
	lk := &b.links[l.list]
	lk.prev, lk.next = l.back, nil
	if l.back != nil {
		l.back.links[l.list].next = b
	} else {
		l.front = b
	}
	l.back = b
	l.n++
}

// Remove takes b, which is in the list, out of it.
func (l *bulkList) Remove(b *bulk) {
	lk := &b.links[l.list]
	if lk.prev != nil {
		lk.prev.links[l.list].next = lk.next
	} else {
		l.front = lk.next
	}
	if lk.next != nil {
		lk.next.links[l.list].prev = lk.prev
	} else {
		l.back = lk.prev
	}
	lk.prev, lk.next = nil, nil
	l.n--
}
