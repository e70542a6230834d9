package pool

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A store's records are each live at most once, and it never holds many
// more records than were ever live at once.
func TestBulkStoreHandsOutEachRecordOnceAndStaysSmall(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var s bulkStore
	live := map[*bulk]bool{}
	var order []*bulk
	maxLive := 0
	for step := range 20000 {
		// Live counts wander up and down; records retire in any order.
		if len(order) > 0 && (rng.IntN(2) == 0 || step%5000 > 3000) {
			i := rng.IntN(len(order))
			b := order[i]
			order[i] = order[len(order)-1]
			order = order[:len(order)-1]
			delete(live, b)
			s.put(b)
			continue
		}
		b := s.take()
		require.False(t, live[b], "step %d: a live record handed out again", step)
		require.True(t, b.taken)
		require.Same(t, b, s.at(b.handle), "step %d: its handle names it", step)
		live[b] = true
		order = append(order, b)
		maxLive = max(maxLive, len(live))
		require.Equal(t, s.total-s.free, len(live), "step %d: live records counted", step)
	}
	// It grows only while it holds fewer than twice the live records, by
	// a chunk as large as itself, up to 1024 records.
	assert.LessOrEqual(t, s.total, 2*maxLive+min(2*maxLive, 1024), "records beyond twice the most ever live, and a chunk")
	assert.LessOrEqual(t, len(s.spare), s.total, "each record is at most once a spare")
	// Every record keeps its handle, wherever the store put its chunk.
	seen := map[int32]bool{}
	for _, c := range s.chunks {
		for i := range c {
			h := c[i].handle
			assert.False(t, seen[h], "handle %d given twice", h)
			seen[h] = true
			assert.Same(t, &c[i], s.at(h), "handle %d", h)
		}
	}
	assert.Len(t, seen, s.total)
}

// Records retired in an order of their own are handed out again in
// address order, behind the cursor: a queue of bulks submitted one after
// another sits one after another in memory.
func TestBulkStoreHandsOutRecordsInAddressOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var s bulkStore
	const waiting, running = 10000, 100
	var queue, run []*bulk
	for range waiting {
		queue = append(queue, s.take())
	}
	adjacent, handedOut := 0, 0
	var last *bulk
	for range 50 {
		// The oldest bulks start, finish in any order, and each finish
		// submits a new bulk at the end of the queue.
		run = append(run, queue[:running]...)
		queue = queue[running:]
		rng.Shuffle(len(run), func(i, j int) { run[i], run[j] = run[j], run[i] })
		for _, b := range run {
			s.put(b)
			nb := s.take()
			if last != nil && uintptr(unsafe.Pointer(nb))-uintptr(unsafe.Pointer(last)) == unsafe.Sizeof(bulk{}) {
				adjacent++
			}
			last = nb
			handedOut++
			queue = append(queue, nb)
		}
		run = run[:0]
	}
	assert.Greater(t, adjacent, handedOut*99/100, "%d of %d records right after the one before", adjacent, handedOut)
	assert.LessOrEqual(t, s.total, waiting+running+1024, "records beyond the most ever live, plus a chunk")
}
