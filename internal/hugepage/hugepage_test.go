package hugepage

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInnerKeepsWholeHugePagesOnly(t *testing.T) {
	const h = hugePage
	for _, c := range []struct {
		name        string
		p, n        uintptr
		off, length uintptr
	}{
		{name: "aligned, one page", p: 4 * h, n: h, off: 0, length: h},
		{name: "aligned, a page and a bit", p: 4 * h, n: h + 4096, off: 0, length: h},
		{name: "unaligned start", p: 4*h + 4096, n: 3 * h, off: h - 4096, length: 2 * h},
		{name: "less than a page", p: 4 * h, n: h - 1, off: 0, length: 0},
		{name: "straddles one boundary", p: 4*h + h/2, n: h, off: 0, length: 0},
		{name: "empty", p: 4 * h, n: 0, off: 0, length: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			off, length := inner(c.p, c.n)
			assert.Equal(t, c.length, length)
			if length > 0 {
				assert.Equal(t, c.off, off)
				assert.Zero(t, (c.p+off)%h, "starts on a huge page")
				assert.LessOrEqual(t, c.p+off+length, c.p+c.n, "stays inside")
			}
		})
	}
}

func TestReserveHeapIgnoresSmallReservations(t *testing.T) {
	assert.False(t, ReserveHeap(0))
	assert.False(t, ReserveHeap(2*hugePage-1))
}

func TestReserveHeapAdvisesWhereTheKernelHasHugePages(t *testing.T) {
	if !enabled() {
		assert.False(t, ReserveHeap(8*hugePage), "no huge pages to ask for here (%s, or no room for a ballast)", runtime.GOOS)
		return
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		assert.False(t, ReserveHeap(8*hugePage), "this kernel has no transparent huge pages")
		return
	}
	assert.True(t, ReserveHeap(8*hugePage))
	// The heap is usable as before.
	b := make([]byte, 4*hugePage)
	b[len(b)-1] = 1
	assert.Equal(t, byte(1), b[len(b)-1])
}
