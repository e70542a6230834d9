package admission

import (
	"fmt"
	"slices"

	"github.com/regionsched/regionsched/internal/rbtree"
)

// On a busy cluster shared by many queues nearly every job behind a
// claimant is of a queue that may yield the claim nothing (yieldingQueues)
// and holds no idle slot: pickBehind passes over it, and a claim that
// cannot complete, the common case there, passes over every one of them.
// So the admission also keeps the jobs that hold slots a claim may take
// in a tree per queue and those that hold idle slots in one tree of
// their own (both in victim order, as Queues.victims; the idle holders
// but those parked, claim_parked.go), and a claim
// merges only the streams it may pick from: the idle holders, and the
// jobs of the queues that may yield it a slot (pickLive). It picks what
// pickBehind would pick, in the same order: the jobs it passes over give
// nothing.
//
// What a passed-over job changes is whether the claim is guarded (a
// guarantee kept its slots: the job's queue may give up fewer slots than
// it holds), which counts only when the claim does not complete. Then
// each such queue is asked once, after the walk: a queue that may still
// give up as many slots as its largest holder holds kept nothing from it
// (what a queue may give up only falls as the claim picks); if one may
// not, the claim walks the victims tree after all (pickBehind).

// idleLink is a job's place in Queues.idleVictims: in it (by node, at
// priority prio, that of its place in Queues.victims) while it holds
// idle slots a claim may take, unless parked (claim_parked.go).
type idleLink struct {
	node   rbtree.Node[*job]
	prio   int
	in     bool
	parked bool
}

// byIdleKey is victimOrder by the priority a job was put in
// Queues.idleVictims with.
func byIdleKey(a, b *job) int {
	if a.idle.prio != b.idle.prio {
		if a.idle.prio < b.idle.prio {
			return -1
		}
		return 1
	}
	return compareArrival(b, a)
}

// updateQueueVictim puts j where it belongs in its queue's victims tree,
// as updateVictim did in Queues.victims: in it, at the same priority,
// while it is in that one.
func (q *Queues) updateQueueVictim(j *job) {
	l := &j.victim
	if l.qin && (!l.in || l.qprio != l.prio) {
		j.queue.victims.Remove(&l.qnode)
		l.qin = false
	}
	if l.in && !l.qin {
		if j.queue.victims == nil {
			j.queue.victims = rbtree.New(byVictimKey)
		}
		l.qprio = l.prio
		j.queue.victims.Insert(&l.qnode, j)
		l.qin = true
	}
}

// updateIdleVictim puts j where it belongs in Queues.idleVictims: in it,
// at the priority of its place in Queues.victims, while it is in that
// one and holds idle slots, and is not parked (a job that holds no idle
// slot is not). Called wherever either changes.
func (q *Queues) updateIdleVictim(j *job) {
	if q.idleVictims == nil {
		return
	}
	l := &j.idle
	holds := j.victim.in && j.idleHeld > 0
	l.parked = l.parked && holds
	want := holds && !l.parked
	if l.in && (!want || l.prio != j.victim.prio) {
		q.idleVictims.Remove(&l.node)
		l.in = false
	}
	if want && !l.in {
		l.prio = j.victim.prio
		q.idleVictims.Insert(&l.node, j)
		l.in = true
	}
}

// pickLive is pickBehind over the streams it may pick from (see above),
// the queues marked live: the idle holders behind claimant c, and the
// jobs of the live queues behind it that hold no idle slot. It reports
// false when the claim did not complete and a queue it passed over may
// have kept slots by its guarantee: whether the claim is guarded is
// unknown then, and the caller starts over.
func (pk *picker) pickLive(live uint64) (exact bool) {
	q, c := pk.q, pk.c
	ck := keyOf(c)
	cs := &q.claimScratch
	heads := cs.heads[:0]
	heads = append(heads, q.idleVictims.First()) // heads[0]: the idle holders not parked
	for _, qu := range cs.liveQueues {
		if qu.rank >= c.queue.rank {
			heads = append(heads, qu.victims.First())
		}
	}
	defer func() { clear(heads); cs.heads = heads[:0] }()
	for pk.m < pk.need {
		best := -1
		for i, n := range heads {
			if n != nil && (best < 0 || byVictimKey(n.Item(), heads[best].Item()) < 0) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		v := heads[best].Item()
		heads[best] = heads[best].Next()
		switch {
		case (best > 0 && v.idle.in) || !isBehind(c, ck, v):
			// (an idle holder not parked comes with heads[0])
		case v.queue.liveIn != live && q.claimSettled(v):
			// Of a queue that may yield nothing, it could yield its idle
			// slots only, and it keeps those for its own claim (pickFrom
			// would only find whether it is guarded). (Only heads[0]
			// holds jobs of such queues.) Until its claim changes, no
			// claim needs to meet it there (claim_parked.go).
			pk.guarded = pk.guarded || pk.above(v.queue) < len(v.held)
			q.park(v)
		case !pk.passesOver(v):
			pk.pickFrom(v, false)
		}
	}
	if pk.m >= pk.need || pk.guarded {
		return true
	}
	// The jobs passed over: those of the queues of the branches not
	// live, behind c's, that hold no idle slot or are parked.
	unknown := false
	for _, s := range cs.deadBranches {
		if pk.keptIn(s, unlimited, unlimited, &unknown) {
			pk.guarded = true
			return true
		}
	}
	return !unknown
}

// keptIn reports whether a guarantee kept the slots of a job that holds
// no idle slot or is parked, of a queue behind the claimant's in x's
// subtree, from the claim (pickBehind's guarded) when the walk passed
// it (a parked job's claim is complete: pickFrom would pick none of its
// idle slots, as passesOver none of the other's); it sets
// *unknown when that depends on when the walk passed it. The branch's
// queues above x may give up end slots now and start before the walk
// (giveBudget.above, which only falls as the claim picks: a queue
// that may still give up as many slots as its jobs hold kept nothing).
// O(queues of the subtree), and O(holders) of a queue that may give up
// fewer slots than one of its jobs holds.
func (pk *picker) keptIn(x *qnode, end, start int, unknown *bool) bool {
	end = min(end, pk.give.remOf(x))
	start = min(start, x.used-x.yielding-x.guaranteed)
	if b := x.subtreeBounds(); pk.give.leaving == nil && max(min(end, b.minRem-len(pk.picks)), 0) >= b.maxHeld {
		// Every queue of the subtree may give up at least as many slots
		// as any job of it holds (what it gave up under the budget is
		// at most what the claim picked): none kept a job's slots, and
		// none depends on when the walk passed it.
		return false
	}
	if qu := x.qu; qu != nil && qu.rank > pk.c.queue.rank && max(end, 0) < qu.maxHeld {
		for n := qu.victims.First(); n != nil; n = n.Next() {
			v := n.Item()
			switch {
			case pk.q.holdsIdle(v) && !v.idle.parked: // (met in pickLive's heads[0])
			case max(start, 0) < len(v.held):
				return true
			case max(end, 0) < len(v.held):
				*unknown = true
			}
		}
	}
	for _, ch := range x.children {
		if pk.keptIn(ch, end, start, unknown) {
			return true
		}
	}
	return false
}

// pickerState is what a picker's walk changes: how it stood before it
// (picker.save), to start over from (picker.restore).
type pickerState struct {
	have      []int
	unhelpful []bool
	capB      []capRoom
	m, picks  int
	guarded   bool
}

// save returns how the picker stands, in the claim scratch's storage.
func (pk *picker) save() *pickerState {
	st := &pk.q.claimScratch.saved
	st.have = append(st.have[:0], pk.have...)
	st.unhelpful = append(st.unhelpful[:0], pk.q.claimScratch.unhelpful...)
	st.capB = append(st.capB[:0], pk.capB...)
	st.m, st.picks, st.guarded = pk.m, len(pk.picks), pk.guarded
	return st
}

// restore puts the picker back as it stood at save: what it picked
// since, and what its budgets counted, forgotten.
func (pk *picker) restore(st *pickerState) {
	cs := &pk.q.claimScratch
	copy(pk.have, st.have)
	copy(cs.unhelpful, st.unhelpful)
	copy(pk.capB, st.capB)
	pk.m, pk.picks, pk.guarded = st.m, pk.picks[:st.picks], st.guarded
	pk.give.reset()
	clear(cs.crossTaken)
	pk.changed()
}

// checkVictimTrees checks that Queues.victims, the queues' victims trees
// and Queues.idleVictims hold each job just where they should (for
// checkInvariants): while it holds slots a claim may take, at its
// priority, and in the idle tree while it holds idle ones.
func (q *Queues) checkVictimTrees() error {
	if q.victims == nil {
		return nil
	}
	inQueues, idle := 0, 0
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		l := &j.victim
		switch {
		case l.in != (len(j.held) > 0) || (l.in && l.prio != j.spec.Priority):
			return fmt.Errorf("admission: job %s holds %d slots a claim may take, priority %d: in the victims tree %v at priority %d",
				j.spec.Name, len(j.held), j.spec.Priority, l.in, l.prio)
		case l.qin != l.in || (l.qin && l.qprio != l.prio):
			return fmt.Errorf("admission: job %s: in the victims tree %v at priority %d, in its queue's %v at priority %d",
				j.spec.Name, l.in, l.prio, l.qin, l.qprio)
		case j.idle.in != (l.in && j.idleHeld > 0 && !j.idle.parked) || (j.idle.in && j.idle.prio != l.prio):
			return fmt.Errorf("admission: job %s holds %d idle slots, in the victims tree %v, parked %v: in the idle victims tree %v at priority %d",
				j.spec.Name, j.idleHeld, l.in, j.idle.parked, j.idle.in, j.idle.prio)
		case j.idle.parked && !(l.in && j.idleHeld > 0 && q.claimSettled(j)):
			return fmt.Errorf("admission: job %s is parked (claim_parked.go) holding %d idle slots, in the victims tree %v, its claim complete %v",
				j.spec.Name, j.idleHeld, l.in, q.claimSettled(j))
		}
		if l.qin {
			inQueues++
		}
		if j.idle.in {
			idle++
		}
	}
	queued := 0
	for _, qu := range q.qorder {
		if qu.victims != nil {
			queued += qu.victims.Len()
		}
	}
	if queued != inQueues || q.victims.Len() != inQueues || q.idleVictims.Len() != idle {
		return fmt.Errorf("admission: the victims trees hold %d jobs, the queues' %d and the idle one %d; %d and %d are in them",
			q.victims.Len(), queued, q.idleVictims.Len(), inQueues, idle)
	}
	return nil
}

// checkLive checks what pickLive decided, from the state it started
// from (save), against the walk of the victims tree: the same slots
// picked in the same order, and the same guarded. A difference is kept
// for CheckInvariants (a bug of this package). The picker is left as
// pickLive left it.
func (pk *picker) checkLive(live uint64, save *pickerState) {
	q := pk.q
	picks, m, guarded := slices.Clone(pk.picks), pk.m, pk.guarded
	have, unhelpful, capB := slices.Clone(pk.have), slices.Clone(q.claimScratch.unhelpful), slices.Clone(pk.capB)
	given, taken := slices.Clone(pk.give.given), slices.Clone(q.claimScratch.crossTaken)
	pk.restore(save)
	pk.walkVictims(live)
	if q.broken == nil && (!slices.Equal(picks, pk.picks) || (m < pk.need && guarded != pk.guarded)) {
		q.broken = fmt.Errorf("admission: claim of job %s: the streams picked %v (guarded %v), the walk of the victims tree %v (guarded %v)",
			pk.c.spec.Name, picks, guarded, pk.picks, pk.guarded)
	}
	pk.picks, pk.m, pk.guarded = append(pk.picks[:0], picks...), m, guarded
	copy(pk.have, have)
	copy(q.claimScratch.unhelpful, unhelpful)
	copy(pk.capB, capB)
	copy(pk.give.given, given)
	copy(q.claimScratch.crossTaken, taken)
	pk.changed()
}
