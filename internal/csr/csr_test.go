package csr_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/internal/csr"
)

type node int32

func TestBuildKeepsEmissionOrderPerRow(t *testing.T) {
	pairs := []struct {
		row node
		v   string
	}{{2, "c"}, {0, "a"}, {2, "d"}, {0, "b"}, {3, "e"}}
	calls := 0
	c := csr.Build(5, func(add func(node, string)) {
		calls++
		for _, p := range pairs {
			add(p.row, p.v)
		}
	})
	assert.Equal(t, 2, calls, "one pass to count, one to fill")
	assert.Equal(t, 5, c.Rows())
	assert.Equal(t, []int32{0, 2, 2, 4, 5, 5}, c.Start)
	assert.Equal(t, []string{"a", "b"}, c.Row(0))
	assert.Empty(t, c.Row(1))
	assert.Equal(t, []string{"c", "d"}, c.Row(2))
	assert.Equal(t, []string{"e"}, c.Row(3))
	assert.Empty(t, c.Row(4))
}

func TestEmpty(t *testing.T) {
	assert.Zero(t, csr.CSR[int32]{}.Rows(), "the zero value has no rows")
	c := csr.Build(0, func(func(int32, int32)) {})
	assert.Zero(t, c.Rows())
	assert.Empty(t, c.Adj)
	c = csr.Build(3, func(func(int32, int32)) {})
	assert.Equal(t, 3, c.Rows())
	for i := range int32(3) {
		assert.Empty(t, c.Row(i))
	}
}
