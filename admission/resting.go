package admission

// A job with reserved slots waits for the rest of its claim to come back.
// While no slot is free, a pass visits it (walkSparse) only to find, as a
// rule, that nothing changed: its reserved slots still do not complete
// its ask, its claim is still complete, and it keeps waiting. With such a
// job in most queues of a busy cluster, those visits would be most of a
// pass's work. So a visit that changes nothing in a pass with no slot
// free (nor placeholder) leaves its job at rest, with a mark of what it
// looked at of the job (restMark); a pass with no slot free passes over
// a queue whose jobs with reserved slots are all still at rest (their
// marks hold, and what a visit looks at beyond the job is checked afresh:
// its queues' room under their maxima, whether its driver left its slot
// to another), and ends once no queue left has a job that is not.
// Passing over a visit that would change nothing changes no decision.
//
// Jobs whose visit looks at more (not started yet: StateAware and
// maxRunningJobs hold them back; a driver without its slot; a gang and
// its placeholders) are never at rest.

// restMark is what a visit that changed nothing looked at of its job: the
// slots added to its claim so far, how many are reserved and coming, and
// its asks' version. Any change to what it has reserved or coming, or to
// its asks, changes the mark.
type restMark struct {
	adds               uint64
	reserved, incoming int
	asks               uint64
	set                bool
}

// restMarkOf is j's restMark as j stands.
func restMarkOf(j *job) restMark {
	return restMark{adds: j.claimAdds, reserved: len(j.reserved), incoming: len(j.incoming), asks: j.asks.ver, set: true}
}

// mayRest reports whether a visit of j now may leave it at rest, or be
// passed over if it is: no slot is free, no placeholder is in play, and
// j is a started job with its driver's slot (if it has a driver),
// without a gang, that did not leave its driver's slot to another in
// this pass.
func (q *Queues) mayRest(j *job) bool {
	return !q.visitAll && q.nFree == 0 && q.nPlaceholders == 0 && j.state != JobAccepted &&
		!(j.driver && !j.hasSlot) && j.spec.Gang == nil && len(j.placeholders) == 0 && q.yielder != j
}

// markResting records that a visit of j changed nothing (see above).
func (q *Queues) markResting(j *job) {
	if q.mayRest(j) && len(j.reserved) > 0 {
		j.rest = restMarkOf(j)
	}
}

// atRest reports whether a visit of j, of queue qu, would change
// nothing: its mark holds, and its queues' maxima leave room for what it
// lacks (waitsForRoom, as the visit checks it).
func (q *Queues) atRest(qu *queue, j *job) bool {
	if !j.rest.set || j.rest != restMarkOf(j) || !q.mayRest(j) {
		return false
	}
	lack := j.headNeed()
	return lack != nil && !q.waitsForRoom(qu, j, lack)
}

// reserversAtRest reports whether every job of qu with reserved slots
// that a walk would visit is at rest: the walk of qu in a pass with no
// slot free would change nothing.
func (q *Queues) reserversAtRest(qu *queue) bool {
	for _, r := range qu.reservers {
		if r.inTree && !q.atRest(qu, r) {
			return false
		}
	}
	return true
}
