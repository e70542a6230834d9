package pool

import (
	"time"

	"github.com/regionsched/regionsched/internal/heap"
	"github.com/regionsched/regionsched/slotpool"
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
// The zero value is empty. Timers that were cancelled or fired are kept
// for reuse: an idle timer is armed at every slot release, and a pool
// should not cost an allocation per release. So a *timer must not be used
// after it was cancelled or fired.
type timerHeap struct {
	h    *heap.Heap[*timer]
	seq  uint64
	free []*timer
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
	var t *timer
	if n := len(h.free); n > 0 {
		t, h.free = h.free[n-1], h.free[:n-1]
	} else {
		t = new(timer)
	}
	*t = timer{when: when, seq: h.seq, bulk: b, slot: slot}
	h.h.Push(t)
	return t
}

// cancel disarms a timer (no-op if it already fired).
func (h *timerHeap) cancel(t *timer) {
	if t.index >= 0 {
		h.h.Remove(t.index)
		h.reuse(t)
	}
}

// reuse keeps a timer that left the heap for a later add.
func (h *timerHeap) reuse(t *timer) {
	t.bulk = nil
	h.free = append(h.free, t)
}

// next returns the earliest deadline.
func (h *timerHeap) next() (time.Time, bool) {
	if h.h == nil || h.h.Len() == 0 {
		return time.Time{}, false
	}
	return h.h.Min().when, true
}

// popExpired removes the earliest timer if it is due at now and returns
// a copy of it (the timer itself is reused).
func (h *timerHeap) popExpired(now time.Time) (timer, bool) {
	if h.h == nil || h.h.Len() == 0 || h.h.Min().when.After(now) {
		return timer{}, false
	}
	t := h.h.Pop()
	fired := *t
	h.reuse(t)
	return fired, true
}

// startTimeout arms the fulfillability timeout of a bulk.
func (p *Pool) startTimeout(now time.Time, b *bulk) {
	if b.deadline != nil {
		p.timers.cancel(b.deadline)
		b.deadline = nil
	}
	if p.cfg.Timeout == slotpool.NoTimeout {
		return
	}
	b.deadline = p.timers.add(now.Add(p.cfg.Timeout), b, -1)
}

// verdictsFlipped acts on the shapes whose fulfillability verdict flipped
// (shapeCache.flipped), in the order they flipped: the timeouts of the
// bulks of a shape that became fulfillable are canceled, those of a shape
// that became unfulfillable armed.
func (p *Pool) verdictsFlipped(now time.Time) {
	for _, s := range p.shapes.flipped {
		for b := s.bulks.Front(); b != nil; b = s.bulks.Next(b) {
			if !s.fulfillable {
				p.startTimeout(now, b)
			} else if b.deadline != nil {
				p.timers.cancel(b.deadline)
				b.deadline = nil
			}
		}
	}
	clear(p.shapes.flipped)
	p.shapes.flipped = p.shapes.flipped[:0]
}
