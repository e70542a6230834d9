package scenario

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// ---- time ----

// next returns the next instant something happens, if any.
func (h *Multi) next() (time.Duration, bool) {
	var at time.Duration
	ok := false
	see := func(d time.Duration) {
		if !ok || d < at {
			at, ok = d, true
		}
	}
	for _, rt := range h.running {
		if rt.end >= 0 {
			see(rt.end)
		}
	}
	for _, d := range h.starts {
		see(d)
	}
	for _, in := range h.scheduled {
		see(in.at)
	}
	if d, dok := h.s.NextDeadline(); dok {
		see(max(d.Sub(epoch), h.now))
	}
	return at, ok
}

// applyDue applies what happens at now: tasks that end, drivers that are
// up, scheduled inputs, due timers. It reports whether it did anything.
func (h *Multi) applyDue(t *testing.T) bool {
	did := false
	var ends []*htask
	for _, rt := range h.running {
		if rt.end >= 0 && rt.end <= h.now {
			ends = append(ends, rt)
		}
	}
	h.applied = append(h.applied, h.finishTasks(ends)...)
	did = did || len(ends) > 0
	var up []string
	for name, d := range h.starts {
		if d <= h.now {
			up = append(up, name)
		}
	}
	slices.Sort(up)
	for _, name := range up {
		delete(h.starts, name)
		did = true
		h.undecided = true
		if err := h.s.StartJob(epoch.Add(h.now), name); err != nil {
			h.applied = append(h.applied, fmt.Sprintf("%s driver up: start refused: %v", name, err))
			continue
		}
		h.applied = append(h.applied, name+" driver up: job starts")
	}
	slices.SortFunc(h.scheduled, func(a, b *hinput) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
	for len(h.scheduled) > 0 && h.scheduled[0].at <= h.now {
		in := h.scheduled[0]
		h.scheduled = h.scheduled[1:]
		h.applied = append(h.applied, in.apply())
		did = true
	}
	if d, ok := h.s.NextDeadline(); ok && !d.After(epoch.Add(h.now)) {
		if err := h.s.Tick(epoch.Add(h.now)); err != nil {
			t.Fatalf("tick: %v", err)
		}
		h.undecided = true
		did = true
	}
	return did
}

func (h *Multi) cmdAdvance(t *testing.T, td *datadriven.TestData) string {
	to := ParseDur(t, td, "to", MustStr(t, td, "to"))
	if to < h.now {
		td.Fatalf(t, "advance to %s: the time is %s", Ms(to), Ms(h.now))
	}
	var b strings.Builder
	if h.undecided {
		b.WriteString(h.decide(t))
	}
	turns := 0
	for {
		at, ok := h.next()
		if !ok || at > to {
			break
		}
		if at == h.now {
			turns++
			if turns > 100 {
				t.Fatalf("instant %s never settles", Ms(at))
			}
		} else {
			turns = 0
		}
		h.now = at
		if !h.applyDue(t) {
			continue
		}
		b.WriteString(h.decide(t))
	}
	h.now = to
	if b.Len() == 0 {
		return "(nothing happens)\n"
	}
	return b.String()
}
