package admission

import "slices"

// A claim for a job whose queue, or a parent of it, is at its maxSlots
// (the free slots and those coming to it from outside that queue
// included) takes slots only from jobs under that queue: a slot taken
// from outside it would have it hold more. Of the jobs behind it, those
// outside the queue only tell whether a guarantee would have kept their
// slots as well (claimGuarded: the next waiting job of the pass may
// claim then). Such a claim therefore collects only the jobs under that
// queue, from their queues' holders, and asks each queue outside it once
// whether a job of it holds more than the queue may give up: the same
// picks and result as walking every job behind it, in O(jobs under the
// queue + queues) rather than O(jobs that hold slots).
//
// It does so when the claim walks every job behind it, and from the
// start when it walks them in victim order across queues (pickBehind):
// the picks from a first part of the jobs in victim order are the first
// picks from all of them, and a claim that fails on the first part walks
// them all.

// mergesBehind reports whether a claim of c walks the jobs behind it in
// victim order across queues, through the victims tree (pickBehind): a
// queue after c's holds slots.
func (q *Queues) mergesBehind(c *job) bool {
	if q.victims == nil {
		return false
	}
	for _, qu := range q.qorder {
		if qu.rank > c.queue.rank && qu.holders.Len() > 0 {
			return true
		}
	}
	return false
}

// closed returns the deepest queue of the budget with no room left
// (nil: none). Rooms only shrink while a claim picks, so no slot of a
// job outside it fits the budget until the claim is made.
func (b capBudget) closed() *qnode {
	for _, r := range b { // (from the claimant's queue up)
		if r.rem <= 0 {
			return r.n
		}
	}
	return nil
}

// victimsWithin returns, in victim order, the jobs behind the claimant
// (as behind returns them all) under queue n, where the claimant's queue
// is, and marks the claim guarded if a job behind it outside n holds more
// slots than its queue may give up to the claimant's (as pickFrom would
// have for each of them: their slots fit no budget, and what they may
// give up does not change with what the claim takes under n, whose
// queues are not theirs nor their parents below the one they share with
// the claimant's), but for a claim within its queue (claimWithin, which
// makes nothing of it).
func (pk *picker) victimsWithin(n *qnode) []*job {
	q, c := pk.q, pk.c
	out := pk.appendWithin(q.claimScratch.victims[:0], n, keyOf(c))
	if !slices.IsSortedFunc(out, victimOrder) {
		slices.SortFunc(out, victimOrder)
	}
	for _, qu := range q.qorder {
		if pk.guarded || q.claimScratch.within != nil {
			break // (a claim within its queue has no use for it: claimWithin)
		}
		if qu.rank < c.queue.rank || qu.holders.Len() == 0 || n.contains(qu.node) {
			continue
		}
		pk.guarded = qu.maxHeld > pk.give.above(qu, c.queue)
	}
	q.claimScratch.victims = out
	return out
}

// appendWithin appends to out the jobs behind the claimant (of key ck)
// in the queues of n's subtree.
func (pk *picker) appendWithin(out []*job, n *qnode, ck orderKey) []*job {
	c := pk.c
	switch qu := n.qu; {
	case qu == nil || qu.rank < c.queue.rank || qu.holders.Len() == 0:
	case qu == c.queue:
		for h := qu.holders.Last(); h != nil && h.Item().hkey.compare(ck) > 0; h = h.Prev() {
			if v := h.Item(); v != c {
				out = append(out, v)
			}
		}
	default:
		for h := qu.holders.First(); h != nil; h = h.Next() {
			out = append(out, h.Item())
		}
	}
	for _, ch := range n.children {
		out = pk.appendWithin(out, ch, ck)
	}
	return out
}

// heldResized records that a job of qu went from holding from slots a
// claim may take to holding to: it keeps heldBy and maxHeld, so whether
// a job of qu holds more than a number of them (victimsWithin) costs
// O(1), not a walk over its holders. O(1) amortized.
func (qu *queue) heldResized(from, to int) {
	qu.node.markStale()
	if from > 0 {
		qu.heldBy[from]--
	}
	if to > 0 {
		if to >= len(qu.heldBy) {
			qu.heldBy = append(qu.heldBy, make([]int, to+1-len(qu.heldBy))...)
		}
		qu.heldBy[to]++
		qu.maxHeld = max(qu.maxHeld, to)
	}
	for qu.maxHeld > 0 && qu.heldBy[qu.maxHeld] == 0 {
		qu.maxHeld--
	}
}
