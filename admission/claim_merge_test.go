package admission

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// behindBySort is what the victims tree walk must yield: the jobs behind c
// collected from every queue's holders (c's queue's with holder keys after
// c's key, all of those of the queues after it by rank) and sorted in
// victim order.
func behindBySort(q *Queues, c *job) []*job {
	var out []*job
	ck := keyOf(c)
	for _, qu := range q.qorder {
		for h := qu.holders.First(); h != nil; h = h.Next() {
			v := h.Item()
			if v != c && (qu.rank > c.queue.rank || (qu == c.queue && v.hkey.compare(ck) > 0)) {
				out = append(out, v)
			}
		}
	}
	slices.SortFunc(out, victimOrder)
	return out
}

// behindByTree is what pickBehind walks: the jobs of the victims tree
// behind c.
func behindByTree(q *Queues, c *job) []*job {
	var out []*job
	ck := keyOf(c)
	for n := q.victims.First(); n != nil; n = n.Next() {
		if v := n.Item(); isBehind(c, ck, v) {
			out = append(out, v)
		}
	}
	return out
}

// TestVictimsTreeMatchesSort: after every step of random queue-tree mixes,
// with priorities changed at random between steps, the victims tree holds
// exactly the jobs of the queues' holders trees, and walking it yields,
// for every job that waits while a queue after its own holds slots, the
// jobs behind it as collecting and sorting them does.
func TestVictimsTreeMatchesSort(t *testing.T) {
	checked := 0
	for seed := uint64(1); seed <= 150; seed++ {
		s := randomTreeMix(t, seed, FIFO, Priority, FairShare, StateAware)
		rng := rand.New(rand.NewPCG(seed, 7))
		s.onStep = func() {
			q := s.q
			var inTree []*job
			if q.victims != nil {
				for n := q.victims.First(); n != nil; n = n.Next() {
					inTree = append(inTree, n.Item())
				}
			}
			var holders []*job
			for _, qu := range q.qorder {
				for h := qu.holders.First(); h != nil; h = h.Next() {
					holders = append(holders, h.Item())
				}
			}
			slices.SortFunc(holders, victimOrder)
			require.Equal(t, names(holders), names(inTree), "seed %d: the victims tree", seed)
			q.rankQueues()
			for _, c := range q.jobs {
				if c == nil { // forgotten
					continue
				}
				if !c.inTree || !q.mergesBehind(c) {
					continue // (no queue after c's holds slots: behind walks c's queue)
				}
				require.Equal(t, names(behindBySort(q, c)), names(behindByTree(q, c)), "seed %d: the jobs behind %s", seed, c.spec.Name)
				checked++
			}
			if active := activeJobs(q); len(active) > 0 && rng.IntN(4) == 0 {
				j := active[rng.IntN(len(active))]
				require.NoError(t, q.SetPriority(s.now, Principal{"root", RoleAdmin}, j.spec.Name, 1+rng.IntN(MaxPriority)))
			}
		}
		s.run(0)
	}
	require.Greater(t, checked, 1000, "walks compared")
}

// names lists the jobs' names.
func names(js []*job) []string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = j.spec.Name
	}
	return out
}

// activeJobs lists the jobs that may hold and ask for slots.
func activeJobs(q *Queues) []*job {
	var out []*job
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		if j.active() {
			out = append(out, j)
		}
	}
	return out
}
