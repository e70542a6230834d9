package admission

import (
	"errors"
	"fmt"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// ErrCapacityLost is wrapped by CapacityLostError.
var ErrCapacityLost = errors.New("admission: capacity lost")

// CapacityLostError is why a job failed when slots were removed
// (RemoveSlots): what it needs at once, its gang, its driver or its
// largest region, no longer fits the cluster.
type CapacityLostError struct {
	Job   string
	Queue string
	// Reason says what no longer fits and what is missing, e.g. "region
	// 2 {B#0, B#1} needs 4 slots at once; the queue's cluster can never
	// give them: missing 1 slot".
	Reason string
}

// Error names the job, its queue and what it lacks.
func (e *CapacityLostError) Error() string {
	return fmt.Sprintf("%v: job %q in queue %s: slots were removed and %s", ErrCapacityLost, e.Job, e.Queue, e.Reason)
}

// Unwrap returns ErrCapacityLost.
func (e *CapacityLostError) Unwrap() error { return ErrCapacityLost }

// ErrDriverLost is wrapped by DriverLostError.
var ErrDriverLost = errors.New("admission: driver lost")

// DriverLostError is why a job failed when its driver was lost: its slot
// removed (RemoveSlots), or the driver itself gone (DriverLost).
type DriverLostError struct {
	Job  string
	Slot slotpool.SlotID
	// Why says how it was lost, e.g. "its slot was removed".
	Why string
}

// Error names the job's driver, its slot and why it was lost.
func (e *DriverLostError) Error() string {
	return fmt.Sprintf("%v: the driver of job %q (slot %d): %s", ErrDriverLost, e.Job, e.Slot, e.Why)
}

// Unwrap returns ErrDriverLost.
func (e *DriverLostError) Unwrap() error { return ErrDriverLost }

// RemoveSlots takes slots out of the cluster at time now: a node deleted,
// cordoned or not Ready. A removed slot is gone for good: it is never
// granted again unless AddSlots adds it again. What it was doing ends at
// once:
//   - granted to a job's pool (or being asked back from it): the pool is
//     sent a slotpool.Revoke with slotpool.ReasonLost, so the task in it
//     fails over as for a slot the pool lost (its region restarts); the
//     pool's answer to it, a SlotRelease, is taken silently;
//   - a job's driver's: the job fails with a *DriverLostError (its other
//     slots go back), as a job whose driver is lost does (DriverLost);
//   - a gang placeholder: the job's gang holds one slot less;
//   - free, or reserved for a claim: the claim is given up, and made
//     again by the next Decide from what is left.
//
// The cluster's Capacity shrinks by them (and Config.Cluster, if set,
// counts them no more), and every job that may hold slots is told the new
// capacity. A job whose driver plus largest region, or whose gang not
// reserved yet, no longer fits the cluster then fails at once with a
// *CapacityLostError, as SPEC's rule for a job that can never fit says:
// the admission cannot tell a node that will come back from one that will
// not, a job left waiting would keep its driver and placeholders (slots
// the other jobs could use) for as long as the node stays away, and its
// pool already fails a region that cannot fit the capacity it is told.
// Patience belongs to the runtime, which knows its nodes: it may wait for
// a node to stay lost for a while before removing its slots (Kubernetes
// itself waits a grace period before it calls a node not Ready), and a
// node that comes back is added with AddSlots.
//
// Errors (nothing changes): a *slotpool.SlotError wrapping
// slotpool.ErrUnknownSlot for an id the cluster does not have (never
// added, or removed already), or one given twice.
func (q *Queues) RemoveSlots(now time.Time, ids ...slotpool.SlotID) error {
	seen := make(map[slotpool.SlotID]bool, len(ids))
	for _, id := range ids {
		if _, ok := q.index[id]; !ok || seen[id] {
			return &slotpool.SlotError{Op: "remove", Slot: id, Err: slotpool.ErrUnknownSlot}
		}
		seen[id] = true
	}
	if len(ids) == 0 {
		return nil
	}
	q.now = now
	removed := make([]resource.Profile, len(ids))
	var driverLost []*job
	for i, id := range ids {
		idx := q.index[id]
		removed[i] = q.slots[idx].slot.Profile
		if j := q.detach(idx); j != nil {
			driverLost = append(driverLost, j)
		}
		q.takeOut(idx)
	}
	q.capacity = resource.Tally(q.slotProfiles())
	if q.cfg.Cluster != nil {
		q.cfg.Cluster = subtractCounts(q.cfg.Cluster, removed)
	}
	for _, j := range driverLost {
		if j.active() {
			q.end(now, j, &DriverLostError{Job: j.spec.Name, Slot: q.slots[j.driverSlot].slot.ID, Why: "its slot was removed"})
		}
	}
	q.capacityChanged()
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		if !j.active() {
			continue
		}
		if reason, ok := q.fitsNeed(j, !j.gangDone && !j.gangExpired); !ok {
			q.end(now, j, &CapacityLostError{Job: j.spec.Name, Queue: j.queue.cfg.Name, Reason: reason})
		}
	}
	return nil
}

// detach ends what slot idx was doing, as RemoveSlots takes it away, and
// leaves it in no place: a job's pool holding it is sent a Revoke; a
// claim it was kept or coming for is given up. It returns the job whose
// driver ran in it (nil if none): that job is to fail.
func (q *Queues) detach(idx int32) *job {
	s := &q.slots[idx]
	switch s.state {
	case slotFree:
		q.unfree(idx)
	case slotReserved:
		q.dropClaim(q.jobs[s.claimant]) // the slot is free again
		q.unfree(idx)
	case slotGranted:
		j := q.jobs[s.owner]
		q.revokeLost(j, idx)
		q.unhold(j, idx)
		q.addGranted(j, -1)
		q.updateHolder(j)
	case slotReclaiming:
		j := q.jobs[s.owner]
		if !s.revoked {
			q.revokeLost(j, idx)
		} else {
			q.lostSlots[s.slot.ID] = j.id // its pool's echo of the Revoke comes
		}
		j.dropYielding(idx)
		q.addGranted(j, -1)
		if s.claimant != noJob {
			c := q.jobs[s.claimant]
			c.incoming = removeIdx(c.incoming, idx)
			q.dropClaim(c) // (unparks it)
		}
	case slotDriver:
		j := q.jobs[s.owner]
		j.hasSlot = false
		q.unpark(j)
		addDriver(j, -1)
		q.pin(idx, -1)
		q.addGranted(j, -1)
		return j
	case slotPlaceholder:
		j := q.jobs[s.owner]
		j.placeholders = removeIdx(j.placeholders, idx)
		q.unpark(j)
		q.nPlaceholders--
		q.pin(idx, -1)
		q.addGranted(j, -1)
	}
	return nil
}

// revokeLost sends j's pool a Revoke of slot idx with slotpool.ReasonLost
// and expects its answer.
func (q *Queues) revokeLost(j *job, idx int32) {
	id := q.slots[idx].slot.ID
	q.send(j, slotpool.Revoke{Slot: id, Reason: slotpool.ReasonLost})
	q.lostSlots[id] = j.id
}

// unfree takes a free slot off its free stack.
func (q *Queues) unfree(idx int32) {
	p := q.slots[idx].profile
	q.free[p] = removeIdx(q.free[p], idx)
	q.nFree--
}

// takeOut marks slot idx, in no place any more, as removed: it keeps its
// index (the slots' indexes never move) but no id, state or profile
// count.
func (q *Queues) takeOut(idx int32) {
	s := &q.slots[idx]
	delete(q.index, s.slot.ID)
	s.state, s.owner, s.claimant, s.from, s.fromPreempt = slotGone, noJob, noJob, noJob, false
	s.idle, s.preempt, s.revoked, s.atShare, s.revokeAt = false, false, false, false, time.Time{}
	q.nGone++
}

// capacityChanged tells every job that may hold slots the cluster's new
// capacity, and the fair-share queues to share it anew.
func (q *Queues) capacityChanged() {
	for _, qu := range q.qorder {
		qu.entitleDirty = true
	}
	q.uses++
	q.capGen++
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		q.unpark(j) // (what completes its claim may have changed)
		if j.active() {
			q.send(j, slotpool.Capacity{Slots: q.Capacity()})
		}
	}
}

// lostEcho takes a SlotRelease of job j for a slot RemoveSlots took from
// it: the answer to the Revoke it sent. It reports whether the release
// was that.
func (q *Queues) lostEcho(j *job, id slotpool.SlotID) bool {
	if owner, ok := q.lostSlots[id]; ok && owner == j.id {
		delete(q.lostSlots, id)
		return true
	}
	return false
}

// subtractCounts returns counts less one slot of each profile of removed
// (a count that reaches 0 goes).
func subtractCounts(counts []resource.Count, removed []resource.Profile) []resource.Count {
	out := make([]resource.Count, len(counts))
	copy(out, counts)
	for _, p := range removed {
		for i := range out {
			if out[i].Profile == p && out[i].N > 0 {
				out[i].N--
				break
			}
		}
	}
	keep := out[:0]
	for _, c := range out {
		if c.N > 0 {
			keep = append(keep, c)
		}
	}
	return keep
}

// DriverLost says at time now that the driver of a job is gone (its pod
// or process ended, or could not be started, while its slot is still
// there): the job fails with a *DriverLostError naming the driver and
// why, and everything it holds goes back, the driver's slot included. A
// driver is never started again in its place: what it knew of the job is
// gone with it.
//
// Errors (nothing changes): ErrUnknownJob; a *TransitionError for a job
// that ended; ErrNoDriver for a job whose driver has no slot.
func (q *Queues) DriverLost(now time.Time, name, why string) error {
	j, ok := q.byName[name]
	switch {
	case !ok:
		return fmt.Errorf("%w: %q", ErrUnknownJob, name)
	case !j.active():
		return &TransitionError{Job: name, From: j.state, To: JobFailing}
	case !j.hasSlot:
		return fmt.Errorf("%w: job %q", ErrNoDriver, name)
	}
	q.end(now, j, &DriverLostError{Job: name, Slot: q.slots[j.driverSlot].slot.ID, Why: why})
	return nil
}

// ErrNoDriver: DriverLost for a job whose driver has no slot (it has no
// driver, or its driver was not granted one yet), or an Ask of a job
// whose driver was not granted its slot yet (a job's regions ask once its
// driver runs).
var ErrNoDriver = errors.New("admission: the job's driver has no slot")
