package admission

import (
	"math/bits"

	"github.com/regionsched/regionsched/slotpool"
)

// jobAsks is a job's outstanding asks in arrival order. A pool can have
// thousands of asks outstanding (one per region it submitted), and the
// admission looks at them on every decision, so: a doubly linked list, a
// bit per size bucket (sizeBucket: the smallest grant an ask can take)
// that some ask is of (the smallest in O(1): it is read on every visit of
// a decision walk), and the ask of the pool's head at hand. Once there
// are more than a few asks, an index by id and a count of the asks per
// bucket make add and remove O(1); most jobs have an ask or two, which a
// walk of the list finds faster than a map of their own, and which
// need no counts.
type jobAsks struct {
	first, last *jobAsk
	byID        map[slotpool.AskID]*jobAsk // every ask, once n reached indexFrom
	sizes       *[maxBucket + 1]int        // asks per bucket, once n reached indexFrom
	nonEmpty    [2]uint64                  // bit b: some ask is of bucket b
	n           int
	free        *jobAsk // asks removed, kept for newAsk (linked by next)
	head        *jobAsk
	// ver changes with every ask added, granted from or removed.
	ver uint64
}

// indexFrom is the number of asks from which a job's asks are indexed
// by id and counted per bucket; below it, get and count walk the list.
const indexFrom = 8

// len is the number of asks.
func (l *jobAsks) len() int { return l.n }

// get returns the ask of that id.
func (l *jobAsks) get(id slotpool.AskID) (*jobAsk, bool) {
	if l.byID != nil {
		a, ok := l.byID[id]
		return a, ok
	}
	for a := l.first; a != nil; a = a.next {
		if a.id == id {
			return a, true
		}
	}
	return nil, false
}

// newAsk returns an empty ask to fill and add, reusing one removed
// before and its storage: a pool asks once per region it runs.
func (l *jobAsks) newAsk() *jobAsk {
	a := l.free
	if a == nil {
		return &jobAsk{}
	}
	l.free, a.next = a.next, nil
	return a
}

// add appends an ask.
func (l *jobAsks) add(a *jobAsk) { l.insertBefore(a, nil) }

// insertBefore puts ask a before ask x, or last if x is nil.
func (l *jobAsks) insertBefore(a, x *jobAsk) {
	if l.byID == nil && l.n+1 >= indexFrom {
		l.byID = make(map[slotpool.AskID]*jobAsk, l.n+1)
		l.sizes = new([maxBucket + 1]int)
		for y := l.first; y != nil; y = y.next {
			l.byID[y.id] = y
			l.sizes[y.bucket]++
		}
	}
	if l.byID != nil {
		l.byID[a.id] = a
	}
	prev := l.last
	if x != nil {
		prev = x.prev
	}
	a.prev, a.next = prev, x
	if prev != nil {
		prev.next = a
	} else {
		l.first = a
	}
	if x != nil {
		x.prev = a
	} else {
		l.last = a
	}
	l.n++
	a.bucket = a.sizeBucket()
	l.count(a.bucket, +1)
	if a.head {
		l.head = a
	}
}

// remove takes an ask out.
func (l *jobAsks) remove(a *jobAsk) {
	if l.byID != nil {
		delete(l.byID, a.id)
	}
	if a.prev != nil {
		a.prev.next = a.next
	} else {
		l.first = a.next
	}
	if a.next != nil {
		a.next.prev = a.prev
	} else {
		l.last = a.prev
	}
	l.n--
	l.count(a.bucket, -1)
	if l.head == a {
		l.head = nil
	}
	// Nothing refers to a removed ask any more: it is kept for newAsk.
	*a = jobAsk{holding: a.holding[:0], left: a.left[:0], next: l.free}
	l.free = a
}

// inOrder returns the ask after a in the order the job is served: its
// head's ask first (nil a), then the others in arrival order; nil after
// the last.
func (l *jobAsks) inOrder(a *jobAsk) *jobAsk {
	var next *jobAsk
	switch {
	case a == nil && l.head != nil:
		return l.head
	case a == nil:
		next = l.first
	case a == l.head:
		next = l.first
	default:
		next = a.next
	}
	if next != nil && next == l.head {
		next = next.next
	}
	return next
}

// took records that n slots of a were granted (it stays outstanding).
func (l *jobAsks) took(a *jobAsk, n int) {
	a.n -= n
	was := a.bucket
	a.bucket = a.sizeBucket()
	l.count(was, -1)
	l.count(a.bucket, +1)
}

// count records that d asks joined (1) or left (-1) size bucket b, whose
// asks in the list are as they are now, and keeps its bit.
func (l *jobAsks) count(b, d int) {
	l.ver++
	some := d > 0
	if l.sizes != nil {
		l.sizes[b] += d
		some = l.sizes[b] > 0
	} else if !some {
		for a := l.first; a != nil && !some; a = a.next {
			some = a.bucket == b
		}
	}
	if some {
		l.nonEmpty[b/64] |= 1 << (b % 64)
	} else {
		l.nonEmpty[b/64] &^= 1 << (b % 64)
	}
}

// smallest returns the size bucket of the smallest ask (maxBucket if
// there is none, or none smaller).
func (l *jobAsks) smallest() int {
	if l.nonEmpty[0] != 0 {
		return bits.TrailingZeros64(l.nonEmpty[0])
	}
	return maxBucket // bucket 64, the only one of the second word, or none
}

// clear forgets every ask.
func (l *jobAsks) clear() { *l = jobAsks{ver: l.ver + 1} }

// sizeBucket is the smallest grant the ask can take, capped at
// maxBucket: its whole size if all-or-nothing, else 1.
func (a *jobAsk) sizeBucket() int {
	if !a.allOrNothing {
		return 1
	}
	return min(a.n, maxBucket)
}
