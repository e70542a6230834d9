package simulator

import (
	"time"

	"github.com/regionsched/regionsched/admission"
)

// QueueStat is one queue of a run of several jobs (Result.Queues).
type QueueStat struct {
	// Name is the queue's full name.
	Name string
	// Guaranteed and Max are its configured guaranteed and maximum slots
	// (Max 0: unlimited).
	Guaranteed, Max int
	// Peak is the most slots it (with its children) held at once:
	// drivers, tasks' slots, gang placeholders, slots kept for its jobs.
	Peak int
	// SlotTime is the slot time it held; Share that as a share of the
	// cluster's slot time over the run.
	SlotTime time.Duration
	Share    float64
}

// queueTrack follows what each queue holds, decision by decision.
type queueTrack struct {
	byName map[string]*QueueStat
	held   map[string]int
	since  time.Duration
}

// sampleQueues records what each queue holds after a decision (only over
// the in-process admission, which reports it).
func (p *jobsPolicy) sampleQueues() {
	q, ok := p.m.Cluster().(*admission.Queues)
	if !ok {
		return
	}
	t := &p.queues
	now := p.e.now()
	if t.byName == nil {
		t.byName, t.held = map[string]*QueueStat{}, map[string]int{}
	}
	for name, n := range t.held {
		t.byName[name].SlotTime += time.Duration(n) * (now - t.since)
	}
	t.since = now
	for _, u := range q.Usage() {
		if u.Name == "root" && u.Guaranteed == 0 && u.Max == 0 {
			continue // (it holds every slot held: a line of its own only when configured with capacities)
		}
		st := t.byName[u.Name]
		if st == nil {
			st = &QueueStat{Name: u.Name, Guaranteed: u.Guaranteed, Max: u.Max}
			t.byName[u.Name] = st
		}
		st.Peak = max(st.Peak, u.Used)
		t.held[u.Name] = u.Used
	}
}

// queueStats returns the queues' figures at the end of a run of makespan
// on slots slots, by name.
func (p *jobsPolicy) queueStats(makespan time.Duration, slots int) []QueueStat {
	q, ok := p.m.Cluster().(*admission.Queues)
	if !ok || p.queues.byName == nil {
		return nil
	}
	t := &p.queues
	var out []QueueStat
	for _, u := range q.Usage() {
		st := t.byName[u.Name]
		if st == nil {
			continue
		}
		s := *st
		s.SlotTime += time.Duration(t.held[u.Name]) * (makespan - t.since)
		if makespan > 0 && slots > 0 {
			s.Share = float64(s.SlotTime) / (float64(makespan) * float64(slots))
		}
		out = append(out, s)
	}
	return out
}
