package admission

import (
	"cmp"
	"slices"

	"github.com/regionsched/regionsched/resource"
)

// A claim keeps slots for the first waiting job (claim.go). Jobs move
// while it waits for them: a job may start waiting ahead of the claimant
// in its queue's order, or be raised ahead of it, and slots move between
// queues, which changes their fair order. The slots a claim keeps then
// serve the job ahead first when they serve it more, as free slots
// would: before a decision grants anything, such a claim is given up,
// its reserved slots are free again and its claimant claims nothing more
// in that decision (the job ahead is served them in the decision's first
// pass). Slots a preemption brings back stay their claimant's: the
// reclaim serves what its job waits for, and is withdrawn only when its
// reason is gone (preempt.go).
//
// Across queues the fair order changes with every grant of a pass, so a
// claim whose slots came back since the last decision is looked at again
// when its claimant is visited after grants changed it, and once the
// passes end (dropOutrankedInPass): the slots go where a freed slot would
// go as the pass stands, not as it stood at its start (when free slots
// that a queue before it was granted since still counted for its jobs).

// dropPassedClaims gives up, before a decision grants anything, the
// claims of jobs passed over: a claim is the first waiting job's (see
// visit), and a job ahead of the claimant in its queue's order, which
// started waiting after the claim was made or was moved ahead by a
// priority change, is served first when the claim's reserved slots
// would serve it now (passedOver), as the policy grants free slots;
// across queues, a slot that came back for a claim goes by the fair
// order of queues as a freed slot does (outranked). A claim with a
// preemption in it stays (the reclaim serves what its job waits for, and
// is withdrawn only when its reason is gone: preempt.go). The claimant
// claims nothing more in this decision (as giveUpClaim).
//
// A claim given up frees slots the next one looked at may count, so the
// claims are looked at in an order of their own, not in the order their
// slots came back or were reserved: the claimant whose queue comes last
// in the fair order first, and within a queue the job last in its order
// first. O(claimants x (queues + jobs ahead of them)) matchings at most.
func (q *Queues) dropPassedClaims() {
	defer func() {
		clear(q.handedTo)
		q.handedTo = q.handedTo[:0]
	}()
	clear(q.handed)
	q.handed = q.handed[:0]
	if q.nReserved == 0 {
		return
	}
	q.rankQueues()
	// Across queues: a claim a slot came back for since the last decision
	// (once every input of the instant is in, whatever their order).
	handed := q.handedTo
	slices.SortFunc(handed, lastFirst)
	handed = slices.Compact(handed)
	for _, c := range handed {
		if len(c.reserved) == 0 || c.noClaimIn == q.decision || q.preempting(c) {
			continue
		}
		if q.outranked(c) {
			q.dropClaim(c)
			c.noClaimIn = q.decision
			continue
		}
		c.handedIn = q.decision // (looked at again in the passes)
		q.handed = append(q.handed, c)
	}
	q.handedUses = q.uses
	for qu := range q.listedQueues(reservingQueues) {
		if qu.cfg.Policy == FairShare {
			continue // (under fair share, Queues.overtaken says it)
		}
		cs := append(q.passScratch[:0], qu.reservers...)
		slices.SortFunc(cs, lastFirst)
		for _, c := range cs {
			if len(c.reserved) > 0 && q.passedOver(c) {
				q.dropClaim(c)
				c.noClaimIn = q.decision
			}
		}
		clear(cs)
		q.passScratch = cs[:0]
	}
}

// dropOutrankedInPass gives up, during a pass, the claims of
// dropPassedClaims' handed claimants that the fair order as it stands
// outranks, as dropPassedClaims gives them up before the pass (in the
// same order, lastFirst): grants of the decision took free slots a job
// of a queue before theirs counted on, or moved that queue before
// theirs. It reports whether it gave up any: the pass ends, and the next
// one serves the slots in the fair order (the queues before theirs were
// visited already in this one). Each claim given up is given up for the
// rest of the decision, so the passes still end. visit calls it before
// a handed claimant is served, only when slots changed hands since the
// fair order was last looked at for them: O(handed claimants x queues)
// then, nothing otherwise.
func (q *Queues) dropOutrankedInPass() bool {
	q.handedUses = q.uses
	q.rankQueues()
	slices.SortFunc(q.handed, lastFirst)
	dropped := false
	for _, c := range q.handed {
		if len(c.reserved) > 0 && c.noClaimIn != q.decision && !q.preempting(c) && q.outranked(c) {
			q.dropClaim(c)
			c.noClaimIn = q.decision
			dropped = true
		}
	}
	return dropped
}

// dropOutrankedLeft is dropOutrankedInPass once the passes end, for
// the handed claimants still waiting with reserved slots: grants made
// after a claimant's visit may have moved a queue before its own (the
// branches they are in hold more). It reports whether it gave up a
// claim: the passes go on.
func (q *Queues) dropOutrankedLeft() bool {
	return len(q.handed) > 0 && q.uses != q.handedUses && q.dropOutrankedInPass()
}

// lastFirst orders claimants the one whose queue comes last in the fair
// order first (rankQueues), and within a queue the job last in its order
// first.
func lastFirst(a, b *job) int {
	if c := cmp.Compare(b.queue.rank, a.queue.rank); c != 0 {
		return c
	}
	return b.key.compare(a.key)
}

// passedOver reports whether a job ahead of claimant c in its queue's
// order (fifo, priority, stateaware), not held back by its queue's
// policy, would be served more of its asks now with c's reserved slots
// than without them (servedMore), while c's claim has no preemption in
// it. O(jobs ahead of c that its queue may grant).
func (q *Queues) passedOver(c *job) bool {
	if !c.inTree || q.preempting(c) {
		return false
	}
	qu := c.queue
	for j := range q.startable(qu) {
		if j.key.compare(c.key) >= 0 {
			break
		}
		if q.holdOf(j) == notHeld && q.servedMore(j, c) {
			return true
		}
	}
	return false
}

// outranked reports whether the slots reserved for claimant c, one just
// come back for its claim, would serve more asks of a job of another
// queue that comes first in the fair order without that slot: a slot a
// job releases goes back to the admission, and across queues the fair
// order decides who gets it (a queue below its guarantee, which may
// claim across queues, comes first as long as it is). It looks at the
// first queue in that order that its maxSlots, and its parents', leave
// room for a slot, with a job its policy may grant. O(queues)
// at most, O(1) on a busy cluster.
func (q *Queues) outranked(c *job) bool {
	if len(q.qorder) < 2 {
		return false
	}
	q.rankQueues()
	cq := c.queue
	for r := 0; r < len(q.byRank) && r < int(cq.rank); r++ {
		jq := q.byRank[r]
		if jq == nil || jq.order.Len() == 0 || q.room(jq) == 0 || !comesFirstWithout(jq, cq, 1) {
			continue // (a queue at its maxSlots, or under one, takes no slot)
		}
		for j := range q.startable(jq) {
			if q.holdOf(j) == notHeld {
				return q.servedMore(j, c)
			}
		}
	}
	return false
}

// comesFirstWithout reports whether queue jq comes before queue cq in
// the fair order of the queue they share (their branches under it
// compared), cq's branch holding k slots fewer.
func comesFirstWithout(jq, cq *queue, k int) bool {
	top := sharedParent(jq.node, cq.node)
	a, b := jq.node, cq.node
	for a.parent != top {
		a = a.parent
	}
	for b.parent != top {
		b = b.parent
	}
	x, y := fairKeyOf(a), fairKeyOf(b)
	y.used -= k
	return x.compare(y) < 0
}

// preempting reports whether a preemption brought or brings slots to c's
// claim.
func (q *Queues) preempting(c *job) bool {
	for _, idx := range c.reserved {
		if q.slots[idx].fromPreempt {
			return true
		}
	}
	for _, idx := range c.incoming {
		if q.slots[idx].preempt {
			return true
		}
	}
	return false
}

// servedMore reports whether j would be served more of its asks now (in
// the order serve grants them, each whole) with c's reserved slots than
// with only its own reserved slots and placeholders and the free slots
// it may take. Of c's slots it counts as many as j's queues' maxima
// leave room for (all of them within c's own queue, whose room they
// take already).
func (q *Queues) servedMore(j, c *job) bool {
	want := j.headNeed()
	if want == nil {
		return false
	}
	mask := q.driverMask(j)
	q.helpCounts = resize(q.helpCounts, len(q.profiles))
	have := q.helpCounts
	for _, list := range [][]int32{j.reserved, j.placeholders} {
		for _, idx := range list {
			have[q.slots[idx].profile]++
		}
	}
	maskOut(have, mask)
	before := sumInts(have)
	q.freeToward(j.queue, want, have, have, mask)
	n0 := q.asksServed(j, have)
	room := len(c.reserved)
	if j.queue != c.queue {
		room = min(room, q.room(j.queue)-(sumInts(have)-before))
	}
	added := 0
	for _, idx := range c.reserved {
		if p := q.slots[idx].profile; added < room && (mask == nil || mask[p]) {
			have[p]++
			added++
		}
	}
	return added > 0 && q.asksServed(j, have) > n0
}

// asksServed counts j's asks that the slots counted in have (per
// profile) serve whole, one after another in the order serve grants
// them (its gang's reservation, or its driver, first when it waits for
// them).
func (q *Queues) asksServed(j *job, have []int) int {
	total := sumInts(have)
	cum := q.helpLack[:0]
	defer func() { q.helpLack = cum[:0] }()
	served := func(left []resource.Count) bool {
		cum = append(cum, left...)
		n := sumCounts(cum)
		return n <= total && q.matched(cum, have) >= n
	}
	switch {
	case j.gangWaits():
		return b2i(served(j.gangNeed()))
	case j.driver && !j.hasSlot:
		return b2i(served(j.headNeed()))
	}
	n := 0
	for a := j.asks.inOrder(nil); a != nil && served(a.left); a = j.asks.inOrder(a) {
		n++
	}
	return n
}
