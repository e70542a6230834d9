package resource_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/resource"
)

// randomExtended draws a known profile from a small universe of amounts
// and extended names, so equal, nested, incomparable and prefix-sharing
// names ("gpu", "gpu2") all occur.
func randomExtended(r *rand.Rand) resource.Profile {
	p := resource.New(int64(r.IntN(3))*500, int64(r.IntN(2))*512)
	for _, n := range []string{"fpga", "gpu", "gpu2", "ssd"} {
		if r.IntN(2) == 0 {
			p = p.WithExtended(n, int64(r.IntN(3)))
		}
	}
	return p
}

// fitsByMap is FitsIn's definition on maps, for known profiles.
func fitsByMap(req, slot resource.Profile) bool {
	if req.CPUMillis() > slot.CPUMillis() || req.MemoryMB() > slot.MemoryMB() {
		return false
	}
	have := slot.Extended()
	for n, v := range req.Extended() {
		if v > have[n] {
			return false
		}
	}
	return true
}

func TestFitsInMatchesItsDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		a, b := randomExtended(r), randomExtended(r)
		assert.Equal(t, fitsByMap(a, b), a.FitsIn(b), "%v in %v", a, b)
	}
}

func TestCompareAmounts(t *testing.T) {
	gpu := resource.New(500, 512).WithExtended("gpu", 1)
	for _, tc := range []struct {
		name string
		a, b resource.Profile
		want int
	}{
		{"cpu first", resource.New(500, 4096), resource.New(1000, 512), -1},
		{"then memory", resource.New(500, 1024), resource.New(500, 512), 1},
		{"then total extended", gpu, gpu.WithExtended("fpga", 1), -1},
		{"then encoding", resource.New(1, 1).WithExtended("gpu", 1), resource.New(1, 1).WithExtended("fpga", 1), 1},
		{"equal", gpu, resource.New(500, 512).WithExtended("gpu", 1), 0},
		{"Unknown compares like New(0, 0)", resource.Unknown, resource.New(0, 0), 0},
		{"Unknown is not special", resource.Unknown, resource.New(1, 0), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, resource.CompareAmounts(tc.a, tc.b))
			assert.Equal(t, -tc.want, resource.CompareAmounts(tc.b, tc.a))
		})
	}
}

func TestCompareAmountsIsATotalOrderExtendingFitsIn(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		a, b, c := randomExtended(r), randomExtended(r), randomExtended(r)
		ab, bc := resource.CompareAmounts(a, b), resource.CompareAmounts(b, c)
		assert.Equal(t, -ab, resource.CompareAmounts(b, a), "antisymmetric: %v %v", a, b)
		assert.Equal(t, ab == 0, a == b, "only equal profiles tie: %v %v", a, b)
		if ab <= 0 && bc <= 0 {
			assert.LessOrEqual(t, resource.CompareAmounts(a, c), 0, "transitive: %v %v %v", a, b, c)
		}
		if a.FitsIn(b) {
			assert.LessOrEqual(t, ab, 0, "%v fits in %v but comes after it", a, b)
		}
	}
}

func TestCompareAmountsAndFitsInDoNotAllocate(t *testing.T) {
	a := resource.New(500, 512).WithExtended("gpu", 1).WithExtended("fpga", 2)
	b := resource.New(500, 512).WithExtended("gpu", 2).WithExtended("ssd", 1)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_ = resource.CompareAmounts(a, b)
		_ = a.FitsIn(b)
	}))
}
