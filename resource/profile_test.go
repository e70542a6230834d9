package resource_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/resource"
)

func TestUnknownIsTheZeroValue(t *testing.T) {
	var p resource.Profile
	assert.True(t, p.IsUnknown())
	assert.Equal(t, resource.Unknown, p)
	assert.Equal(t, "unknown", p.String())
	assert.Zero(t, p.CPUMillis())
	assert.Zero(t, p.MemoryMB())
	assert.Nil(t, p.Extended())
	assert.False(t, resource.New(0, 0).IsUnknown(), "a known empty profile is not Unknown")
	assert.NotEqual(t, resource.Unknown, resource.New(0, 0))
}

func TestFitsIn(t *testing.T) {
	small := resource.New(500, 512)
	big := resource.New(1000, 2048)
	gpu := resource.New(500, 512).WithExtended("gpu", 1)
	bigGPU := resource.New(1000, 2048).WithExtended("gpu", 2)
	tests := []struct {
		name          string
		request, slot resource.Profile
		want          bool
	}{
		{"equal", small, small, true},
		{"smaller fits", small, big, true},
		{"larger does not fit", big, small, false},
		{"more cpu only", resource.New(1001, 512), big, false},
		{"more memory only", resource.New(500, 2049), big, false},
		{"unknown request fits any slot", resource.Unknown, small, true},
		{"any request fits an unknown slot", bigGPU, resource.Unknown, true},
		{"unknown in unknown", resource.Unknown, resource.Unknown, true},
		{"extended needs the resource", gpu, big, false},
		{"extended fits a larger amount", gpu, bigGPU, true},
		{"extended amount too large", bigGPU.WithExtended("gpu", 3), bigGPU, false},
		{"slot extras are ignored", small, bigGPU, true},
		{"empty known profile fits", resource.New(0, 0), resource.New(0, 0), true},
		{"two extended names", small.WithExtended("gpu", 1).WithExtended("fpga", 1), bigGPU.WithExtended("fpga", 1), true},
		{"second extended name missing", small.WithExtended("gpu", 1).WithExtended("fpga", 1), bigGPU, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.request.FitsIn(tc.slot))
		})
	}
}

func TestAdd(t *testing.T) {
	a := resource.New(500, 512).WithExtended("gpu", 1)
	b := resource.New(250, 256).WithExtended("gpu", 2).WithExtended("fpga", 1)
	sum := a.Add(b)
	assert.Equal(t, int64(750), sum.CPUMillis())
	assert.Equal(t, int64(768), sum.MemoryMB())
	assert.Equal(t, map[string]int64{"gpu": 3, "fpga": 1}, sum.Extended())
	assert.Equal(t, sum, b.Add(a), "addition commutes")
	assert.Equal(t, resource.New(750, 768).WithExtended("gpu", 3).WithExtended("fpga", 1), sum,
		"sums are canonical and comparable with ==")

	assert.Equal(t, resource.Unknown, resource.Unknown.Add(resource.Unknown))
	assert.Equal(t, a, a.Add(resource.Unknown), "Unknown counts as zero next to a known profile")
	assert.Equal(t, a, resource.Unknown.Add(a))
	assert.Equal(t, a, a.Add(resource.New(0, 0)))
	assert.Equal(t, resource.New(1, 2).WithExtended("x", 5), resource.New(1, 2).Add(resource.New(0, 0).WithExtended("x", 5)))
}

func TestExtended(t *testing.T) {
	p := resource.New(1, 1).WithExtended("gpu", 2).WithExtended("fpga", 1)
	assert.Equal(t, int64(2), p.ExtendedValue("gpu"))
	assert.Equal(t, int64(1), p.ExtendedValue("fpga"))
	assert.Zero(t, p.ExtendedValue("tpu"))
	assert.Equal(t, "{cpu=1m mem=1MB fpga=1 gpu=2}", p.String(), "extended names render sorted")

	m := p.Extended()
	m["gpu"] = 100
	assert.Equal(t, int64(2), p.ExtendedValue("gpu"), "Extended returns a fresh map")

	assert.Equal(t, resource.New(1, 1).WithExtended("fpga", 1), p.WithExtended("gpu", 0), "n = 0 removes the resource")
	assert.Equal(t, p, resource.New(1, 1).WithExtended("fpga", 1).WithExtended("gpu", 2), "order of WithExtended does not matter")

	u := resource.Unknown.WithExtended("gpu", 1)
	assert.False(t, u.IsUnknown())
	assert.Equal(t, resource.New(0, 0).WithExtended("gpu", 1), u)
}

func TestConstructorsPanicOnProgrammerErrors(t *testing.T) {
	assert.Panics(t, func() { resource.New(-1, 0) })
	assert.Panics(t, func() { resource.New(0, -1) })
	assert.Panics(t, func() { resource.New(0, 0).WithExtended("gpu", -1) })
	assert.Panics(t, func() { resource.New(0, 0).WithExtended("", 1) })
	assert.Panics(t, func() { resource.New(0, 0).WithExtended("a=b", 1) })
	assert.Panics(t, func() { resource.New(0, 0).WithExtended("a;b", 1) })
}

func TestProfilesAreMapKeys(t *testing.T) {
	m := map[resource.Profile]int{}
	m[resource.New(1, 2).WithExtended("gpu", 1)]++
	m[resource.New(0, 0).WithExtended("gpu", 1).Add(resource.New(1, 2))]++
	m[resource.Unknown]++
	assert.Len(t, m, 2)
	assert.Equal(t, 2, m[resource.New(1, 2).WithExtended("gpu", 1)])
}

// TestAddSaturatesInsteadOfOverflowing: huge amounts (a job file may say
// anything up to 2^63-1) must not wrap around to a negative sum that
// would then fit every slot.
func TestAddSaturatesInsteadOfOverflowing(t *testing.T) {
	const huge = int64(1) << 62
	p := resource.New(huge, huge).WithExtended("gpu", huge)
	sum := p.Add(p).Add(p)
	assert.Equal(t, int64(math.MaxInt64), sum.CPUMillis())
	assert.Equal(t, int64(math.MaxInt64), sum.MemoryMB())
	assert.Equal(t, int64(math.MaxInt64), sum.ExtendedValue("gpu"))
	slot := resource.New(1000, 1024).WithExtended("gpu", 8)
	assert.False(t, sum.FitsIn(slot))
	assert.True(t, slot.FitsIn(sum))
}

// TestOverflowedSumFitsNoSlot: a sum beyond math.MaxInt64 in any one
// dimension (two subtasks of math.MaxInt64 CPU sharing a slot, say) reads
// math.MaxInt64 there but needs more: it fits no known slot, not even one
// offering math.MaxInt64 of everything, and stays Overflowed in further
// sums. A single amount of exactly math.MaxInt64, or a sum reaching it
// exactly, is no overflow and fits such a slot.
func TestOverflowedSumFitsNoSlot(t *testing.T) {
	const most = int64(math.MaxInt64)
	largest := resource.New(most, most).WithExtended("gpu", most)
	for name, tc := range map[string]struct {
		one    resource.Profile
		amount func(resource.Profile) int64
		text   string
	}{
		"cpu":      {resource.New(most, 0), resource.Profile.CPUMillis, "{cpu>9223372036854775807m mem=0MB}"},
		"memory":   {resource.New(0, most), resource.Profile.MemoryMB, "{cpu=0m mem>9223372036854775807MB}"},
		"extended": {resource.New(0, 0).WithExtended("gpu", most), func(p resource.Profile) int64 { return p.ExtendedValue("gpu") }, "{cpu=0m mem=0MB gpu>9223372036854775807}"},
	} {
		t.Run(name, func(t *testing.T) {
			assert.False(t, tc.one.Overflowed())
			assert.True(t, tc.one.FitsIn(largest), "one subtask needing the most a slot offers fits it")
			assert.True(t, tc.one.Add(resource.New(0, 0)).FitsIn(largest), "a sum reaching the most exactly fits")
			assert.False(t, tc.one.Add(resource.New(0, 0)).Overflowed())

			sum := tc.one.Add(tc.one)
			assert.True(t, sum.Overflowed())
			assert.Equal(t, most, tc.amount(sum))
			assert.False(t, sum.FitsIn(largest), "%v fits in %v", sum, largest)
			assert.True(t, sum.FitsIn(resource.Unknown), "an unknown slot serves any request")
			assert.Equal(t, tc.text, sum.String())
			assert.NotEqual(t, tc.one, sum)

			for _, more := range []resource.Profile{sum.Add(resource.New(0, 0)), resource.New(1, 1).Add(sum), resource.Unknown.Add(sum), sum.Add(resource.Unknown)} {
				assert.True(t, more.Overflowed(), "%v", more)
				assert.False(t, more.FitsIn(largest), "%v", more)
			}
			assert.False(t, resource.ExactMatch.Serves(largest, sum))
			assert.False(t, resource.FitsEveryDimension.Serves(largest, sum))
			assert.Equal(t, 1, resource.CompareAmounts(sum, tc.one), "the same amounts, one overflowed: it comes after")
			assert.Equal(t, 0, resource.CompareAmounts(sum, tc.one.Add(resource.New(0, 0)).Add(tc.one)), "equal profiles tie")
		})
	}
	// The tie-break of CompareAmounts: same amounts, only one overflowed.
	sum := resource.New(most, 0).Add(resource.New(most, 0))
	assert.Equal(t, 1, resource.CompareAmounts(sum, resource.New(most, 0)))
	assert.Equal(t, -1, resource.CompareAmounts(resource.New(most, 0), sum))
	assert.Equal(t, []resource.Count{{Profile: resource.New(most, 0), N: 1}, {Profile: sum, N: 2}},
		resource.Tally([]resource.Profile{resource.New(most, 0), sum, sum}))
}
