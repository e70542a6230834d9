package engine

import (
	"fmt"

	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// occupant is a task attempt running in a slot.
type occupant struct {
	job    string // its job's name ("" in a run of one job)
	task   scheduler.TaskID
	name   string
	vertex topology.JobVertexID
	group  string // slot sharing group
}

// slotTable is the runtime's local slots and what runs in each. It checks
// what the scheduler promises: a task is deployed only into a slot the
// runtime offered, a slot holds tasks of one job only, at most one subtask
// of each vertex and only vertices of one slot sharing group, and a slot
// that went back is empty. Guarded by host.mu.
type slotTable struct {
	offered map[scheduler.SlotID]bool
	in      map[scheduler.SlotID][]occupant
	peak    int            // most slots in use at once
	held    map[string]int // slots in use, by job
	peaks   map[string]int // most slots in use at once, by job
}

// newSlotTable makes n slots, ids 1 ... n.
func newSlotTable(n int) *slotTable {
	t := &slotTable{offered: map[scheduler.SlotID]bool{}, in: map[scheduler.SlotID][]occupant{},
		held: map[string]int{}, peaks: map[string]int{}}
	for i := 1; i <= n; i++ {
		t.offered[scheduler.SlotID(i)] = true
	}
	return t
}

// slots returns the slots to offer.
func (t *slotTable) slots() []scheduler.Slot {
	out := make([]scheduler.Slot, 0, len(t.offered))
	for i := 1; i <= len(t.offered); i++ {
		out = append(out, scheduler.Slot{ID: scheduler.SlotID(i)})
	}
	return out
}

// place puts a task into a slot.
func (t *slotTable) place(slot scheduler.SlotID, o occupant) error {
	if !t.offered[slot] {
		return fmt.Errorf("scheduler deployed %s into slot %d, which the runtime never offered", o.name, slot)
	}
	for _, other := range t.in[slot] {
		if other.job != o.job {
			return fmt.Errorf("scheduler deployed %s into slot %d, which still runs %s of job %s", o.name, slot, other.name, other.job)
		}
		if other.vertex == o.vertex || other.group != o.group {
			return fmt.Errorf("scheduler deployed %s into slot %d, which still runs %s", o.name, slot, other.name)
		}
	}
	if len(t.in[slot]) == 0 {
		t.held[o.job]++
		t.peaks[o.job] = max(t.peaks[o.job], t.held[o.job])
	}
	t.in[slot] = append(t.in[slot], o)
	t.peak = max(t.peak, len(t.in))
	return nil
}

// leave takes a task of a job out of its slot.
func (t *slotTable) leave(slot scheduler.SlotID, job string, task scheduler.TaskID) {
	ts, ok := t.in[slot]
	if !ok {
		return
	}
	for i, o := range ts {
		if o.job == job && o.task == task {
			ts = append(ts[:i], ts[i+1:]...)
			break
		}
	}
	if len(ts) == 0 {
		t.held[job]--
		delete(t.in, slot)
	} else {
		t.in[slot] = ts
	}
}

// checkReleased checks that a slot the scheduler gave back is empty.
func (t *slotTable) checkReleased(slot scheduler.SlotID) error {
	if ts := t.in[slot]; len(ts) > 0 {
		return fmt.Errorf("scheduler released slot %d while %s still runs in it", slot, ts[0].name)
	}
	return nil
}

// peakOf returns the most slots job held at once.
func (t *slotTable) peakOf(job string) int { return t.peaks[job] }
