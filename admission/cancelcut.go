package admission

import (
	"slices"

	"go.uber.org/zap"
)

// A preemption that cancels a task at once (a reclaim timeout of 0, or
// one that expired) cancels its region: the victim's runtime restarts the
// region and gives back the other slots its tasks ran in, at the same
// instant, but only once its pool took the Revoke: after the decision.
// Had the decision gone on, it would have granted the free slots without
// them, and the next decision of the instant would hand the slots that
// came back to whoever waits then: two slots of one instant decided
// apart, so that a job waiting for two could see a job below it take
// both, one at a time (a fair share broken, a larger ask passed over).
// So a decision that cancels a task of a victim that runs tasks in other
// slots too ends once that preemption is made: no other job preempts in
// it, and its grants of asks (not yet with their pools) are retracted
// (retract.go) once its timers fired, so that the next Decide of the
// instant, with the Revoke's answer in, decides them together with the
// slots that came back. (Its timers fire before the retraction, as
// after any decision: a timed preemption they withdraw finds the
// instant's grants as they were. A driver's grant, a gang's
// placeholders and a grant of slots a preemption brought stay made.)
//
// The grants of the claimant the cancellation was for stay made too:
// its preemption served what it waited for beside them (its waiting
// bulks whole, counting what the decision granted it). Taken back, they
// could go to a job before it in its queue's order (a victim whose
// cancelled region asks again, among others), and the claimant, short
// again, would cancel that job's new region in the next decision of the
// instant, and so on without end.
//
// A decision is cut so only by a cancellation, and a task is cancelled
// once, so the decisions of an instant still end; the victim's pool has
// the Revoke to take, so the runtime decides again. A victim whose other
// slots keep running (a region the cancelled one does not restart) gives
// nothing back, and the next decision makes the same grants again.

// noteCancel notes that a task of v was cancelled at once for claimant
// c: the decision ends if v runs tasks in other slots too (see above).
// The slots preempted from it are out of its held slots already.
func (q *Queues) noteCancel(v, c *job) {
	for _, h := range v.held {
		if !q.slots[h].idle {
			if !slices.Contains(q.cutFor, c) {
				q.cutFor = append(q.cutFor, c)
			}
			if q.debug && !q.cancelCut {
				q.log.Debug("decision cut: a cancelled region may give slots back", zap.String("victim", v.spec.Name), zap.String("for", c.spec.Name))
			}
			q.cancelCut = true
			return
		}
	}
}

// cut reports whether the decision ends here (a driver whose first asks
// follow at once, startcut.go, or a cancellation, above).
func (q *Queues) cut() bool { return q.startCut || q.cancelCut }
