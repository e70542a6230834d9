package admission

import "github.com/regionsched/regionsched/resource"

// Only the first job that waits in a pass claims (see visit): the jobs
// ahead of it in grant order are served, and their slots come back as
// their tasks end. With several queues that is not enough. The first
// waiting job is in the queue that comes first, and while that queue,
// or its siblings, always has a job waiting, the jobs of a queue that
// comes later never claim: if they hold part of what they need, idle,
// and every other slot is taken, none of them progresses, and the
// queue keeps its slots idle for as long as the others have work (the
// fair order hands it no freed slot: it holds its share already). That
// is the deadlock a claim exists to break, within one queue.
//
// So once the passes end, the first waiting job of every queue that may
// take no free slot claims what it lacks as it would if its queue were
// alone: from the jobs of its own queue behind it only, with the same
// rules (victims in victim order, drivers never, idle slots first, only
// if it completes the lack). Slots taken within a queue change no
// queue's holdings, so no guarantee, maximum or fair share across
// queues is touched. With one queue this is the pass's own claim, and
// nothing changes.

// claimWithinQueues lets the first waiting job of each queue that may
// take no free slot, and whose jobs hold slots unused, claim within its
// queue (see above): a queue whose slots all run tasks progresses.
func (q *Queues) claimWithinQueues() {
	if len(q.qorder) < 2 {
		return
	}
	for qu := range q.listedQueues(idleQueues) {
		if qu.order.Len() == 0 || q.freeFor(qu) > 0 {
			continue
		}
		if j := q.firstUnblocked(qu); j != nil {
			q.claimWithin(qu, j)
		}
	}
}

// firstUnblocked returns the first job of qu's order that its queue's
// policy does not hold back (StateAware, maxRunningJobs), nil if none.
func (q *Queues) firstUnblocked(qu *queue) *job {
	for n := qu.order.First(); n != nil; n = n.Next() {
		if j := n.Item(); q.holdOf(j) == notHeld {
			return j
		}
	}
	return nil
}

// claimWithin makes j's claim within its queue qu, under the same
// conditions as the first waiting job of a pass (visit). A job that
// claimed already is left alone: what it lacks is on its way, or a pass
// that serves it its reserved slots finds the claim stale and gives it
// up, and it claims again in the next decision.
func (q *Queues) claimWithin(qu *queue, j *job) {
	if len(j.reserved)+len(j.incoming) > 0 || j.noClaimIn == q.decision || q.yielder == j {
		return
	}
	lack := j.headNeed()
	if lack == nil || q.overtaken(j) {
		return
	}
	if q.waitsForRoom(qu, j, lack) {
		return // it waits for its queue's slots to come back (see visit)
	}
	if n := sumCounts(lack); q.heldBehindIn(qu, j.key, n) < n {
		return // its queue's jobs behind it hold too little
	}
	q.claimScratch.within = qu.node
	q.claim(j, lack)
	q.claimScratch.within = nil
}

// waitsForRoom reports whether j, of queue qu, lacking lack, claims
// nothing because of its queues' maxSlots: they leave too little room
// for what it lacks beyond its reserved slots and placeholders, and the
// other jobs under them hold too little for a claim; or its driver's
// first regions could not follow it within the room left (a gang's too:
// the slots its claim kept would count against its queues' maxima,
// beside jobs that need them to progress, for a gang that could not
// start).
func (q *Queues) waitsForRoom(qu *queue, j *job, lack []resource.Count) bool {
	n, room := sumCounts(lack)-len(j.reserved)-len(j.placeholders), q.room(qu)
	return (n > room && n > room+q.heldUnderCap(j)) ||
		(j.driver && !j.hasSlot && !q.startFitsRoom(j))
}

// heldBehindIn counts, up to enough, the slots a claim may take of the
// jobs of qu behind key k (heldBehind within one queue).
func (q *Queues) heldBehindIn(qu *queue, k orderKey, enough int) int {
	n := 0
	for h := qu.holders.Last(); h != nil && n < enough; h = h.Prev() {
		if h.Item().hkey.compare(k) <= 0 {
			break
		}
		n += len(h.Item().held)
	}
	return n
}
