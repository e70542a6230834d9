package topology

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSearchStartFindsTheRangeOfEveryValue checks searchStart against a
// linear scan on random prefix-sum tables of non-empty ranges, of every
// length from one range to 40.
func TestSearchStartFindsTheRangeOfEveryValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for ranges := 1; ranges <= 40; ranges++ {
		for range 20 {
			start := make([]int32, ranges+1)
			for i := 1; i <= ranges; i++ {
				start[i] = start[i-1] + 1 + rng.Int32N(5)
			}
			want := 0
			for x := start[0]; x < start[ranges]; x++ {
				for start[want+1] <= x {
					want++
				}
				require.Equal(t, want, searchStart(start, x), "table %v, value %d", start, x)
			}
		}
	}
}
