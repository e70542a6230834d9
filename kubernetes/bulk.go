package kubernetes

import (
	"fmt"
	"time"

	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// Bulk is the gang of one region attempt of one job: its task attempts,
// each placed in its slot. Its pods are bound all together or not at all
// (Binder.Bind).
type Bulk struct {
	Job     string
	Region  scheduler.RegionID
	Attempt scheduler.Attempt
	Places  []Placement
}

// Slots returns the slots of the bulk, each once, in placement order.
func (b *Bulk) Slots() []slotpool.SlotID {
	var out []slotpool.SlotID
	seen := map[slotpool.SlotID]bool{}
	for _, p := range b.Places {
		if !seen[p.Slot] {
			seen[p.Slot] = true
			out = append(out, p.Slot)
		}
	}
	return out
}

// JobTasks says what the runtime knows of a job's tasks beyond a
// scheduler's Deployment: their names and, under KWOK, how long they run.
type JobTasks interface {
	// TaskName names a task ("vertex#subtask").
	TaskName(v scheduler.TaskID) string
	// Duration is how long the task runs under KWOK; zero or less: until
	// its pod is deleted.
	Duration(v scheduler.TaskID) time.Duration
}

// PlanBulks groups one job's deployments (a scheduler.Ready's Deploy, in
// order) into bulks, one per region attempt, and places each task in its
// slot's node (slot looks a slot up: Inventory.Slot). The first task of a
// slot requests the slot's profile, the others sharing it nothing. A slot
// it cannot look up returns an error wrapping ErrUnknownSlot and no bulk.
func PlanBulks(run, job string, deploys []scheduler.Deployment, slot func(slotpool.SlotID) (slotpool.Slot, bool), tasks JobTasks) ([]Bulk, error) {
	var out []Bulk
	at := map[[2]int64]int{}
	placed := map[slotpool.SlotID]bool{}
	for _, d := range deploys {
		s, ok := slot(d.Slot)
		if !ok {
			return nil, fmt.Errorf("job %q task %s attempt %d: slot %d: %w", job, tasks.TaskName(d.Task), d.Attempt, d.Slot, ErrUnknownSlot)
		}
		key := [2]int64{int64(d.Region), int64(d.Attempt)}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, Bulk{Job: job, Region: d.Region, Attempt: d.Attempt})
		}
		req := rsresource.Unknown
		if !placed[d.Slot] {
			placed[d.Slot] = true
			req = s.Profile
		}
		out[i].Places = append(out[i].Places, Placement{
			Ref:      TaskRef{Run: run, Job: job, Task: d.Task, Attempt: d.Attempt, Region: d.Region},
			TaskName: tasks.TaskName(d.Task), Slot: d.Slot, Node: s.Node, Requests: req,
			CompleteAfter: tasks.Duration(d.Task),
		})
	}
	return out, nil
}
