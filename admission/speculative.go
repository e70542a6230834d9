package admission

import (
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// Speculative asks (slotpool.Ask.Speculative): a job's pool asks for one
// slot for a speculative attempt of a slow task. Queues keeps them apart
// from the regular asks, in arrival order over every job, and grants
// them after each decision, once every regular ask was served what
// fits: a speculative ask is granted a free slot only if
//
//   - no regular demand of any job waits that the slot could serve: no
//     ask of a job's pool (whatever its size, so a region waiting for
//     several slots is not overtaken by one), no driver, no gang; the
//     jobs a queue holds back (StateAware, maxRunningJobs) count too;
//   - the slot is on none of the nodes, and none of the slots, the ask
//     avoids (the nodes found slow);
//   - its job has started (it had a grant) and may be granted now, as
//     any grant: its queue and their parents have room under their
//     maxSlots for the slot.
//
// Oldest ask first; among the free slots of the first profile (in the
// order the cluster lists them) that serves the ask, the one on top of
// the free stack. A granted speculative slot is an ordinary granted slot
// of its job from then on: it comes back with the pool's SlotRelease when
// the attempt ends, and claims and preemption may take it back as any
// other (it is not taken back first, nor protected): a regular ask that
// arrives later waits for it as for any slot in use. Flink does not
// preempt speculative attempts either.

// specAsk is an outstanding speculative ask.
type specAsk struct {
	job        *job
	id         slotpool.AskID
	profile    resource.Profile
	avoid      []string
	avoidSlots []slotpool.SlotID
}

// addSpecAsk records a speculative ask of j; an ask that is not for one
// slot is refused.
func (q *Queues) addSpecAsk(j *job, m slotpool.Ask) error {
	if len(m.Gang.Groups) != 1 || m.Gang.Groups[0].MinMembers != 1 {
		return fmt.Errorf("admission: job %q: speculative ask %d: %w: it asks for one slot, not %v", j.spec.Name, m.ID, slotpool.ErrSpeculativeAsk, m.Gang.Counts())
	}
	if q.specIndex(j, m.ID) >= 0 {
		return fmt.Errorf("admission: job %q: ask %d asked twice", j.spec.Name, m.ID)
	}
	q.specAsks = append(q.specAsks, &specAsk{job: j, id: m.ID, profile: m.Gang.Groups[0].Profile,
		avoid: slices.Clone(m.Avoid), avoidSlots: slices.Clone(m.AvoidSlots)})
	return nil
}

// specIndex returns the index of j's speculative ask id, or -1.
func (q *Queues) specIndex(j *job, id slotpool.AskID) int {
	return slices.IndexFunc(q.specAsks, func(a *specAsk) bool { return a.job == j && a.id == id })
}

// dropSpecAsks forgets the speculative asks of a job that ended.
func (q *Queues) dropSpecAsks(j *job) {
	q.specAsks = slices.DeleteFunc(q.specAsks, func(a *specAsk) bool { return a.job == j })
}

// speculativeAsks returns how many speculative asks wait for a slot.
func (q *Queues) speculativeAsks() int { return len(q.specAsks) }

// grantSpeculative grants the speculative asks what it may (see above),
// oldest first.
func (q *Queues) grantSpeculative() {
	if len(q.specAsks) == 0 || q.nFree == 0 {
		return
	}
	wanted := q.regularWants()
	kept := q.specAsks[:0]
	for _, a := range q.specAsks {
		if q.nFree == 0 || !q.grantSpecAsk(a, wanted) {
			kept = append(kept, a)
		}
	}
	clear(q.specAsks[len(kept):])
	q.specAsks = kept
}

// regularWants returns, per profile of the cluster, whether no
// speculative ask may take a free slot of it: it has none, or a slot of
// it could serve regular demand that waits (an ask of a pool, a driver or
// a gang of a job in any queue's order: the jobs that want a grant). The
// walk of the waiting jobs ends once every profile is wanted.
func (q *Queues) regularWants() []bool {
	wanted := make([]bool, len(q.profiles))
	left := 0 // profiles not wanted (yet)
	for p, free := range q.free {
		if len(free) == 0 {
			wanted[p] = true
		} else {
			left++
		}
	}
	mark := func(pr resource.Profile) {
		for p, sp := range q.profiles {
			if !wanted[p] && q.cfg.Matching.Serves(sp, pr) {
				wanted[p] = true
				left--
			}
		}
	}
	for _, qu := range q.qorder {
		for n := qu.order.First(); n != nil && left > 0; n = n.Next() {
			j := n.Item()
			if j.gangWaits() {
				mark(j.spec.Gang.Profile)
			}
			if j.driver && !j.hasSlot {
				mark(*j.spec.Driver)
			}
			for a := j.asks.first; a != nil; a = a.next {
				for _, c := range a.left {
					if c.N > 0 {
						mark(c.Profile)
					}
				}
			}
		}
	}
	return wanted
}

// specMayHave reports why job j may not be granted a speculative slot
// now ("" if it may).
func (q *Queues) specMayHave(j *job) string {
	switch {
	case j.state != JobStarting && j.state != JobRunning:
		return "the job is " + j.state.String()
	case j.gangWaits():
		return "its gang is not reserved"
	case q.room(j.queue) == 0:
		return "its queue, or a parent, holds its maxSlots"
	}
	return q.blocked(j)
}

// grantSpecAsk grants ask a a free slot no regular demand could use
// (wanted, per profile) if there is one, and reports whether it did.
func (q *Queues) grantSpecAsk(a *specAsk, wanted []bool) bool {
	j := a.job
	if why := q.specMayHave(j); why != "" {
		if q.debug {
			q.log.Debug("speculative ask waits", zap.String("job", j.spec.Name), zap.Int64("ask", int64(a.id)), zap.String("why", why))
		}
		return false
	}
	p, i, ok := q.specSlot(a, wanted)
	if !ok {
		return false
	}
	idx := q.free[p][i]
	sl := q.slots[idx].slot
	q.free[p] = slices.Delete(q.free[p], i, i+1)
	q.nFree--
	q.hold(j, idx)
	q.updateHolder(j)
	q.send(j, slotpool.Grant{Ask: a.id, Slots: []slotpool.Slot{sl}})
	q.event(Event{At: q.now, Job: j.spec.Name, ID: j.id, Kind: SpeculativeGranted, Slot: sl.ID,
		Reason: "no regular ask waits for a slot it could serve"})
	if q.debug {
		q.log.Debug("speculative ask granted", zap.String("job", j.spec.Name), zap.Int64("ask", int64(a.id)), zap.Int64("slot", int64(sl.ID)))
	}
	return true
}

// specSlot finds a free slot that ask a may take while no regular demand
// wants its profile (wanted): among the free slots of the first profile
// that serves the ask and has one it does not avoid, the one nearest the
// top of the free stack. It returns the profile and the slot's place in
// q.free[p]; ok false if there is none.
func (q *Queues) specSlot(a *specAsk, wanted []bool) (p, i int, ok bool) {
	for p, free := range q.free {
		if len(free) == 0 || wanted[p] || !q.cfg.Matching.Serves(q.profiles[p], a.profile) {
			continue
		}
		for i := len(free) - 1; i >= 0; i-- {
			sl := q.slots[free[i]].slot
			if (sl.Node == "" || !slices.Contains(a.avoid, sl.Node)) && !slices.Contains(a.avoidSlots, sl.ID) {
				return p, i, true
			}
		}
	}
	return 0, 0, false
}

// checkSpeculative checks the speculative asks: each is of a job that may
// hold slots, and none could be granted now (a free slot it may take
// while no regular demand that slot could serve waits).
func (q *Queues) checkSpeculative() error {
	if len(q.specAsks) == 0 {
		return nil
	}
	wanted := q.regularWants()
	for _, a := range q.specAsks {
		j := a.job
		if !j.active() {
			return fmt.Errorf("admission: job %s is %v but has speculative ask %d", j.spec.Name, j.state, a.id)
		}
		if q.specMayHave(j) != "" {
			continue
		}
		if p, i, ok := q.specSlot(a, wanted); ok {
			return fmt.Errorf("admission: speculative ask %d of job %s waits beside %s, which no regular ask waits for", a.id, j.spec.Name, q.slotName(q.free[p][i]))
		}
	}
	return nil
}
