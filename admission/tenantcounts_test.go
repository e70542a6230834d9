package admission

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// plainYielding counts, over the jobs, the slots each queue's subtree
// gives up.
func plainYielding(q *Queues) map[*qnode]int {
	out := map[*qnode]int{}
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		for n := j.queue.node; len(j.yielding) > 0 && n != nil; n = n.parent {
			out[n] += len(j.yielding)
		}
	}
	return out
}

// plainAssured is assuredSlots counted from the jobs: the drivers per
// queue over the jobs, what each sibling keeps down its subtree.
func plainAssured(q *Queues, x *qnode) int {
	drivers := map[*qnode]int{}
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		if j.hasSlot {
			drivers[j.queue.node]++
		}
	}
	var kept func(n *qnode) int
	kept = func(n *qnode) int {
		sum := drivers[n]
		for _, c := range n.children {
			sum += kept(c)
		}
		return max(n.guaranteed, sum)
	}
	var path []*qnode
	for ; x.parent != nil; x = x.parent {
		path = append(path, x)
	}
	n := sumCounts(q.capacity)
	for i := len(path) - 1; i >= 0; i-- {
		x := path[i]
		for _, s := range x.parent.children {
			if s != x {
				n -= kept(s)
			}
		}
		if x.max > 0 {
			n = min(n, x.max)
		}
	}
	return n
}

// checkAgainstPlain compares what the guarantees read (the slots each
// queue gives up, a fresh giveBudget, each queue's assured slots) with
// the same counted over the jobs.
// It reports whether a queue gave up slots and whether a driver ran.
func checkAgainstPlain(t *testing.T, q *Queues, what string) (yielding, drivers bool) {
	t.Helper()
	want := plainYielding(q)
	yielding = len(want) > 0
	for _, n := range q.nodeList {
		drivers = drivers || n.drivers > 0
	}
	for _, n := range q.nodeList {
		require.Equal(t, want[n], n.yielding, "%s: slots queue %s gives up", what, n.name)
	}
	gb := q.newGiveBudget()
	for _, vq := range q.qorder {
		for _, cq := range q.qorder {
			r := unlimited
			for n := vq.node; n != nil && !n.contains(cq.node); n = n.parent {
				r = min(r, n.used-want[n]-n.guaranteed)
			}
			require.Equal(t, max(r, 0), gb.above(vq, cq), "%s: slots queue %s may give up to %s", what, vq.cfg.Name, cq.cfg.Name)
		}
		require.Equal(t, plainAssured(q, vq.node), q.assuredSlots(vq.node), "%s: slots queue %s is assured", what, vq.cfg.Name)
	}
	return yielding, drivers
}

// TestGuaranteeCountsAgreeWithJobs: after every step of random queue
// trees and job mixes (drivers, gangs, preemption across queues, claims
// across queues), and of the 3-level tree of the queue-tree benchmark,
// the counts the guarantees read, kept as slots change hands, are what
// counting over the jobs gives.
func TestGuaranteeCountsAgreeWithJobs(t *testing.T) {
	sawYielding, sawDrivers := 0, 0
	for seed := uint64(1); seed <= 300; seed++ {
		s := randomTreeMix(t, seed, FIFO, Priority, FairShare, StateAware)
		s.onStep = func() {
			y, d := checkAgainstPlain(t, s.q, s.title())
			sawYielding += b2i(y)
			sawDrivers += b2i(d)
		}
		require.True(t, s.run(0), "seed %d: every job finishes", seed)
	}
	s, cfg := benchTreeSim(t, 300, 4, 200)
	steps, treeYielding := 0, 0
	s.onStep = func() {
		if steps++; steps%7 == 0 {
			y, _ := checkAgainstPlain(t, s.q, "the benchmark's tree")
			treeYielding += b2i(y)
		}
	}
	s.start(cfg)
	require.True(t, s.run(0), "every job finishes")
	// The mixes exercise what is counted: slots given up, drivers.
	require.Greater(t, sawYielding, 100, "steps with slots given up")
	require.Greater(t, sawDrivers, 100, "steps with drivers")
	require.Greater(t, treeYielding, 10, "steps of the benchmark's tree with slots given up")
}

// TestEndedDriverNoLongerKept: a job's driver counts toward what its
// queue keeps under the guarantees while it holds its slot, and no
// longer once the job ended: the other queue is assured the whole
// cluster again.
func TestEndedDriverNoLongerKept(t *testing.T) {
	drv := small
	s := newSim(t, Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.a"}, {Name: "root.b", GuaranteedSlots: 1}}},
		simConfig{checks: true, record: true})
	d := s.add(JobSpec{Name: "d", Queue: "root.a", Driver: &drv}, 0, []int{1}, []time.Duration{100 * ms}, 1, 10*ms)
	s.add(JobSpec{Name: "w", Queue: "root.b"}, 0, []int{1, 1}, []time.Duration{1000 * ms, 1000 * ms}, 1, 0)
	a, b := s.q.queues["root.a"].node, s.q.queues["root.b"].node
	kept := 0
	s.onStep = func() {
		checkAgainstPlain(t, s.q, "step")
		if a.drivers > 0 {
			kept++
			require.Equal(t, 3, s.q.assuredSlots(b), "root.a keeps its running driver's slot")
		}
	}
	require.False(t, s.run(500*ms), "w still runs")
	require.True(t, d.done, s.tail(30))
	require.Positive(t, kept, "steps with d's driver up")
	require.Zero(t, a.drivers, "d ended: its driver is gone")
	require.Equal(t, 4, s.q.assuredSlots(b), "root.b is assured every slot again")
}
