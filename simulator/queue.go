package simulator

import "time"

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

// calendar is a min-heap of timed events by (at, order). It is typed (no
// container/heap): pushing and popping a value through `any` would box
// every event, one allocation each, millions in a large run.
type calendar []timed

func (c calendar) Len() int { return len(c) }

func (c calendar) less(i, j int) bool {
	if c[i].at != c[j].at {
		return c[i].at < c[j].at
	}
	return c[i].order < c[j].order
}

// add pushes an event.
func (c *calendar) add(e timed) {
	*c = append(*c, e)
	h := *c
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

// next pops the earliest event; the calendar must not be empty.
func (c *calendar) next() timed {
	h := *c
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*c = h
	return top
}
