package admission

import (
	"flag"
	"fmt"
	"testing"
	"time"

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

// TestClaimCycleSettles is the cycle of TestQueueTreeClaimCycleSettles
// minimized: nine jobs in eight leaf queues of three parents guaranteed 6
// each, on 19 slots, every job's regions one after the other (its pool
// keeps the slots of a region that ended, idle, for the next one). At
// 30 ms j4, j5 and j6, one in each leaf of root.t1, each hold 2 idle
// slots for a region of 3 and wait for one more. Each claimed an idle
// slot of the next while that one's own claim was complete: the next was
// granted its claim's slot for an ask that could no longer complete, and
// claimed in turn, around the three leaves, one slot going round without
// end.
func TestClaimCycleSettles(t *testing.T) {
	var queues []QueueConfig
	for _, q := range []struct {
		name string
		g    int
	}{
		{"root.t0", 6}, {"root.t1", 6}, {"root.t2", 6},
		{"root.t0.l0", 0}, {"root.t0.l1", 0}, {"root.t0.l2", 0},
		{"root.t1.l0", 2}, {"root.t1.l1", 2}, {"root.t1.l2", 2},
		{"root.t2.l0", 0}, {"root.t2.l1", 1},
	} {
		queues = append(queues, QueueConfig{Name: q.name, GuaranteedSlots: q.g})
	}
	s := newSim(t, Config{Slots: clusterSlots(19), Queues: queues}, simConfig{checks: true, record: true})
	for i, j := range []struct {
		queue string
		sizes []int
		durs  []time.Duration
	}{
		{"root.t0.l1", []int{1}, []time.Duration{10 * ms}},
		{"root.t0.l2", []int{2, 1}, []time.Duration{10 * ms, 10 * ms}},
		{"root.t0.l0", []int{2, 4}, []time.Duration{10 * ms, 20 * ms}},
		{"root.t0.l2", []int{2, 1}, []time.Duration{10 * ms, 10 * ms}},
		{"root.t1.l0", []int{2, 3}, []time.Duration{10 * ms, 10 * ms}},
		{"root.t1.l1", []int{2, 3}, []time.Duration{10 * ms, 10 * ms}},
		{"root.t1.l2", []int{4, 3}, []time.Duration{30 * ms, 10 * ms}},
		{"root.t2.l0", []int{4, 4}, []time.Duration{20 * ms, 20 * ms}},
		{"root.t2.l1", []int{1, 3}, []time.Duration{10 * ms, 10 * ms}},
	} {
		s.add(JobSpec{Name: fmt.Sprintf("j%d", i), Queue: j.queue}, 0, j.sizes, j.durs, 1, 0)
	}
	require.True(t, s.run(0), "every job finishes\n%s", s.tail(30))
}
