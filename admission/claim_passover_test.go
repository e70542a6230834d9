package admission

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPropertyYieldingQueues: the queues a claim across queues walks
// first (yieldingQueues) include every queue that crossYield lets yield
// the claim a slot, for every job as claimant and several gains, after
// every step of random queue trees; and they leave some queues out (the
// walk is shorter). -tree-mixes runs more (from -tree-first).
func TestPropertyYieldingQueues(t *testing.T) {
	policies := []Policy{FIFO, Priority, FairShare, StateAware}
	checked, left := 0, 0
	for seed := *treeFirst; seed < *treeFirst+uint64(*treeMixes); seed++ {
		s := randomTreeMix(t, seed, policies...)
		q := s.q
		s.onStep = func() {
			for _, c := range q.jobs {
				if c == nil { // forgotten
					continue
				}
				if c.state == JobNew || c.state >= JobCompleted {
					continue
				}
				for gain := range 4 {
					live := q.yieldingQueues(c, gain)
					for _, vq := range q.qorder {
						if vq.heldSlots == 0 {
							continue
						}
						in := vq.liveIn == live
						if !in {
							left++
						}
						if q.crossYield(vq, c, gain) > 0 {
							checked++
							require.True(t, in, "seed %d: queue %s may yield job %s (of %s) %d slots, gain %d, yet is left out",
								seed, vq.cfg.Name, c.spec.Name, c.queue.cfg.Name, q.crossYield(vq, c, gain), gain)
						}
					}
				}
			}
		}
		s.run(0)
	}
	t.Logf("queues that may yield, found: %d; queues left out: %d", checked, left)
	require.Positive(t, checked)
	require.Positive(t, left)
}
