package kubernetes

import (
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// nodeChange applies what an observation of the nodes changed
// (Inventory.Observe). The slots lost (a node deleted, cordoned, not
// Ready, or with less room) leave the admission
// (multijob.Scheduler.RemoveSlots): they count no more in its capacity,
// its gangs' and StateAware's fits or its fair shares; the pods of the
// run in them are deleted; the job that held one hears of it as lost (its
// region fails over), a job whose driver ran in one fails, and a job that
// no longer fits the cluster fails at once (admission.Queues.RemoveSlots
// says why). The slots added (a node that joined or came back, room a
// pod not of the run left) join the admission
// (multijob.Scheduler.AddSlots): jobs waiting get them at once, by the
// queues' policies.
func (r *Runner) nodeChange(now time.Time, ch Change) error {
	if len(ch.Lost) > 0 {
		ids := make([]slotpool.SlotID, len(ch.Lost))
		for i, l := range ch.Lost {
			r.log.Info("slot lost", zap.Int64("slot", int64(l.Slot.ID)), zap.String("node", l.Slot.Node), zap.String("why", l.Why))
			ids[i] = l.Slot.ID
			if job, ok := r.owner[l.Slot.ID]; ok {
				r.deletePodsIn(now, job, l.Slot.ID)
			}
		}
		if err := r.s.RemoveSlots(now, ids...); err != nil {
			return err
		}
	}
	if len(ch.Added) > 0 {
		r.log.Info("slots added", zap.Int("slots", len(ch.Added)))
		if err := r.s.AddSlots(now, ch.Added...); err != nil {
			return err
		}
	}
	return nil
}

// deletePodsIn deletes the pods of a job's tasks in a slot the job no
// longer has (its node is gone), and forgets who owns the slot. The trace
// says each of those tasks failed and the slot went back (fail, then
// release), as the job's scheduler counts a lost slot's task failed.
func (r *Runner) deletePodsIn(now time.Time, job string, slot slotpool.SlotID) {
	delete(r.owner, slot)
	names := make([]string, 0, 1)
	for name, p := range r.pods {
		if p.ref.Job == job && p.slot == slot && !p.ours {
			names = append(names, name)
		}
	}
	slices.Sort(names) // (the trace in the same order every run)
	for _, name := range names {
		p := r.pods[name]
		p.ours = true
		r.traceLost(now, job, p)
		r.deletePod(name)
	}
	r.traceTakenOver(now, "", slot)
}

// Capacity returns the slots the jobs' admission counts now, per
// profile: those of the nodes at the last look (a lost node's are gone
// from it, a node that joined adds its own).
func (r *Runner) Capacity() []rsresource.Count {
	if q, ok := r.s.Cluster().(*admission.Queues); ok {
		return q.Capacity()
	}
	return nil
}
