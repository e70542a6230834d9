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
