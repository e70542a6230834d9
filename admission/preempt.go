package admission

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// Preemption: in a queue with Preempt (a reclaim timeout), a job that
// waits takes slots from lower-priority jobs of the same queue. Unlike a
// claim (claim.go), which only keeps slots that come back anyway from
// going elsewhere, it cancels tasks: the victims' slots are revoked at
// once (a timeout of 0) or once the timeout passed if their tasks have
// not ended by then. The rules:
//
//   - It serves everything the claimant waits for at that moment: its
//     driver, then each of its waiting asks whole, in its order (as many
//     of them as the victims can complete), and takes no more.
//   - Victims come from the claimant's queue only, and have a lower
//     priority than the claimant: the lowest priority first, the most
//     recently submitted first among equals, whatever the queue's policy;
//     before any, the free slots claims keep for lower-priority jobs of
//     the queue (preempt_claims.go), which cancels nothing.
//     Drivers are never taken, nor slots that would break a gang below its
//     minimum, nor slots another preemption takes already (but see
//     below), nor slots a claim of its queue asks back for another job
//     (they leave their job already, and keep leaving it if that claim is
//     given up in the same instant: markPassed, unyield). A slot a claim
//     of another queue asks back still runs its job's task: it is that
//     job's to give (last of its slots), and the claim loses it.
//   - A slot a preemption takes, its timeout not passed yet, from a job
//     of the claimant's queue for a job of that queue of lower priority
//     than the claimant, which keeps no free slot reserved, is taken over (last of its job's slots, the
//     lowest-priority claimant's first): it comes to the claimant when it
//     comes back, at the time set when it was taken, and the other
//     claimant loses it (a ReclaimWithdrawn event). Left to it, it would
//     start a task there only to have it cancelled for the claimant. Not
//     under fair share, where priorities weigh shares rather than rank
//     the claimants: there the other claimant keeps it, and the yield
//     rule below says whether the claimant takes it from it later.
//   - Under fair share a job preempts
//     only while it holds less than its share, and a victim yields only as
//     many slots as leave it level with or behind the claimant in the
//     queue's order, the claimant counted with what the preemption serves
//     (yieldableTo): a slot taken is never the next one the policy would
//     hand back, nor one that leaves its job below its share while the
//     claimant ends at or above its own.
//   - It is made only for a job its queue does not hold back, nor held
//     back earlier in the same instant (StateAware, maxRunningJobs: a job
//     of the queue leaving starting as the instant's grants deploy its
//     first region is no reason to cancel those at once), nor, on a
//     StateAware queue, for a job not started while another job of the
//     queue not started has a claim under way (that one starts first:
//     startsAfterAnother), nor for a job not started while as many jobs
//     ahead of it in its queue's order wait to start as its queue's
//     maxRunningJobs (or a parent's) leaves room for (startsAfterOthers),
//     and only if the claimant can then progress:
//     for a driver, only if its first regions can follow (drivers.go),
//     within the room its queues' maxima leave (startFitsRoom), beside
//     the drivers and placeholders, those the claims under way will pin
//     included (startFitsBeside). On a StateAware queue a job not
//     started with a preemption under way starts before the other jobs
//     of the queue not started, of its priority behind it or lower
//     (they are held back: preemptedToStart), so that the slots its
//     preemption frees beyond its own do not start one of them first.
//   - A decision that cancels a task of a job running tasks in other
//     slots too makes no other preemption (cancelcut.go).
//   - A timed preemption is withdrawn when its reason is gone: the
//     claimant ended, stopped waiting, got what it waits for otherwise,
//     may not be granted anything for now (another job of its queue
//     started under StateAware or maxRunningJobs), no longer outranks
//     the victim (a priority change), or, under fair share, holds its
//     share while a job below its share waits (overtaken); across
//     queues, once the claimant's queue holds its guarantee, or the
//     victim's queue (or a parent of it below the one both share) would
//     fall below its guarantee by it (withdrawBelowVictimGuarantee); once the
//     instant's grants are made, a claimant keeps its preemptions only
//     for the run of its waiting asks, whole and in order, that they
//     complete with everything else coming to it (completable), as they
//     were made: none when what it waits for changed and they complete
//     none of it. Nothing is
//     then cancelled; the slot comes back when its task ends, as any
//     other. Free slots make a preemption unneeded only once the
//     instant's grants left them free (the jobs ahead of the claimant
//     take them first), and are then kept for the claimant; a claimant
//     with more preemptions than it needs gives back those of its
//     higher-priority victims first. Preempted slots that came back
//     stay reserved for the claimant for what it waits for, under fair
//     share across the grants of its asks one at a time too
//     (keepPreempted), until a reason above is gone.
//   - Each victim's share of a preemption is reported as a Reclaimed
//     event before the Revoke that cancels its tasks; but a slot taken
//     at once that the same call of Decide granted, its Grant not yet
//     read by the victim's pool, is not revoked: its grant is retracted
//     and the slot goes to the claimant (retract.go).

// preemptAll lets the waiting jobs of every preempting queue take what
// they wait for from lower-priority jobs of their queue: the highest
// priority first, in the queue's order among equals (under fair share
// in the queue's order, by share). A job of lower priority than another
// of its queue never preempts before it in an instant only to have the
// higher one take its preemption over (takesOver). A job a pass held
// back for a preemption it took over passes again (repassUnheld).
func (q *Queues) preemptAll() {
	if !q.anyPreempt {
		return
	}
	defer q.repassUnheld() // (a preemption taken over may free a job held back to start)
	if q.checkReclaims {
		defer q.checkGuaranteeReclaims(q.crossPreempted())
	}
	floor, held := q.lowestHolding()
	for _, qu := range q.fairQueues() {
		if !qu.cfg.Preempt || qu.order.Len() == 0 {
			continue
		}
		for _, c := range q.mayPreempt(qu, floor, held) {
			q.preemptLooks++
			if q.cancelCut {
				// A cancellation's slots come back for the next decision
				// of the instant: the other preemptions wait for it
				// (cancelcut.go).
				return
			}
			if q.preemptFor(c) {
				q.updateOrder(c)
			}
		}
	}
}

// Every job a preemption takes from, or whose claim it gives up, is of
// lower priority than its claimant (victimsOf, lowerClaims): a waiting job
// of no higher priority than every job holding or kept a slot has
// nothing to preempt, and preemptFor would only find it held back, if it
// is. So a decision looks at those jobs only to mark the ones held back
// (mayPreempt): on a queue of 10,000 jobs of one priority, O(slots) per
// decision, not O(waiting jobs x jobs holding slots).

// lowestHolding returns the lowest priority of the jobs that hold a slot
// (granted, a driver's, asked back, a placeholder) or are kept one
// (reserved), and whether there is any: O(slots).
func (q *Queues) lowestHolding() (floor int, held bool) {
	note := func(id JobID) {
		if id == noJob {
			return
		}
		if p := q.jobs[id].spec.Priority; !held || p < floor {
			floor, held = p, true
		}
	}
	for idx := range q.slots {
		switch s := &q.slots[idx]; s.state {
		case slotGranted, slotDriver, slotReclaiming, slotPlaceholder:
			note(s.owner)
		case slotReserved:
			note(s.claimant)
		}
	}
	return floor, held
}

// mayPreempt returns the waiting jobs of preempting queue qu that may
// preempt now, in the order they do: the highest priority first, in the
// queue's order among equals (under fair share in the queue's order);
// only those of higher priority than floor, the lowest of the jobs holding
// or kept a slot (if held: there are some). The others it marks held
// back, as preemptFor would: those its queue holds back now.
func (q *Queues) mayPreempt(qu *queue, floor int, held bool) []*job {
	var out []*job
	starts := qu.starts()
	switch {
	case !held:
	case !starts: // (its jobs not started are held back: its started ones)
		for c := range q.startable(qu) {
			if c.spec.Priority > floor {
				out = append(out, c)
			}
		}
	case qu.cfg.Policy == Priority: // (its order is by priority)
		for n := qu.order.First(); n != nil && n.Item().spec.Priority > floor; n = n.Next() {
			out = append(out, n.Item())
		}
	case qu.maxPriority() > floor:
		for n := qu.order.First(); n != nil; n = n.Next() {
			if c := n.Item(); c.spec.Priority > floor {
				out = append(out, c)
			}
		}
	}
	if qu.cfg.Policy != FairShare && qu.cfg.Policy != Priority {
		slices.SortStableFunc(out, func(a, b *job) int { return cmp.Compare(b.spec.Priority, a.spec.Priority) })
	}
	rest := func(c *job) bool { return !held || c.spec.Priority <= floor }
	markHeld := func(c *job) {
		if rest(c) && !c.state.Terminal() && !c.gangWaits() && q.holdOf(c) != notHeld {
			q.markHeldBack(c)
		}
	}
	switch {
	case !starts:
		q.markQueueHeld(qu) // (every job of it not started is held back)
	case q.preemptsToStart(qu): // (it holds them back one by one)
		for n := qu.order.First(); n != nil; n = n.Next() {
			markHeld(n.Item())
		}
	default: // (only a job in its requeue backoff is held back)
		for _, c := range q.gangJobs {
			if c.queue == qu && c.inTree {
				markHeld(c)
			}
		}
	}
	return out
}

// maxPriority is the highest priority of qu's accepted jobs that have not
// ended (O(their distinct priorities)).
func (qu *queue) maxPriority() int {
	first, top := true, 0
	for p := range qu.prios {
		if first || p > top {
			first, top = false, p
		}
	}
	return top
}

// demandOf lists what c waits for, in the order it is served: its
// driver, then each waiting ask (its head's first).
func (c *job) demandOf() [][]resource.Count {
	var out [][]resource.Count
	if c.driver && !c.hasSlot {
		out = append(out, []resource.Count{{Profile: *c.spec.Driver, N: 1}})
	}
	for a := c.asks.inOrder(nil); a != nil; a = c.asks.inOrder(a) {
		if a.n > 0 {
			out = append(out, a.left)
		}
	}
	return out
}

// flatten adds up the first k entries of a demand.
func flatten(demand [][]resource.Count, k int) []resource.Count {
	var out []resource.Count
	for _, d := range demand[:k] {
		out = append(out, d...)
	}
	return out
}

// victimsOf returns the jobs that c may preempt, in victim order: of
// c's queue, and of other queues by its queue's guarantee
// (preempt_tenants.go); lower priority than c, holding slots (or giving
// c some by a claim, or giving up some c may take over: takesOver); the
// lowest priority first, the most recently submitted first among
// equals.
func (q *Queues) victimsOf(c *job) []*job {
	var out []*job
	for h := c.queue.holders.First(); h != nil; h = h.Next() {
		v := h.Item()
		if v != c && v.spec.Priority < c.spec.Priority && len(v.held) > 0 {
			out = append(out, v)
		}
	}
	for _, idx := range c.incoming {
		if q.upgradeable(c, idx) {
			if v := q.jobs[q.slots[idx].owner]; !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	for _, x := range c.queue.claims() {
		for _, idx := range x.incoming {
			if q.takesOver(c, idx) {
				if v := q.jobs[q.slots[idx].owner]; !slices.Contains(out, v) {
					out = append(out, v)
				}
			}
		}
	}
	for _, qu := range q.qorder {
		for _, x := range qu.claims() {
			for _, idx := range x.incoming {
				if q.claimedAway(c, idx) {
					if v := q.jobs[q.slots[idx].owner]; !slices.Contains(out, v) {
						out = append(out, v)
					}
				}
			}
		}
	}
	out = q.crossVictims(c, out)
	slices.SortFunc(out, victimOrder)
	return out
}

// preemptFor takes for c, from lower-priority jobs of its queue, the
// slots that complete what it waits for beyond the free slots and those
// already coming to it (see the rules above). It reports whether it did
// anything.
func (q *Queues) preemptFor(c *job) bool {
	if c.state.Terminal() || c.gangWaits() {
		return false
	}
	if q.holdOf(c) != notHeld {
		q.markHeldBack(c)
		return false
	}
	if q.startsAfterAnother(c) || c.startsAfterOthers() {
		return false
	}
	if _, held := q.heldBackNow(c); held {
		// Held back earlier in this instant: what released it (a job of
		// its queue leaving starting as its first region deploys) is the
		// instant's decision, not a reason to cancel anything now.
		return false
	}
	if c.queue.cfg.Policy == FairShare && c.granted >= c.entitled {
		return false // it has its share: what others hold is theirs
	}
	demand := c.demandOf()
	if len(demand) == 0 {
		return false
	}
	victims, lower := q.victimsOf(c), q.lowerClaims(c)
	if len(victims) == 0 && len(lower) == 0 {
		return false
	}
	all := flatten(demand, len(demand))
	// A waiting driver counts only the slots that leave its regions room
	// (driverslot.go).
	mask := q.driverMask(c)
	base := q.coming(c, all, true, nil, mask) // what c may count on without preempting
	if q.matched(all, base) >= sumCounts(all) {
		return false // it has what it waits for, or it is on its way
	}
	// The lower-priority claims' reserved slots first (preempt_claims.go).
	have := slices.Clone(base)
	for _, x := range lower {
		q.addReserved(have, x, mask, 1)
	}
	if c.driver && !c.hasSlot && !q.driverStartFollows(c, victims, all, have, mask) {
		return false
	}
	// The most the victims could give, then the longest run of whole
	// asks that completes, then only the slots that run needs.
	q.pickVictims(c, victims, all, have, mask)
	k := len(demand)
	room := q.room(c.queue) + len(c.reserved) + len(c.placeholders)
	for k > 0 {
		want := flatten(demand, k)
		if sumCounts(want) <= room && q.matched(want, have) >= sumCounts(want) {
			break // (within what its queues' maxima leave room for)
		}
		k--
	}
	if k == 0 {
		return false
	}
	want := flatten(demand, k)
	if q.matched(want, base) >= sumCounts(want) {
		return false // the first asks are served by what comes anyway
	}
	if q.giveUpLowerClaims(c, lower, want, base, mask) {
		// Their slots are free: kept for c, and granted to it in this
		// decision.
		q.repass = true
		if base = q.coming(c, all, true, nil, mask); q.matched(want, base) >= sumCounts(want) {
			q.reserveFree(c, want)
			return true // nothing to cancel
		}
		// The slots those claims asked back are their jobs' again
		// (unyield): those jobs are victims as any other.
		victims = q.victimsOf(c)
	}
	have = slices.Clone(base)
	picks := q.pickVictims(c, victims, want, have, mask)
	if len(picks) == 0 {
		return false
	}
	// Free slots toward it are kept for it: the preempted ones complete
	// them.
	q.reserveFree(c, want)
	q.markPassed(c, victims, picks)
	q.takeFrom(c, picks)
	q.stamp++
	c.reclaimAt, c.reclaimed, c.reclaimStamp, c.driverReclaim = q.now, true, q.stamp, c.driver && !c.hasSlot
	return true
}

// driverStartFollows reports whether a preemption for c's waiting driver
// is worth making: its first regions can follow it (drivers.go), with
// the victims' slots it may take (mask) and those it has or may take
// without preempting (base, toward all); its first regions may have the
// free slots it may not take too (a victim's such slots are not counted
// on: too little, never too much). Nor beyond the room its queues' maxima
// leave: its claim, given up for that in the next pass, would leave the
// slot to its victim, preempted again for it without end.
func (q *Queues) driverStartFollows(c *job, victims []*job, all []resource.Count, base []int, mask []bool) bool {
	start, _ := q.startNeed(c)
	have := slices.Clone(base)
	q.pickVictims(c, victims, start, have, mask)
	if mask != nil {
		forStart := q.coming(c, all, true, nil, nil)
		for p := range have {
			have[p] += forStart[p] - base[p]
		}
	}
	return q.startFollows(c, have) && q.startFitsRoom(c) && q.startFitsBeside(c)
}

// markPassed marks the slots that the victims before the last one the
// picks take from yield to a claim or a preemption for another job than
// c: the preemption passed them over as leaving their jobs, and they
// stay asked back if that claim or preemption is given up within the
// instant (see unyield). So
// are those of the jobs of c's queue before that victim in victim order
// that hold no other slot (no victims then): their every slot leaves
// them already.
func (q *Queues) markPassed(c *job, victims []*job, picks []int32) {
	last := -1
	for i, v := range victims {
		for _, idx := range picks {
			if q.slots[idx].owner == v.id {
				last = i
			}
		}
	}
	passed := func(idx int32) {
		if s := &q.slots[idx]; !s.revoked && s.claimant != c.id && s.claimant != noJob {
			s.passedAt = q.now
		}
	}
	for _, v := range victims[:max(last, 0)] {
		for _, idx := range v.yielding {
			passed(idx)
		}
	}
	if last < 0 {
		return
	}
	lastV := victims[last]
	for _, qu := range q.qorder {
		for _, x := range qu.claims() {
			for _, idx := range x.incoming {
				s := &q.slots[idx]
				if s.state != slotReclaiming || s.owner == noJob {
					continue
				}
				if v := q.jobs[s.owner]; v != c && v.queue == c.queue && len(v.held) == 0 &&
					v.spec.Priority < c.spec.Priority && victimOrder(v, lastV) < 0 {
					passed(idx)
				}
			}
		}
	}
}

// startsAfterAnother reports whether c, not started, may start only
// after another job of its queue that is on its way to start: StateAware
// starts one job at a time, and another job of the queue not started
// either has a claim under way (its gang's, its driver's or its first
// region's slots reserved or coming back). A preemption for c would take
// slots for a start the queue holds back as soon as that job's start
// comes through (its claim completes with the slots the preemption frees
// among others), and cancel tasks for nothing.
func (q *Queues) startsAfterAnother(c *job) bool {
	if c.state != JobAccepted || c.queue.cfg.Policy != StateAware {
		return false
	}
	for _, x := range c.queue.claims() {
		if x != c && x.state == JobAccepted {
			return true
		}
	}
	return false
}

// preemptedToStart reports whether another job of j's StateAware queue,
// not started either and of a higher priority (or of j's, ahead of it
// in the queue's order), has a preemption under way: that job starts
// first. The slots a preemption frees beyond its claimant's (the other
// slots of a region it cancels, or of a grant it retracts) would
// otherwise start j, the queue's next job in its order, and StateAware
// would then hold back the job the tasks were cancelled for. O(claims
// of the queue), on a queue that preempts only.
func (q *Queues) preemptedToStart(j *job) bool {
	if !j.queue.cfg.Preempt {
		return false // (no job of it preempts)
	}
	// (The list as it stands, not claims(): callers walk that one.)
	for _, x := range j.queue.claimants {
		if x != j && x.state == JobAccepted && q.preempting(x) &&
			(x.spec.Priority > j.spec.Priority || (x.spec.Priority == j.spec.Priority && x.key.compare(j.key) < 0)) {
			return true
		}
	}
	return false
}

// repassUnheld sets repass when a job a pass held back for another job
// of its stateaware queue that preempts to start (preemptedToStart) is
// no longer held back: the preemption was taken over by a job already
// started, or withdrawn, later in the same decision. The passes then
// serve it the free slots in this decision, not the next one (a slot is
// never left free beside a job it would serve). A repass follows only a
// change of the preemptions of its queue, which a decision makes finitely
// often.
func (q *Queues) repassUnheld() {
	held := q.heldToStart
	q.heldToStart = held[:0]
	for _, j := range held {
		if j.state == JobAccepted && j.queue.starting == 0 && !q.preemptedToStart(j) {
			q.repass = true
			return
		}
	}
}

// startsAfterOthers reports whether c, not started, may start only
// after other jobs of its queue: its queue's maxRunningJobs, or a
// parent's, leaves room for k more jobs running, and k jobs of its queue
// ahead of it in the queue's order wait to start too. Jobs beyond the
// limit are admitted in the queue's order: those start first as slots
// come back, and a preemption for c would cancel tasks for a start the
// limit then holds back (the slots it frees beyond c's own serve them).
// O(jobs ahead of c), on a queue with a limit only.
func (c *job) startsAfterOthers() bool {
	if c.state != JobAccepted {
		return false
	}
	left := -1
	for n := c.queue.node; n != nil; n = n.parent {
		if n.qu != nil && n.qu.cfg.MaxRunningJobs > 0 {
			if k := n.qu.cfg.MaxRunningJobs - n.running; left < 0 || k < left {
				left = k
			}
		}
	}
	if left < 0 {
		return false // no limit
	}
	for x := c.queue.order.First(); x != nil && left > 0; x = x.Next() {
		j := x.Item()
		if j == c {
			return false
		}
		if j.state == JobAccepted {
			left--
		}
	}
	return left <= 0
}

// markHeldBack records that a decision found c held back by its queue
// now: it does not reclaim in this instant. The first mark of an instant
// stays.
func (q *Queues) markHeldBack(c *job) {
	if c.heldBack && c.heldBackAt.Equal(q.now) {
		return
	}
	q.stamp++
	c.heldBackAt, c.heldBack, c.heldBackStamp = q.now, true, q.stamp
}

// heldBackBefore reports whether c was held back in this instant before
// stamp (heldBackNow).
func (q *Queues) heldBackBefore(c *job, stamp uint64) bool {
	s, held := q.heldBackNow(c)
	return held && s < stamp
}

// heldBackNow reports whether a decision found c held back by its queue
// earlier in this instant, and when first (Queues.stamp): by its own mark
// (markHeldBack), or by its queue's (walk.go: the queue could start no
// job, and c was accepted and not started then).
func (q *Queues) heldBackNow(c *job) (stamp uint64, held bool) {
	if c.heldBack && c.heldBackAt.Equal(q.now) {
		stamp, held = c.heldBackStamp, true
	}
	qu := c.queue
	if qu.heldSet && qu.heldAt.Equal(q.now) && c.acceptStamp != 0 && c.acceptStamp < qu.heldStamp &&
		(c.leftAcceptStamp == 0 || c.leftAcceptStamp > qu.heldStamp) && (!held || qu.heldStamp < stamp) {
		stamp, held = qu.heldStamp, true
	}
	return stamp, held
}

// upgradeable reports whether slot idx, coming to c by a claim (asked
// back from its job, to come when its task ends), may be preempted for c
// instead: its job is a victim of c's (lower priority, of c's queue or,
// while c's queue is below its guarantee, of another; pickVictims checks
// the other queue's room).
func (q *Queues) upgradeable(c *job, idx int32) bool {
	return q.upgradeableBelow(c, idx, q.guaranteeGap(c))
}

// upgradeableBelow is upgradeable with gap as the slots c's queue lacks
// to hold its guarantee.
func (q *Queues) upgradeableBelow(c *job, idx int32, gap int) bool {
	s := &q.slots[idx]
	if s.state != slotReclaiming || s.preempt || s.revoked || s.owner == noJob {
		return false
	}
	v := q.jobs[s.owner]
	return (v.queue == c.queue || gap > 0) && v.spec.Priority < c.spec.Priority
}

// claimedAway reports whether slot idx is asked back by a claim for a
// job of another queue than c's (it comes back when its task ends) from
// a job c may preempt: the slot still runs its job's task, which c may
// cancel like any other of that job's, taking the slot from the claim,
// which is given up (the claimant asks again in the next decision). Only
// from a claim that keeps no free slot reserved: giving it up frees
// nothing a decision would have to hand out again. (A slot a claim of
// c's own queue asks back leaves its job already: the queue's order
// handed it on.)
//
// Never an idle slot: it runs no task to cancel, and reaches the claim
// at once, in the same instant; taken, it would only pass from one claim
// to another. Across queues that need not end within an instant: the
// claim given up is made again for its job's next idle slot (its pool
// holds one for the ask the taken slot left short), by the guarantees
// that claim withdraws the preemption's slots of the victim's queue
// (withdrawBelowVictimGuarantee), the free slots they kept go to the
// job, and the preemption takes the new claim's slot in turn.
func (q *Queues) claimedAway(c *job, idx int32) bool {
	s := &q.slots[idx]
	if s.claimant == c.id || s.claimant == noJob || s.idle {
		return false
	}
	x := q.jobs[s.claimant]
	return x.queue != c.queue && len(x.reserved) == 0 && q.upgradeable(c, idx)
}

// takesOver reports whether c may take over slot idx from the
// preemption that takes it (see the rules above): it is taken, its
// timeout not due yet (one due now fires at this instant, for its own
// claimant: its cancels are inputs of the instant, and what they free
// is decided with the rest), from a job of c's queue of lower priority than
// c, for another job of c's queue of lower priority than c that keeps
// no free slot reserved, not under fair share. (A claimant that keeps
// free slots reserved for the asks its preemptions complete would give
// them up once it lost one of those: free, they would serve c in place
// of the slot it took over, which it would give back, for the claimant
// to preempt it again, without end.)
func (q *Queues) takesOver(c *job, idx int32) bool {
	s := &q.slots[idx]
	if s.state != slotReclaiming || !s.preempt || s.revoked || s.revokeAt.IsZero() || !s.revokeAt.After(q.now) ||
		s.owner == noJob || s.claimant == noJob || s.claimant == c.id || c.queue.cfg.Policy == FairShare {
		return false
	}
	x, v := q.jobs[s.claimant], q.jobs[s.owner]
	return x.queue == c.queue && v.queue == c.queue && x.spec.Priority < c.spec.Priority && v.spec.Priority < c.spec.Priority &&
		len(x.reserved) == 0
}

// takenOverIn counts the slots of picks that c takes over from other
// preemptions (takeFrom, before it takes them), and names their
// claimants, in victim order.
func (q *Queues) takenOverIn(c *job, picks []int32) (names []string, n int) {
	var from []*job
	for _, idx := range picks {
		if s := &q.slots[idx]; s.preempt && s.claimant != c.id && s.claimant != noJob {
			n++
			if x := q.jobs[s.claimant]; !slices.Contains(from, x) {
				from = append(from, x)
			}
		}
	}
	slices.SortFunc(from, victimOrder)
	for _, x := range from {
		names = append(names, x.spec.Name)
	}
	return names, n
}

// takeOvers lists the slots of v that c may take over (takesOver): those
// of the claimant first in victim order first (the lowest priority),
// then the earliest revoked, then by slot. None of a job of another
// queue than c's.
func (q *Queues) takeOvers(c, v *job) []int32 {
	if v.queue != c.queue {
		return nil
	}
	var out []int32
	for _, idx := range v.yielding {
		if q.takesOver(c, idx) {
			out = append(out, idx)
		}
	}
	slices.SortFunc(out, func(a, b int32) int {
		sa, sb := &q.slots[a], &q.slots[b]
		if o := victimOrder(q.jobs[sa.claimant], q.jobs[sb.claimant]); o != 0 {
			return o
		}
		if o := sa.revokeAt.Compare(sb.revokeAt); o != 0 {
			return o
		}
		return cmp.Compare(a, b)
	})
	return out
}

// pickVictims adds to have (counts per profile) the victims' slots that
// raise the matching of want, victims in order, until want is matched:
// of each victim, first its slots already coming to c by a claim, then
// its idle slots, then the others, then those c takes over from another
// preemption (takesOver), then those a claim of another queue asks back
// (claimedAway); none of a profile mask rules out
// (nil: none is; see driverslot.go). It returns the slots picked.
func (q *Queues) pickVictims(c *job, victims []*job, want []resource.Count, have []int, mask []bool) []int32 {
	need := sumCounts(want)
	m := q.matched(want, have)
	var picks []int32
	cb := q.newCrossBudget(c)
	if cb != nil {
		// The free slots it takes toward want count toward its
		// guarantee first.
		n := make([]int, len(q.profiles))
		q.freeToward(c.queue, want, q.coming(c, want, false, nil, nil), n, mask)
		free := sumInts(n)
		if cb.gap -= min(free, need); cb.gap <= 0 {
			cb = nil
		}
	}
	// pickGivenUp picks slot idx of v, one v gives up already, if it
	// serves more of what c waits for.
	pickGivenUp := func(v *job, idx int32) bool {
		if mask != nil && !mask[q.slots[idx].profile] {
			return false
		}
		have[q.slots[idx].profile]++
		if m2 := q.matched(want, have); m2 > m {
			m = m2
			picks = append(picks, idx)
			if v.queue != c.queue {
				cb.gap-- // (given up by its queue already)
			}
			return true
		}
		have[q.slots[idx].profile]--
		return false
	}
	for _, v := range victims {
		for _, idx := range c.incoming {
			if m >= need {
				break
			}
			if s := &q.slots[idx]; s.owner != v.id || !q.upgradeable(c, idx) {
				continue
			}
			if v.queue != c.queue && (cb == nil || !cb.upgradeOK(v.queue, c.queue)) {
				continue
			}
			pickGivenUp(v, idx)
		}
		// Under fair share v gives only what leaves it no further ahead
		// than c once served (yieldableTo), counted from the slots it
		// keeps: not those that leave it already, for c (those picked
		// above: their claim made sure of that) or another job.
		limit := q.yieldableTo(v, c, c.granted+need)
		if v.queue != c.queue {
			if cb == nil {
				continue
			}
			limit = min(limit, cb.room(v.queue, c.queue))
		}
		before := len(picks)
		gangRoom := len(v.held)
		if g := v.spec.Gang; g != nil && v.gangDone && !v.gangExpired {
			gangRoom = v.granted - g.MinSlots
		}
		for pass := 0; pass < 2 && m < need && gangRoom > 0 && limit > 0; pass++ {
			for i := len(v.held) - 1; i >= 0 && m < need && gangRoom > 0 && limit > 0; i-- {
				idx := v.held[i]
				s := &q.slots[idx]
				if s.idle != (pass == 0) || (mask != nil && !mask[s.profile]) {
					continue
				}
				have[s.profile]++
				if m2 := q.matched(want, have); m2 > m {
					m = m2
					picks = append(picks, idx)
					limit--
					gangRoom--
					continue
				}
				have[s.profile]--
			}
		}
		if v.queue != c.queue {
			cb.take(v.queue, c.queue, len(picks)-before)
		}
		// Then its slots a preemption takes for a lower-priority job of
		// c's queue (takesOver): they leave it already.
		for _, idx := range q.takeOvers(c, v) {
			if m >= need {
				break
			}
			pickGivenUp(v, idx)
		}
		// Last, the slots a claim asks back from it for another job: they
		// leave it anyway, but that claim loses them. Across queues only
		// within what v's queues (below the one they share with c's) may
		// give up: a claim of a job of their own subtree keeps its slot in
		// them, and taking it from that claim takes it out of them
		// (takesAway).
		for _, idx := range v.yielding {
			if m >= need {
				break
			}
			if !q.claimedAway(c, idx) || (v.queue != c.queue && (cb == nil || cb.gap == 0 || !cb.takesAway(q, idx, v.queue, c.queue))) {
				continue
			}
			if pickGivenUp(v, idx) && v.queue != c.queue {
				cb.takeAway(q, idx, v.queue, c.queue)
			}
		}
		if m >= need {
			break
		}
	}
	return picks
}

// coming counts per profile the slots c may count on without
// preempting, only those of the profiles mask allows (nil: all): its
// reserved slots, its placeholders and the slots coming to it (not those
// a claim asks back from a job it may preempt, which come only when
// their tasks end, nor those in skip), and, if free is set, the free
// slots it may take toward want (freeToward). Whether c may preempt a
// job of another queue is judged without the preemptions in skip:
// judged with them, the slots they take could close the gap to its
// queue's guarantee, count the claim's slots as coming, find them not
// needed (withdrawStale), withdraw them, and the next decision preempt
// them again, without end.
func (q *Queues) coming(c *job, want []resource.Count, free bool, skip []int32, mask []bool) []int {
	have := make([]int, len(q.profiles))
	gap := q.guaranteeGapWithout(c, skip)
	for _, list := range [][]int32{c.reserved, c.incoming, c.placeholders} {
		for _, idx := range list {
			if !slices.Contains(skip, idx) && !q.upgradeableBelow(c, idx, gap) {
				have[q.slots[idx].profile]++
			}
		}
	}
	maskOut(have, mask)
	if free {
		q.freeToward(c.queue, want, have, have, mask)
	}
	return have
}

// reserveFree keeps for c the free slots (those it may take toward want,
// freeToward) that serve want beyond what it has reserved and coming, so
// that no job served after it in this decision takes them before the
// preempted slots come back.
func (q *Queues) reserveFree(c *job, want []resource.Count) {
	have := q.coming(c, want, false, nil, nil)
	freeCount := make([]int, len(have))
	q.freeToward(c.queue, want, have, freeCount, q.driverMask(c))
	m := q.matched(want, have)
	for p := range freeCount {
		for freeCount[p] > 0 && m < sumCounts(want) {
			have[p]++
			m2 := q.matched(want, have)
			if m2 <= m {
				have[p]--
				break
			}
			m = m2
			freeCount[p]--
			for _, idx := range q.take(int32(p), 1) {
				q.reserveFor(c, idx)
			}
		}
	}
}

// retractableIn returns the grants of this call of Decide that gave v
// slots of picked which a preemption with the reclaim timeout would take
// at once (retract.go), and those slots.
func (q *Queues) retractableIn(v *job, picked []int32, timeout time.Duration) (recs []*grantRecord, retracted []int32) {
	for _, idx := range picked {
		if s := &q.slots[idx]; (s.state == slotGranted || s.state == slotReclaiming && !s.preempt) && (timeout == 0 || s.idle) {
			if r := q.retractable(v, idx); r != nil {
				if !slices.Contains(recs, r) {
					recs = append(recs, r)
				}
				retracted = append(retracted, idx)
			}
		}
	}
	return recs, retracted
}

// takeFrom preempts the picked slots for c: each victim's share is
// reported (Reclaimed), then revoked at once or after the queue's
// reclaim timeout.
func (q *Queues) takeFrom(c *job, picks []int32) {
	byVictim := map[JobID][]int32{}
	var order []JobID
	for _, idx := range picks {
		v := q.slots[idx].owner
		if _, ok := byVictim[v]; !ok {
			order = append(order, v)
		}
		if slices.Contains(byVictim[v], idx) {
			// (a bug of this package: CheckInvariants reports it; the
			// victim's share would be reported larger than it is)
			if q.broken == nil {
				q.broken = fmt.Errorf("admission: job %s reclaimed slot %d of job %s twice in one preemption",
					c.spec.Name, q.slots[idx].slot.ID, q.jobs[v].spec.Name)
			}
			continue
		}
		byVictim[v] = append(byVictim[v], idx)
	}
	timeout := c.queue.cfg.ReclaimTimeout
	var broken, overtaken []*job
	var retracting []*grantRecord // (once every victim's reclaim is checked)
	defer func() {
		for _, r := range retracting {
			q.retract(r)
		}
		for _, other := range broken {
			q.dropClaim(other) // (it keeps no reserved slot: nothing is freed)
			q.updateOrder(other)
		}
		for _, other := range overtaken { // (they keep no free slot reserved: takesOver)
			q.updateOrder(other)
		}
	}()
	for _, vid := range order {
		v := q.jobs[vid]
		v.loseTo(c, q.now)
		// Slots granted to v in this call of Decide, its pool not told
		// yet, come to c by retracting their grants (retract.go); so do
		// those a claim asked back in this call already.
		recs, retracted := q.retractableIn(v, byVictim[vid], timeout)
		if taken := len(byVictim[vid]) - len(retracted); taken > 0 {
			reason := reclaimReason(c, v, timeout.Milliseconds())
			if over, n := q.takenOverIn(c, byVictim[vid]); n == taken {
				reason = fmt.Sprintf("priority %d over %d: taken over from the reclaim for %s, tasks cancelled when it times out unless they end",
					c.spec.Priority, v.spec.Priority, strings.Join(over, ", "))
			} else if n > 0 {
				reason += fmt.Sprintf("; %d taken over from the reclaim for %s, cancelled when it times out", n, strings.Join(over, ", "))
			}
			q.event(Event{At: q.now, Job: c.spec.Name, ID: c.id, Kind: Reclaimed, Victim: v.spec.Name, Count: taken, Reason: reason})
		}
		cancels := false // (a task of v cancelled at once)
		for _, idx := range byVictim[vid] {
			s := &q.slots[idx]
			if s.preempt && s.claimant != c.id {
				// Taken over (takesOver): its revoke stays as set.
				other := q.jobs[s.claimant]
				other.incoming = removeIdx(other.incoming, idx)
				q.unpark(other)
				q.addIncoming(c, idx)
				q.event(Event{At: q.now, Job: other.spec.Name, ID: other.id, Kind: ReclaimWithdrawn, Victim: v.spec.Name, Count: 1,
					Reason: fmt.Sprintf("taken over by %s, priority %d over %d", c.spec.Name, c.spec.Priority, other.spec.Priority)})
				if !slices.Contains(overtaken, other) {
					overtaken = append(overtaken, other)
				}
				s.claimant, s.atShare = c.id, c.granted >= c.entitled
				continue
			}
			switch {
			case s.state == slotGranted:
				q.unhold(v, idx)
				v.addYielding(idx)
				q.addIncoming(c, idx)
			case s.claimant != c.id:
				// Asked back for another job's claim, which loses it: that
				// claim no longer completes and is given up.
				other := q.jobs[s.claimant]
				other.incoming = removeIdx(other.incoming, idx)
				q.unpark(other)
				q.addIncoming(c, idx)
				broken = append(broken, other)
			} // else: coming to c by its claim already, now by force
			s.state, s.claimant, s.preempt, s.atShare = slotReclaiming, c.id, true, c.granted >= c.entitled
			switch {
			case slices.Contains(retracted, idx):
				// (it comes back as its grant is retracted, below)
			case timeout == 0 || s.idle:
				s.revoked = true
				q.markAskedBack(v)
				q.send(v, slotpool.Revoke{Slot: s.slot.ID, Reason: slotpool.ReasonPreempted})
				cancels = cancels || !s.idle
			default:
				s.revokeAt = q.now.Add(timeout)
				q.revokes = append(q.revokes, idx)
				q.markAskedBack(v)
				q.sendReclaim(v, s)
			}
		}
		if cancels {
			q.noteCancel(v, c) // (cancelcut.go)
		}
		q.updateHolder(v)
		if err := q.checkReclaimGuarantee(c, v, len(byVictim[vid])); err != nil && q.broken == nil {
			q.broken = err // (a bug of this package: CheckInvariants reports it)
		}
		retracting = append(retracting, recs...)
		if q.debug {
			q.log.Debug("slots preempted", zap.String("for", c.spec.Name), zap.String("from", v.spec.Name), zap.Int("slots", len(byVictim[vid])), zap.Int("grants retracted", len(recs)))
		}
	}
}

// keepPreempted gives up the claim of j, a job of a fair-share queue
// that serve granted one ask, but for the slots that came back from its
// preemptions and serve what it still waits for: they stay reserved for
// it, as they would have kept coming to it had their tasks not ended
// yet, while it does not hold its share with a job below its share
// waiting (overtaken). Under fair share serve grants one ask at a time
// and the next pass sorts the jobs again: given up, the slots would go
// to the first job in the new order, which may be a victim of the
// preemption, its region restarted, ending above its share with slots
// taken from it for a job that stays below its own, and preempted again
// for it.
func (q *Queues) keepPreempted(j *job) {
	if !slices.ContainsFunc(j.reserved, func(idx int32) bool { return q.slots[idx].fromPreempt }) || !j.waiting() || q.overtaken(j) {
		q.dropClaim(j)
		return
	}
	demand := j.demandOf()
	all := flatten(demand, len(demand))
	have, m := q.countScratch(), 0
	q.dropClaimKeeping(j, func(idx int32) bool {
		s := &q.slots[idx]
		if !s.fromPreempt {
			return false
		}
		have[s.profile]++
		if m2 := q.matched(all, have); m2 > m {
			m = m2
			return true
		}
		have[s.profile]--
		return false
	})
}

// withdrawStale withdraws the timed preemptions whose reason is gone (see
// the rules above): their slots stay with their jobs until their tasks
// end, and nothing is cancelled for them.
//
// Whether a claimant got what it waits for otherwise counts the free
// slots only once the instant's grants are made (free set: after the
// passes of a decision, and as the reclaim timeouts fire): before them,
// the free slots go by the queue's order, to the jobs ahead of the
// claimant first, and a preemption withdrawn for them would leave its
// claimant short once they took them (it would preempt again, from a
// job later in victim order, or without end). The free slots that make
// a preemption unneeded are then kept for the claimant, as preemptFor
// keeps them.
func (q *Queues) withdrawStale(free bool) {
	if len(q.revokes) == 0 {
		return // no timed preemption pending (decideNow calls it twice)
	}
	byClaimant := map[JobID][]int32{}
	var order []JobID
	var bereft []*job // claimants that lost a preemption in the loop
	if free {
		bereft = q.withdrawBelowVictimGuarantee(bereft)
	}
	for _, idx := range q.revokes {
		s := &q.slots[idx]
		if s.state != slotReclaiming || s.revokeAt.IsZero() || !s.preempt || s.claimant == noJob {
			continue
		}
		c, v := q.jobs[s.claimant], q.jobs[s.owner]
		if why := q.staleReason(c, v); why != "" {
			q.withdraw(idx, why)
			bereft = append(bereft, c)
			continue
		}
		if _, ok := byClaimant[c.id]; !ok {
			order = append(order, c.id)
		}
		if !slices.Contains(byClaimant[c.id], idx) { // (revokes may list a slot twice)
			byClaimant[c.id] = append(byClaimant[c.id], idx)
		}
	}
	q.dropBereftClaims(bereft, byClaimant)
	// A claimant keeps only the pending preemptions that what it waits for
	// still needs beyond everything else coming to it, those of its
	// victims in victim order: it gives back the slots of the
	// higher-priority victims first.
	for _, cid := range order {
		c, pending := q.jobs[cid], byClaimant[cid]
		slices.SortStableFunc(pending, func(a, b int32) int {
			return victimOrder(q.jobs[q.slots[a].owner], q.jobs[q.slots[b].owner])
		})
		demand := c.demandOf()
		all, why := flatten(demand, len(demand)), "the claimant has what it waits for"
		if free {
			// Only for whole asks, as preemptFor makes them: once what c
			// waits for changed (an ask served otherwise, the next one
			// larger), a preemption that completes none of it would
			// cancel a task for a slot that comes back to nobody.
			all = q.completable(c, demand)
			if len(all) == 0 {
				why = "its reclaims complete none of what the claimant waits for now"
			}
		}
		// As preemptFor counts: a slot a claim asks back from a victim of
		// c's comes only when its task ends, whenever that is, so it does
		// not make a preemption unneeded (preemptFor would make it again).
		have := q.coming(c, all, free, pending, q.driverMask(c))
		m, need := q.matched(all, have), sumCounts(all)
		withdrawn := false
		for _, idx := range pending {
			p := q.slots[idx].profile
			have[p]++
			if m2 := q.matched(all, have); m < need && m2 > m {
				m = m2
				continue
			}
			have[p]--
			q.withdraw(idx, why)
			withdrawn = true
		}
		if free && (withdrawn || slices.Contains(bereft, c)) {
			// (bereft: withdrawBelowVictimGuarantee took one of its
			// preemptions, and the free slots may complete it now.)
			q.reserveFree(c, all)
		}
	}
	if free {
		q.withdrawBeyondGuarantee(order)
	}
}

// withdrawBeyondGuarantee withdraws, for the claimants of order, the
// timed preemptions across queues that their queue no longer needs once
// the free slots withdrawStale kept for them count toward it: it holds
// its guarantee with them (the rule withdrawStale applies first). A
// claim those slots and what still comes no longer complete is given up
// (dropBereftClaims).
func (q *Queues) withdrawBeyondGuarantee(order []JobID) {
	var bereft []*job
	for _, cid := range order {
		c := q.jobs[cid]
		if c.queue.node.used < c.queue.node.guaranteed {
			continue
		}
		for _, idx := range slices.Clone(c.incoming) {
			s := &q.slots[idx]
			if s.state == slotReclaiming && s.preempt && !s.revokeAt.IsZero() && s.owner != noJob && q.jobs[s.owner].queue != c.queue {
				q.withdraw(idx, whyAtGuarantee)
				bereft = append(bereft, c)
			}
		}
	}
	q.dropBereftClaims(bereft, nil)
}

// withdrawBelowVictimGuarantee withdraws the timed preemptions across
// queues that would take the victim's queue, or a parent of it below the
// parent it shares with the claimant's, below its guarantee: the reason
// to reclaim across queues is a queue above its guarantee, and jobs of
// the victim's subtree that ended since the preemption was made (or
// slots it gave up otherwise) may have taken it there. Each such queue
// is counted with what it holds less the slots its subtree is giving up
// to jobs outside it (leavingSlots); the preemptions of the victims last
// in victim order (the highest priority first) are withdrawn first, and
// only as many as bring the queues back to their guarantees. It appends
// the claimants that lost one to bereft. It runs once the instant's
// grants are made (withdrawStale's free), as the reclaim timeouts fire
// too: no task is cancelled for such a preemption. O(jobs + slots given
// up × depth) when a timed preemption across queues is pending.
func (q *Queues) withdrawBelowVictimGuarantee(bereft []*job) []*job {
	var across []int32
	for _, idx := range q.revokes {
		if q.pendingAcross(idx) && !slices.Contains(across, idx) { // (revokes may list a slot twice)
			across = append(across, idx)
		}
	}
	if len(across) == 0 {
		return bereft
	}
	// The victims last in victim order give theirs back first (ties: the
	// slot's index, for a deterministic order).
	slices.SortStableFunc(across, func(a, b int32) int {
		if c := victimOrder(q.jobs[q.slots[b].owner], q.jobs[q.slots[a].owner]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	leaving := q.leavingSlots()
	for _, idx := range across {
		s := &q.slots[idx]
		c, v := q.jobs[s.claimant], q.jobs[s.owner]
		short := q.shortOfGuarantee(v.queue, c.queue, leaving)
		if short == nil {
			continue
		}
		why := fmt.Sprintf("queue %s would hold %d of its %d guaranteed slots", short.name, short.used-leaving[short.idx], short.guaranteed)
		q.withdraw(idx, why)
		bereft = append(bereft, c)
		// Counted again: a slot passed over in this instant stays given
		// up, for nobody (unyield).
		leaving = q.leavingSlots()
	}
	return bereft
}

// pendingAcross reports whether slot idx is preempted, its timeout not
// passed yet, for a job of another queue than the one holding it.
func (q *Queues) pendingAcross(idx int32) bool {
	s := &q.slots[idx]
	return s.state == slotReclaiming && s.preempt && !s.revoked && !s.revokeAt.IsZero() &&
		s.claimant != noJob && s.owner != noJob && q.jobs[s.claimant].queue != q.jobs[s.owner].queue
}

// leavingSlots counts, per queue of the hierarchy (by qnode.idx), the
// slots its subtree's jobs are giving up to jobs outside it, by a claim
// or a preemption, or to nobody (passed over, they come back free):
// slots given up to a job of the subtree stay in it. The slots given up
// are those being reclaimed from an owner (each in its owner's
// yielding). O(slots + slots given up × depth), whatever the jobs ever
// submitted.
func (q *Queues) leavingSlots() []int {
	out := make([]int, len(q.nodeList))
	for i := range q.slots {
		s := &q.slots[i]
		if s.state != slotReclaiming || s.owner == noJob {
			continue
		}
		vq := q.jobs[s.owner].queue
		var top *qnode
		if s.claimant != noJob {
			top = sharedParent(vq.node, q.jobs[s.claimant].queue.node)
		}
		for n := vq.node; n != nil && n != top; n = n.parent {
			out[n.idx]++
		}
	}
	return out
}

// shortOfGuarantee returns the first of vq and its parents below the
// queue it shares with cq that holds less than its guarantee without
// the slots it is giving up to jobs outside it (leaving, leavingSlots),
// nil if none does.
func (q *Queues) shortOfGuarantee(vq, cq *queue, leaving []int) *qnode {
	for _, n := range below(vq, cq) {
		if n.used-leaving[n.idx] < n.guaranteed {
			return n
		}
	}
	return nil
}

// staleReason says why a timed preemption for claimant c of a slot of
// victim v has lost its reason whatever else comes to c ("": it has
// not; see withdrawStale).
func (q *Queues) staleReason(c, v *job) string {
	switch {
	case c.state.Terminal():
		return "the claimant ended"
	case !c.waiting():
		return "the claimant waits for nothing"
	case c.spec.Priority <= v.spec.Priority:
		return fmt.Sprintf("the claimant's priority %d is no longer above %d", c.spec.Priority, v.spec.Priority)
	}
	if why := q.blocked(c); why != "" {
		return "the claimant is held back: " + why
	}
	switch {
	case q.overtaken(c):
		return "the claimant holds its fair share and a job below its share waits"
	case v.queue != c.queue && c.queue.node.used >= c.queue.node.guaranteed:
		return whyAtGuarantee
	}
	return ""
}

// whyAtGuarantee is why a preemption across queues for a queue that
// holds its guarantee is withdrawn.
const whyAtGuarantee = "the claimant's queue holds its guarantee"

// dropBereftClaims gives up the claims of the claimants that lost
// preemptions for a reason whatever else comes to them does not change
// (withdrawStale) and have none pending any more, when what they keep
// reserved and still have coming no longer completes what they lack: a
// reservation that nothing completes would keep its slots idle. The
// claimants with preemptions pending keep theirs (withdrawStale
// reserves for them what the free slots complete).
func (q *Queues) dropBereftClaims(bereft []*job, pending map[JobID][]int32) {
	for _, c := range bereft {
		if _, kept := pending[c.id]; kept || len(c.reserved) == 0 {
			continue
		}
		if lack := c.headNeed(); lack == nil || !q.claimComplete(c, lack) {
			q.giveUpClaim(c)
		}
	}
}

// completable is the longest run of c's demand, whole asks in order,
// that the free slots it may take and everything coming to it complete:
// its reserved slots, its placeholders and the slots asked back for it,
// preempted or not (those come when their tasks end). Nil if they
// complete not even the first.
func (q *Queues) completable(c *job, demand [][]resource.Count) []resource.Count {
	have := make([]int, len(q.profiles))
	for _, list := range [][]int32{c.reserved, c.incoming, c.placeholders} {
		for _, idx := range list {
			have[q.slots[idx].profile]++
		}
	}
	mask := q.driverMask(c) // (driverslot.go)
	maskOut(have, mask)
	q.freeToward(c.queue, flatten(demand, len(demand)), have, have, mask)
	for k := len(demand); k > 0; k-- {
		if want := flatten(demand, k); q.matched(want, have) >= sumCounts(want) {
			return want
		}
	}
	return nil
}

// withdraw takes back a timed preemption of slot idx: no Revoke will
// follow; the slot comes back when its task ends (the pool was asked for
// it with a Reclaim) and is then free.
func (q *Queues) withdraw(idx int32, why string) {
	s := &q.slots[idx]
	if s.claimant == noJob {
		return
	}
	c := q.jobs[s.claimant]
	if !s.revoked && s.owner != noJob {
		q.event(Event{At: q.now, Job: c.spec.Name, ID: c.id, Kind: ReclaimWithdrawn, Victim: q.jobs[s.owner].spec.Name, Count: 1, Reason: why})
	}
	c.incoming = removeIdx(c.incoming, idx)
	q.unpark(c)
	q.unyield(idx)
	if q.debug {
		q.log.Debug("preemption withdrawn", zap.String("for", c.spec.Name), zap.Int64("slot", int64(s.slot.ID)), zap.String("why", why))
	}
}

// dropPreemptions withdraws every preemption made for c (it ended).
func (q *Queues) dropPreemptions(c *job) {
	for _, idx := range slices.Clone(c.incoming) {
		if s := &q.slots[idx]; s.preempt {
			q.withdraw(idx, "the claimant ended")
		}
	}
}
