package resource_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
)

var (
	small   = resource.New(500, 512)
	medium  = resource.New(750, 1024)
	big     = resource.New(1000, 2048)
	gpuSlot = resource.New(500, 512).WithExtended("gpu", 1)
	gpuReq  = resource.New(250, 256).WithExtended("gpu", 1)
)

func TestMatchingServes(t *testing.T) {
	tests := []struct {
		name          string
		slot, request resource.Profile
		fits, exact   bool
	}{
		{"same profile", small, small, true, true},
		{"larger slot", big, small, true, false},
		{"smaller slot", small, big, false, false},
		{"unknown request", big, resource.Unknown, true, true},
		{"unknown slot", resource.Unknown, big, true, true},
		{"both unknown", resource.Unknown, resource.Unknown, true, true},
		{"extended missing in slot", big, gpuReq, false, false},
		{"extended present", gpuSlot, gpuReq, true, false},
		{"equal with extended", gpuSlot, gpuSlot, true, true},
		{"known empty request in larger slot", small, resource.New(0, 0), true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.fits, resource.FitsEveryDimension.Serves(tc.slot, tc.request), "fits")
			assert.Equal(t, tc.exact, resource.ExactMatch.Serves(tc.slot, tc.request), "exact")
		})
	}
	assert.Equal(t, "fits", resource.FitsEveryDimension.String())
	assert.Equal(t, "exact", resource.ExactMatch.String())
	assert.Equal(t, resource.FitsEveryDimension, resource.Matching(0), "fits is the default")
}

func TestTally(t *testing.T) {
	got := resource.Tally([]resource.Profile{big, small, big, resource.Unknown, small, big})
	assert.Equal(t, []resource.Count{{Profile: big, N: 3}, {Profile: small, N: 2}, {Profile: resource.Unknown, N: 1}}, got,
		"counts in order of first appearance")
	assert.Empty(t, resource.Tally(nil))
	assert.Equal(t, "3 x {cpu=1000m mem=2048MB}", got[0].String())
}

func TestAssign(t *testing.T) {
	c := func(p resource.Profile, n int) resource.Count { return resource.Count{Profile: p, N: n} }
	tests := []struct {
		name           string
		demand, supply []resource.Count
		m              resource.Matching
		matched        int
		pairs          []resource.Pair // compared as a set
		missing        []resource.Count
	}{
		{
			name: "no demand", supply: []resource.Count{c(big, 2)},
			matched: 0,
		},
		{
			name: "no supply", demand: []resource.Count{c(small, 2)},
			matched: 0, missing: []resource.Count{c(small, 2)},
		},
		{
			name:   "prefers the smallest slot that fits",
			demand: []resource.Count{c(small, 1)}, supply: []resource.Count{c(big, 1), c(medium, 1), c(small, 1)},
			matched: 1, pairs: []resource.Pair{{Request: 0, Slot: 2, N: 1}},
		},
		{
			name:   "an unknown slot is the last resort",
			demand: []resource.Count{c(small, 2)}, supply: []resource.Count{c(resource.Unknown, 1), c(big, 1)},
			matched: 2, pairs: []resource.Pair{{Request: 0, Slot: 1, N: 1}, {Request: 0, Slot: 0, N: 1}},
		},
		{
			name:    "exact where smallest-first greedy fails: the small gpu slot is kept for the gpu request",
			demand:  []resource.Count{c(small, 1), c(gpuReq, 1)},
			supply:  []resource.Count{c(gpuSlot, 1), c(big, 1)},
			matched: 2, pairs: []resource.Pair{{Request: 0, Slot: 1, N: 1}, {Request: 1, Slot: 0, N: 1}},
		},
		{
			name:    "big slots are kept for big requests",
			demand:  []resource.Count{c(big, 2), c(small, 1)},
			supply:  []resource.Count{c(small, 2), c(big, 2)},
			matched: 3, pairs: []resource.Pair{{Request: 0, Slot: 1, N: 2}, {Request: 1, Slot: 0, N: 1}},
		},
		{
			name:    "maximum matching when not everything fits",
			demand:  []resource.Count{c(big, 3), c(gpuReq, 1)},
			supply:  []resource.Count{c(small, 2), c(big, 2)},
			matched: 2, pairs: []resource.Pair{{Request: 0, Slot: 1, N: 2}},
			missing: []resource.Count{c(big, 1), c(gpuReq, 1)},
		},
		{
			name:   "exact matching refuses a larger slot",
			demand: []resource.Count{c(small, 1)}, supply: []resource.Count{c(big, 3)}, m: resource.ExactMatch,
			matched: 0, missing: []resource.Count{c(small, 1)},
		},
		{
			name:   "exact matching with unknowns on either side",
			demand: []resource.Count{c(small, 1), c(resource.Unknown, 1)}, supply: []resource.Count{c(resource.Unknown, 1), c(big, 1)},
			m: resource.ExactMatch, matched: 2,
			pairs: []resource.Pair{{Request: 0, Slot: 0, N: 1}, {Request: 1, Slot: 1, N: 1}},
		},
		{
			name:   "zero counts are ignored",
			demand: []resource.Count{c(big, 0), c(small, 1)}, supply: []resource.Count{c(small, 0), c(medium, 1)},
			matched: 1, pairs: []resource.Pair{{Request: 1, Slot: 1, N: 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := resource.Assign(tc.demand, tc.supply, tc.m)
			assert.Equal(t, tc.matched, a.Matched)
			assert.ElementsMatch(t, tc.pairs, a.Pairs)
			assert.Equal(t, tc.missing, a.Missing)
			assert.Equal(t, len(tc.missing) == 0, a.Complete())
		})
	}
}

func TestAssignMissingString(t *testing.T) {
	a := resource.Assign([]resource.Count{{Profile: big, N: 2}, {Profile: gpuReq, N: 1}}, []resource.Count{{Profile: small, N: 4}}, resource.FitsEveryDimension)
	require.False(t, a.Complete())
	assert.Equal(t, "2 x {cpu=1000m mem=2048MB}, 1 x {cpu=250m mem=256MB gpu=1}", a.MissingString())
	assert.Empty(t, resource.Assignment{}.MissingString())
}

func TestAssignLargeCountsStayCheap(t *testing.T) {
	// The flow runs on distinct profiles, so counts in the millions are fine.
	demand := []resource.Count{{Profile: small, N: 1_000_000}, {Profile: gpuReq, N: 500_000}}
	supply := []resource.Count{{Profile: gpuSlot, N: 700_000}, {Profile: big, N: 900_000}}
	a := resource.Assign(demand, supply, resource.FitsEveryDimension)
	assert.Equal(t, 1_500_000, a.Matched)
	assert.True(t, a.Complete())
	assert.ElementsMatch(t, []resource.Pair{
		{Request: 1, Slot: 0, N: 500_000},
		{Request: 0, Slot: 0, N: 200_000},
		{Request: 0, Slot: 1, N: 800_000},
	}, a.Pairs)
}
