package admission

import "slices"

// Claims across queues obey guarantees as reclaims by preemption do
// (preempt_tenants.go): a claim takes from a job of another queue only
// slots that the victim's queue, and each parent of it below the parent
// the two queues share, holds above its guarantee, not counting the
// slots it is giving up already (giveBudget). A queue at or below its
// guarantee is never claimed from, whatever the priorities or the fair
// order — with one exception, the deadlock claims exist for.
//
// A job that waits for its head ask holds idle slots for it. Two such
// jobs of two queues, each at its guarantee and each waiting for slots
// the other holds idle, would wait for each other forever. A guarantee
// protects the slots a queue can use within the guarantees: a job
// whose head ask, with what it holds idle for it and its driver, is more
// than its queue can ever hold while every other queue holds its
// guarantee and the drivers it runs (assuredSlots) borrows other queues'
// guarantees to run it, and holds its idle slots on that loan. Those idle
// slots (never a slot that runs a task) a claim may take even from a
// queue at or below its guarantee; the queue, below its guarantee then,
// comes first in the fair order and is served the next slots that come
// back.
//
// When guarantees keep a claim from completing (claimGuarded), its job
// waits for slots to come back, and the next waiting job of the pass may
// claim: from the jobs behind it, and also the idle slots of jobs of
// other queues ahead of it, within the same limits (aheadIdle). A job
// ahead whose claim stops at a guarantee would otherwise keep idle, for
// an ask that cannot complete, slots a job behind it needs to progress
// at all.

// borrows reports whether v waits for its pool's head ask and that ask,
// with the slots v holds idle for it (what its pool said it holds for
// it, Ask.Holding) and its driver, is more than v's queue can ever hold
// while every other queue holds its guarantee: its idle slots are not
// protected by its queue's guarantee (see above).
func (q *Queues) borrows(v *job) bool {
	n, idle, ok := q.headHold(v)
	return ok && idle > 0 && n > q.assuredSlots(v.queue.node)
}

// headHold returns what v's head ask needs in all: what it still lacks,
// the slots v holds idle for it (what its pool said it holds for it,
// Ask.Holding), and its driver; and those idle slots apart. ok is false
// when v waits for no ask of its pool (none, its gang or its driver
// first).
func (q *Queues) headHold(v *job) (n, idle int, ok bool) {
	a := v.asks.head
	if a == nil || v.gangWaits() || (v.driver && !v.hasSlot) {
		return 0, 0, false
	}
	for _, idx := range a.holding {
		if s := &q.slots[idx]; s.state == slotGranted && s.owner == v.id && s.idle {
			idle++
		}
	}
	n = sumCounts(a.left) + idle
	if v.hasSlot {
		n++
	}
	return n, idle, true
}

// assuredSlots is how many slots the queue of node x can hold while
// every other queue holds its guarantee and the drivers it runs (a
// driver is never asked back): from root down to x, what the parent can
// hold less what its siblings keep so (their kept, tenantcounts.go),
// within the queue's maximum (the cluster's slots at root). O(depth).
func (q *Queues) assuredSlots(x *qnode) int {
	if x.parent == nil {
		return sumCounts(q.capacity) // (the cluster's slots, those added included)
	}
	n := q.assuredSlots(x.parent) - (x.parent.keptKids - x.kept)
	if x.max > 0 {
		n = min(n, x.max)
	}
	return n
}

// borrowMemo remembers, for the jobs asked, whether they borrow (borrows):
// asked once per job in one look at many slots.
type borrowMemo map[JobID]bool

// borrows is q.borrows(v), asked once per job.
func (m *borrowMemo) borrows(q *Queues, v *job) bool {
	b, ok := (*m)[v.id]
	if !ok {
		if *m == nil {
			*m = borrowMemo{}
		}
		b = q.borrows(v)
		(*m)[v.id] = b
	}
	return b
}

// borrowedPicks returns, of the slots a claim of c picked, the idle
// slots of jobs of other queues that borrow (see borrows): those it may
// take across guarantees. Called before the claim asks them back; nil
// if there are none.
func (q *Queues) borrowedPicks(c *job, picks []int32) map[int32]bool {
	var out map[int32]bool
	var seen borrowMemo
	for _, idx := range picks {
		s := &q.slots[idx]
		v := q.jobs[s.owner]
		if v.queue == c.queue || !s.idle {
			continue
		}
		if seen.borrows(q, v) {
			if out == nil {
				out = map[int32]bool{}
			}
			out[idx] = true
		}
	}
	return out
}

// checkClaimGuarantees checks, once a claim of c asked picks back, that
// no victim of another queue was taken below its guarantee (see
// checkGiveGuarantee), but by the idle slots of jobs that borrow
// (exempt, see borrowedPicks): those are not counted, and the other
// picks are checked without them. A violation is kept for
// CheckInvariants (a bug of this package). It costs O(picks^2 + depth),
// for claims across queues only.
func (q *Queues) checkClaimGuarantees(c *job, picks []int32, exempt map[int32]bool) {
	var yielding func(*qnode) int
	for i, idx := range picks {
		v := q.jobs[q.slots[idx].owner]
		if v.queue == c.queue || q.broken != nil || slices.ContainsFunc(picks[:i], func(p int32) bool { return q.slots[p].owner == v.id }) {
			continue
		}
		n, checked := 0, false
		for _, p := range picks {
			if q.slots[p].owner == v.id {
				n++
				checked = checked || !exempt[p]
			}
		}
		if !checked {
			continue
		}
		if yielding == nil {
			var less map[*qnode]int // the exempt slots, per queue
			for p := range exempt {
				if less == nil {
					less = map[*qnode]int{}
				}
				for x := q.jobs[q.slots[p].owner].queue.node; x != nil; x = x.parent {
					less[x]++
				}
			}
			yielding = func(n *qnode) int { return n.yielding - less[n] }
		}
		q.broken = q.checkGiveGuarantee("claimed", c, v, n, yielding)
	}
}

// aheadIdle collects, once per claim, the jobs ahead of the claimant
// whose idle slots it may take, in victim order, and reports whether
// there are any: after a claim of the pass that guarantees kept from
// completing (passGuarded), the jobs of queues ahead of the claimant's in
// the fair order that hold idle slots; and the wedged jobs of the pass
// that hold idle slots (passWedged, wedged.go). Their idle slots a claim
// may take although they come before its claimant, within their queues'
// guarantees or from a job that borrows (pickFrom): a job ahead that
// waits, whose claim the guarantees or the drivers stop, holds them for
// an ask that cannot complete, and the jobs behind it would wait for it
// forever. A slot taken so runs a task of its claimant when granted: it
// comes back to the job ahead only when the task ends.
func (pk *picker) aheadIdle() bool {
	if pk.aheadDone {
		return len(pk.ahead) > 0
	}
	pk.aheadDone = true
	q, c := pk.q, pk.c
	if q.claimScratch.passGuarded {
		q.rankQueues()
		for _, qu := range q.qorder {
			if qu.rank >= c.queue.rank || qu.holders.Len() == 0 {
				continue
			}
			for h := qu.holders.First(); h != nil; h = h.Next() {
				if v := h.Item(); q.holdsIdle(v) {
					pk.ahead = append(pk.ahead, v)
				}
			}
		}
	}
	ck := keyOf(c)
	for _, v := range q.claimScratch.passWedged {
		if v != c && !isBehind(c, ck, v) && q.holdsIdle(v) && !slices.Contains(pk.ahead, v) {
			pk.ahead = append(pk.ahead, v)
		}
	}
	slices.SortFunc(pk.ahead, victimOrder)
	return len(pk.ahead) > 0
}

// pickAheadIdle picks idle slots of the jobs aheadIdle found.
func (pk *picker) pickAheadIdle() {
	if !pk.aheadIdle() {
		return
	}
	for _, v := range pk.ahead {
		if pk.pickFrom(v, true); pk.m >= pk.need {
			return
		}
	}
}
