package engine

import (
	"sort"
	"time"

	"github.com/regionsched/regionsched/scheduler"
)

// RegionRun is one attempt of one region in the timeline of a run.
type RegionRun struct {
	Region  scheduler.RegionID
	Attempt scheduler.Attempt
	// Tasks names the region's subtasks ("ID#i"), in deployment order.
	Tasks []string
	// Slots lists the slots the attempt ran in, ascending, without
	// repeats.
	Slots []scheduler.SlotID
	// Deployed and Ended are times since the start of the run; Ended is
	// zero if the attempt had not ended when the run did.
	Deployed, Ended time.Duration
	// Outcome is "finished", "failed: T" (its task T failed),
	// "canceled: T failed" (restarted because task T failed),
	// "canceled" (the job ended), or "" while running.
	Outcome string
}

// runKey names one attempt of one region.
type runKey struct {
	region  scheduler.RegionID
	attempt scheduler.Attempt
}

// timeline records the region attempts of a run. Guarded by host.mu.
type timeline struct {
	runs    []*RegionRun
	byKey   map[runKey]*RegionRun
	running map[runKey]int // tasks not finished yet
}

func newTimeline() *timeline {
	return &timeline{byKey: map[runKey]*RegionRun{}, running: map[runKey]int{}}
}

// deployed adds a task of a region attempt.
func (t *timeline) deployed(k runKey, task string, slot scheduler.SlotID, at time.Duration) {
	r := t.byKey[k]
	if r == nil {
		r = &RegionRun{Region: k.region, Attempt: k.attempt, Deployed: at}
		t.byKey[k] = r
		t.runs = append(t.runs, r)
	}
	r.Tasks = append(r.Tasks, task)
	i := sort.Search(len(r.Slots), func(i int) bool { return r.Slots[i] >= slot })
	if i == len(r.Slots) || r.Slots[i] != slot {
		r.Slots = append(r.Slots[:i], append([]scheduler.SlotID{slot}, r.Slots[i:]...)...)
	}
	t.running[k]++
}

// finished counts a task of a region attempt out; the last one ends it.
func (t *timeline) finished(k runKey, at time.Duration) {
	if t.running[k]--; t.running[k] == 0 {
		t.end(k, "finished", at)
	}
}

// end ends a region attempt, unless it already ended.
func (t *timeline) end(k runKey, outcome string, at time.Duration) {
	if r := t.byKey[k]; r != nil && r.Outcome == "" {
		r.Outcome, r.Ended = outcome, at
	}
}

// snapshot copies the timeline, in deployment order (then region id).
func (t *timeline) snapshot() []RegionRun {
	out := make([]RegionRun, len(t.runs))
	for i, r := range t.runs {
		out[i] = *r
		out[i].Tasks = append([]string(nil), r.Tasks...)
		out[i].Slots = append([]scheduler.SlotID(nil), r.Slots...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Deployed != out[j].Deployed {
			return out[i].Deployed < out[j].Deployed
		}
		return out[i].Region < out[j].Region
	})
	return out
}
