package simulator

import (
	"cmp"
	"math/bits"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/regionsched/regionsched/internal/heap"
)

// timedKind says what a timed event does when its time comes.
type timedKind uint8

const (
	taskProgressEnd timedKind = iota // the task's work (or its progress until an injected failure) is done
	poolDeadline                     // the policy's next timeout
	jobTimer                         // a job of a multi-job run arrives or starts (task: the job, version: jobSubmit or jobStart)
	speculativeEnd                   // a speculative attempt's work is done (task: the task, version: its attempt)
	eagerEvent                       // an event of the events file in an eager multi-job run (task: its index)
	eagerArrival                     // a job of an eager multi-job run arrives (task: the job)
)

// timed is an event of the simulation's calendar. A task event is stale
// (and skipped) when the task's version moved on since it was scheduled.
type timed struct {
	at      time.Duration
	order   uint64 // tie-breaker: same-time events by order (see calendar.nextOrder)
	kind    timedKind
	task    int32
	version uint32
}

// calendar holds pending events in order of (at, order). Events at the
// same time share a bucket: a simulation's events come in waves (every
// task of a wave started at the same time and runs as long), so a pop is
// mostly the next event of an ordered bucket, where a heap of events
// would move one down five levels. With ties in order (the default) the
// events of a bucket arrive in order and a bucket is never sorted: an
// event added to the time being consumed (the end of a task of zero
// duration) goes to its end. With seeded ties a bucket is sorted when it
// becomes the earliest, by a counting pass on the tie-breaker's top bits
// (it is uniformly random) and an insertion sort; an event added to a
// bucket already being consumed that does not go last goes to a heap of
// such late events instead, and a pop takes the earlier of the two: an
// add costs O(log n) at worst, never a shift of a sorted bucket. A small
// binary heap orders the buckets by time, and a map finds the bucket of a
// time, looked up only when an add goes to another time than the add
// before. The zero value is an empty calendar whose tie-breakers come in
// order; a calendar in use must not be copied (its heap of times reads
// its buckets).
type calendar struct {
	buckets []bucket // by index; the free ones are listed in free
	free    []int32
	byAt    map[time.Duration]int32 // the live buckets by time (each holds an event)
	times   *heap.Heap[int32]       // live buckets by time; made with the first bucket
	last    int32                   // 1 + the bucket of the last add, 0 if none (or freed since)
	late    *heap.Heap[timed]       // events added out of order to buckets being consumed; made with the first
	n       int                     // pending events
	sortBuf []timed                 // scratch of sortByOrder
	counts  []int32
	// spare is the largest storage a freed bucket gave back (a freed
	// bucket keeps at most bucketKeep events' room): the next bucket
	// that fills up moves into it rather than doubling its own.
	spare []timed
	room  int // capacity of the first bucket (see reserve)
	// seeded draws the tie-breakers under TiesSeeded; nil: in order,
	// counted by sequenced.
	seeded    *rand.PCG
	sequenced uint64
}

// firstSequenced is the first tie-breaker handed out in order: the orders
// below it are for events whose order is given (job arrivals and the
// events file, added before any other), which come first at their time.
const firstSequenced = 1 << 32

// nextOrder returns the tie-breaker of an event being scheduled: the
// next of a sequence (ties in order), or a seeded random draw.
func (c *calendar) nextOrder() uint64 {
	if c.seeded != nil {
		return c.seeded.Uint64()
	}
	o := firstSequenced + c.sequenced
	c.sequenced++
	return o
}

// bucketKeep is the room for events a freed bucket keeps; storage beyond
// goes to calendar.spare, one at a time, so that many distinct pending
// times do not each hold the room of the largest wave.
const bucketKeep = 256

// bucket holds the pending events of one time: events[head:].
type bucket struct {
	at     time.Duration
	events []timed
	head   int
	// ascending: the events were added in order (no sort needed).
	ascending bool
	// consumed: the earliest bucket, popped from (its events are in
	// order); an add that does not go last goes to the late heap.
	consumed bool
}

// earlier orders events by time, then by their tie-breaker.
func earlier(a, b *timed) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.order < b.order
}

// reserve makes room for n pending events at one time in the first
// bucket made; later buckets start empty and grow, or move into the
// storage an emptied bucket gave back.
func (c *calendar) reserve(n int) { c.room = n }

// Len returns the number of pending events.
func (c *calendar) Len() int { return c.n }

// nextAt returns the time of the earliest pending event, if any.
func (c *calendar) nextAt() (time.Duration, bool) {
	if c.n == 0 {
		return 0, false
	}
	var at time.Duration
	ok := false
	if c.times != nil && c.times.Len() > 0 {
		at, ok = c.buckets[c.times.Min()].at, true
	}
	if c.late != nil && c.late.Len() > 0 {
		if m := c.late.Min().at; !ok || m < at {
			at, ok = m, true
		}
	}
	return at, ok
}

// add puts an event in the calendar.
func (c *calendar) add(e timed) {
	c.n++
	b := c.last - 1
	if b < 0 || c.buckets[b].at != e.at {
		b = c.bucketAt(e.at)
		c.last = b + 1
	}
	bk := &c.buckets[b]
	if n := len(bk.events); n > bk.head && e.order < bk.events[n-1].order {
		if bk.consumed {
			if c.late == nil {
				c.late = heap.New(func(a, b timed) bool { return earlier(&a, &b) }, nil)
			}
			c.late.Push(e)
			return
		}
		bk.ascending = false
	}
	if len(bk.events) == cap(bk.events) {
		if bk.head > 0 && 2*bk.head >= len(bk.events) {
			// Half of it popped: moving the rest to the front makes room
			// for as many adds as it copies. (Compacting for fewer would
			// copy a wide bucket on every add once it is full.)
			bk.events = bk.events[:copy(bk.events, bk.events[bk.head:])]
			bk.head = 0
		} else if cap(c.spare) > len(bk.events) {
			bk.events = append(c.spare[:0], bk.events...)
			c.spare = nil
		}
	}
	bk.events = append(bk.events, e)
}

// bucketAt returns the bucket of time at, made if there is none.
func (c *calendar) bucketAt(at time.Duration) int32 {
	if b, ok := c.byAt[at]; ok {
		return b
	}
	if c.byAt == nil {
		c.byAt = map[time.Duration]int32{}
		c.times = heap.New(func(a, b int32) bool { return c.buckets[a].at < c.buckets[b].at }, nil)
	}
	var b int32
	if n := len(c.free); n > 0 {
		b = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		c.buckets = append(c.buckets, bucket{events: make([]timed, 0, c.room)})
		b = int32(len(c.buckets) - 1)
		c.room = 0
	}
	bk := &c.buckets[b]
	bk.at, bk.events, bk.head, bk.ascending, bk.consumed = at, bk.events[:0], 0, true, false
	c.byAt[at] = b
	c.times.Push(b)
	return b
}

// next pops the earliest event; the calendar must not be empty.
func (c *calendar) next() timed {
	c.n--
	if c.times != nil && c.times.Len() > 0 {
		bk := &c.buckets[c.times.Min()]
		if !bk.consumed {
			if !bk.ascending {
				bk.events, c.sortBuf = c.sortByOrder(bk.events)
			}
			bk.consumed = true
		}
		e := bk.events[bk.head]
		if c.late == nil || c.late.Len() == 0 || !c.lateFirst(&e) {
			bk.head++
			if bk.head == len(bk.events) {
				c.dropEarliest()
			}
			return e
		}
	}
	return c.late.Pop()
}

// lateFirst reports whether the earliest late event comes before e.
func (c *calendar) lateFirst(e *timed) bool {
	m := c.late.Min()
	return earlier(&m, e)
}

// dropEarliest removes the earliest bucket, which is empty.
func (c *calendar) dropEarliest() {
	b := c.times.Pop()
	bk := &c.buckets[b]
	delete(c.byAt, bk.at)
	if cap(bk.events) > bucketKeep {
		if cap(bk.events) > cap(c.spare) {
			c.spare = bk.events[:0]
		}
		bk.events = nil
	}
	c.free = append(c.free, b)
	if c.last == b+1 {
		c.last = 0
	}
}

// sortByOrder sorts events by order and returns them sorted and the
// storage left for the next call (the two swap). A counting pass on the
// top bits of order spreads uniformly random orders about one per range,
// and an insertion sort finishes; when the orders are not spread (small
// tie-breakers, as job arrivals use), it falls back to a comparison sort.
func (c *calendar) sortByOrder(events []timed) (sorted, spare []timed) {
	n := len(events)
	if n <= 32 {
		insertionSort(events)
		return events, c.sortBuf
	}
	shift := 64 - bits.Len(uint(n)) // 2^(64-shift) ranges: between n and 2n
	ranges := 1 << (64 - shift)
	counts := slices.Grow(c.counts[:0], ranges+1)[:ranges+1]
	clear(counts)
	for i := range events {
		counts[int(events[i].order>>shift)+1]++
	}
	for i := 1; i <= ranges; i++ {
		if counts[i] > 32 {
			c.counts = counts
			slices.SortFunc(events, func(a, b timed) int { return cmp.Compare(a.order, b.order) })
			return events, c.sortBuf
		}
		counts[i] += counts[i-1]
	}
	out := slices.Grow(c.sortBuf[:0], n)[:n]
	for i := range events {
		k := int(events[i].order >> shift)
		out[counts[k]] = events[i]
		counts[k]++
	}
	c.counts = counts
	insertionSort(out)
	return out, events[:0]
}

// insertionSort sorts events by order.
func insertionSort(events []timed) {
	for i := 1; i < len(events); i++ {
		e := events[i]
		j := i
		for j > 0 && events[j-1].order > e.order {
			events[j] = events[j-1]
			j--
		}
		events[j] = e
	}
}
