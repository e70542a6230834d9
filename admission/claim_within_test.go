package admission

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClaimWithinQueueBreaksItsStall: the jobs of a queue that comes
// later in the fair order, each holding part of what it needs idle,
// claim from one another although the first waiting job of the cluster,
// in the queue that comes first, cannot be helped (claim_within.go). On
// 4 slots a1 (root.a, guaranteed 3) runs on 2 slots for 5 s and a2 waits
// for 3; b1 and b2 (root.b) run a region of 1 slot, then one of 2, and
// their pools hold the first slot for the second. b1 claims b2's slot,
// and both end long before a1 does; without the claim within root.b
// both held their slot idle until a1 ended.
func TestClaimWithinQueueBreaksItsStall(t *testing.T) {
	s := emptySim(t, simConfig{checks: true})
	s.add(JobSpec{Name: "a1", Queue: "root.a"}, 0, []int{2}, []time.Duration{5 * time.Second}, 1, 0)
	b1 := s.add(JobSpec{Name: "b1", Queue: "root.b"}, 0, []int{1, 2}, []time.Duration{100 * ms, 100 * ms}, 1, 0)
	b2 := s.add(JobSpec{Name: "b2", Queue: "root.b"}, 0, []int{1, 2}, []time.Duration{100 * ms, 100 * ms}, 1, 0)
	s.add(JobSpec{Name: "a2", Queue: "root.a"}, 50*ms, []int{3}, []time.Duration{time.Second}, 1, 0)
	s.start(Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.a", GuaranteedSlots: 3}, {Name: "root.b"}}})
	s.run(time.Second)
	assert.True(t, b1.done && b2.done, "within a second: b1 done %v, b2 done %v", b1.done, b2.done)
	require.True(t, s.run(0), "every job finishes: %v", s.errs)
}

// TestQueueTreeKeepsTheClusterBusy: the jobs of BenchmarkAdmissionQueueTree's
// tree (3,000 of them on 1,000 slots) keep the cluster busy to the end but
// for the tail: no queue sits on idle slots while others are served
// (without the claims within queues, a top queue held a quarter of the
// cluster idle for a long part of the run, and its slots ran tasks 56% of
// the time).
func TestQueueTreeKeepsTheClusterBusy(t *testing.T) {
	s, cfg := benchTreeSim(t, 3000, 10, 1000)
	var work time.Duration // slot time of all tasks
	for _, j := range s.jobs {
		for r, k := range j.regions {
			work += time.Duration(k) * j.durs[r]
		}
	}
	s.start(cfg)
	require.True(t, s.run(0), "every job finishes")
	busy := float64(work/1000) / float64(s.now.Sub(t0))
	assert.GreaterOrEqual(t, busy, 0.8, "the cluster's slots ran tasks %.0f%% of the run", 100*busy)
}
