package admission

import "github.com/regionsched/regionsched/resource"

// Drivers and gang placeholders are the slots no claim and no
// preemption takes: they come back only when their job ends (or its
// gang is served or given up). A job whose head request cannot be
// served by the rest of the cluster, even with every other slot given to
// it, is wedged: it waits for a driver to end, its claim can never
// complete, and the idle slots it holds for its head bulk are of no use
// to it until then. The jobs behind it may be what has to progress for
// a driver to end (their own drivers among them), so a wedged job does
// not take the pass's claim (the next waiting job claims), and the idle
// slots of a wedged job are there for the claims of the pass that follow
// it, although it comes first (aheadIdle). A slot so taken runs a task
// of its claimant, and comes back when the task ends; once a driver has
// ended and the wedged job's request fits again, it claims as the first
// waiting job does.

// pin counts slot idx as pinned, a driver's or a placeholder (d = 1), or
// no longer (d = -1).
func (q *Queues) pin(idx int32, d int) {
	p := int(q.slots[idx].profile)
	if p >= len(q.pinned) {
		q.pinned = append(q.pinned, make([]int, p+1-len(q.pinned))...)
	}
	q.pinned[p] += d
}

// unpinnedTo sets have (zeroed, per profile) to the slots of the cluster
// that are not pinned, j's own placeholders counted as j's, and returns
// it.
func (q *Queues) unpinnedTo(j *job, have []int) []int {
	for _, c := range q.capacity {
		have[q.profIdx[c.Profile]] += c.N
	}
	for p, n := range q.pinned {
		have[p] -= n
	}
	for _, idx := range j.placeholders {
		have[q.slots[idx].profile]++
	}
	return have
}

// wedged reports whether j's head request lack can never be served
// beside the pinned slots (drivers, its own included, and the other
// jobs' placeholders) and the idle slots j holds for its head bulk: the
// rest of the cluster could not complete it (for an ask that may be
// granted in part: could serve none of it).
func (q *Queues) wedged(j *job, lack []resource.Count) bool {
	have := q.unpinnedTo(j, q.countScratch())
	for _, idx := range j.held {
		if s := &q.slots[idx]; s.idle {
			have[s.profile]--
		}
	}
	for p, n := range have {
		have[p] = max(n, 0)
	}
	maskOut(have, q.driverMask(j)) // (a waiting driver's slots, driverslot.go)
	m := q.matched(lack, have)
	if !j.gangWaits() && (!j.driver || j.hasSlot) {
		a := j.asks.head
		if a == nil {
			a = j.asks.first
		}
		if a != nil && !a.allOrNothing {
			return m == 0
		}
	}
	return m < sumCounts(lack)
}

// holdsIdle reports whether j holds an idle slot.
func (q *Queues) holdsIdle(j *job) bool {
	return j.idleHeld > 0
}

// passOnWedged is visit's answer to a claim of j's that did not complete:
// if j is wedged, the claim of the pass passes to the next waiting job,
// and j's idle slots, if any, are there for it (see above).
func (q *Queues) passOnWedged(j *job, lack []resource.Count, st *passState) {
	if !q.wedged(j, lack) {
		return
	}
	st.claiming = true
	if q.holdsIdle(j) {
		st.wedged = append(st.wedged, j)
	}
}
