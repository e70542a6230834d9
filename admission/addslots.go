package admission

import (
	"fmt"
	"slices"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// AddSlots adds slots to the cluster at time now: a node that joined a
// running cluster. They are free; the next Decide grants them by the
// queues' policies like any freed slot. The cluster's Capacity grows by
// them (and Config.Cluster, if set, counts them too), and every job that
// may hold slots (accepted, not ended) is told the new capacity, so that a region which did not
// fit before may now. A job rejected earlier stays rejected.
//
// Errors (nothing changes): a *slotpool.SlotError wrapping
// slotpool.ErrDuplicateSlot for an id the cluster already has, or one
// given twice.
func (q *Queues) AddSlots(now time.Time, slots ...slotpool.Slot) error {
	seen := make(map[slotpool.SlotID]bool, len(slots))
	for _, s := range slots {
		if _, dup := q.index[s.ID]; dup || seen[s.ID] {
			return &slotpool.SlotError{Op: "add", Slot: s.ID, Err: slotpool.ErrDuplicateSlot}
		}
		seen[s.ID] = true
	}
	if len(slots) == 0 {
		return nil
	}
	q.now = now
	added := make([]resource.Profile, len(slots))
	for i, s := range slots {
		p, ok := q.profIdx[s.Profile]
		if !ok {
			p = int32(len(q.profiles))
			q.profIdx[s.Profile] = p
			q.profiles = append(q.profiles, s.Profile)
			q.free = append(q.free, nil)
		}
		idx := int32(len(q.slots))
		q.index[s.ID] = idx
		q.slots = append(q.slots, cslot{slot: s, profile: p, owner: noJob, claimant: noJob, from: noJob})
		q.put(idx)
		added[i] = s.Profile
	}
	q.capacity = resource.Tally(q.slotProfiles())
	if q.cfg.Cluster != nil {
		q.cfg.Cluster = append(slices.Clone(q.cfg.Cluster), resource.Tally(added)...)
	}
	q.capacityChanged()
	return nil
}

// slotProfiles returns the profile of every slot of the cluster (not
// those removed), in slot order.
func (q *Queues) slotProfiles() []resource.Profile {
	out := make([]resource.Profile, 0, len(q.slots)-q.nGone)
	for i := range q.slots {
		if q.slots[i].state != slotGone {
			out = append(out, q.slots[i].slot.Profile)
		}
	}
	return out
}

// checkCapacity checks that Capacity counts every slot of the cluster,
// those AddSlots added included and those RemoveSlots removed not, and
// that every slot is indexed by its id (a removed one by none).
func (q *Queues) checkCapacity() error {
	gone := 0
	for i := range q.slots {
		if q.slots[i].state == slotGone {
			gone++
			if idx, ok := q.index[q.slots[i].slot.ID]; ok && idx == int32(i) {
				return fmt.Errorf("admission: slot %d (index %d) was removed but is still indexed", q.slots[i].slot.ID, i)
			}
			continue
		}
		if idx, ok := q.index[q.slots[i].slot.ID]; !ok || idx != int32(i) {
			return fmt.Errorf("admission: slot %d (index %d) is indexed at %d", q.slots[i].slot.ID, i, idx)
		}
	}
	if gone != q.nGone || len(q.index) != len(q.slots)-gone {
		return fmt.Errorf("admission: %d slots removed (counted %d), %d indexed of %d", gone, q.nGone, len(q.index), len(q.slots))
	}
	want := resource.Tally(q.slotProfiles())
	if !slices.Equal(want, q.capacity) {
		return fmt.Errorf("admission: the capacity says %v, the slots are %v", q.capacity, want)
	}
	return nil
}
