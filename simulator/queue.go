package simulator

import (
	"slices"
	"time"
)

// timedKind says what a timed event does when its time comes.
type timedKind uint8

const (
	taskProgressEnd timedKind = iota // the task's work (or its progress until an injected failure) is done
	poolDeadline                     // the policy's next timeout
	jobTimer                         // a job of a multi-job run arrives or starts (task: the job, version: jobSubmit or jobStart)
)

// timed is an event of the simulation's calendar. A task event is stale
// (and skipped) when the task's version moved on since it was scheduled.
type timed struct {
	at      time.Duration
	order   uint64 // seeded tie-breaker: same-time events in a seed-dependent order
	kind    timedKind
	task    int32
	version uint32
}

// calendar is a min-heap of timed events by (at, order). It is 4-ary and
// stores its values unboxed (no container/heap, whose `any` would box
// every event, one allocation each): a pop compares the four children of
// a node side by side, which are adjacent in memory, and the tree is half
// as deep as a binary one. The zero value is an empty calendar.
type calendar struct{ items []timed }

// earlier orders events by time, then by their tie-breaker.
func earlier(a, b *timed) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.order < b.order
}

// reserve makes room for n pending events.
func (c *calendar) reserve(n int) { c.items = slices.Grow(c.items, n) }

// Len returns the number of pending events.
func (c *calendar) Len() int { return len(c.items) }

// add pushes an event.
func (c *calendar) add(e timed) {
	c.items = append(c.items, e)
	i := len(c.items) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !earlier(&e, &c.items[p]) {
			break
		}
		c.items[i] = c.items[p]
		i = p
	}
	c.items[i] = e
}

// next pops the earliest event; the calendar must not be empty. It moves
// the hole at the root down to a leaf along the earliest children, then
// the last event up from there (bottom-up, Floyd's way): the last event
// belongs near the bottom, so this skips a comparison with it at every
// level on the way down for a step or two on the way up.
func (c *calendar) next() timed {
	top := c.items[0]
	last := len(c.items) - 1
	x := c.items[last]
	c.items = c.items[:last]
	if last == 0 {
		return top
	}
	items := c.items
	i := 0
	for {
		first := 4*i + 1
		if first >= last {
			break
		}
		m := first
		if first+4 <= last { // four children: pairs, then the pair's winners
			a := pick(earlierBit(&items[first+1], &items[first]), first+1, first)
			b := pick(earlierBit(&items[first+3], &items[first+2]), first+3, first+2)
			m = pick(earlierBit(&items[b], &items[a]), b, a)
		} else {
			for j := first + 1; j < last; j++ {
				m = pick(earlierBit(&items[j], &items[m]), j, m)
			}
		}
		items[i] = items[m]
		i = m
	}
	for i > 0 {
		p := (i - 1) / 4
		if !earlier(&x, &items[p]) {
			break
		}
		items[i] = items[p]
		i = p
	}
	items[i] = x
	return top
}

// earlierBit is earlier as 0 or 1, computed without branches: the
// children compared by a pop are in no predictable order.
func earlierBit(a, b *timed) int {
	return b2i(a.at < b.at) | b2i(a.at == b.at)&b2i(a.order < b.order)
}

// pick returns x if bit is 1, else y, without a branch.
func pick(bit, x, y int) int { return y ^ ((x ^ y) & -bit) }

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
