package admission

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/rbtree"
)

// firstWaitingByScan is firstWaiting by comparing, at each level from
// root, every child with queues the pass still visits in its subtree.
func firstWaitingByScan(q *Queues) *queue {
	var visits func(n *qnode) bool
	visits = func(n *qnode) bool {
		if n.qu != nil && q.toVisit(n.qu) {
			return true
		}
		for _, c := range n.children {
			if visits(c) {
				return true
			}
		}
		return false
	}
	n := q.nodes["root"]
	if n == nil || !visits(n) {
		return nil
	}
	for len(n.children) > 0 {
		var best *qnode
		for _, c := range n.children {
			if visits(c) && (best == nil || compareNodes(c, best) < 0) {
				best = c
			}
		}
		if best == nil {
			break
		}
		n = best
	}
	return n.qu
}

// TestFirstWaitingMatchesScan: on random queue trees with guarantees, as
// slots are granted and given back at random and queues, or whole
// branches, are done for the pass, the queue firstWaiting finds in rank
// order is the one that comparing every child at each level finds.
func TestFirstWaitingMatchesScan(t *testing.T) {
	checked := 0
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		q, err := New(Config{Slots: clusterSlots(4), Queues: randomQueueTree(rng)})
		require.NoError(t, err)
		var leaves []*queue
		for _, qu := range q.qorder {
			if len(qu.node.children) == 0 {
				leaves = append(leaves, qu)
			}
		}
		for pass := range 5 {
			// Queues with jobs to visit: a job in their order trees.
			for i, qu := range leaves {
				q.noteOrderChange(qu) // (as the jobs go in and out: order.go)
				had := qu.order.Len() > 0
				qu.order = rbtree.New(byKey)
				if rng.IntN(3) > 0 {
					j := &job{spec: JobSpec{Name: fmt.Sprintf("j%d-%d", pass, i)}}
					qu.order.Insert(&j.orderNode, j)
				}
				q.orderChanged(qu, had)
			}
			n := q.startPass()
			wantN := 0
			for _, qu := range leaves {
				if qu.order.Len() > 0 {
					wantN++
				}
			}
			require.Equal(t, wantN, n, "seed %d pass %d: queues with jobs to visit", seed, pass)
			for step := 0; ; step++ {
				want := firstWaitingByScan(q)
				require.Same(t, want, q.firstWaiting(), "seed %d pass %d step %d", seed, pass, step)
				checked++
				if want == nil {
					break
				}
				qu := leaves[rng.IntN(len(leaves))]
				switch op := rng.IntN(6); {
				case op < 3:
					q.addUse(qu, 1+rng.IntN(3))
				case op == 3 && qu.node.used > 0:
					q.addUse(qu, -1-rng.IntN(qu.node.used))
				case op == 4:
					q.markReservers()
					q.leaveBranch(want)
				default:
					q.doneWaiting(want)
				}
			}
		}
	}
	require.Greater(t, checked, 5000)
}

// randomQueueTree returns up to 4 levels of queues below root, each with
// a random guarantee (0 for some), the guarantees within their parents'.
func randomQueueTree(rng *rand.Rand) []QueueConfig {
	var out []QueueConfig
	var grow func(name string, guarantee, depth int)
	grow = func(name string, guarantee, depth int) {
		kids := 0
		if depth < 4 {
			kids = rng.IntN(5)
		}
		for k := range kids {
			g := 0
			if guarantee > 0 && rng.IntN(4) > 0 {
				g = rng.IntN(guarantee/kids + 1)
			}
			child := fmt.Sprintf("%s.q%d", name, k)
			out = append(out, QueueConfig{Name: child, GuaranteedSlots: g})
			grow(child, g, depth+1)
		}
	}
	grow("root", 60, 1)
	return out
}

// crossYieldByStep is crossYield giving up one slot at a time.
func crossYieldByStep(vq *queue, c *job, gain int) int {
	av, ac := vq.node, c.queue.node
	for av.depth > ac.depth {
		av = av.parent
	}
	for ac.depth > av.depth {
		ac = ac.parent
	}
	for av.parent != ac.parent {
		av, ac = av.parent, ac.parent
	}
	if av == ac {
		return vq.heldSlots
	}
	x, y := *av, *ac
	y.used += len(c.incoming) + gain
	k := 0
	for k < vq.heldSlots {
		x.used--
		if compareNodes(&x, &y) <= 0 {
			break
		}
		k++
	}
	return k
}

// TestCrossYieldMatchesSteps: on random queue trees with random slots
// held, crossYield (by bisection) is what giving up one slot at a time
// until the victim's queue would come first gives.
func TestCrossYieldMatchesSteps(t *testing.T) {
	checked := 0
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 13))
		q, err := New(Config{Slots: clusterSlots(4), Queues: randomQueueTree(rng)})
		require.NoError(t, err)
		var leaves []*queue
		for _, qu := range q.qorder {
			if len(qu.node.children) == 0 {
				leaves = append(leaves, qu)
				q.addUse(qu, rng.IntN(40))
			}
		}
		for range 50 {
			vq, cq := leaves[rng.IntN(len(leaves))], leaves[rng.IntN(len(leaves))]
			vq.heldSlots = rng.IntN(vq.node.used + 1)
			c := &job{queue: cq, incoming: make([]int32, rng.IntN(3))}
			gain := rng.IntN(5)
			require.Equal(t, crossYieldByStep(vq, c, gain), q.crossYield(vq, c, gain),
				"seed %d: %s (used %d, held %d) for %s (used %d)", seed, vq.cfg.Name, vq.node.used, vq.heldSlots, cq.cfg.Name, cq.node.used)
			checked++
		}
	}
	require.Greater(t, checked, 10000)
}
