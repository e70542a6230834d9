package admission

import (
	"flag"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

var treeSizes = flag.Bool("tree-sizes", false, "TestQueueTreeSizesSettle runs every size of its scan, not only its fast subset")

// runTreeSim runs the queue-tree benchmark's jobs (benchTreeSim) with the
// admission's invariants checked every step of `every`: every instant
// settles and every job finishes.
func runTreeSim(t *testing.T, jobs, regions, slots, every int) {
	t.Helper()
	s, cfg := benchTreeSim(t, jobs, regions, slots)
	steps := 0
	s.onStep = func() {
		if steps++; steps%every == 0 {
			require.NoError(t, s.q.checkInvariants(), "at %v", s.now.Sub(t0))
		}
	}
	s.start(cfg)
	require.True(t, s.run(0), "every job finishes")
}

// TestQueueTreeClaimCycleSettles: 600 jobs of the queue-tree benchmark on
// 250 slots. At 2,399 ms four jobs of four leaf queues each held 2 idle
// slots for a region of 4 and had 2 slots reserved to complete it; the
// first in the fair order claimed the idle slots of the next, whose
// reserved slots were then granted to an ask that could no longer
// complete, and whose queue came first again: it claimed from the next,
// around the cycle, and the instant never ended. A claim takes no idle
// slot of a job whose own claim is complete (claim_settled.go).
func TestQueueTreeClaimCycleSettles(t *testing.T) {
	runTreeSim(t, 600, 10, 250, 1)
}

// TestQueueTreeSizesSettle runs the queue-tree benchmark's jobs over a
// range of sizes (jobs 50 … 2,000, slots 20 … 1,000, regions 4 and 10):
// every run settles at every instant and finishes. Without -tree-sizes
// it runs a fast subset.
func TestQueueTreeSizesSettle(t *testing.T) {
	jobs := []int{50, 120, 300, 600, 1000, 2000}
	slots := []int{20, 60, 150, 250, 400, 1000}
	regions := []int{4, 10}
	if !*treeSizes {
		jobs, slots, regions = []int{120, 300}, []int{60, 150, 250}, []int{10}
	}
	for _, r := range regions {
		for _, n := range jobs {
			for _, k := range slots {
				t.Run(fmt.Sprintf("jobs%d-regions%d-slots%d", n, r, k), func(t *testing.T) {
					runTreeSim(t, n, r, k, 10)
				})
			}
		}
	}
}
