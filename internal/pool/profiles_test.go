package pool

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/resource"
)

// TestProfileTableInterns: a profile gets one index, the first time it is
// seen, whether it is asked again at once or later.
func TestProfileTableInterns(t *testing.T) {
	tb := newProfileTable(resource.FitsEveryDimension)
	assert.Equal(t, int32(0), tb.intern(small))
	assert.Equal(t, int32(0), tb.intern(small))
	assert.Equal(t, int32(1), tb.intern(big))
	assert.Equal(t, int32(0), tb.intern(small))
	assert.Equal(t, int32(2), tb.intern(resource.Unknown))
	assert.Equal(t, int32(1), tb.intern(big))
	assert.Len(t, tb.recs, 3)
	for i, pr := range []resource.Profile{small, big, resource.Unknown} {
		assert.Equal(t, pr, tb.recs[i].profile)
	}
}

// TestProfileTableInternsBeyondScan: past scanProfiles profiles the table
// finds them by a map, with the indexes the scan gave.
func TestProfileTableInternsBeyondScan(t *testing.T) {
	tb := newProfileTable(resource.FitsEveryDimension)
	n := 3 * scanProfiles
	for i := range n {
		assert.Equal(t, int32(i), tb.intern(resource.New(int64(1000+i), 1024)))
		assert.Equal(t, i+1 > scanProfiles, tb.index != nil, "%d profiles", i+1)
	}
	for i := n - 1; i >= 0; i-- {
		assert.Equal(t, int32(i), tb.intern(resource.New(int64(1000+i), 1024)))
	}
	assert.Len(t, tb.recs, n)
}

// TestProfileTableServes: the cached answers are the matching's, for both
// matchings, asked in any order and twice.
func TestProfileTableServes(t *testing.T) {
	profiles := []resource.Profile{small, medium, big, gpu, resource.Unknown}
	for _, m := range []resource.Matching{resource.FitsEveryDimension, resource.ExactMatch} {
		tb := newProfileTable(m)
		for _, pr := range profiles {
			tb.intern(pr)
		}
		for range 2 {
			for i := len(profiles) - 1; i >= 0; i-- {
				for j := range profiles {
					assert.Equal(t, m.Serves(profiles[i], profiles[j]), tb.serves(int32(i), int32(j)), "%v serves %v (%v)", profiles[i], profiles[j], m)
				}
			}
		}
	}
}

// TestProfileTableSupply: the supply of held, free or reusable slots
// lists the profiles that have some, with their counts, and supplyIndex
// finds them there; a shape is relevant to a profile that serves one of
// its classes.
func TestProfileTableSupply(t *testing.T) {
	tb := newProfileTable(resource.FitsEveryDimension)
	s, m, b := tb.intern(small), tb.intern(medium), tb.intern(big)
	tb.recs[s].free = []int32{1, 2}
	tb.recs[s].total = 3 // and one in use
	tb.recs[m].held = []int32{3}
	tb.recs[m].total = 1
	tb.recs[b].total, tb.recs[b].fixed = 2, 2 // both in use by unbounded tasks
	assert.Equal(t, []resource.Count{{Profile: small, N: 2}}, tb.supply(false, true, false))
	assert.Equal(t, []resource.Count{{Profile: small, N: 2}, {Profile: medium, N: 1}}, tb.supply(true, true, false))
	assert.Equal(t, []resource.Count{{Profile: medium, N: 1}}, tb.supply(true, false, false))
	assert.Equal(t, 0, tb.supplyIndex(m))
	assert.Equal(t, -1, tb.supplyIndex(s))
	assert.Equal(t, []resource.Count{{Profile: small, N: 3}, {Profile: medium, N: 1}}, tb.supply(false, false, true))
	assert.Equal(t, []int32{s, m}, tb.supplyProf)
	assert.Equal(t, 2, tb.slotCount(s, false))
	assert.Equal(t, 3, tb.slotCount(s, true))
	assert.Equal(t, 0, tb.slotCount(b, true))

	a := tb.assign([]resource.Count{{Profile: medium, N: 2}}, tb.supply(false, false, true))
	assert.Equal(t, 1, a.Matched, "one medium slot; small ones do not serve medium requests")

	mediumShape := &shape{classProf: []int32{m}}
	assert.True(t, tb.relevant(b, mediumShape))
	assert.True(t, tb.relevant(m, mediumShape))
	assert.False(t, tb.relevant(s, mediumShape))
}
