package admission

// A claim across queues walks the jobs behind its claimant in victim
// order (pickBehind) until it completes, and most of them, at a cluster
// shared by many queues, may give it nothing: their queue is at or below
// its guarantee, or would come before the claimant's queue with one slot
// less, or lies outside the room the claimant's queues' maxima leave.
// Each of those depends on the victim's queue only, and changes only
// when the claim picks a slot, so it is found once per queue for as long
// as the claim picks nothing (queueMemo), and a job of such a queue that
// holds no idle slot is passed over without looking at its slots: the
// same picks, and the same guarded result, as pickFrom would make. Most
// such queues are even found before the walk, a branch at a time (see
// yieldingQueues below).

// queueMemo is what a claim found of a victim queue: how many slots it
// may give up within the guarantees (giveBudget.above) at generation
// aboveGen (claimScratch.gen), and whether it gives a job of it that
// holds no idle slot nothing (dead) at generation gen.
type queueMemo struct {
	gen, aboveGen uint64
	above         int
	dead          bool
}

// changed starts a new generation of the claim's memos: a slot was
// picked, or the picking starts over.
func (pk *picker) changed() {
	pk.q.claimScratch.gen++
}

// passesOver reports whether pickFrom(v, false) would pick nothing of v
// and only mark the claim guarded, which it then does: v is of a queue
// other than the claimant's, holds no idle slot, and its queue may give
// the claim nothing (see above).
func (pk *picker) passesOver(v *job) bool {
	q, c, cs := pk.q, pk.c, &pk.q.claimScratch
	if v.queue == c.queue || q.holdsIdle(v) {
		return false
	}
	above := pk.above(v.queue)
	m := pk.memo(v.queue)
	if m.gen != cs.gen {
		m.gen = cs.gen
		m.dead = !pk.capB.allows(v) || above <= 0 || pk.crossLimit(v.queue) <= 0
	}
	if !m.dead {
		return false
	}
	pk.guarded = pk.guarded || above < len(v.held)
	return true
}

// memo returns the claim's memo of queue vq.
func (pk *picker) memo(vq *queue) *queueMemo {
	cs := &pk.q.claimScratch
	idx := vq.node.idx
	if idx >= len(cs.memo) {
		cs.memo = append(cs.memo, make([]queueMemo, len(pk.q.nodeList)-len(cs.memo))...)
	}
	return &cs.memo[idx]
}

// above is giveBudget.above of victim queue vq for the claim, found once
// per generation.
func (pk *picker) above(vq *queue) int {
	m := pk.memo(vq)
	if m.aboveGen != pk.q.claimScratch.gen {
		m.aboveGen = pk.q.claimScratch.gen
		m.above = pk.give.above(vq, pk.c.queue)
	}
	return m.above
}

// crossLimit is how many slots queue vq, another than the claimant's,
// may still yield to the claim: what leaves it behind the claimant's
// queue (crossYield), less what the claim took from it already.
func (pk *picker) crossLimit(vq *queue) int {
	return pk.q.crossYield(vq, pk.c, pk.gain()) - pk.q.claimScratch.crossTaken[vq.node.idx]
}

// gain is how many slots the claim brings its claimant beyond what it
// holds and has coming.
func (pk *picker) gain() int {
	return max(pk.need-len(pk.c.reserved)-len(pk.c.incoming), 0)
}

// On a busy cluster whose sibling queues the fair order keeps level,
// nearly every queue is of that kind: one slot less would put it ahead
// of the claimant's (crossYield), and that depends, besides the slots
// the queue holds, only on the branch it is in below the parent it
// shares with the claimant's queue. So a claim across queues first asks
// each branch beside its claimant's queue and that queue's parents once
// whether it may yield a slot (branchYields), and passes over a job of
// any other branch that holds no idle slot at the cost of looking at its
// queue's mark (queue.liveIn): such a job gives the claim nothing, and
// passesOver would mark the claim guarded if its queue may give up fewer
// slots than the job holds, which pickBehind asks the giveBudget directly
// (only while the claim is not guarded yet).

// yieldingQueues marks (queue.liveIn) the queues that may yield claimant
// c's claim (of gain more slots) a slot, as crossYield finds them, and
// some more: c's queue, its subtree and its parents (crossYield leaves
// them to their own rules), and the queues of the branches beside c's
// queue and its parents that may yield a slot (branchYields). It
// returns the mark, and lists in the claim scratch the queues it marked
// that hold slots a claim may take (liveQueues) and the branches it did
// not mark (deadBranches).
func (q *Queues) yieldingQueues(c *job, gain int) uint64 {
	cs := &q.claimScratch
	cs.liveStamp++
	live := cs.liveStamp
	cs.liveQueues, cs.deadBranches = cs.liveQueues[:0], cs.deadBranches[:0]
	cs.markSubtree(c.queue.node, live)
	for n := c.queue.node; n.parent != nil; n = n.parent {
		if qu := n.parent.qu; qu != nil {
			qu.liveIn = live
			if qu.heldSlots > 0 {
				cs.liveQueues = append(cs.liveQueues, qu)
			}
		}
		for _, s := range n.parent.children {
			switch {
			case s == n:
			case branchYields(s, n, c, gain):
				cs.markSubtree(s, live)
			default:
				cs.deadBranches = append(cs.deadBranches, s)
			}
		}
	}
	return live
}

// branchYields reports whether a queue of branch s, beside the branch n
// of claimant c's queue under their parent, may yield c's claim (of gain
// more slots) a slot: s, holding one slot less, still comes after n
// (crossYield's test at one slot, which comes out the same for every
// queue of s that holds a slot: the more s holds, the later it comes).
func branchYields(s, n *qnode, c *job, gain int) bool {
	if s.used < 1 {
		return true // (it holds no slot: nothing of it to pass over)
	}
	return yieldsAfter(s, n, c, gain, 1)
}

// markSubtree marks the queues of n's subtree live (queue.liveIn), and
// lists those that hold slots a claim may take (liveQueues).
func (cs *claimScratch) markSubtree(n *qnode, live uint64) {
	if qu := n.qu; qu != nil {
		qu.liveIn = live
		if qu.heldSlots > 0 {
			cs.liveQueues = append(cs.liveQueues, qu)
		}
	}
	for _, ch := range n.children {
		cs.markSubtree(ch, live)
	}
}
