package admission

import (
	"slices"

	"go.uber.org/zap"
)

// A driver whose job's first asks follow at once (JobSpec.StartAtOnce: a
// driver with no startup time) makes those asks at the instant it is
// granted, but only once the runtime took the grant and started the job:
// after the decision. Had the decision gone on, it would have granted
// the free slots to the jobs after the driver's, and the next decision
// of the instant, with the first asks in, would reclaim those slots at
// once for them (a task deployed and cancelled at one instant, a restart
// for nothing) or leave the driver's job waiting for slots that a lower-
// priority job took a moment earlier. So the decision that grants such a
// driver ends there: no other job is visited, no claim or preemption is
// made (those whose reason is gone are withdrawn) and no timer fires.
// The admission's NextDeadline is then the instant itself, and the next
// Decide, with the first asks in, decides the rest of the instant as if
// they had waited from its start. A decision is cut at most once per
// driver (a driver is granted once), so the decisions of an instant
// still end.
//
// The jobs served before the driver in that decision (ahead of its job
// in its queue's order, or in a queue that comes first) are served again
// in the next: their grants of the decision, not yet with their pools,
// are retracted (retract.go), so that a reclaim for the driver's first
// asks takes such a slot back as the one decision of the instant would
// have: by retracting its grant, never by cancelling what it deployed.
// Only an admission with a queue that preempts keeps the records of its
// grants; without one nothing is reclaimed at once, and the grants stay.

// cutForStart ends the decision if j's driver, just granted, is followed
// at once by j's first asks.
func (q *Queues) cutForStart(j *job) {
	if !j.spec.StartAtOnce || len(j.spec.Start) == 0 {
		return
	}
	q.startCut = true
	if q.debug {
		q.log.Debug("decision cut: the driver's first asks follow at once", zap.String("job", j.spec.Name))
	}
}

// retractBeforeCut retracts the grants of a cut decision that may be
// (retract.go), but those of a cancellation's claimant (cancelcut.go):
// the next decision of the instant makes them again, with the driver's
// first asks, or the slots the cancelled region gave back, in.
func (q *Queues) retractBeforeCut() {
	for i := range q.grantLog {
		r := &q.grantLog[i]
		if r.retracted || len(r.slots) == 0 || slices.Contains(q.cutFor, r.j) {
			continue // (a cancellation's claimant keeps its grants: cancelcut.go)
		}
		if q.retractable(r.j, r.slots[0]) == r {
			q.retract(r)
		}
	}
	q.retracted = false // (nothing is decided again in this decision)
}
