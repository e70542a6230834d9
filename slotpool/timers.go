package slotpool

import (
	"container/heap"
	"time"
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
type timerHeap struct {
	items []*timer
	seq   uint64
}

func (h *timerHeap) Len() int { return len(h.items) }
func (h *timerHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if !a.when.Equal(b.when) {
		return a.when.Before(b.when)
	}
	return a.seq < b.seq
}
func (h *timerHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].index = i
	h.items[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(h.items)
	h.items = append(h.items, t)
}
func (h *timerHeap) Pop() any {
	n := len(h.items) - 1
	t := h.items[n]
	h.items[n] = nil
	h.items = h.items[:n]
	t.index = -1
	return t
}

// add arms a timer.
func (h *timerHeap) add(when time.Time, b *bulk, slot int32) *timer {
	h.seq++
	t := &timer{when: when, seq: h.seq, bulk: b, slot: slot}
	heap.Push(h, t)
	return t
}

// cancel disarms a timer (no-op if it already fired).
func (h *timerHeap) cancel(t *timer) {
	if t.index >= 0 {
		heap.Remove(h, t.index)
	}
}

// next returns the earliest deadline.
func (h *timerHeap) next() (time.Time, bool) {
	if len(h.items) == 0 {
		return time.Time{}, false
	}
	return h.items[0].when, true
}

// popExpired removes and returns the earliest timer if it is due at now.
func (h *timerHeap) popExpired(now time.Time) *timer {
	if len(h.items) == 0 || h.items[0].when.After(now) {
		return nil
	}
	return heap.Pop(h).(*timer)
}
