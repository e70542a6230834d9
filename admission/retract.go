package admission

import (
	"slices"
	"time"

	"github.com/regionsched/regionsched/slotpool"
)

// A preemption that cancels at once (a reclaim timeout of 0, or an idle
// slot) may pick a slot that its victim was granted in the same call of
// Decide: the victim's pool has not heard of the grant yet (its Grant is
// still in the job's messages). Revoking it would reach the pool together
// with the grant: a region that never ran would restart, and a reclaim
// would be reported of a slot its victim never used. Everything of one
// instant is decided together, so such a grant is retracted instead: its
// message is taken back, its ask waits again as it did, its slots the
// preemption picked go straight to the claimant (as a revoked slot that
// came back would), and the others are free again. A claim of the call
// may have asked such a slot back already: its Reclaim is taken back
// with the grant (a claim of another job loses the slot, as it would to
// the preemption's Revoke). No Reclaimed event, no Revoke: nothing was
// taken from the victim's pool. The passes then run again, so the slots
// are granted in the same decision.
//
// Only a grant that changed nothing but the job's slots, its ask and, if
// it was its first, its start is retracted: of free slots or its own
// reserved ones (not those a preemption brought it), not of its
// placeholders, and the only grant of its ask in the call. Otherwise the
// slot is revoked as any other. A job whose first grant is retracted is
// accepted again, as if it had not started; the claims its start gave up
// (dropBlockedClaims) are made again by the passes that follow.

// grantRecord is what serve changed with one grant of an ask: enough to
// undo it.
type grantRecord struct {
	j *job
	// ask is the ask as it was before the grant; its left and holding
	// are copies.
	ask jobAsk
	// slots are the slots granted.
	slots []int32
	// removed: the grant completed the ask, which left the job's asks.
	removed bool
	// clean: the grant may be retracted (see above).
	clean bool
	// started: it was the job's first grant, which started it.
	started bool
	// askDoneAt and askDoneStamp are the job's before the grant.
	askDoneAt    time.Time
	askDoneStamp uint64
	// retracted: it was.
	retracted bool
}

// recordGrant notes that serve is about to grant (part of) ask a to j, as
// the ask stands before the grant; clean says whether the grant may be
// retracted. It returns the record, whose slots, removed and started
// serve fills in as it grants (valid until the next call). Only an
// admission with a queue that preempts keeps records.
func (q *Queues) recordGrant(j *job, a *jobAsk, clean bool) *grantRecord {
	if len(q.grantLog) < cap(q.grantLog) {
		q.grantLog = q.grantLog[:len(q.grantLog)+1]
	} else {
		q.grantLog = append(q.grantLog, grantRecord{})
	}
	r := &q.grantLog[len(q.grantLog)-1]
	left, holding, slots := r.ask.left[:0], r.ask.holding[:0], r.slots[:0]
	*r = grantRecord{j: j, ask: *a, slots: slots, clean: clean, askDoneAt: j.askDoneAt, askDoneStamp: j.askDoneStamp}
	r.ask.left = append(left, a.left...)
	r.ask.holding = append(holding, a.holding...)
	r.ask.prev, r.ask.next = nil, nil
	return r
}

// retractable returns the record of the grant of this call of Decide
// that gave slot idx to v, if it may be retracted: clean, its ask
// granted only once in the call, and its Grant still among v's messages.
func (q *Queues) retractable(v *job, idx int32) *grantRecord {
	var found *grantRecord
	for i := range q.grantLog {
		if r := &q.grantLog[i]; r.j == v && !r.retracted && slices.Contains(r.slots, idx) {
			found = r
			break
		}
	}
	if found == nil || !found.clean {
		return nil
	}
	for i := range q.grantLog {
		if r := &q.grantLog[i]; r != found && r.j == v && r.ask.id == found.ask.id {
			return nil
		}
	}
	if q.grantMessage(found) < 0 {
		return nil
	}
	return found
}

// grantMessage returns the index of r's Grant among its job's messages;
// -1 if it is not there.
func (q *Queues) grantMessage(r *grantRecord) int {
	first := q.slots[r.slots[0]].slot.ID
	for i, m := range r.j.out {
		if g, ok := m.(slotpool.Grant); ok && g.Ask == r.ask.id && len(g.Slots) == len(r.slots) && g.Slots[0].ID == first {
			return i
		}
	}
	return -1
}

// retract undoes the grant of r: its message is taken back and its ask
// restored; its slots go back as a release of them would take them
// (those a preemption marked as reclaimed for its claimant to the
// claimant, the others free).
func (q *Queues) retract(r *grantRecord) {
	v := r.j
	r.retracted = true
	i := q.grantMessage(r)
	v.out = slices.Delete(v.out, i, i+1)
	// A claim of this call may have asked slots of the grant back: their
	// Reclaims go too.
	v.out = slices.DeleteFunc(v.out, func(m slotpool.FromAdmission) bool {
		rc, ok := m.(slotpool.Reclaim)
		return ok && slices.ContainsFunc(r.slots, func(idx int32) bool { return q.slots[idx].slot.ID == rc.Slot })
	})
	if r.removed {
		a := v.asks.newAsk()
		left, holding := a.left[:0], a.holding[:0]
		*a = r.ask
		a.left = append(left, r.ask.left...)
		a.holding = append(holding, r.ask.holding...)
		a.prev, a.next = nil, nil
		v.asks.insert(a)
		q.markIdle(v, a, true) // (its bulk never ran in them)
	} else if a, ok := v.asks.get(r.ask.id); ok {
		copy(a.left, r.ask.left)
		v.asks.took(a, a.n-r.ask.n)
	}
	v.askDoneAt, v.askDoneStamp = r.askDoneAt, r.askDoneStamp
	q.stamp++
	v.retractedAt, v.retractStamp = q.now, q.stamp
	if r.started {
		q.unstart(v)
	}
	q.markAskedBack(v) // (what comes back is no release of its own accord)
	for _, idx := range r.slots {
		q.release(v, idx)
	}
	q.unpark(v)
	q.updateHolder(v)
	q.updateOrder(v)
	q.retracted = true
}

// insert puts a back in arrival order (by stamp): an ask taken out in
// this call of Decide and restored.
func (l *jobAsks) insert(a *jobAsk) {
	x := l.first
	for x != nil && x.stamp < a.stamp {
		x = x.next
	}
	l.insertBefore(a, x)
}

// hasPreempted reports whether slots a preemption brought are reserved
// for j: a grant of them is not retracted (they would go back free).
func (q *Queues) hasPreempted(j *job) bool {
	return slices.ContainsFunc(j.reserved, func(idx int32) bool { return q.slots[idx].fromPreempt })
}

// unstart makes j, started by its first grant in this call of Decide,
// accepted again as that grant is retracted: its queues count it running
// no more, and its state changes of the call are taken back.
func (q *Queues) unstart(j *job) {
	qu := j.queue
	if j.state == JobStarting {
		qu.starting--
	}
	qu.running--
	qu.node.addRunning(-1)
	qu.weight -= j.spec.Priority
	q.dropStarting(j)
	if stamp, held := q.heldBackNow(j); held {
		// Held back before it started: it stays so in this instant.
		j.heldBackAt, j.heldBack, j.heldBackStamp = q.now, true, stamp
	}
	j.state, j.started = JobAccepted, time.Time{}
	q.stamp++
	j.acceptStamp, j.leftAcceptStamp = q.stamp, 0 // (accepted anew)
	q.events = slices.DeleteFunc(q.events, func(e Event) bool {
		return e.ID == j.id && e.Kind == StateChanged && e.At.Equal(q.now) &&
			((e.From == JobAccepted && e.To == JobStarting) || (e.From == JobStarting && e.To == JobRunning))
	})
}
