package admission

import (
	"fmt"
	"iter"
	"math/bits"
)

// A decision looks at a few queues of many for some of its work: those
// with jobs that keep reserved slots (claim_passed.go, resting.go), those
// whose jobs hold idle slots (claim_within.go), the fair-share ones
// (entitle). A busy cluster of 100 queues has a handful of each at a
// time, so each kind is listed as it changes, and a decision walks the
// list instead of every queue (each a cache line or more it would read).

// queueSetKind names a list of queues.
type queueSetKind uint8

const (
	// reservingQueues: queues with a job with reserved slots
	// (queue.reservers not empty).
	reservingQueues queueSetKind = iota
	// idleQueues: queues whose jobs hold idle slots (queue.idleHeld > 0).
	idleQueues
	numQueueSets
)

// queueSet marks queues by their place in Queues.qorder (queue.pos), a
// bit each: a change costs O(1), and a walk in qorder's order reads a
// word per 64 queues.
type queueSet []uint64

// listQueue lists qu in list k if in, else takes it off (either, if it
// is already).
func (q *Queues) listQueue(k queueSetKind, qu *queue, in bool) {
	s, bit := q.sets[k], uint64(1)<<(qu.pos%64)
	if in {
		s[qu.pos/64] |= bit
	} else {
		s[qu.pos/64] &^= bit
	}
}

// nextListed returns the first queue of list k at or after place from
// of Queues.qorder, as the list stands, or nil.
func (q *Queues) nextListed(k queueSetKind, from int) *queue {
	s := q.sets[k]
	for w := from / 64; w < len(s); w++ {
		word := s[w]
		if w == from/64 {
			word &= ^uint64(0) << (from % 64)
		}
		if word != 0 {
			return q.qorder[w*64+bits.TrailingZeros64(word)]
		}
	}
	return nil
}

// listedQueues yields the queues of list k in Queues.qorder's order,
// each step reading the list as it stands (the loop's body may list or
// unlist queues).
func (q *Queues) listedQueues(k queueSetKind) iter.Seq[*queue] {
	return func(yield func(*queue) bool) {
		for qu := q.nextListed(k, 0); qu != nil && yield(qu); qu = q.nextListed(k, qu.pos+1) {
		}
	}
}

// listed reports whether list k lists qu.
func (q *Queues) listed(k queueSetKind, qu *queue) bool {
	return q.sets[k][qu.pos/64]&(uint64(1)<<(qu.pos%64)) != 0
}

// relist makes the lists again from the queues, once they moved in
// Queues.qorder (a queue was added).
func (q *Queues) relist() {
	for k := range numQueueSets {
		if words := (len(q.qorder) + 63) / 64; len(q.sets[k]) != words {
			q.sets[k] = make(queueSet, words)
		} else {
			clear(q.sets[k])
		}
		for _, qu := range q.qorder {
			q.listQueue(k, qu, listsQueue(k, qu))
		}
	}
}

// listsQueue reports whether list k is to list qu.
func listsQueue(k queueSetKind, qu *queue) bool {
	switch k {
	case reservingQueues:
		return len(qu.reservers) > 0
	default: // idleQueues
		return qu.idleHeld > 0
	}
}

// addIdleHeld counts d more idle slots held by j (and its queue).
func (q *Queues) addIdleHeld(j *job, d int) {
	j.idleHeld += d
	j.queue.idleHeld += d
	q.listQueue(idleQueues, j.queue, j.queue.idleHeld > 0)
}

// checkQueueSets checks that each list of queues lists just the queues
// of its kind, and the count of queues with jobs to visit (for
// checkInvariants).
func (q *Queues) checkQueueSets() error {
	waiting := 0
	for _, qu := range q.qorder {
		waiting += b2i(qu.order.Len() > 0)
		if qu.hasWaiting != (qu.order.Len() > 0) {
			return fmt.Errorf("admission: queue %s: has jobs to visit %v, counted %v", qu.cfg.Name, qu.order.Len() > 0, qu.hasWaiting)
		}
		for k := range numQueueSets {
			if in, want := q.listed(k, qu), listsQueue(k, qu); in != want {
				return fmt.Errorf("admission: queue %s: listed %v in queue list %d, want %v", qu.cfg.Name, in, k, want)
			}
		}
	}
	if waiting != q.nWaitingQueues {
		return fmt.Errorf("admission: %d queues have jobs to visit, counted %d", waiting, q.nWaitingQueues)
	}
	return nil
}
