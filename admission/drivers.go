package admission

import (
	"slices"

	"github.com/regionsched/regionsched/resource"
)

// A driver is useful only once its job's first regions can follow it: a
// driver granted while they cannot sits in its slot (drivers are never
// preempted) and may keep them from ever fitting. So, as a gang would,
// the admission counts a driver together with what its job asks for first
// (JobSpec.Start), capped at what the cluster can hold:
//
//   - a reclaim for a driver is made only if the free slots and those it
//     may take complete the driver with its first regions (preemptFor):
//     nothing is cancelled for a driver that would then wait;
//   - a driver whose first regions could not follow takes a free slot
//     only after every waiting request the free slots serve, with the
//     idle slots a claim of that request's job takes back at once
//     (driverYields): the slots that come back at an instant, a job's end
//     included, go to the requests they complete, not to a driver that
//     would hold one of them unused;
//   - a claim of another job takes no idle slot of a job that a driver's
//     reclaim took slots from at this instant (keptForStart): that reclaim
//     counted on them for the driver's first regions, and a claim for a
//     gang would make them placeholders, which no preemption takes.

// startNeed is what j needs to progress once its driver is up: its driver
// and its first regions (JobSpec.Start), and how many of them the cluster
// can ever serve at once (the cap, as a derived gang's). Both are made
// once per generation of the cluster's slots (a job's driver and first
// regions, its queue's maxima and the matching do not change): a decision
// asks for them at every waiting driver it meets. Callers do not modify
// need (clipped: an append to it makes a copy).
func (q *Queues) startNeed(j *job) (need []resource.Count, n int) {
	if j.startGen != q.capGen+1 {
		if j.spec.Driver != nil {
			need = append(need, resource.Count{Profile: *j.spec.Driver, N: 1})
		}
		need = append(need, j.spec.Start...)
		j.startDemand, j.startGen = slices.Clip(need), q.capGen+1
		j.startN = min(resource.Matched(need, q.capacity, q.cfg.Matching), j.queue.capOf())
	}
	return j.startDemand, j.startN
}

// startFollows reports whether the slots counted in have (per profile)
// complete j's driver with its first regions, as far as the cluster can
// hold them.
func (q *Queues) startFollows(j *job, have []int) bool {
	if mask := q.driverMask(j); mask != nil {
		return q.driverFollows(j, have, mask) // (driverslot.go)
	}
	need, n := q.startNeed(j)
	return q.matched(need, have) >= n
}

// startFitsBeside reports whether c's driver with its first regions
// (as far as the cluster can hold them) fits the cluster beside the
// slots no preemption takes: the other jobs' drivers and placeholders,
// and those that the claims under way will pin when their slots come
// back, maybe in this very instant: the driver a claim is for (one of
// its slots), or the gang (all of them). A reclaim for c's driver that
// counted on those slots for its first regions would leave the driver
// waiting beside them.
func (q *Queues) startFitsBeside(c *job) bool {
	have := q.unpinnedTo(c, make([]int, len(q.profiles)))
	for _, qu := range q.qorder {
		for _, x := range qu.claims() {
			if x == c || !x.active() {
				continue
			}
			switch {
			case x.gangWaits():
				for _, idx := range x.reserved {
					have[q.slots[idx].profile]--
				}
				for _, idx := range x.incoming {
					have[q.slots[idx].profile]--
				}
			case x.driver && !x.hasSlot:
				if p, ok := q.claimedDriverProfile(x); ok {
					have[p]--
				}
			}
		}
	}
	for p, n := range have {
		have[p] = max(n, 0)
	}
	return q.startFollows(c, have)
}

// claimedDriverProfile is the profile of the slot, among those reserved
// for x or coming to it, that its driver will take.
func (q *Queues) claimedDriverProfile(x *job) (int32, bool) {
	n := make([]int, len(q.profiles))
	for _, idx := range x.reserved {
		n[q.slots[idx].profile]++
	}
	for _, idx := range x.incoming {
		n[q.slots[idx].profile]++
	}
	avail, prof := q.supplyOf(n)
	return q.driverProfileIn(x, avail, prof)
}

// driverYields reports whether j's driver, about to take a free slot of
// profile p, leaves the free slots to waiting requests instead (see
// above): j's first regions could not follow it with the slots it may
// have, and another job that may be granted waits for a request (not a
// driver's) that the free slots serve. Such a driver comes after every
// request the free slots serve. follows says whether its first regions
// could follow.
func (q *Queues) driverYields(j *job, p int32) (yields, follows bool) {
	if len(j.spec.Start) == 0 {
		return false, true // the driver alone is what it needs
	}
	have := make([]int, len(q.profiles))
	for _, idx := range j.reserved {
		have[q.slots[idx].profile]++
	}
	for _, idx := range j.placeholders {
		have[q.slots[idx].profile]++
	}
	if have[p] > 0 {
		return false, true // it takes a slot kept for it, no free one
	}
	start, _ := q.startNeed(j)
	q.freeToward(j.queue, start, have, have, nil) // (the driver's slot is driverFollows' to choose)
	if q.startFollows(j, have) {
		return false, true
	}
	q.yields++
	idlers := q.idleHolders() // (the common case: none)
	for _, x := range q.gangJobs {
		// (One in its requeue backoff, waiting for its driver alone, is
		// in no asking tree: held back as its queue's walk would find it.)
		if x.inTree && x.bucketDriver && x.active() && q.holdOf(x) != notHeld {
			q.markHeldBack(x)
		}
	}
	for _, qu := range q.qorder {
		if q.requestWaitsIn(qu, j, idlers) {
			return true, false
		}
	}
	return false, false
}

// requestWaitsIn reports whether a job of qu other than j may be granted
// now and waits for a request (not its driver) that the free slots serve,
// with those kept for it and the idle slots a claim of its takes back at
// once (requestServed, servedWithIdle). The jobs it finds held back by
// qu's policy are marked so (markHeldBack, or the queue's mark while it
// may start no job): what they wait for is not this instant's to serve.
// It visits the jobs of qu's asking tree (not those that wait for their
// driver alone, which no driver yields to), and of those only the
// started ones while qu may start no job: O(jobs that wait for a request),
// not O(waiting jobs). A StateAware queue in which a job preempts to
// start holds the others back one by one (preemptedToStart): its jobs
// are all visited, to mark each.
func (q *Queues) requestWaitsIn(qu *queue, j *job, idlers []*job) bool {
	serves := func(x *job) bool {
		q.yieldVisits++
		if x.active() && q.holdOf(x) != notHeld {
			q.markHeldBack(x)
			return false
		}
		return x != j && (q.requestServed(x, -1, nil) || (len(idlers) > 0 && q.servedWithIdle(x, idlers)))
	}
	switch {
	case q.preemptsToStart(qu):
		for n := qu.order.First(); n != nil; n = n.Next() {
			if serves(n.Item()) {
				return true
			}
		}
	case !qu.starts():
		q.markQueueHeld(qu) // (every job of it not started is held back)
		for x := range q.startable(qu) {
			if serves(x) {
				return true
			}
		}
	default:
		for n := qu.askingTree().First(); n != nil; n = n.Next() {
			if serves(n.Item()) {
				return true
			}
		}
	}
	return false
}

// preemptsToStart reports whether a job of StateAware queue qu not
// started yet preempts to start: the queue holds its other jobs back for
// it (preemptedToStart).
func (q *Queues) preemptsToStart(qu *queue) bool {
	if qu.cfg.Policy != StateAware || !qu.cfg.Preempt {
		return false
	}
	for _, x := range qu.claimants {
		if x.state == JobAccepted && q.preempting(x) {
			return true
		}
	}
	return false
}

// requestServed reports whether x may be granted now and waits for a
// request (not its driver) that the free slots, with those kept for it
// and one more slot of profile extra (none if negative), serve: whole, or
// in part for an ask that may be granted in part. With counted set, only
// the free and kept slots it accepts count.
func (q *Queues) requestServed(x *job, extra int32, counted func(idx int32) bool) bool {
	return q.requestServedBy(x, extra, counted, nil)
}

// requestServedWith is requestServed with the slots counted in more (per
// profile) too: slots x's queue holds already, which its queues' maxima
// do not bound.
func (q *Queues) requestServedWith(x *job, more []int) bool {
	return q.requestServedBy(x, -1, nil, more)
}

// requestServedBy is requestServed, the slots counted in more (per
// profile, may be nil) added.
func (q *Queues) requestServedBy(x *job, extra int32, counted func(idx int32) bool, more []int) bool {
	if !x.active() || q.holdOf(x) != notHeld {
		return false
	}
	if x.waitsForDriver() {
		return false
	}
	need, whole := x.firstNeed()
	if need == nil {
		return false
	}
	free := make([]int, len(q.profiles))
	total := 0
	for f, list := range q.free {
		n := len(list)
		if counted != nil {
			n = 0
			for _, idx := range list {
				if counted(idx) {
					n++
				}
			}
		}
		free[f] = n
		total += n
	}
	if extra >= 0 { // (only within its queues' maxima too)
		free[extra]++
		total++
	}
	have := make([]int, len(q.profiles))
	for _, idx := range x.reserved {
		if counted == nil || counted(idx) {
			have[q.slots[idx].profile]++
		}
	}
	for _, idx := range x.placeholders {
		if counted == nil || counted(idx) {
			have[q.slots[idx].profile]++
		}
	}
	for p, n := range more {
		have[p] += n
	}
	// The free slots within its queues' maxima: those that serve it, when
	// the room is for fewer than there are (pickToward).
	q.freeWithin(free, total, q.room(x.queue), need, have, have)
	m := q.matched(need, have)
	return m >= sumCounts(need) || (!whole && m > 0)
}

// idleHolders lists the jobs that hold idle slots (held unused for
// their head bulk, slotpool.Ask.Holding). A granted slot is in its
// owner's held slots (CheckInvariants), which its queue's idleHeld counts
// idle: with no queue listed in idleQueues, no job holds one, and the
// slots are not looked at (the common case).
func (q *Queues) idleHolders() []*job {
	if q.nextListed(idleQueues, 0) == nil {
		return nil
	}
	var out []*job
	for idx := range q.slots {
		if s := &q.slots[idx]; s.idle && s.state == slotGranted && s.owner != noJob {
			if v := q.jobs[s.owner]; !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// servedWithIdle reports whether x's request (see requestServed) is
// served by the free slots, those kept for it and the idle slots of the
// jobs of idlers behind it in its queue: a claim of x's takes them, and
// they come back at once (claim.go), so they are there to be decided
// with the free slots. Only those a claim may take: not below a gang's
// minimum, nor those of a job that took x's at this instant (lostNowTo).
func (q *Queues) servedWithIdle(x *job, idlers []*job) bool {
	if !x.active() || q.holdOf(x) != notHeld || x.waitsForDriver() {
		return false
	}
	extra := make([]int, len(q.profiles))
	n, xk := 0, keyOf(x)
	for _, v := range idlers {
		if v == x || v.queue != x.queue || v.hkey.compare(xk) <= 0 || x.lostNowTo(v, q.now) {
			continue
		}
		room := len(v.held)
		if g := v.spec.Gang; g != nil && v.gangDone && !v.gangExpired {
			room = v.granted - g.MinSlots
		}
		for _, idx := range v.held {
			if s := &q.slots[idx]; s.idle && room > 0 {
				extra[s.profile]++
				room--
				n++
			}
		}
	}
	return n > 0 && q.requestServedWith(x, extra)
}

// driverProfile returns the profile of the slot j's driver would take
// now (its placeholders and reserved slots first, as takeFor), if one
// serves it.
func (q *Queues) driverProfile(j *job) (int32, bool) {
	avail, prof := q.availableTo(j, []resource.Count{{Profile: *j.spec.Driver, N: 1}})
	return q.driverProfileIn(j, avail, prof)
}

// driverProfileIn returns the profile of the slot of the supply avail
// (of profile indices prof, see supplyOf) that j's driver would take, if
// one serves it.
func (q *Queues) driverProfileIn(j *job, avail []resource.Count, prof []int32) (int32, bool) {
	if mask := q.driverMask(j); mask != nil {
		// Only the slots that leave its regions room (driverslot.go).
		k := 0
		for i := range avail {
			if mask[prof[i]] {
				avail[k], prof[k] = avail[i], prof[i]
				k++
			}
		}
		avail, prof = avail[:k], prof[:k]
	}
	a := q.assign([]resource.Count{{Profile: *j.spec.Driver, N: 1}}, avail)
	if !a.Complete() {
		return 0, false
	}
	return prof[a.Pairs[0].Slot], true
}

// keptForStart reports whether v's idle slots stay out of c's claim: a
// job other than c reclaimed slots of v for its driver at this instant,
// counting on v's other slots for its first regions (preemptFor).
func (q *Queues) keptForStart(c, v *job) bool {
	if !v.lostAt.Equal(q.now) {
		return false
	}
	for _, id := range v.lostTo {
		if d := q.jobs[id]; d != nil && d != c && d.driverReclaim && d.reclaimAt.Equal(q.now) {
			return true
		}
	}
	return false
}
