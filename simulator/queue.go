package simulator

import (
	"time"

	"github.com/regionsched/regionsched/internal/heap"
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

// calendar is a min-heap of timed events by (at, order). Its values are
// stored unboxed (no container/heap): pushing and popping a value through
// `any` would box every event, one allocation each, millions in a large
// run. The zero value is an empty calendar.
type calendar struct{ h *heap.Heap[timed] }

// earlier orders events by time, then by their tie-breaker.
func earlier(a, b timed) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.order < b.order
}

// Len returns the number of pending events.
func (c *calendar) Len() int {
	if c.h == nil {
		return 0
	}
	return c.h.Len()
}

// add pushes an event.
func (c *calendar) add(e timed) {
	if c.h == nil {
		c.h = heap.New(earlier, nil)
	}
	c.h.Push(e)
}

// next pops the earliest event; the calendar must not be empty.
func (c *calendar) next() timed { return c.h.Pop() }
