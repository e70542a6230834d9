package simulator

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The calendar against a sorted list: interleaved adds and pops, with
// many events at the same time (their order decides), few distinct
// times, and ties in both fields (the pop takes one of the tied).
func TestCalendarPopsInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for round := range 300 {
		var c calendar
		var ref []timed
		now := time.Duration(0)
		orders := uint64(1 << 62)
		if round%3 == 0 {
			orders = 4 // ties in order too
		}
		for range 1 + r.IntN(400) {
			if r.IntN(3) > 0 || len(ref) == 0 {
				e := timed{at: now + time.Duration(r.IntN(3))*time.Millisecond, order: r.Uint64N(orders)}
				c.add(e)
				ref = append(ref, e)
				continue
			}
			got := c.next()
			slices.SortStableFunc(ref, func(a, b timed) int {
				return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.order, b.order))
			})
			require.Equal(t, ref[0].at, got.at, "round %d", round)
			require.Equal(t, ref[0].order, got.order, "round %d", round)
			ref = ref[1:]
			now = got.at
		}
		require.Equal(t, len(ref), c.Len(), "round %d", round)
	}
}

// A wave: thousands of events at one time (the counting sort), then
// events added at that time while it is being popped (inserted in
// place), and at later times (their own buckets), against a sorted list.
func TestCalendarPopsAWaveInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 2))
	var c calendar
	c.reserve(64)
	var ref []timed
	add := func(e timed) { c.add(e); ref = append(ref, e) }
	for range 5000 {
		add(timed{at: time.Second, order: r.Uint64()})
	}
	popped := 0
	for c.Len() > 0 {
		if popped%7 == 0 && popped < 20000 {
			add(timed{at: time.Second * time.Duration(1+r.IntN(3)), order: r.Uint64()})
		}
		slices.SortFunc(ref, func(a, b timed) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.order, b.order))
		})
		got := c.next()
		require.Equal(t, ref[0], got, "pop %d", popped)
		ref = ref[1:]
		popped++
	}
	require.Empty(t, ref)
	require.Zero(t, c.times.Len(), "every bucket dropped")
}

// Events added at the time being consumed (tasks of zero duration) with
// seeded tie-breakers go to the late heap unless they go last, not into
// the sorted bucket: an add there is O(log n), not a shift of the bucket,
// and pops still take the two in order.
func TestCalendarLateEventsGoToTheHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var c calendar
	var ref []timed
	add := func(e timed) {
		c.add(e)
		i, _ := slices.BinarySearchFunc(ref, e, func(a, b timed) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.order, b.order))
		})
		ref = slices.Insert(ref, i, e)
	}
	pending := func() int { bk := &c.buckets[c.times.Min()]; return len(bk.events) - bk.head }
	const n = 2000
	for range n {
		add(timed{at: time.Second, order: r.Uint64()})
	}
	require.Equal(t, ref[0], c.next()) // sorts the bucket
	ref = ref[1:]
	bucket := pending()
	for range 3 * n {
		bk := &c.buckets[c.times.Min()]
		e := timed{at: time.Second, order: r.Uint64()}
		last := e.order >= bk.events[len(bk.events)-1].order
		add(e)
		if last {
			require.Equal(t, bucket+1, pending(), "an add that goes last is appended")
		} else {
			require.Equal(t, bucket, pending(), "an add that does not go last leaves the sorted bucket alone")
		}
		got := c.next()
		require.Equal(t, ref[0], got)
		ref = ref[1:]
		if c.times.Len() == 0 {
			break // the bucket ran out: the rest is late
		}
		bucket = pending()
	}
	require.NotZero(t, c.late.Len())
	for c.Len() > 0 {
		require.Equal(t, ref[0], c.next())
		ref = ref[1:]
	}
	require.Empty(t, ref)
	require.Zero(t, c.late.Len())
}

// With ties in order (the zero calendar's nextOrder) events at the same
// time pop in the order they were added, those added while their time is
// being consumed included, and the calendar never sorts a bucket nor
// makes its late heap: a wave is popped as it was added.
func TestCalendarTiesInOrderNeedNoSort(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 1))
	var c calendar
	c.reserve(64)
	var ref []timed
	add := func(at time.Duration, task int32) {
		e := timed{at: at, order: c.nextOrder(), task: task}
		c.add(e)
		ref = append(ref, e)
	}
	task := int32(0)
	for range 5000 {
		add(time.Second, task)
		task++
	}
	for popped := 0; c.Len() > 0; popped++ {
		if popped%3 == 0 && popped < 20000 {
			add(time.Second*time.Duration(1+r.IntN(3)), task) // the time being consumed, or later
			task++
		}
		slices.SortStableFunc(ref, func(a, b timed) int { return cmp.Compare(a.at, b.at) }) // by time, then as added
		got := c.next()
		require.Equal(t, ref[0], got, "pop %d", popped)
		ref = ref[1:]
	}
	require.Empty(t, ref)
	require.Nil(t, c.late, "no late heap")
	assert.Nil(t, c.counts, "no counting sort")
	assert.Nil(t, c.sortBuf, "no sort")
}

// Seeded tie-breakers (nextOrder of a calendar with a source) differ from
// one seed to the next and come out of the calendar in their order.
func TestCalendarSeededTies(t *testing.T) {
	orders := func(seed uint64) []uint64 {
		c := calendar{seeded: rand.NewPCG(seed, 0x5eed)}
		for task := range int32(100) {
			c.add(timed{at: time.Second, order: c.nextOrder(), task: task})
		}
		var out []uint64
		for c.Len() > 0 {
			out = append(out, c.next().order)
		}
		return out
	}
	a, b := orders(1), orders(2)
	assert.True(t, slices.IsSorted(a))
	assert.Equal(t, a, orders(1), "deterministic for a seed")
	assert.NotEqual(t, a, b)
}

// A full bucket being consumed, where every pop adds an event at the same
// time (a wave of tasks each followed by one of zero duration), is
// compacted only once half of it has been popped: moving the rest to the
// front then makes room for as many adds as it copies, where compacting
// for the one popped slot would copy the whole bucket on every add.
func TestCalendarCompactsABucketOnlyWhenHalfPopped(t *testing.T) {
	var c calendar
	const n = 1 << 12
	c.reserve(n)
	for range n {
		c.add(timed{at: time.Second, order: c.nextOrder()})
	}
	bk := &c.buckets[c.times.Min()]
	require.Equal(t, n, cap(bk.events), "full")
	compactions := 0
	for popped := range 8 * n {
		got := c.next()
		require.Equal(t, uint64(firstSequenced+popped), got.order, "in order")
		bk = &c.buckets[c.times.Min()]
		head, length := bk.head, len(bk.events)
		c.add(timed{at: time.Second, order: c.nextOrder()})
		if bk.head == 0 && head > 0 {
			compactions++
			require.GreaterOrEqual(t, 2*head, length, "pop %d: compacted with %d of %d popped", popped, head, length)
		}
	}
	assert.LessOrEqual(t, compactions, 8*n/(n/2), "a compaction per half bucket popped at most")
	assert.Equal(t, n, c.Len())
}
