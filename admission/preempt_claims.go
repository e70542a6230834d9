package admission

import (
	"slices"

	"github.com/regionsched/regionsched/resource"
)

// A claim keeps free slots reserved for the first waiting job of its
// queue (claim.go), whatever its priority. A preemption for a job of
// higher priority than that claimant takes those slots first: they run
// nothing, so taking them cancels nothing, and the claimant is the
// lowest-priority victim there is. Left to the claim, the preemption
// would cancel a running task of a job of higher priority than the
// claimant for a slot that sits free beside it.
//
// Only claims of the preempting job's queue (not under fair share, where
// priorities weigh shares rather than rank the jobs), of lower priority,
// with no preemption in them (slots a preemption brings back stay their
// claimant's: preempt.go), and only those whose slots serve what the
// preempting job waits for are given up, the lowest priority first, the
// most recently submitted first among equals, until what it waits for is
// served. A claim given up so is given up for the rest of the decision
// (giveUpClaim): its claimant claims nothing more in it, nor, in the same
// instant, the idle slots of the preempting job (loseTo, as a claim across
// queues); the freed slots are kept for the preempting job (reserveFree)
// and granted to it in the same decision (Queues.repass).

// lowerClaims lists the jobs of c's queue of lower priority than c whose
// claims keep free slots reserved and have no preemption in them, in
// victim order.
func (q *Queues) lowerClaims(c *job) []*job {
	if c.queue.cfg.Policy == FairShare {
		return nil
	}
	var out []*job
	for _, x := range c.queue.reservers {
		if x != c && x.spec.Priority < c.spec.Priority && !q.preempting(x) {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, byVictimKey)
	return out
}

// addReserved counts x's reserved slots d times in have (per profile),
// but those of profiles mask rules out.
func (q *Queues) addReserved(have []int, x *job, mask []bool, d int) {
	for _, idx := range x.reserved {
		if p := q.slots[idx].profile; mask == nil || mask[p] {
			have[p] += d
		}
	}
}

// giveUpLowerClaims gives up, in victim order, the claims of claimants
// (lowerClaims) whose reserved slots add to what have (per profile, what
// c has without preempting) serves of want, until it serves all of it.
// It reports whether it gave up any: their slots are free.
func (q *Queues) giveUpLowerClaims(c *job, claimants []*job, want []resource.Count, have []int, mask []bool) bool {
	have = slices.Clone(have)
	need, m := sumCounts(want), q.matched(want, have)
	given := false
	for _, x := range claimants {
		if m >= need {
			break
		}
		q.addReserved(have, x, mask, 1)
		if m2 := q.matched(want, have); m2 > m {
			m = m2
			q.giveUpClaim(x)
			x.loseTo(c, q.now)
			given = true
			continue
		}
		q.addReserved(have, x, mask, -1)
	}
	return given
}
