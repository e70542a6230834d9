package slotpool

import (
	"time"

	"github.com/regionsched/regionsched/internal/heap"
)

// timer is a pending deadline: a bulk's fulfillability timeout (bulk set)
// or a free slot's idle timeout (bulk nil, slot set).
type timer struct {
	when  time.Time
	seq   uint64 // ties broken by arming order, for determinism
	bulk  *bulk
	slot  int32
	index int // position in the heap, -1 once removed
}

// timerHeap is a min-heap of timers by (when, seq) with removal by index.
// The zero value is empty.
type timerHeap struct {
	h   *heap.Heap[*timer]
	seq uint64
}

// timerBefore orders timers by deadline, then by arming order.
func timerBefore(a, b *timer) bool {
	if !a.when.Equal(b.when) {
		return a.when.Before(b.when)
	}
	return a.seq < b.seq
}

// timerMoved keeps a timer's index up to date, for cancel.
func timerMoved(t *timer, i int) { t.index = i }

// add arms a timer.
func (h *timerHeap) add(when time.Time, b *bulk, slot int32) *timer {
	if h.h == nil {
		h.h = heap.New(timerBefore, timerMoved)
	}
	h.seq++
	t := &timer{when: when, seq: h.seq, bulk: b, slot: slot}
	h.h.Push(t)
	return t
}

// cancel disarms a timer (no-op if it already fired).
func (h *timerHeap) cancel(t *timer) {
	if t.index >= 0 {
		h.h.Remove(t.index)
	}
}

// next returns the earliest deadline.
func (h *timerHeap) next() (time.Time, bool) {
	if h.h == nil || h.h.Len() == 0 {
		return time.Time{}, false
	}
	return h.h.Min().when, true
}

// popExpired removes and returns the earliest timer if it is due at now.
func (h *timerHeap) popExpired(now time.Time) *timer {
	if h.h == nil || h.h.Len() == 0 || h.h.Min().when.After(now) {
		return nil
	}
	return h.h.Pop()
}
