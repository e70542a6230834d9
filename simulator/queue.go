package simulator

import (
	"container/heap"
	"time"
)

// timedKind says what a timed event does when its time comes.
type timedKind uint8

const (
	taskProgressEnd timedKind = iota // the task's work (or its progress until an injected failure) is done
	poolDeadline                     // the policy's next timeout
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

// calendar is a min-heap of timed events by (at, order).
type calendar []timed

func (c calendar) Len() int { return len(c) }
func (c calendar) Less(i, j int) bool {
	if c[i].at != c[j].at {
		return c[i].at < c[j].at
	}
	return c[i].order < c[j].order
}
func (c calendar) Swap(i, j int) { c[i], c[j] = c[j], c[i] }
func (c *calendar) Push(x any)   { *c = append(*c, x.(timed)) }
func (c *calendar) Pop() any {
	old := *c
	x := old[len(old)-1]
	*c = old[:len(old)-1]
	return x
}

func (c *calendar) add(e timed) { heap.Push(c, e) }
func (c *calendar) next() timed { return heap.Pop(c).(timed) }
