package slotpool

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// A waiting bulk is cold when its turn comes: it must span at most two
// cache lines (the allocator's 128-byte class).
func TestBulkFitsTwoCacheLines(t *testing.T) {
	assert.Equal(t, uintptr(128), unsafe.Sizeof(bulk{}), "records fill whole cache lines in bulkStore's chunks")
}

// The release of a slot, in whatever order tasks end, reads the second
// line of its bulk only: vacate (n, one, inUse, state) and retire (id for
// the table of live bulks, taken and inSpare for the store); so does
// reset (what a record keeps from its last bulk), which only writes the
// first.
func TestBulkReleaseAndResetReadTheSecondLine(t *testing.T) {
	var b bulk
	for name, off := range map[string]uintptr{
		"id": unsafe.Offsetof(b.id), "n": unsafe.Offsetof(b.n), "inUse": unsafe.Offsetof(b.inUse),
		"state": unsafe.Offsetof(b.state), "taken": unsafe.Offsetof(b.taken), "inSpare": unsafe.Offsetof(b.inSpare),
		"one": unsafe.Offsetof(b.one), "many": unsafe.Offsetof(b.many), "asks": unsafe.Offsetof(b.asks),
		"handle": unsafe.Offsetof(b.handle),
	} {
		assert.GreaterOrEqual(t, off, uintptr(64), "%s is on the second line", name)
	}
}
