package slab

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Lists taken from a slab keep their entries while later lists are built
// (across chunks), and an append to a taken list leaves the next list
// alone.
func TestTakenListsAreTheCallers(t *testing.T) {
	var s Slab[int]
	var lists [][]int
	next := 0
	for n := range 300 { // lists of 0 ... 299 entries: several chunks
		for range n {
			s.Add(next)
			next++
		}
		assert.Len(t, s.List(), n)
		l := s.Take()
		assert.Len(t, l, n)
		assert.Equal(t, len(l), cap(l), "a taken list ends its capacity")
		if n == 0 {
			assert.Nil(t, l)
		}
		lists = append(lists, l)
		if n > 0 {
			_ = append(l, -1) // copies: the slab's next list is not touched
		}
	}
	next = 0
	for n, l := range lists {
		for i := range n {
			assert.Equal(t, next, l[i], "list %d entry %d", n, i)
			next++
		}
	}
}
