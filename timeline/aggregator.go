package timeline

import (
	"slices"
	"time"

	"github.com/regionsched/regionsched/runfile"
)

// aggOp is one step of the aggregated view, in the order the events make
// them: a slot held from t0 to t1 (hold), a request that waited from t0
// to t1 (wait), or a failure at t0 (fail). A hold names its colour by the
// region, job vertex and job (numbers in the colorStats) of the task that
// took the slot, since the colours are decided only at the end.
type aggOp struct {
	kind                      aggKind
	slot, region, vertex, job int32
	t0, t1                    time.Duration
}

// aggKind says what an aggOp is.
type aggKind uint8

// The aggOp kinds.
const (
	opHold aggKind = iota
	opWait
	opFail
)

// heldSlot is who holds a slot in the aggregated view: the task that took
// it while it was free, until the slot is released.
type heldSlot struct {
	since               time.Duration
	region, vertex, job int32
	held                bool
}

// aggregator turns a run's events, one at a time and in time order, into
// the steps of the aggregated view (each handed to emit as soon as it is
// known) and keeps what the view needs at the end: the slots still held,
// the requests still waiting, and counts. Its memory is one entry per
// slot and per waiting request, whatever the length of the trace.
type aggregator struct {
	stats    *colorStats // names the colours of holds (shared with the picture)
	emit     func(aggOp)
	holders  []heldSlot
	asked    map[taskKey]time.Duration
	attempts int
	failed   int
	canceled int
}

func newAggregator(stats *colorStats, emit func(aggOp)) *aggregator {
	return &aggregator{stats: stats, emit: emit, asked: map[taskKey]time.Duration{}}
}

// holder returns the entry of slot s, growing the table as slots appear.
func (a *aggregator) holder(s int) *heldSlot {
	if s >= len(a.holders) {
		a.holders = append(a.holders, make([]heldSlot, s+1-len(a.holders))...)
	}
	return &a.holders[s]
}

// observe takes the next event.
func (a *aggregator) observe(e runfile.Event) {
	switch e.Kind {
	case runfile.Request:
		a.asked[taskKey{e.Job, e.Task, e.Attempt}] = e.At
	case runfile.Withdraw: // its region restarted or its job ended: it waits no more
		k := taskKey{e.Job, e.Task, e.Attempt}
		if at, ok := a.asked[k]; ok {
			a.emit(aggOp{kind: opWait, t0: at, t1: e.At})
			delete(a.asked, k)
		}
	case runfile.Deploy:
		a.attempts++
		k := taskKey{e.Job, e.Task, e.Attempt}
		if at, ok := a.asked[k]; ok {
			a.emit(aggOp{kind: opWait, t0: at, t1: e.At})
			delete(a.asked, k)
		}
		if h := a.holder(e.Slot); !h.held {
			*h = heldSlot{since: e.At, region: int32(e.Region), vertex: int32(a.stats.vertices.id(vertexOf(e.Task))),
				job: int32(a.stats.jobs.id(e.Job)), held: true}
		}
	case runfile.Release:
		if h := a.holder(e.Slot); h.held {
			a.emit(aggOp{kind: opHold, slot: int32(e.Slot), region: h.region, vertex: h.vertex, job: h.job, t0: h.since, t1: e.At})
			h.held = false
		}
	case runfile.Fail:
		a.failed++
		a.emit(aggOp{kind: opFail, t0: e.At})
	case runfile.Cancel:
		a.canceled++
	}
}

// waitingSince returns the times the requests still waiting were made, in
// ascending order.
func (a *aggregator) waitingSince() []time.Duration {
	out := make([]time.Duration, 0, len(a.asked))
	for _, at := range a.asked {
		out = append(out, at)
	}
	slices.Sort(out)
	return out
}
