package reuse

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestZeroedReusesStorageThatHolds(t *testing.T) {
	old := []int{1, 2, 3, 4}
	s := Zeroed(old[:1], 3)
	assert.Equal(t, []int{0, 0, 0}, s)
	assert.Same(t, &old[0], &s[0], "the storage of old")
	assert.Equal(t, 4, old[3], "beyond n: untouched")
}

func TestZeroedAllocatesWhenTooSmall(t *testing.T) {
	old := []int{1, 2}
	s := Zeroed(old, 3)
	assert.Equal(t, []int{0, 0, 0}, s)
	assert.Equal(t, []int{1, 2}, old, "old left as it was")
	assert.Empty(t, Zeroed[int](nil, 0))
}

func TestEmptiedClearsToCapacity(t *testing.T) {
	p := new(int)
	old := []*int{p, p, p}
	s := Emptied(old[:1])
	assert.Empty(t, s)
	assert.Equal(t, 3, cap(s))
	assert.Equal(t, []*int{nil, nil, nil}, old, "nothing kept alive")
	assert.Nil(t, Emptied[int](nil))
}
