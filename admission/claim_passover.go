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
// same picks, and the same guarded result, as pickFrom would make.

// queueMemo is what a claim found of a victim queue at generation gen
// (claimScratch.gen): how many slots it may give up within the
// guarantees (giveBudget.above), and whether it gives a job of it that
// holds no idle slot nothing (dead).
type queueMemo struct {
	gen   uint64
	above int
	dead  bool
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
	idx := v.queue.node.idx
	if idx >= len(cs.memo) {
		cs.memo = append(cs.memo, make([]queueMemo, len(q.nodeList)-len(cs.memo))...)
	}
	m := &cs.memo[idx]
	if m.gen != cs.gen {
		m.gen = cs.gen
		m.above = pk.give.above(v.queue, c.queue)
		m.dead = !pk.capB.allows(v) || m.above <= 0 || pk.crossLimit(v.queue) <= 0
	}
	if !m.dead {
		return false
	}
	pk.guarded = pk.guarded || m.above < len(v.held)
	return true
}

// crossLimit is how many slots queue vq, another than the claimant's,
// may still yield to the claim: what leaves it behind the claimant's
// queue (crossYield), less what the claim took from it already.
func (pk *picker) crossLimit(vq *queue) int {
	c := pk.c
	return pk.q.crossYield(vq, c, max(pk.need-len(c.reserved)-len(c.incoming), 0)) - pk.q.claimScratch.crossTaken[vq.node.idx]
}
