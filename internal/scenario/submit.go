package scenario

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

func (h *Multi) cmdSubmit(t *testing.T, td *datadriven.TestData) string {
	g, manual := submitJob(t, td)
	sub := g.Submission()
	name := Str(td, "name", g.Name())
	j := &hjob{name: name, rs: region.FromJob(g, exchange.AllBlocking), startup: time.Second}
	for i := range g.NumVertices() {
		d := g.Vertex(topology.JobVertexID(i)).Duration
		if v := g.Vertex(topology.JobVertexID(i)); manual[v.ID] || v.Unbounded {
			d = -1
		}
		j.dur = append(j.dur, d)
	}
	spec := h.submitSpec(t, td, j, sub)
	if _, dup := h.jobs[name]; !dup {
		h.jobs[name] = j
	}
	at := sub.SubmitAt
	if a := Str(td, "at", ""); a != "" {
		at = ParseDur(t, td, "at", a)
	}
	apply := func() string {
		if err := h.s.Submit(epoch.Add(h.now), spec); err != nil {
			return "submit " + name + ": error: " + err.Error()
		}
		h.undecided = true
		return name + " arrives"
	}
	return describeSubmit(td, j, &spec) + "\n" + h.input(t, td, at, apply)
}

// submitJob returns the job a submit command gives (a file, its input,
// or regions=...) and the vertices that run until a finish command.
func submitJob(t *testing.T, td *datadriven.TestData) (*topology.JobGraph, map[string]bool) {
	manual := map[string]bool{}
	if data := JobData(t, td); data != nil {
		g, err := topology.DecodeBytes(data)
		if err != nil {
			td.Fatalf(t, "%v", err)
		}
		return g, manual
	}
	var sizes []int
	for _, v := range strings.Split(Str(td, "regions", "1"), ",") {
		sizes = append(sizes, ParseInt(t, td, "regions", v))
	}
	durs := make([]time.Duration, len(sizes))
	ds := strings.Split(Str(td, "dur", "1s"), ",")
	for i := range durs {
		d := ds[min(i, len(ds)-1)]
		if d == "manual" {
			manual[fmt.Sprintf("r%d", i)], manual[fmt.Sprintf("r%d.x", i)] = true, true
			d = "1s"
		}
		durs[i] = ParseDur(t, td, "dur", d)
	}
	if len(ds) > 1 && len(ds) != len(sizes) {
		td.Fatalf(t, "dur: one duration, or one per region")
	}
	return BuildRegions(t, td, MustStr(t, td, "name"), sizes, td.HasArg("chain"), durs), manual
}

// submitSpec is the JobSpec a submit command gives for job j (sub: what
// its job file says), the command's options over the file's.
func (h *Multi) submitSpec(t *testing.T, td *datadriven.TestData, j *hjob, sub topology.Submission) multijob.JobSpec {
	spec := multijob.JobSpec{JobSpec: admission.JobSpec{Name: j.name, Queue: sub.Queue, User: sub.User, Priority: sub.Priority}, Regions: j.rs}
	if p := Str(td, "prio", ""); p != "" {
		spec.Priority = ParseInt(t, td, "prio", p)
	}
	spec.Queue = Str(td, "queue", spec.Queue)
	spec.User = Str(td, "user", spec.User)
	if sub.Driver != nil {
		j.driver, j.startup = true, sub.Driver.Startup
	}
	if a, ok := td.Arg("driver"); ok {
		j.driver = true
		if len(a.Vals) > 0 {
			j.startup = ParseDur(t, td, "driver", a.Vals[0])
		}
	}
	if j.driver {
		spec.Driver = &resource.Unknown
		spec.StartAtOnce = j.startup == 0 // (advance starts it at the instant of its grant)
	}
	if sub.Gang != nil {
		spec.Gang = &admission.Gang{MinSlots: sub.Gang.MinSlots, Hard: sub.Gang.Hard, Timeout: sub.Gang.Timeout}
		if sub.Gang.Timeout == 0 {
			spec.Gang.Timeout = admission.NoGangWait
		}
	}
	if a, ok := td.Arg("gang"); ok {
		spec.Gang = &admission.Gang{}
		if len(a.Vals) > 0 {
			spec.Gang.MinSlots = ParseInt(t, td, "gang", a.Vals[0])
		}
	}
	if spec.Gang != nil {
		if st := Str(td, "gang-style", ""); st != "" {
			spec.Gang.Hard = st == "hard"
		}
		if d := Str(td, "gang-timeout", ""); d != "" {
			spec.Gang.Timeout = ParseDur(t, td, "gang-timeout", d)
			if spec.Gang.Timeout == 0 {
				spec.Gang.Timeout = admission.NoGangWait
			}
		}
		if spec.Gang.MinSlots == 0 {
			spec.Gang.MinSlots = j.rs.GangMinSlots(j.driver, h.slots)
		}
	}
	if a, ok := td.Arg("speculation"); ok {
		spec.Speculation = scheduler.DefaultSpeculation()
		spec.Speculation.BaselineLowerBound = 0
		if len(a.Vals) > 0 {
			spec.Speculation.BaselineLowerBound = ParseDur(t, td, "speculation", a.Vals[0])
		}
	}
	if a, ok := td.Arg("slow"); ok {
		j.slow = map[string]time.Duration{}
		for _, v := range a.Vals {
			task, d, found := strings.Cut(v, ":")
			if !found {
				td.Fatalf(t, "slow=%s: TASK:DURATION", v)
			}
			j.slow[task] = ParseDur(t, td, "slow", d)
		}
	}
	return spec
}

// describeSubmit renders what a submit command submits.
func describeSubmit(td *datadriven.TestData, j *hjob, spec *multijob.JobSpec) string {
	name := j.name
	var b strings.Builder
	fmt.Fprintf(&b, "%s: priority %d", name, cmp.Or(spec.Priority, admission.DefaultPriority))
	if spec.Queue != "" && spec.Queue != "root.default" {
		fmt.Fprintf(&b, ", queue %s", spec.Queue)
	}
	if j.driver {
		fmt.Fprintf(&b, ", driver (up %s after its slot)", Ms(j.startup))
	}
	if spec.Speculation.Enabled {
		fmt.Fprintf(&b, ", speculation (baseline at least %s)", Ms(spec.Speculation.BaselineLowerBound))
	}
	for _, task := range slices.Sorted(maps.Keys(j.slow)) {
		fmt.Fprintf(&b, ", %s runs %s", task, Ms(j.slow[task]))
	}
	if g := spec.Gang; g != nil {
		style := "soft"
		if g.Hard {
			style = "hard"
		}
		timeout := "15m default"
		switch {
		case g.Timeout == admission.NoGangWait:
			timeout = "0ms"
		case g.Timeout > 0:
			timeout = Ms(g.Timeout)
		}
		fmt.Fprintf(&b, ", %s gang of %d (timeout %s)", style, g.MinSlots, timeout)
	}
	b.WriteString("; regions")
	for r := range region.ID(j.rs.NumRegions()) {
		fmt.Fprintf(&b, " r%d=%d", r, j.rs.SlotCount(r))
	}
	if !td.HasArg("regions") && (td.HasArg("file") || strings.TrimSpace(td.Input) != "") {
		// a job file: name the regions' members
		for r := range region.ID(j.rs.NumRegions()) {
			fmt.Fprintf(&b, "\n  r%d: %s", r, j.rs.MemberNames(r, 6))
		}
	}
	return b.String()
}

// input applies an input now, or schedules it for a later instant.
func (h *Multi) input(t *testing.T, td *datadriven.TestData, at time.Duration, apply func() string) string {
	switch {
	case at < h.now:
		td.Fatalf(t, "%s at %s: the time is %s", td.Cmd, Ms(at), Ms(h.now))
	case at > h.now:
		h.seq++
		h.scheduled = append(h.scheduled, &hinput{at: at, seq: h.seq, apply: apply})
		return fmt.Sprintf("scheduled at %s", Ms(at))
	}
	return apply()
}

func (h *Multi) principal(name string) admission.Principal {
	return admission.Principal{Name: name, Role: h.users[name]}
}

// cmdInput: set-priority, kill, finish.
func (h *Multi) cmdInput(t *testing.T, td *datadriven.TestData) string {
	name := MustStr(t, td, "job")
	at := h.now
	if a := Str(td, "at", ""); a != "" {
		at = ParseDur(t, td, "at", a)
	}
	var apply func() string
	switch td.Cmd {
	case "set-priority":
		by := MustStr(t, td, "by")
		p := ParseInt(t, td, "prio", MustStr(t, td, "prio"))
		apply = func() string {
			h.undecided = true
			what := fmt.Sprintf("set-priority %s %d by %s", name, p, by)
			if err := h.s.SetPriority(epoch.Add(h.now), h.principal(by), name, p); err != nil {
				return what + ": refused: " + err.Error()
			}
			return what
		}
	case "kill":
		by := MustStr(t, td, "by")
		apply = func() string {
			h.undecided = true
			what := fmt.Sprintf("kill %s by %s", name, by)
			if err := h.s.Kill(epoch.Add(h.now), h.principal(by), name); err != nil {
				return what + ": refused: " + err.Error()
			}
			return what
		}
	case "finish":
		r := scheduler.RegionID(ParseInt(t, td, "region", MustStr(t, td, "region")))
		apply = func() string {
			var ends []*htask
			for _, rt := range h.running {
				if rt.job == name && rt.region == r {
					ends = append(ends, rt)
				}
			}
			if len(ends) == 0 {
				return fmt.Sprintf("%s r%d: nothing runs", name, r)
			}
			return strings.Join(h.finishTasks(ends), "\n")
		}
	}
	return h.input(t, td, at, apply)
}

// finishTasks reports running tasks finished at now, in the order they
// were deployed, and renders them one line per job: "a finished r0 r1"
// (a region some of whose tasks still run is marked).
func (h *Multi) finishTasks(ends []*htask) []string {
	var jobs []string
	done := map[string][]string{}
	for _, rt := range ends {
		h.running = slices.DeleteFunc(h.running, func(x *htask) bool { return x == rt })
		h.undecided = true
		label := regionAt(rt.region, rt.attempt)
		if slices.ContainsFunc(h.running, func(x *htask) bool {
			return x.job == rt.job && x.region == rt.region && x.attempt == rt.attempt && !slices.Contains(ends, x)
		}) {
			label += " (some of its tasks)"
		}
		if err := h.s.TaskFinished(epoch.Add(h.now), rt.job, rt.task, rt.attempt); err != nil {
			label += fmt.Sprintf(" (refused: %v)", err)
		}
		if _, ok := done[rt.job]; !ok {
			jobs = append(jobs, rt.job)
		}
		if !slices.Contains(done[rt.job], label) {
			done[rt.job] = append(done[rt.job], label)
		}
	}
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j + " finished " + strings.Join(done[j], " ")
	}
	return out
}
