package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/inspect"
	"github.com/regionsched/regionsched/scheduler"
)

// ---- decisions ----

// regionAt names region r at attempt a.
func regionAt(r scheduler.RegionID, a scheduler.Attempt) string {
	if a > 0 {
		return fmt.Sprintf("r%d/%d", r, a)
	}
	return fmt.Sprintf("r%d", r)
}

// placed groups a job's tasks by region attempt: "r0@1 r1@2,3".
func placed(items []placement) (string, int) {
	type key struct {
		r scheduler.RegionID
		a scheduler.Attempt
	}
	var keys []key
	slotsOf := map[key][]scheduler.SlotID{}
	all := map[scheduler.SlotID]bool{}
	for _, it := range items {
		k := key{it.region, it.attempt}
		if _, ok := slotsOf[k]; !ok {
			keys = append(keys, k)
		}
		if !slices.Contains(slotsOf[k], it.slot) {
			slotsOf[k] = append(slotsOf[k], it.slot)
		}
		all[it.slot] = true
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		ss := slotsOf[k]
		slices.Sort(ss)
		strs := make([]string, len(ss))
		for j, s := range ss {
			strs[j] = strconv.Itoa(int(s))
		}
		parts[i] = regionAt(k.r, k.a) + "@" + strings.Join(strs, ",")
	}
	return strings.Join(parts, " "), len(all)
}

type placement struct {
	region  scheduler.RegionID
	attempt scheduler.Attempt
	slot    scheduler.SlotID
}

// decide calls Ready, applies it to the runtime and renders it.
func (h *Multi) decide(t *testing.T) string {
	rd := h.s.Ready()
	if err := inspect.CheckInvariants(h.q); err != nil {
		t.Fatalf("@%s: the admission's invariants: %v", Ms(h.now), err)
	}
	h.undecided = false
	out := h.applied
	h.applied = nil
	for _, ev := range rd.Events {
		switch ev.Kind {
		case admission.Reclaimed:
			out = append(out, fmt.Sprintf("reclaim: %s takes %s of %s (%s)", ev.Job, Plural(ev.Count, "slot"), ev.Victim, ev.Reason))
		case admission.ReclaimWithdrawn:
			out = append(out, fmt.Sprintf("reclaim withdrawn: %s leaves %s to %s (%s)", ev.Job, Plural(ev.Count, "slot"), ev.Victim, ev.Reason))
		case admission.StateChanged:
			if ev.From == admission.JobNew && ev.To == admission.JobAccepted {
				continue
			}
			line := fmt.Sprintf("%s: %s -> %s", ev.Job, ev.From, ev.To)
			if ev.To == admission.JobRejected || ev.To == admission.JobFailing || ev.To == admission.JobFailed {
				line += " (" + ev.Reason + ")"
			}
			out = append(out, line)
		case admission.DriverGranted:
			out = append(out, fmt.Sprintf("%s: driver in slot %d", ev.Job, ev.Slot))
			j := h.jobs[ev.Job]
			h.starts[ev.Job] = h.now + j.startup
		case admission.PlaceholdersReleased:
			out = append(out, fmt.Sprintf("%s: placeholders released (%s)", ev.Job, ev.Reason))
		case admission.PlaceholderMismatch:
			out = append(out, fmt.Sprintf("%s: placeholder mismatch (%s)", ev.Job, ev.Reason))
		case admission.SpeculativeGranted:
			out = append(out, fmt.Sprintf("%s: speculative slot %d granted (%s)", ev.Job, ev.Slot, ev.Reason))
		case admission.PriorityChanged:
			out = append(out, fmt.Sprintf("%s: priority %d -> %d (%s)", ev.Job, ev.OldPriority, ev.NewPriority, ev.Reason))
		default:
			out = append(out, fmt.Sprintf("%s: %s (%s)", ev.Job, ev.Kind, ev.Reason))
		}
	}
	for _, jr := range rd.Jobs {
		var items []placement
		for _, c := range jr.Cancel {
			i := slices.IndexFunc(h.running, func(rt *htask) bool {
				return rt.job == jr.Job && rt.task == c.Task && rt.attempt == c.Attempt
			})
			if i < 0 {
				t.Fatalf("%s: cancel of a task not running: %+v", jr.Job, c)
			}
			rt := h.running[i]
			items = append(items, placement{rt.region, rt.attempt, rt.slot})
			h.running = slices.Delete(h.running, i, i+1)
		}
		if len(items) > 0 {
			s, _ := placed(items)
			out = append(out, fmt.Sprintf("%s: cancel %s", jr.Job, s))
		}
	}
	for _, jr := range rd.Jobs {
		for _, req := range jr.Requests {
			if req.Speculative {
				out = append(out, fmt.Sprintf("%s: speculate %s", jr.Job, regionAt(req.Region, req.Attempt)))
			}
		}
		for _, w := range jr.Won {
			j := h.jobs[jr.Job]
			out = append(out, fmt.Sprintf("%s: r%d won by attempt %d", jr.Job, j.rs.RegionOf(w.Task), w.Attempt))
		}
	}
	for _, jr := range rd.Jobs {
		j := h.jobs[jr.Job]
		var items, spec []placement
		for _, d := range jr.Deploy {
			end := time.Duration(-1)
			if dur := j.dur[j.rs.Topology().JobVertexOf(d.Task)]; dur >= 0 {
				end = h.now + dur
			}
			if slow, ok := j.slow[j.rs.Topology().VertexName(d.Task)]; ok && d.Attempt == 0 {
				end = h.now + slow
			}
			h.running = append(h.running, &htask{job: jr.Job, task: d.Task, attempt: d.Attempt, slot: d.Slot, region: d.Region, end: end})
			if d.Speculative {
				spec = append(spec, placement{d.Region, d.Attempt, d.Slot})
				continue
			}
			items = append(items, placement{d.Region, d.Attempt, d.Slot})
		}
		if len(items) > 0 {
			s, n := placed(items)
			out = append(out, fmt.Sprintf("%s: deploy %s (%s)", jr.Job, s, Plural(n, "slot")))
		}
		if len(spec) > 0 {
			s, _ := placed(spec)
			out = append(out, fmt.Sprintf("%s: deploy speculative %s", jr.Job, s))
		}
	}
	for _, end := range rd.Ended {
		line := fmt.Sprintf("%s: ended %s", end.Job, end.Outcome)
		if end.Err != nil {
			line += ": " + end.Err.Error()
		}
		out = append(out, line)
		delete(h.starts, end.Job)
		h.running = slices.DeleteFunc(h.running, func(rt *htask) bool { return rt.job == end.Job })
	}
	if len(out) == 0 {
		out = append(out, "(nothing)")
	}
	return fmt.Sprintf("@%s\n  %s\n", Ms(h.now), strings.Join(out, "\n  "))
}

// cmdStatus prints every job's state.
func (h *Multi) cmdStatus(t *testing.T) string {
	var b strings.Builder
	for _, name := range h.s.Jobs() {
		st, err := h.s.Status(name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s: %s, holds %s", name, st.Admission, Plural(st.Granted, "slot"))
		if st.HasDriverSlot {
			fmt.Fprintf(&b, " (driver in %d)", st.DriverSlot)
		}
		var run []string
		for _, rt := range h.running {
			if rt.job == name {
				run = append(run, regionAt(rt.region, rt.attempt))
			}
		}
		run = slices.Compact(run)
		if len(run) > 0 {
			fmt.Fprintf(&b, "; running %s", strings.Join(run, " "))
		}
		if w := st.Scheduler.Waiting; len(w) > 0 {
			ws := make([]string, len(w))
			for i, r := range w {
				ws[i] = fmt.Sprintf("r%d", r)
			}
			fmt.Fprintf(&b, "; waiting %s", strings.Join(ws, " "))
		}
		if st.End != nil {
			fmt.Fprintf(&b, "; ended %s at %s", st.End.Outcome, Ms(st.End.At.Sub(epoch)))
		}
		b.WriteString("\n")
	}
	for _, ab := range inspect.AskedBackSlots(h.q, nil) {
		how := "a claim"
		if ab.Preempted {
			how = "a preemption"
		}
		switch {
		case ab.For == "":
			fmt.Fprintf(&b, "slot %d of %s asked back, for nobody\n", ab.Slot, ab.From)
		default:
			fmt.Fprintf(&b, "slot %d of %s asked back for %s (%s)\n", ab.Slot, ab.From, ab.For, how)
		}
	}
	return b.String()
}

// cmdQueues prints every queue's slots held, guarantee and maximum.
func (h *Multi) cmdQueues() string {
	var b strings.Builder
	for _, u := range h.q.Usage() {
		fmt.Fprintf(&b, "%s: holds %s", u.Name, Plural(u.Used, "slot"))
		if u.Guaranteed > 0 {
			fmt.Fprintf(&b, ", guaranteed %d", u.Guaranteed)
		}
		if u.Max > 0 {
			fmt.Fprintf(&b, ", at most %d", u.Max)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// cmdKept prints the slots the admission keeps for jobs with nothing of
// theirs in them: gang placeholders, and free slots reserved for a claim.
func (h *Multi) cmdKept() string {
	var b strings.Builder
	for _, k := range h.q.Kept(nil) {
		if k.Placeholder {
			fmt.Fprintf(&b, "slot %d: a placeholder of %s\n", k.Slot, k.Job)
		} else {
			fmt.Fprintf(&b, "slot %d: reserved for %s\n", k.Slot, k.Job)
		}
	}
	if b.Len() == 0 {
		return "(none)\n"
	}
	return b.String()
}

// cmdAudit prints the audit records (JSON Lines) since the last audit
// command.
func (h *Multi) cmdAudit() string {
	out := h.audit.String()
	h.audit.Reset()
	if out == "" {
		return "(none)\n"
	}
	return out
}
