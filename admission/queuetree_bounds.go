package admission

import "fmt"

// A claim across queues that does not complete asks each branch it did
// not merge whether a guarantee kept a job's slots from it (keptIn),
// which visits every queue of the branch. On a busy cluster the answer
// is almost always no for the whole branch at once: every queue of it
// may give up more slots than any of its jobs holds. Each queue of the
// hierarchy therefore bounds its subtree:
//
//   - minRem: the fewest slots a queue of the subtree holds above its
//     guarantee, less those it is giving up (used - yielding -
//     guaranteed, what giveBudget.remOf starts from);
//   - maxHeld: the most slots a claim may take that a job of the
//     subtree holds (queue.maxHeld).
//
// The bounds are found again only for the subtrees whose counts
// changed since they were last read: a change marks its queue and its
// parents stale (markStale), O(1) amortized; reading them (bounds)
// costs O(stale queues).

// subBounds are a subtree's bounds, current unless stale.
type subBounds struct {
	minRem, maxHeld int
	stale           bool
}

// markStale records that n's counts changed: its bounds, and its
// parents', are found again when next read. A stale queue's parents are
// stale, so it stops at the first one that is.
func (n *qnode) markStale() {
	for ; n != nil && !n.bounds.stale; n = n.parent {
		n.bounds.stale = true
	}
}

// subtreeBounds returns n's subtree's bounds, finding those of its
// stale queues again.
func (n *qnode) subtreeBounds() subBounds {
	if !n.bounds.stale {
		return n.bounds
	}
	n.bounds = n.boundsOver((*qnode).subtreeBounds)
	return n.bounds
}

// boundsOver is n's subtree's bounds: its own counts and its children's
// bounds, as child gives them.
func (n *qnode) boundsOver(child func(*qnode) subBounds) subBounds {
	b := subBounds{minRem: n.used - n.yielding - n.guaranteed}
	if n.qu != nil {
		b.maxHeld = n.qu.maxHeld
	}
	for _, ch := range n.children {
		cb := child(ch)
		b.minRem, b.maxHeld = min(b.minRem, cb.minRem), max(b.maxHeld, cb.maxHeld)
	}
	return b
}

// checkBounds checks that every queue whose bounds are not stale bounds
// its subtree as a count over it would (for checkInvariants), and that
// a stale queue's parents are stale.
func (q *Queues) checkBounds() error {
	for _, n := range q.nodeList {
		if n.bounds.stale {
			if p := n.parent; p != nil && !p.bounds.stale {
				return fmt.Errorf("admission: queue %s: bounds stale under %s, whose bounds are not", n.name, p.name)
			}
			continue
		}
		if want := countBounds(n); want != n.bounds {
			return fmt.Errorf("admission: queue %s: subtree bounds %+v, counted %+v", n.name, n.bounds, want)
		}
	}
	return nil
}

// countBounds counts n's subtree's bounds over its queues.
func countBounds(n *qnode) subBounds { return n.boundsOver(countBounds) }
