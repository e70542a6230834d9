package hugepage

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// GODEBUG's disablethp is read as the runtime reads it.
func TestTHPDisabledReadsGODEBUGAsTheRuntime(t *testing.T) {
	for _, c := range []struct {
		godebug string
		off     bool
	}{
		{"", false},
		{"madvdontneed=1,disablethp=1", true},
		{"disablethp=2", true},               // any value but 0
		{"disablethp=1,disablethp=0", false}, // the last setting wins
		{"disablethp=0", false},
		{"madvdontneed=1, disablethp=1", false}, // " disablethp" is no setting of the runtime's
		{"disablethp=x", false},                 // not a number: ignored
	} {
		assert.Equal(t, c.off, thpDisabled(c.godebug), "GODEBUG=%q", c.godebug)
	}
}

func TestReserveHeapDoesNothingWithDisableTHP(t *testing.T) {
	t.Setenv("GODEBUG", "disablethp=1")
	assert.False(t, enabled())
	assert.False(t, ReserveHeap(8*hugePage))
}
