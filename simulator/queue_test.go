package simulator

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

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

// Events added at the time being consumed (tasks of zero duration) go to
// the late heap, not into the sorted bucket: an add there is O(log n), not
// a shift of the bucket, and pops still take the two in order.
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
	const n = 2000
	for range n {
		add(timed{at: time.Second, order: r.Uint64()})
	}
	require.Equal(t, ref[0], c.next()) // sorts the bucket
	ref = ref[1:]
	bucket := len(c.buckets[c.times.Min()].events)
	for range 3 * n {
		add(timed{at: time.Second, order: r.Uint64()})
		require.Len(t, c.buckets[c.times.Min()].events, bucket, "an add leaves the sorted bucket alone")
		got := c.next()
		require.Equal(t, ref[0], got)
		ref = ref[1:]
		if c.times.Len() == 0 {
			break // the bucket ran out: the rest is late
		}
		bucket = len(c.buckets[c.times.Min()].events)
	}
	require.NotZero(t, c.late.Len())
	for c.Len() > 0 {
		require.Equal(t, ref[0], c.next())
		ref = ref[1:]
	}
	require.Empty(t, ref)
	require.Zero(t, c.late.Len())
}
