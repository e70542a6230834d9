package admission

import (
	"slices"
	"time"

	"github.com/regionsched/regionsched/internal/inspect"
	"github.com/regionsched/regionsched/slotpool"
)

// The bookkeeping of who holds which slot. A slot is in exactly one place:
// a free stack (per profile), a job's held list (granted to its pool), a
// job's yielding list (granted, being reclaimed), a job's driver slot, or
// a job's reserved list (free, kept for the job's claim); a slot removed
// (RemoveSlots) is in none. Every move goes
// through the functions below, so the places stay consistent (the tests'
// invariants check it after every step).

// take pops n free slots of profile p.
func (q *Queues) take(p int32, n int) []int32 {
	f := q.free[p]
	out := slices.Clone(f[len(f)-n:])
	slices.Reverse(out)
	q.free[p] = f[:len(f)-n]
	q.nFree -= n
	return out
}

// put makes a slot free again.
func (q *Queues) put(idx int32) {
	s := &q.slots[idx]
	s.state, s.owner, s.claimant, s.idle, s.from, s.atShare = slotFree, noJob, noJob, false, noJob, false
	s.fromPreempt = false
	q.freed(idx, false)
	q.free[s.profile] = append(q.free[s.profile], idx)
	q.nFree++
}

// freed records that slot idx became free, or came back for a claim,
// now: by an input of the instant (its job released it or ended) if
// input and the job held it since an earlier instant.
func (q *Queues) freed(idx int32, input bool) {
	s := &q.slots[idx]
	q.stamp++
	s.freedAt, s.freedStamp, s.freedInput = q.now, q.stamp, input && s.heldSince.Before(q.now)
}

// hold records a slot as granted to j's pool.
func (q *Queues) hold(j *job, idx int32) {
	s := &q.slots[idx]
	s.state, s.owner, s.claimant, s.idle, s.from, s.atShare = slotGranted, j.id, noJob, false, noJob, false
	s.fromPreempt, s.reclaimSent = false, false
	s.heldSince = q.now
	s.pos = int32(len(j.held))
	j.held = append(j.held, idx)
	q.heldChanged(j, idx, 1)
	q.addGranted(j, 1)
}

// unhold removes a granted slot from its owner's held list.
func (q *Queues) unhold(j *job, idx int32) {
	pos := q.slots[idx].pos
	last := j.held[len(j.held)-1]
	j.held[pos] = last
	q.slots[last].pos = pos
	j.held = j.held[:len(j.held)-1]
	q.heldChanged(j, idx, -1)
}

// heldChanged counts slot idx in (d = 1) or out of (d = -1) j's held
// list, just changed: its queue's reclaimable slots, those of them idle,
// and its jobs by how many each holds.
func (q *Queues) heldChanged(j *job, idx int32, d int) {
	j.queue.heldSlots += d
	if q.slots[idx].idle {
		q.addIdleHeld(j, d)
		q.updateIdleVictim(j)
	}
	j.queue.heldResized(len(j.held)-d, len(j.held))
}

// updateHolder puts a job where it belongs in its queue's holders tree
// (and in the victims tree of all queues, updateVictim): in it, at its
// current key, while it holds slots that may be reclaimed.
func (q *Queues) updateHolder(j *job) {
	q.updateVictim(j)
	want := len(j.held) > 0
	if j.inHolders {
		if want && keyOf(j) == j.hkey {
			return
		}
		j.queue.holders.Remove(&j.holderNode)
		j.inHolders = false
	}
	if want {
		j.hkey = keyOf(j)
		j.queue.holders.Insert(&j.holderNode, j)
		j.inHolders = true
	}
}

// reserveFor keeps a free slot for claimant c.
func (q *Queues) reserveFor(c *job, idx int32) {
	s := &q.slots[idx]
	s.state, s.claimant = slotReserved, c.id
	if len(c.reserved) == 0 {
		q.addReserver(c)
	}
	c.queue.listClaimant(c)
	c.reserved = append(c.reserved, idx)
	c.claimAdds++
	q.nReserved++
	q.addUse(c.queue, 1)
}

// addReserver lists a job that now has reserved slots.
func (q *Queues) addReserver(j *job) {
	qu := j.queue
	j.reserverPos = len(qu.reservers)
	qu.reservers = append(qu.reservers, j)
	q.listQueue(reservingQueues, qu, true)
}

// removeReserver unlists a job whose reserved slots are gone, in O(1).
func (q *Queues) removeReserver(j *job) {
	qu := j.queue
	last := qu.reservers[len(qu.reservers)-1]
	qu.reservers[j.reserverPos] = last
	last.reserverPos = j.reserverPos
	qu.reservers[len(qu.reservers)-1] = nil
	qu.reservers = qu.reservers[:len(qu.reservers)-1]
	q.listQueue(reservingQueues, qu, len(qu.reservers) > 0)
}

// addIncoming records a slot being reclaimed for claimant c.
func (q *Queues) addIncoming(c *job, idx int32) {
	c.incoming = append(c.incoming, idx)
	c.claimAdds++
	c.queue.listClaimant(c)
}

// listClaimant lists a job whose claim keeps slots in its queue's
// claimants.
func (qu *queue) listClaimant(c *job) {
	if !c.claimListed {
		c.claimListed = true
		qu.claimants = append(qu.claimants, c)
	}
}

// claims returns the jobs of qu whose claims keep slots, dropping from
// its list those whose claims keep none any more (a claim is given up in
// many places; the list is brought up to date only here).
func (qu *queue) claims() []*job {
	keep := qu.claimants[:0]
	for _, c := range qu.claimants {
		if len(c.reserved)+len(c.incoming) == 0 {
			c.claimListed = false
			continue
		}
		keep = append(keep, c)
	}
	clear(qu.claimants[len(keep):])
	qu.claimants = keep
	return keep
}

// takeReserved pops one of c's reserved slots of profile p, if any.
func (q *Queues) takeReserved(c *job, p int32) (int32, bool) {
	for i := len(c.reserved) - 1; i >= 0; i-- {
		if idx := c.reserved[i]; q.slots[idx].profile == p {
			c.reserved = slices.Delete(c.reserved, i, i+1)
			q.nReserved--
			q.addUse(c.queue, -1)
			if len(c.reserved) == 0 {
				q.removeReserver(c)
			}
			q.unpark(c)
			return idx, true
		}
	}
	return 0, false
}

// dropClaim gives up c's claim: its reserved slots are free again, and
// the slots being reclaimed for it will be free when they come back.
func (q *Queues) dropClaim(c *job) { q.dropClaimKeeping(c, nil) }

// dropClaimKeeping is dropClaim, but the reserved slots keep says to
// keep stay reserved for c.
func (q *Queues) dropClaimKeeping(c *job, keep func(idx int32) bool) {
	had, kept := len(c.reserved), c.reserved[:0]
	for _, idx := range c.reserved {
		if keep != nil && keep(idx) {
			kept = append(kept, idx)
			continue
		}
		q.put(idx)
		q.unreserved = true
	}
	q.nReserved -= had - len(kept)
	q.addUse(c.queue, len(kept)-had)
	if had > 0 && len(kept) == 0 {
		q.removeReserver(c)
	}
	coming := c.incoming[:0]
	for _, idx := range c.incoming {
		if q.slots[idx].preempt {
			coming = append(coming, idx) // preempted for it: withdrawn only when stale (preempt.go)
			continue
		}
		q.unyield(idx) // nobody needs it any more: its job keeps it
	}
	c.reserved, c.incoming = kept, coming
	q.unpark(c)
}

// unyield gives a slot being reclaimed (and not revoked) back to its
// owner's held slots: the claim it was reclaimed for is gone, so it may
// be reclaimed again, by the next claim or preemption that needs it. (Its
// owner's pool, asked for it with a Reclaim, gives it back when its task
// ends, as it does every freed slot in a multi-job run.)
//
// A slot a preemption of this instant passed over as leaving its job
// (passedAt: it took a slot of a job later in victim order in its place)
// stays asked back, for nobody: it comes back free when its task ends.
// Back among its job's held slots, it would leave that job running tasks
// in a slot the preemption did not take while a job before it in victim
// order lost one: victims are the lowest priority first.
func (q *Queues) unyield(idx int32) {
	s := &q.slots[idx]
	s.claimant, s.revokeAt, s.preempt, s.atShare = noJob, time.Time{}, false, false
	if s.state != slotReclaiming || s.revoked || s.owner == noJob || s.passedAt.Equal(q.now) {
		return
	}
	v := q.jobs[s.owner]
	v.dropYielding(idx)
	s.state = slotGranted
	s.pos = int32(len(v.held))
	v.held = append(v.held, idx)
	q.heldChanged(v, idx, 1)
	q.updateHolder(v)
}

// removeIdx deletes one occurrence of idx from a small list.
func removeIdx(list []int32, idx int32) []int32 {
	if i := slices.Index(list, idx); i >= 0 {
		return slices.Delete(list, i, i+1)
	}
	return list
}

// markIdle records (or clears) that the slots an ask of j listed as held
// unused are idle; slots no longer granted to j are skipped.
func (q *Queues) markIdle(j *job, a *jobAsk, idle bool) {
	for _, idx := range a.holding {
		if s := &q.slots[idx]; s.state == slotGranted && s.owner == j.id && s.idle != idle {
			s.idle = idle
			d := -1
			if idle {
				d = 1
			}
			q.addIdleHeld(j, d)
		}
	}
	q.updateIdleVictim(j)
}

// KeptSlot is a slot the admission keeps for a job without anything of
// the job in it (see Queues.Kept).
type KeptSlot struct {
	// Slot is the slot kept.
	Slot slotpool.SlotID
	// Job names the job it is kept for.
	Job string
	// Placeholder: a placeholder of the job's gang (reserved for the
	// gang until a task of the job takes it or it goes back); otherwise a
	// free slot reserved for the job's claim (what it lacks).
	Placeholder bool
}

// Kept appends to dst the slots kept for jobs with nothing of theirs in
// them: gang placeholders and free slots reserved for claims, the
// placeholders first. Such a slot sits idle and no other job may take
// it: a runtime may show it as kept for its job. It costs O(1)
// when no slot is kept, else O(jobs with a gang timer, and claimants,
// plus the slots kept).
func (q *Queues) Kept(dst []KeptSlot) []KeptSlot {
	if q.nPlaceholders > 0 {
		for _, j := range q.gangJobs {
			for _, idx := range j.placeholders {
				dst = append(dst, KeptSlot{Slot: q.slots[idx].slot.ID, Job: j.spec.Name, Placeholder: true})
			}
		}
	}
	if q.nReserved > 0 {
		for qu := range q.listedQueues(reservingQueues) {
			for _, j := range qu.reservers {
				for _, idx := range j.reserved {
					dst = append(dst, KeptSlot{Slot: q.slots[idx].slot.ID, Job: j.spec.Name})
				}
			}
		}
	}
	return dst
}

// askedBack appends to dst the slots asked back from the jobs that hold
// them (see inspect.AskedBack), in slot order. It costs O(slots).
func (q *Queues) askedBack(dst []inspect.AskedBack) []inspect.AskedBack {
	for i := range q.slots {
		s := &q.slots[i]
		if s.state != slotReclaiming || s.revoked || s.owner == noJob {
			continue
		}
		ab := inspect.AskedBack{Slot: s.slot.ID, From: q.jobs[s.owner].spec.Name, Preempted: s.preempt}
		if s.claimant != noJob {
			ab.For = q.jobs[s.claimant].spec.Name
		}
		dst = append(dst, ab)
	}
	return dst
}
