package admission

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/internal/rbtree"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// A claim is how the admission keeps jobs from deadlocking each other by
// each holding part of what they need. A pool holds granted
// slots it cannot use yet (a region whose bulk is not complete), so when
// every slot is held and every holder waits for more, nobody progresses.
// decide therefore claims, for the first waiting job it can help (and,
// within its own queue, for the first waiting job of every other queue:
// claim_within.go; a job wedged beside the drivers passes its turn on:
// wedged.go), exactly what that job lacks:
//
//   - free slots that serve the lack are reserved for it (no job behind it
//     can take them);
//   - slots granted to jobs behind it in grant order (never drivers) are
//     asked back with a Reclaim: non-preemptive, the pool gives a slot back
//     as soon as no task runs in it, so no task is cancelled;
//   - a slot reclaimed for it is reserved for it when it comes back, and it
//     is granted its ask when its claim completes it.
//
// A claim is made only if it completes the lack (nothing is taken for a
// job that still could not run), and victims are the lowest-priority jobs
// first, the most recently submitted first among equals; of a victim's
// slots, idle ones first (those its pool said it holds unused for its
// head bulk, slotpool.Ask.Holding: they come back at once). Under fair
// share a job yields, beyond its idle slots, only as many as leave it
// level with or behind the claimant once the claim is served (see
// yieldable), so slots in use never go back and forth between two jobs
// at their fair split, nor go to a job that would then hold its share
// while their job falls below it; its idle slots it always
// yields, because a job holding idle slots it cannot complete is
// exactly the deadlock. The lack claimed is the job's head ask (see
// headNeed), so a claim that completes deploys a region: every move of a
// slot is followed by progress. A job granted something, or that stops
// waiting, gives up its claim: reserved slots are free again and slots
// still coming will be (but, under fair share, the slots preempted for
// a job that still waits for them: keepPreempted). So does, under fair
// share, a job that holds its share once a job below its share waits
// (see overtaken).
//
// Across queues a claim obeys guarantees as preemption does: it takes
// from a job of another queue only what that queue, and each parent of
// it below the parent the two queues share, holds above its guarantee
// (counting what it gives up already), but the idle slots of a job that
// borrows other queues' guarantees for its ask; a claim the guarantees
// stop lets the next waiting job claim (claim_guarantees.go).
//
// Preemption (a Revoke that cancels running tasks, the cluster file's reclaim
// timeouts) is a different thing and is decided elsewhere.

// claimResult says what claim did.
type claimResult uint8

const (
	// claimImpossible: the jobs behind hold slots, but not enough to
	// complete what the job lacks; nothing changed.
	claimImpossible claimResult = iota
	// claimMade: what the job lacks is coming (free, reserved, being
	// reclaimed for it).
	claimMade
	// claimNoneBehind: no job behind it holds a slot it may take; nothing
	// changed, and no job further behind can be helped either.
	claimNoneBehind
	// claimGuarded: as claimImpossible, and the guarantees of queues
	// behind kept slots from it: a job behind it may be helped still.
	claimGuarded
)

// claimScratch holds claim's reusable buffers.
type claimScratch struct {
	have      []int // per profile: slots counted toward the lack
	freeTake  []int // per profile: free slots to reserve
	unhelpful []bool
	picks     []int32
	victims   []*job
	supply    []resource.Count
	// crossTaken counts the slots a claim picked per victim queue other
	// than its claimant's (by qnode.idx).
	crossTaken []int
	// passGuarded: a claim of the decision's pass was kept from
	// completing by guarantees; passWedged: the wedged jobs of the pass
	// that hold idle slots (see aheadIdle).
	passGuarded bool
	passWedged  []*job
	// liveStamp marks the queues that may yield a claim slots
	// (yieldingQueues, claim_passover.go).
	liveStamp uint64
	// within: the claim takes only from the jobs of this queue's subtree
	// behind its claimant (claim_within.go); nil: from all behind it.
	within *qnode
	picker picker
	// given is the picker's giveBudget's.
	given []int
	// settled: per profile, the slots a victim's own claim has coming
	// (claimSettled).
	settled []int
	// freeN, haveBase and capB are claim's storage of the free slots it
	// may take, what it has before it picks, and its capBudget.
	freeN, haveBase []int
	capB            capBudget
	// memo (by qnode.idx) and gen: what the claim found of victim queues
	// (claim_passover.go).
	memo []queueMemo
	gen  uint64
	// liveQueues and deadBranches are what yieldingQueues found: the
	// queues it marked that hold slots a claim may take, and the
	// branches it did not mark.
	liveQueues   []*queue
	deadBranches []*qnode
	// heads is pickLive's storage: where each stream it merges is.
	heads []*rbtree.Node[*job]
	// saved is picker.save's storage.
	saved pickerState
}

// claim tries to make c's lack come to it (see the comment above).
func (q *Queues) claim(c *job, lack []resource.Count) claimResult {
	cs := &q.claimScratch
	np := len(q.profiles)
	cs.freeTake = resize(cs.freeTake, np)
	cs.unhelpful = slices.Grow(cs.unhelpful[:0], np)[:np]
	have := q.countClaim(c)
	// A driver counts only the slots that leave its regions room
	// (driverslot.go): no other is reserved or asked back for it.
	mask := q.driverMask(c)
	unhelpfulFrom(cs.unhelpful, mask)
	need := sumCounts(lack)
	m := q.matched(lack, have)
	if m >= need {
		return claimMade
	}
	// Free slots first: they cost nobody anything. The rank of a set of
	// slots (the requests it can serve) is submodular, so a profile that
	// adds nothing now never will: stop at the first that does not help.
	// Only as many as c's queues' maxima leave room for.
	cs.freeN = resize(cs.freeN, np)
	freeN := cs.freeN
	q.freeToward(c.queue, lack, have, freeN, mask)
	for p := range q.free {
		for k := 0; k < freeN[p] && m < need; k++ {
			have[p]++
			if m2 := q.matched(lack, have); m2 > m {
				m = m2
				cs.freeTake[p]++
				continue
			}
			have[p]--
			break
		}
	}
	pk := &cs.picker // (reused: claims are frequent)
	cs.given = resize(cs.given, len(q.nodeList))
	cs.crossTaken = resize(cs.crossTaken, len(q.nodeList))
	*pk = picker{q: q, c: c, lack: lack, need: need, m: m, have: have, picks: cs.picks[:0], ahead: pk.ahead[:0], give: giveBudget{given: cs.given}}
	cs.haveBase = append(cs.haveBase[:0], have...)
	haveBase, mBase := cs.haveBase, m
	merged := q.mergesBehind(c)
	for limit := need - m; pk.m < need; limit = 0 {
		// The victims behind it, in victim order: at first only until
		// they hold what it lacks when they come in that order anyway
		// (behind); all of them if those were not enough. Across queues
		// (merged) it walks them all as it picks, and stops where the
		// claim completes (pickBehind); only those under a queue of c's
		// at its maximum if there is one (victimsWithin,
		// claim_capped.go).
		capB := q.newCapBudget(cs.capB[:0], c, sumInts(cs.freeTake))
		cs.capB = capB
		closed := capB.closed()
		if closed != nil && limit > 0 && !merged {
			closed = nil
		}
		if cs.within != nil {
			closed = cs.within
		}
		var victims []*job
		all := true
		if closed == nil && !merged {
			victims, all = q.behind(c, limit)
			if len(victims) == 0 && !pk.aheadIdle() {
				q.giveUpClaim(c)
				return claimNoneBehind
			}
		}
		clear(cs.crossTaken)
		pk.capB = capB
		pk.give.reset()
		pk.changed()
		switch {
		case closed != nil:
			pk.pickAll(pk.victimsWithin(closed))
		case merged:
			pk.pickBehind()
		default:
			pk.pickAll(victims)
		}
		if pk.m < need && !all {
			pk.picks, pk.m = pk.picks[:0], mBase // not enough among the first: try them all
			copy(have, haveBase)
			unhelpfulFrom(cs.unhelpful, mask)
			continue
		}
		if pk.m < need && cs.within == nil && !(closed != nil && pk.guarded && len(closed.children) == 0) {
			// (At its own queue's maxSlots, guarded already, it could
			// take no slot of a job of a queue ahead, all outside it:
			// pickFrom would only find it guarded.)
			pk.pickAheadIdle()
		}
		cs.picks = pk.picks
		if pk.m < need {
			if q.debug {
				q.log.Debug("job waits for slots no claim can free (drivers, jobs ahead)", zap.String("job", c.spec.Name))
			}
			q.giveUpClaim(c)
			if pk.guarded {
				return claimGuarded
			}
			return claimImpossible
		}
	}
	q.commitClaim(c, cs.freeTake, pk.picks)
	return claimMade
}

// unhelpfulFrom sets unhelpful (per profile) to the profiles mask rules
// out (none for a nil mask): a claim picks no slot of them.
func unhelpfulFrom(unhelpful, mask []bool) {
	for p := range unhelpful {
		unhelpful[p] = mask != nil && !mask[p]
	}
}

// picker is a claim's choice of slots to ask back (see claim): m of the
// need requests of lack are served by the slots counted in have (per
// profile), picks among them.
type picker struct {
	q       *Queues
	c       *job
	lack    []resource.Count
	need, m int
	have    []int
	picks   []int32
	capB    capBudget
	// give bounds the slots taken from victims of other queues.
	give giveBudget
	// guarded: a guarantee kept a victim's slots.
	guarded bool
	// ahead: the jobs ahead whose idle slots it may take (aheadIdle).
	ahead     []*job
	aheadDone bool
}

// pickAll picks from the victims in turn until the claim completes.
func (pk *picker) pickAll(victims []*job) {
	for _, v := range victims {
		if pk.passesOver(v) {
			continue
		}
		if pk.pickFrom(v, false); pk.m >= pk.need {
			return
		}
	}
}

// pickFrom picks slots of victim v for the claim: idle ones first (they
// come back at once), then the others within what v may yield; only
// idle ones if idleOnly.
func (pk *picker) pickFrom(v *job, idleOnly bool) {
	q, c, cs := pk.q, pk.c, &pk.q.claimScratch
	cross := v.queue != c.queue
	if !pk.capB.allows(v) {
		// None of its slots fits what c's queues' maxima leave room for
		// (capB, below): it gives nothing, but whether its queues'
		// guarantees would have kept its slots counts still (guarded).
		pk.guarded = pk.guarded || (cross && pk.give.above(v.queue, c.queue) < len(v.held))
		return
	}
	guard, vb := len(v.held), victimBorrows{v: v, known: !cross} // (within its queue it never borrows)
	if cross {
		// Across queues, idle slots too, only what v's queues hold above
		// their guarantees (giveBudget, claim_guarantees.go). A job that
		// borrows yields its idle slots beside that, without counting
		// them (claim_guarantees.go).
		guard = pk.give.above(v.queue, c.queue)
		pk.guarded = pk.guarded || guard < len(v.held)
		if guard <= 0 && !vb.borrows(q) {
			return // nothing it may give
		}
	}
	// limit is what v may yield of its slots that run tasks (idle ones
	// count toward it, and are yielded beyond it), counted at the first
	// such slot: limit0, less the slots picked.
	limit0, limitSet, picked := 0, idleOnly, 0
	// Whether its idle slots stay (claim_settled.go, drivers.go): asked
	// at its first idle slot, as most victims hold none.
	settled, settledSet := false, false
	before, exempt := len(pk.picks), 0
	// Never below its gang minimum (Volcano's rule): that would break the
	// gang it was granted whole.
	gangRoom := len(v.held)
	if g := v.spec.Gang; g != nil && v.gangDone && !v.gangExpired {
		gangRoom = v.granted - g.MinSlots
	}
	// Within what c's queues' maxima leave room for (capB).
	for pass := 0; pass < 2 && pk.m < pk.need && gangRoom > 0 && pk.capB.allows(v); pass++ {
		for i := len(v.held) - 1; i >= 0 && pk.m < pk.need && gangRoom > 0 && pk.capB.allows(v); i-- {
			idx := v.held[i]
			s := &q.slots[idx]
			if s.idle != (pass == 0) || cs.unhelpful[s.profile] {
				continue
			}
			if !s.idle && !limitSet {
				limit0, limitSet = pk.yieldLimit(v), true
			}
			if s.idle && !settledSet {
				settled, settledSet = q.claimSettled(v) || q.keptForStart(c, v), true
			}
			if (!s.idle && limit0-picked <= 0) || (s.idle && (settled || c.lostNowTo(v, q.now))) ||
				(guard <= 0 && (!s.idle || !vb.borrows(q))) {
				continue
			}
			pk.have[s.profile]++
			if m2 := q.matched(pk.lack, pk.have); m2 > pk.m {
				pk.m = m2
				pk.picks = append(pk.picks, idx)
				pk.changed()
				picked++
				gangRoom--
				if s.idle && vb.borrows(q) {
					exempt++
				} else {
					guard--
				}
				pk.capB.take(v)
				continue
			}
			pk.have[s.profile]--
			cs.unhelpful[s.profile] = true
		}
	}
	if cross {
		cs.crossTaken[v.queue.node.idx] += len(pk.picks) - before
		pk.give.give(v.queue, c.queue, len(pk.picks)-before-exempt)
	}
}

// yieldLimit is how many of its slots victim v may yield to the claim
// (yieldable); across queues only what leaves v's queue behind c's
// (crossYield), less what the claim took from that queue already: the
// slot would come straight back.
func (pk *picker) yieldLimit(v *job) int {
	q, c := pk.q, pk.c
	limit := q.yieldable(v, c)
	if v.queue != c.queue {
		limit = min(limit, pk.crossLimit(v.queue))
	}
	return limit
}

// victimBorrows is whether a victim borrows (Queues.borrows), found
// once, when first asked.
type victimBorrows struct {
	v     *job
	known bool
	b     bool
}

// borrows reports whether the victim borrows.
func (vb *victimBorrows) borrows(q *Queues) bool {
	if !vb.known {
		vb.known, vb.b = true, q.borrows(vb.v)
	}
	return vb.b
}

// commitClaim makes a claim of c: the free slots counted in freeTake (per
// profile) are reserved for it, and the slots picked are asked back from
// their holders.
func (q *Queues) commitClaim(c *job, freeTake []int, picks []int32) {
	exempt := q.borrowedPicks(c, picks)
	for p, n := range freeTake {
		if n > 0 {
			for _, idx := range q.take(int32(p), n) {
				q.reserveFor(c, idx)
			}
		}
	}
	for _, idx := range picks {
		s := &q.slots[idx]
		v := q.jobs[s.owner]
		if s.idle && v.queue != c.queue {
			v.loseTo(c, q.now) // it claims none of c's idle slots back now
		}
		q.unhold(v, idx)
		s.state, s.claimant, s.atShare = slotReclaiming, c.id, c.granted >= c.entitled
		v.addYielding(idx)
		q.addIncoming(c, idx)
		q.takeBack(c, v, idx)
		q.updateHolder(v)
	}
	q.checkClaimGuarantees(c, picks, exempt)
}

// takeBack asks v for slot idx for claimant c with a Reclaim: it comes
// back when its task ends (at once if idle); nothing is cancelled for a
// claim (preemption is preempt.go's).
func (q *Queues) takeBack(c, v *job, idx int32) {
	s := &q.slots[idx]
	q.markAskedBack(v)
	q.sendReclaim(v, s)
	if q.debug {
		q.log.Debug("slot reclaimed", zap.String("for", c.spec.Name), zap.String("from", v.spec.Name), zap.Int64("slot", int64(s.slot.ID)))
	}
}

// fireRevokes revokes the reclaimed slots whose reclaim timeout passed
// and that are not back yet. It reports whether a claim given up first,
// its reason gone (a preemption it counted on withdrawn, withdrawStale),
// freed slots it kept reserved: the decision that follows grants them.
func (q *Queues) fireRevokes(now time.Time) (freed bool) {
	q.unreserved = false
	q.withdrawStale(true) // nothing is cancelled for a reason that is gone
	freed = q.unreserved
	keep := q.revokes[:0]
	for _, idx := range q.revokes {
		s := &q.slots[idx]
		switch {
		case s.state != slotReclaiming || s.revokeAt.IsZero():
			// back already (or handed on): stale
		case now.Before(s.revokeAt):
			keep = append(keep, idx)
		default:
			if q.pendingAcross(idx) && q.broken == nil {
				// withdrawStale withdrew it above if it would take a
				// queue below its guarantee (a bug of this package
				// otherwise: CheckInvariants reports it).
				c, leaving := q.jobs[s.claimant], q.leavingSlots()
				if n := q.shortOfGuarantee(q.jobs[s.owner].queue, c.queue, leaving); n != nil {
					q.broken = fmt.Errorf("admission: %s of job %s cancelled for job %s of queue %s, taking queue %s below its guarantee: it holds %d, gives up %d to other queues, guaranteed %d",
						q.slotName(idx), q.jobs[s.owner].spec.Name, c.spec.Name, c.queue.cfg.Name, n.name, n.used, leaving[n.idx], n.guaranteed)
				}
			}
			s.revokeAt, s.revoked = time.Time{}, true
			v := q.jobs[s.owner]
			q.markAskedBack(v)
			q.send(v, slotpool.Revoke{Slot: s.slot.ID, Reason: slotpool.ReasonPreempted})
			if !s.idle {
				q.noteCancel(v, q.jobs[s.claimant]) // (cancelcut.go)
			}
			if q.debug {
				q.log.Debug("slot preempted after the reclaim timeout", zap.String("from", v.spec.Name), zap.Int64("slot", int64(s.slot.ID)))
			}
		}
	}
	q.revokes = keep
	return freed
}

// nextRevoke returns the earliest pending revoke.
func (q *Queues) nextRevoke() (at time.Time, ok bool) {
	for _, idx := range q.revokes {
		if s := &q.slots[idx]; s.state == slotReclaiming && !s.revokeAt.IsZero() && (!ok || s.revokeAt.Before(at)) {
			at, ok = s.revokeAt, true
		}
	}
	return at, ok
}

// claimComplete reports whether c's claim completes lack.
func (q *Queues) claimComplete(c *job, lack []resource.Count) bool {
	return q.matched(lack, q.countClaim(c)) >= sumCounts(lack)
}

// countClaim counts, per profile, the slots c's claim has coming: reserved
// for it or being reclaimed for it, and its gang's placeholders, which
// serve its asks too (in the claim scratch); for a waiting driver only
// those it may take (driverslot.go).
func (q *Queues) countClaim(c *job) []int {
	cs := &q.claimScratch
	cs.have = q.countComing(c, cs.have)
	maskOut(cs.have, q.driverMask(c))
	return cs.have
}

// countComing counts into buf (resized and cleared), per profile, the
// slots c's claim has coming: reserved for it or being reclaimed for it,
// and its gang's placeholders. Counted as completable counts them: a
// claim that left the placeholders out would ask back one slot more than
// withdrawStale leaves it, and ask it again in the next decision.
func (q *Queues) countComing(c *job, buf []int) []int {
	buf = resize(buf, len(q.profiles))
	for _, list := range [][]int32{c.reserved, c.incoming, c.placeholders} {
		for _, idx := range list {
			buf[q.slots[idx].profile]++
		}
	}
	return buf
}

// matched is how many of lack's requests the slots counted in have (per
// profile) can serve.
func (q *Queues) matched(lack []resource.Count, have []int) int {
	if len(have) == 1 {
		return q.matchedOne(lack, have[0])
	}
	supply := q.claimScratch.supply[:0]
	for p, n := range have {
		if n > 0 {
			supply = append(supply, resource.Count{Profile: q.profiles[p], N: n})
		}
	}
	q.claimScratch.supply = supply
	return resource.Matched(lack, supply, q.cfg.Matching)
}

// matchedOne is matched when the cluster has one slot profile, of which
// n slots are counted: no supply to build (resource.Matched's case).
func (q *Queues) matchedOne(lack []resource.Count, n int) int {
	served := 0
	for _, d := range lack {
		if q.cfg.Matching.Serves(q.profiles[0], d.Profile) {
			served += d.N
		}
	}
	return max(min(served, n), 0)
}

// behind returns the jobs behind c in grant order (its queue's jobs after
// it, the queues after its own by rank, see rankQueues) that hold slots a
// claim may take, in victim order: lowest priority first, then the most
// recently submitted (as preemption's victims). With enough > 0, when the
// walk from the back of c's queue meets them in victim order anyway (c's
// queue orders by priority, or all its jobs have one priority, and no
// queue after it holds slots), it stops once they hold enough slots, and
// all is false; otherwise it returns every such job and all is true. A
// claim walks the victims tree instead when a queue after c's holds
// slots (pickBehind).
func (q *Queues) behind(c *job, enough int) (victims []*job, all bool) {
	out := q.claimScratch.victims[:0]
	ck := keyOf(c)
	stream := enough > 0 && (c.queue.cfg.Policy == Priority || len(c.queue.prios) <= 1)
	for _, qu := range q.qorder {
		if qu.rank > c.queue.rank && qu.holders.Len() > 0 {
			stream = false
		}
	}
	held := 0
	for _, qu := range q.qorder {
		switch {
		case qu.rank < c.queue.rank:
			continue
		case qu == c.queue:
			for h := qu.holders.Last(); h != nil; h = h.Prev() {
				v := h.Item()
				if v.hkey.compare(ck) <= 0 {
					break
				}
				if v != c {
					out = append(out, v)
					if held += len(v.held); stream && held >= enough {
						q.claimScratch.victims = out
						return out, false
					}
				}
			}
		default:
			for h := qu.holders.First(); h != nil; h = h.Next() {
				out = append(out, h.Item())
			}
		}
	}
	victimOrder := func(a, b *job) int {
		if c := cmp.Compare(a.spec.Priority, b.spec.Priority); c != 0 {
			return c
		}
		return compareArrival(b, a)
	}
	// Walked from the back of a queue ordered by priority, or by
	// submission among equal priorities, they are in victim order
	// already: the sort is needed only when they are not.
	if !slices.IsSortedFunc(out, victimOrder) {
		slices.SortFunc(out, victimOrder)
	}
	q.claimScratch.victims = out
	return out, true
}

// lostNowTo reports whether v took at now slots of c (by preemption, or
// idle ones by a claim across queues), or, in c's queue with a higher
// priority than c, preempted slots of any job. A claim of c's takes no
// idle slot of v's then (an idle slot comes back at once): v would take
// them again in the same instant, and c claim back, without end. Across
// queues that is the fair order of sibling queues: it flips with the
// slots each grant moves, so the queue that lost idle slots comes first
// again and its job would claim them straight back. A slot that runs a
// task comes back when the task ends, as any claim's; the idle ones c
// may claim from the next instant on.
func (c *job) lostNowTo(v *job, now time.Time) bool {
	if c.lostAt.Equal(now) && slices.Contains(c.lostTo, v.id) {
		return true
	}
	return v.reclaimed && v.reclaimAt.Equal(now) && v.queue == c.queue && v.spec.Priority > c.spec.Priority
}

// loseTo records that c took slots of v at now (see lostNowTo).
func (v *job) loseTo(c *job, now time.Time) {
	if !v.lostAt.Equal(now) {
		v.lostAt, v.lostTo = now, v.lostTo[:0]
	}
	if !slices.Contains(v.lostTo, c.id) {
		v.lostTo = append(v.lostTo, c.id)
	}
}

// overtaken reports whether c's claim goes against its fair-share
// queue's order: c holds its share or more while another job of its
// queue, below its share, waits and may be granted. That job comes
// before c in the queue's order (every job below its share comes before
// every job at or above it), so a slot kept for c would make it take,
// beyond its share, a slot the policy hands to that job first. When c
// claimed, it was below its share or no such job waited (only the first
// waiting job claims); since, c reached its share, or a job arrived,
// asked again, or fell below its share when the shares changed.
//
// A job below its share only because of the slots it gives up to c,
// claimed while c held its share, does not count. c took them, as the
// first job waiting, from a job behind it: its idle slots (which a
// fair-share victim always yields) or slots that left it behind c.
// Counted without them, the job would come before c, be given them back,
// stand behind c again and yield them again, without end. Slots c
// claimed below its share are not counted so: c reached its share since,
// and the job they come from is owed them. Nor are the slots that ran a
// task when c claimed them once they no longer leave the job behind c:
// they did when c claimed them (yieldable), but the job has given up
// others since (its tasks ended, its pool released their slots), and
// given them back it would keep them; counting them would let c take,
// at its share, slots of a job now below its share. Nor does a job out
// of reach (outOfReach): its claim cannot complete while the other
// queues hold their guarantees.
func (q *Queues) overtaken(c *job) bool {
	qu := c.queue
	if qu.cfg.Policy != FairShare || c.granted < c.entitled {
		return false
	}
	for j := range q.startable(qu) {
		if j.key.share >= 1 {
			break
		}
		if j != c && j.granted < j.entitled && q.owedBack(c, j) && q.holdOf(j) == notHeld && !q.outOfReach(j) {
			return true
		}
	}
	return false
}

// outOfReach reports whether j waits for a head ask that, with the
// slots it holds idle for it and its driver, is more than its queue can
// hold while every other queue holds its guarantee (assuredSlots): no
// claim of its can complete while they do (the guarantees stop it), so
// the slots of its queue's other jobs are not its to wait for. A job at
// its share that the fair order puts behind it may claim in its place
// (see overtaken); else two such jobs of two queues, each behind one
// that can never be served, would hold their idle slots for each other
// forever.
func (q *Queues) outOfReach(j *job) bool {
	n, _, ok := q.headHold(j)
	return ok && n > q.assuredSlots(j.queue.node)
}

// owedBack reports whether v, below its share, is owed slots c's claim
// takes from it (see overtaken): counting as v's the slots of the claim
// from v that c claimed at its share and that were idle (v would yield
// them again whatever its share), v stands ahead of c, so at least one of
// the slots c claimed at its share while they ran v's tasks would no
// longer be yielded (yieldable), nor any slot c claimed below its share.
func (q *Queues) owedBack(c, v *job) bool {
	idle, busy := q.yieldedTo(c, v)
	if busy == 0 {
		return v.granted+idle < v.entitled
	}
	return keyWith(v, v.granted+idle).compare(keyOf(c)) < 0
}

// yieldedTo counts the slots of c's claim that come from v and that c
// claimed while it held its share (being reclaimed from v, or reserved
// for c when they came back from v): those that were idle in v's pool
// when c claimed them, and the others.
func (q *Queues) yieldedTo(c, v *job) (idle, busy int) {
	count := func(s *cslot) {
		if s.idle {
			idle++
		} else {
			busy++
		}
	}
	for _, idx := range c.incoming {
		if s := &q.slots[idx]; s.owner == v.id && s.atShare {
			count(s)
		}
	}
	for _, idx := range c.reserved {
		if s := &q.slots[idx]; s.from == v.id && s.atShare {
			count(s)
		}
	}
	return idle, busy
}

// dropOvertaken gives up the claims of the jobs of a fair-share queue
// that are overtaken (see overtaken): their reserved slots are free
// again, slots still coming back for them will be, and their timed
// preemptions are withdrawn (withdrawStale). The job below its share
// is served, or claims, in the passes that follow.
func (q *Queues) dropOvertaken(qu *queue) {
	if qu.cfg.Policy != FairShare {
		return
	}
	for _, c := range qu.claims() {
		if q.overtaken(c) {
			q.dropClaim(c)
		}
	}
}

// yieldable is how many slots victim v may give up for claimant c's
// claim, which serves c's head need (headNeed): yieldableTo, c counted
// with that need granted.
func (q *Queues) yieldable(v, c *job) int {
	return q.yieldableTo(v, c, c.granted+sumCounts(c.headNeed()))
}

// yieldableTo is how many slots victim v may give up for claimant c,
// which will hold after slots once what it takes them for is served.
// Under fair share only as many as leave v no further ahead in the
// queue's order (its usage relative to its share, orderKey.share) than
// c will then stand: a slot taken beyond that would make v the one to
// serve first, and it would claim the slot back; and c, served, would
// hold its share or more while v, below its share, waits for the slot it
// gave. Counted with c as it stands before its ask is served, a job
// below its share would take the only slot of a job at its share and end
// above it. Two jobs that stand level once the slots moved split them
// fairly whichever the queue's order puts first: neither could then take
// a slot of the other. v counts the slots it keeps: not those that leave
// it already, asked back by claims or preempted, for c or another job
// (counted with them, a victim giving one to each of two claimants would
// end below both). Otherwise every slot it holds.
func (q *Queues) yieldableTo(v, c *job, after int) int {
	if v.queue != c.queue || v.queue.cfg.Policy != FairShare {
		return len(v.held)
	}
	k, cs, keeps := 0, keyWith(c, after).share, v.granted-len(v.yielding)
	for k < keeps && keyWith(v, keeps-k-1).share >= cs {
		k++
	}
	return k
}

// resize returns s with length n, zeroed.
func resize(s []int, n int) []int {
	if cap(s) < n {
		s = make([]int, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// sendReclaim asks v's pool for slot s with a Reclaim, unless it was
// asked since it was granted: a pool keeps a Reclaim until the slot comes
// back, so a second one would only cost the pool a message.
func (q *Queues) sendReclaim(v *job, s *cslot) {
	if !s.reclaimSent {
		s.reclaimSent = true
		q.send(v, slotpool.Reclaim{Slot: s.slot.ID})
	}
}

// markAskedBack records that the admission asks a slot of v back now
// (for CheckInvariants).
func (q *Queues) markAskedBack(v *job) {
	q.stamp++
	v.askedBackAt, v.askedBackStamp = q.now, q.stamp
}
