package heap_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/heap"
)

func TestPopReturnsAscending(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h := heap.New(func(a, b int32) bool { return a < b }, nil)
	var want []int32
	for range 1000 {
		x := r.Int32N(200) // duplicates too
		h.Push(x)
		want = append(want, x)
		if r.IntN(3) == 0 { // interleave pops
			slices.Sort(want)
			require.Equal(t, want[0], h.Min())
			require.Equal(t, want[0], h.Pop())
			want = want[1:]
		}
	}
	slices.Sort(want)
	var got []int32
	for h.Len() > 0 {
		got = append(got, h.Pop())
	}
	assert.Equal(t, want, got)
}

// item is a cancellable value: it records where the heap placed it.
type item struct {
	key, seq int
	index    int
}

func TestMovedTracksPositionsForRemoval(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	less := func(a, b *item) bool {
		if a.key != b.key {
			return a.key < b.key
		}
		return a.seq < b.seq
	}
	h := heap.New(less, func(x *item, i int) { x.index = i })
	var live []*item
	for seq := range 2000 {
		switch op := r.IntN(4); {
		case op < 2 || len(live) == 0:
			it := &item{key: r.IntN(50), seq: seq}
			h.Push(it)
			live = append(live, it)
		case op == 2: // cancel a random live item
			k := r.IntN(len(live))
			it := live[k]
			require.Same(t, it, h.Remove(it.index))
			assert.Equal(t, -1, it.index, "a removed value is told it left")
			live = slices.Delete(live, k, k+1)
		default:
			min := slices.MinFunc(live, func(a, b *item) int {
				if less(a, b) {
					return -1
				}
				return 1
			})
			it := h.Pop()
			require.Same(t, min, it)
			assert.Equal(t, -1, it.index)
			live = slices.DeleteFunc(live, func(x *item) bool { return x == it })
		}
		require.Equal(t, len(live), h.Len())
		for _, it := range live {
			require.GreaterOrEqual(t, it.index, 0)
			require.Less(t, it.index, h.Len())
		}
	}
	for h.Len() > 0 { // indexes are exact: removing the last reported
		it := live[len(live)-1]
		require.Same(t, it, h.Remove(it.index))
		live = live[:len(live)-1]
	}
}

func TestFixRestoresOrderAfterAKeyChanged(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	less := func(a, b *item) bool {
		if a.key != b.key {
			return a.key < b.key
		}
		return a.seq < b.seq
	}
	h := heap.New(less, func(x *item, i int) { x.index = i })
	var live []*item
	for seq := range 300 {
		it := &item{key: r.IntN(50), seq: seq}
		h.Push(it)
		live = append(live, it)
	}
	for range 2000 {
		it := live[r.IntN(len(live))]
		it.key = r.IntN(50) // up, down or the same
		h.Fix(it.index)
		min := slices.MinFunc(live, func(a, b *item) int {
			if less(a, b) {
				return -1
			}
			return 1
		})
		require.Same(t, min, h.Min())
	}
	slices.SortFunc(live, func(a, b *item) int {
		if less(a, b) {
			return -1
		}
		return 1
	})
	for _, want := range live {
		require.Same(t, want, h.Pop())
	}
}

// event is a value the size of the simulator's calendar events.
type event struct {
	at, order, task, version int64
}

func TestNoAllocationsOnceGrown(t *testing.T) {
	h := heap.New(func(a, b event) bool { return a.at < b.at }, nil)
	for i := range 64 {
		h.Push(event{at: int64(i)})
	}
	for h.Len() > 0 {
		h.Pop()
	}
	allocs := testing.AllocsPerRun(100, func() {
		for i := range 64 {
			h.Push(event{at: int64(64 - i)})
		}
		for h.Len() > 0 {
			h.Pop()
		}
	})
	assert.Zero(t, allocs, "values are stored unboxed")
}

// BenchmarkHeap pushes and pops struct values through a heap holding
// about 1,000 of them, as the simulator's calendar does.
func BenchmarkHeap(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	h := heap.New(func(a, b event) bool {
		if a.at != b.at {
			return a.at < b.at
		}
		return a.order < b.order
	}, nil)
	for range 1000 {
		h.Push(event{at: r.Int64N(1 << 20), order: r.Int64()})
	}
	b.ReportAllocs()
	for b.Loop() {
		e := h.Pop()
		h.Push(event{at: e.at + r.Int64N(1<<10), order: r.Int64(), task: e.task, version: e.version + 1})
	}
}
