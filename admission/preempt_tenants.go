package admission

import (
	"fmt"
	"slices"
)

// Reclaim across queues, by guarantees (YuniKorn's inter-queue
// preemption, in slots): a waiting job of a preempting queue (a reclaim
// timeout) whose queue holds less than its guaranteedSlots also takes
// slots from jobs of other queues, as preemptFor takes them within its
// queue, and under the same rules (lower priority only, the lowest first,
// never a driver, never below a gang, whole waiting asks, withdrawn when
// the reason is gone), with two more:
//
//   - it takes at most what brings its queue up to its guarantee
//     (counting the slots coming to it already);
//   - a victim's queue gives up only slots it holds above its guarantee,
//     and so does each parent of it below the parent the two queues
//     share (in the hierarchy, slots moving between two children of one
//     parent do not change what the parent holds): a queue at or below
//     its guarantee is never reclaimed from, whatever the priorities.
//
// What a victim's queue holds above its guarantee is counted without
// the slots it is giving up already to jobs outside it (being
// reclaimed, by a claim or a preemption, for a job of another queue, or
// passed over for nobody): giveBudget. A slot one of its jobs is giving
// up to another job of the queue (or of its subtree) stays in it, and
// leaves it holding what it held: counted as given up, it would make a
// queue above its guarantee look at it, and turn a reclaim from its
// lower-priority jobs to the higher-priority jobs of other queues.
// Claims across queues count every slot given up (claim_guarantees.go),
// the stricter bound, which takes nothing from a job. A preemption waiting on its timeout keeps
// checking it: once the victim's queue, or such a parent, would fall below
// its guarantee by it (its other jobs ended), it is withdrawn
// (withdrawBelowVictimGuarantee, preempt.go), and nothing is cancelled. A slot a claim asks back for the claimant itself may be
// taken by force instead only while its queue holds at least its
// guarantee without it (upgradeOK).

// crossBudget bounds the slots one preemption takes from other queues
// than its claimant's.
type crossBudget struct {
	// gap is how many more slots the claimant's queue may take: up to its
	// guarantee.
	gap int
	giveBudget
}

// giveBudget bounds the slots queues may give up to jobs of other queues,
// by a claim or a preemption: a queue, and each parent of it below the
// parent it shares with the claimant's queue, gives up only slots it holds
// above its guarantee, not counting those it is giving up already.
// A queue may give up what it holds above its guarantee less what its
// subtree gives up already (qnode.yielding) and what it gave up under the
// budget (given); the state does not change while a budget is in use.
type giveBudget struct {
	// given counts per queue of the hierarchy (by qnode.idx) the slots
	// it gave up under the budget.
	given []int
	// leaving, if set, counts per queue the slots its subtree gives up
	// to jobs outside it (leavingSlots), in place of every slot it gives
	// up (qnode.yielding): a preemption's budget (newCrossBudget).
	leaving []int
	// lent, if set, counts per queue the idle slots its subtree's jobs
	// hold on loan (borrowedIdle): not counted as held above its
	// guarantee (a preemption's budget).
	lent []int
}

// guaranteeGap is how many slots c's queue lacks to hold its guarantee,
// counting those a preemption takes for c already, and those
// preemptions take from other queues for the other jobs of c's queue (0
// if it holds it, or has none, or does not preempt): jobs of a queue
// that preempt together take back no more than its guarantee.
func (q *Queues) guaranteeGap(c *job) int {
	return q.guaranteeGapWithout(c, nil)
}

// guaranteeGapWithout is guaranteeGap not counting the preemptions of
// the slots in skip.
func (q *Queues) guaranteeGapWithout(c *job, skip []int32) int {
	n := c.queue.node
	if !c.queue.cfg.Preempt || n.guaranteed <= n.used {
		return 0
	}
	pre := 0
	for _, idx := range c.incoming {
		if q.slots[idx].preempt && !slices.Contains(skip, idx) {
			pre++
		}
	}
	for _, x := range c.queue.claims() {
		if x == c {
			continue
		}
		for _, idx := range x.incoming {
			if s := &q.slots[idx]; s.preempt && s.owner != noJob && q.jobs[s.owner].queue != c.queue {
				pre++
			}
		}
	}
	return max(n.guaranteed-n.used-pre, 0)
}

// newCrossBudget returns the budget of a preemption for c, or nil if c's
// queue holds its guarantee: what the queues give up counted as
// leavingSlots counts it, O(slots) while a slot is being given up.
func (q *Queues) newCrossBudget(c *job) *crossBudget {
	gap := q.guaranteeGap(c)
	if gap == 0 {
		return nil
	}
	gb := q.newGiveBudget()
	if q.root != nil && q.root.yielding > 0 {
		// (none given up: none leaves, and qnode.yielding says so)
		gb.leaving = q.leavingSlots()
	}
	gb.lent = q.borrowedIdle()
	return &crossBudget{gap: gap, giveBudget: gb}
}

// borrowedIdle counts per queue the idle slots that the jobs of its
// subtree hold on loan (borrows, claim_guarantees.go) and are not giving
// up already; nil if there are none. A claim may take those from a queue
// at or below its guarantee, so a preemption does not count them as held
// above it: counted, they would let it take a slot that runs a task, and
// a claim taking them then (as it may) would leave the queue below its
// guarantee by the preemption, which is withdrawn, the slots going back
// and forth without end. O(slots x depth).
func (q *Queues) borrowedIdle() []int {
	var out []int
	var seen borrowMemo
	for i := range q.slots {
		s := &q.slots[i]
		if !s.idle || s.state != slotGranted || s.owner == noJob {
			continue
		}
		v := q.jobs[s.owner]
		if !seen.borrows(q, v) {
			continue
		}
		if out == nil {
			out = make([]int, len(q.nodeList))
		}
		for n := v.queue.node; n != nil; n = n.parent {
			out[n.idx]++
		}
	}
	return out
}

// newGiveBudget returns a giveBudget as the queues stand: O(queues).
func (q *Queues) newGiveBudget() giveBudget {
	return giveBudget{given: make([]int, len(q.nodeList))}
}

// reset forgets what the queues gave up under the budget.
func (gb *giveBudget) reset() { clear(gb.given) }

// sharedParent returns the queue that a and b, or their parents, both
// are: the closest (nil if none).
func sharedParent(a, b *qnode) *qnode {
	for a != nil && b != nil && a.depth > b.depth {
		a = a.parent
	}
	for a != nil && b != nil && b.depth > a.depth {
		b = b.parent
	}
	for a != b && a != nil && b != nil {
		a, b = a.parent, b.parent
	}
	if a != b {
		return nil
	}
	return a
}

// below returns the queues from vq up to, not including, the queue vq
// and cq share.
func below(vq, cq *queue) []*qnode {
	var out []*qnode
	for n, top := vq.node, sharedParent(vq.node, cq.node); n != top; n = n.parent {
		out = append(out, n)
	}
	return out
}

// remOf is how many slots n may still give up.
func (gb *giveBudget) remOf(n *qnode) int {
	out := n.yielding
	if gb.leaving != nil {
		out = gb.leaving[n.idx]
	}
	if gb.lent != nil {
		out += gb.lent[n.idx]
	}
	return n.used - out - n.guaranteed - gb.given[n.idx]
}

// above is how many slots vq may still give up to a job of cq: the
// fewest that vq, or a parent of it below the one they share, holds above
// its guarantee.
func (gb *giveBudget) above(vq, cq *queue) int {
	r := unlimited
	for n, top := vq.node, sharedParent(vq.node, cq.node); n != top; n = n.parent {
		r = min(r, gb.remOf(n))
	}
	return max(r, 0)
}

// holds reports whether vq, and each parent of it below the one it shares
// with cq, holds at least its guarantee without the slots it gives up.
func (gb *giveBudget) holds(vq, cq *queue) bool {
	for n, top := vq.node, sharedParent(vq.node, cq.node); n != top; n = n.parent {
		if gb.remOf(n) < 0 {
			return false
		}
	}
	return true
}

// give counts k slots given up by vq to a job of cq.
func (gb *giveBudget) give(vq, cq *queue, k int) {
	for n, top := vq.node, sharedParent(vq.node, cq.node); n != top; n = n.parent {
		gb.given[n.idx] += k
	}
}

// room is how many slots vq may still give up to a job of cq.
func (cb *crossBudget) room(vq, cq *queue) int {
	return min(cb.gap, cb.above(vq, cq))
}

// upgradeOK reports whether a slot of vq that a claim asks back for a
// job of cq may be preempted instead: cq's queue lacks slots to its
// guarantee, and vq's queues (below the one they share) hold at least
// their guarantees without the slots they are giving up.
func (cb *crossBudget) upgradeOK(vq, cq *queue) bool {
	return cb.gap > 0 && cb.holds(vq, cq)
}

// staysIn reports whether slot idx, given up by its job, stays in queue
// n: it goes to a job of n or of a child of n.
func (q *Queues) staysIn(idx int32, n *qnode) bool {
	s := &q.slots[idx]
	if s.claimant == noJob {
		return false
	}
	for x := q.jobs[s.claimant].queue.node; x != nil; x = x.parent {
		if x == n {
			return true
		}
	}
	return false
}

// takesAway reports whether slot idx of vq, given up already to a claim
// of another job, may go to a job of cq instead: cq's queue lacks slots
// to its guarantee, and each queue from vq up to the one vq and cq share
// holds at least its guarantee without the slots it gives up to jobs
// outside it, this one too if it stays in it now. O(depth^2).
func (cb *crossBudget) takesAway(q *Queues, idx int32, vq, cq *queue) bool {
	if cb.gap <= 0 {
		return false
	}
	for _, n := range below(vq, cq) {
		if r := cb.remOf(n); r < 0 || (r == 0 && q.staysIn(idx, n)) {
			return false
		}
	}
	return true
}

// takeAway counts slot idx of vq, given up already to a claim of
// another job, taken for a job of cq (takesAway): given up by the queues
// it stayed in.
func (cb *crossBudget) takeAway(q *Queues, idx int32, vq, cq *queue) {
	for _, n := range below(vq, cq) {
		if q.staysIn(idx, n) {
			cb.given[n.idx]++
		}
	}
}

// take counts k slots taken from vq for a job of cq.
func (cb *crossBudget) take(vq, cq *queue, k int) {
	cb.gap -= k
	cb.give(vq, cq, k)
}

// crossVictims appends to out the jobs of other queues than c's that c
// may preempt by its queue's guarantee: lower priority than c, holding
// slots, in a queue that holds more than its guarantee (as room counts);
// none that out holds already (a job whose slot a claim asks back for c
// is one): listed twice, a victim would have its slots picked twice, and
// its share of the preemption counted twice.
func (q *Queues) crossVictims(c *job, out []*job) []*job {
	cb := q.newCrossBudget(c)
	if cb == nil {
		return out
	}
	for _, qu := range q.qorder {
		if qu == c.queue || qu.holders.Len() == 0 || cb.room(qu, c.queue) == 0 {
			continue
		}
		for h := qu.holders.First(); h != nil; h = h.Next() {
			if v := h.Item(); v.spec.Priority < c.spec.Priority && len(v.held) > 0 && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// reclaimReason says why c takes v's slots, and when they are cancelled.
func reclaimReason(c, v *job, timeout int64) string {
	when := "tasks cancelled at once"
	if timeout > 0 {
		when = fmt.Sprintf("tasks cancelled after %d ms unless they end", timeout)
	}
	if v.queue != c.queue {
		n := c.queue.node
		return fmt.Sprintf("queue %s holds %d of its %d guaranteed slots, priority %d over %d: %s",
			n.name, n.used, n.guaranteed, c.spec.Priority, v.spec.Priority, when)
	}
	return fmt.Sprintf("priority %d over %d: %s", c.spec.Priority, v.spec.Priority, when)
}

// crossPreempted counts, per queue (by qnode.idx), the slots
// preemptions take from jobs of other queues for its jobs.
func (q *Queues) crossPreempted() []int {
	out := make([]int, len(q.nodeList))
	for _, qu := range q.qorder {
		for _, x := range qu.claims() {
			for _, idx := range x.incoming {
				if s := &q.slots[idx]; s.preempt && s.owner != noJob && q.jobs[s.owner].queue != qu {
					out[qu.node.idx]++
				}
			}
		}
	}
	return out
}

// checkGuaranteeReclaims checks, after preemptAll, that a queue whose
// jobs it gave preemptions across queues holds, with every slot such
// preemptions take for its jobs, no more than its guarantee: jobs of a
// queue that preempt together take back no more than it (guaranteeGap).
// A queue may hold more later, by grants of free slots, while its
// preemptions wait on their timeout; a new one is never made then.
// before is crossPreempted before preemptAll. A violation is kept for
// CheckInvariants (a bug of this package).
func (q *Queues) checkGuaranteeReclaims(before []int) {
	after := q.crossPreempted()
	for _, qu := range q.qorder {
		n := qu.node
		if a := after[n.idx]; a > before[n.idx] && n.used+a > n.guaranteed && q.broken == nil {
			q.broken = fmt.Errorf("admission: queue %s (guaranteed %d, holding %d) was given preemptions across queues: %d slots coming, %d of them new",
				qu.cfg.Name, n.guaranteed, n.used, a, a-before[n.idx])
		}
	}
}
