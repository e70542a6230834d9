package multijob_test

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/inspect"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// TestScenarios runs the admission scenarios of testdata/*.txt: each file
// drives one multijob.Scheduler in virtual time, with a tiny runtime that
// deploys what it is told, finishes each task after its duration and
// starts a job once its driver is up, and shows what the admission decides
// at every instant. Regenerate the expected output with
//
//	go test ./multijob/ -run TestScenarios -rewrite
//
// and read the diff: every line must be what the rules say.
//
// Times are virtual: "500ms", "1s", or a bare number of milliseconds.
// The commands:
//
//	cluster slots=N [policy=P] [reclaim=D] [starting=D] [max-running=N]
//	    a new Scheduler over N slots (ids 0 ... N-1); the options configure
//	    root.default (policy fifo unless given; reclaim absent: never
//	    preempt). Input lines configure more:
//	      queue NAME [policy=P] [reclaim=D] [starting=D] [max-running=N]
//	      user NAME ROLE
//	submit name=J [at=T] [prio=P] [queue=Q] [user=U] [regions=N,N,...]
//	       [chain] [dur=D|manual] [driver[=STARTUP]] [gang[=N]]
//	       [gang-style=hard|soft] [gang-timeout=D]
//	    a job of independent regions of N slots each (r0, r1, ...; chain:
//	    each region consumes the one before through a blocking edge, so it
//	    asks for slots once that one finished), every task running D (1s
//	    by default; D,D,...: one per region; manual: until a finish
//	    command). Or a job file as the input (JSON, as in examples/jobs:
//	    durations and submission fields from it, the options above
//	    override them), or file=F of examples/jobs. A driver starts its
//	    job STARTUP (1s by default) after it got its slot. A gang without
//	    N reserves region.Regions.GangMinSlots.
//	set-priority job=J prio=P by=U [at=T]
//	kill job=J by=U [at=T]
//	    by a user of the cluster's user lines (anyone else has no role)
//	    speculation[=B] turns speculative execution on for the job
//	    (scheduler.DefaultSpeculation with a baseline lower bound of B,
//	    0 by default); slow=TASK:D,... makes the first attempt of the
//	    named tasks (ID#i) run D instead of their duration
//	finish job=J region=R [at=T]
//	    report every running task of region R of job J finished (for
//	    jobs of dur=manual)
//
// Without at=, or at the current time, an input (submit, set-priority,
// kill, finish) is applied at once; a later at= schedules it for advance.
//
//	ready
//	    decide the current instant (multijob.Scheduler.Ready) and print it
//	advance to=T
//	    decide the current instant if it has inputs not yet decided, then
//	    run every instant up to T: apply what happens at it (tasks that
//	    end, drivers that are up, scheduled inputs, due timers), decide,
//	    print; the current time is then T
//	status
//	    each job's admission state, slots held, regions running and
//	    waiting; then each slot asked back from the job that holds it, and
//	    for whom: by a claim (it comes back when its task ends) or a
//	    preemption (internal/inspect.AskedBackSlots)
//
// What a decision prints, under "@T" (T the instant), in this order: the
// inputs applied at it (by advance), the admission's events (reclaims,
// state changes but new -> accepted, drivers granted, placeholders,
// speculative slots granted), each job's cancels, each job's speculative
// attempts asked for ("speculate rR/A") and races won ("rR won by
// attempt A"), each job's deployments (speculative ones apart), the jobs
// that ended. A
// deployment or cancel reads rR@S: region R in slot S (rR@S,T: a region
// of two slots); rR/A@S is attempt A of a region that was restarted.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{}
		datadriven.RunTest(t, path, h.run)
	})
}

// epoch is virtual time 0.
var epoch = time.Unix(0, 0)

// harness is the interpreter's state: one Scheduler and the runtime
// around it.
type harness struct {
	s         *multijob.Scheduler
	slots     int
	users     map[string]admission.Role
	now       time.Duration
	undecided bool // inputs at now since the last Ready
	jobs      map[string]*hjob
	running   []*htask                 // tasks deployed, not ended
	starts    map[string]time.Duration // jobs whose driver is up then
	scheduled []*hinput
	seq       int
	applied   []string // what advance applied at the current instant
}

// hjob is a submitted job.
type hjob struct {
	name    string
	rs      *region.Regions
	dur     []time.Duration // per job vertex; negative: manual
	startup time.Duration
	driver  bool
	slow    map[string]time.Duration // first attempts of these tasks run this long
}

// htask is a task the runtime runs.
type htask struct {
	job     string
	task    scheduler.TaskID
	attempt scheduler.Attempt
	slot    scheduler.SlotID
	region  scheduler.RegionID
	end     time.Duration // negative: manual
}

// hinput is an input scheduled for a later instant.
type hinput struct {
	at    time.Duration
	seq   int
	apply func() string
}

func (h *harness) run(t *testing.T, td *datadriven.TestData) string {
	if td.Cmd != "cluster" && h.s == nil {
		td.Fatalf(t, "%s before cluster", td.Cmd)
	}
	switch td.Cmd {
	case "cluster":
		return h.cmdCluster(t, td)
	case "submit":
		return h.cmdSubmit(t, td)
	case "set-priority", "kill", "finish":
		return h.cmdInput(t, td)
	case "ready":
		return h.decide(t)
	case "advance":
		return h.cmdAdvance(t, td)
	case "status":
		return h.cmdStatus(t)
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

// ---- arguments ----

func strArg(td *datadriven.TestData, key, def string) string {
	if a, ok := td.Arg(key); ok {
		if len(a.Vals) == 0 {
			return ""
		}
		return strings.Join(a.Vals, ",")
	}
	return def
}

func mustStr(t *testing.T, td *datadriven.TestData, key string) string {
	a, ok := td.Arg(key)
	if !ok || len(a.Vals) == 0 {
		td.Fatalf(t, "%s: %s= missing", td.Cmd, key)
	}
	return strings.Join(a.Vals, ",")
}

func parseInt(t *testing.T, td *datadriven.TestData, key, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		td.Fatalf(t, "%s=%s: %v", key, s, err)
	}
	return n
}

// parseDur reads "500ms", "1s" or a bare number of milliseconds.
func parseDur(t *testing.T, td *datadriven.TestData, key, s string) time.Duration {
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Millisecond
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		td.Fatalf(t, "%s=%s: %v", key, s, err)
	}
	return d
}

// ms renders a virtual time.
func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

// queueConfig reads a queue's options from kv (key=value fields).
func queueConfig(t *testing.T, td *datadriven.TestData, name string, kv map[string]string) admission.QueueConfig {
	qc := admission.QueueConfig{Name: name}
	for k, v := range kv {
		switch k {
		case "policy":
			p, err := admission.ParsePolicy(v)
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			qc.Policy = p
		case "reclaim":
			qc.Preempt, qc.ReclaimTimeout = true, parseDur(t, td, k, v)
		case "starting":
			qc.StartingTimeout = parseDur(t, td, k, v)
			if qc.StartingTimeout == 0 {
				qc.StartingTimeout = admission.NoStartingWait
			}
		case "max-running":
			qc.MaxRunningJobs = parseInt(t, td, k, v)
		case "slots":
		default:
			td.Fatalf(t, "unknown queue option %s", k)
		}
	}
	return qc
}

// describeQueue renders a queue's configuration.
func describeQueue(qc admission.QueueConfig) string {
	s := fmt.Sprintf("%s: %s", qc.Name, qc.Policy)
	if qc.Preempt {
		s += fmt.Sprintf(", reclaim after %s", ms(qc.ReclaimTimeout))
	} else {
		s += ", never reclaims"
	}
	switch {
	case qc.StartingTimeout == admission.NoStartingWait:
		s += ", starting timeout 0ms"
	case qc.StartingTimeout > 0:
		s += ", starting timeout " + ms(qc.StartingTimeout)
	}
	if qc.MaxRunningJobs > 0 {
		s += fmt.Sprintf(", at most %d running", qc.MaxRunningJobs)
	}
	return s
}

// ---- setup ----

func (h *harness) cmdCluster(t *testing.T, td *datadriven.TestData) string {
	kv := map[string]string{}
	for _, a := range td.CmdArgs {
		kv[a.Key] = strings.Join(a.Vals, ",")
	}
	n := parseInt(t, td, "slots", mustStr(t, td, "slots"))
	slots := make([]slotpool.Slot, n)
	for i := range slots {
		slots[i] = slotpool.Slot{ID: slotpool.SlotID(i)}
	}
	queues := []admission.QueueConfig{queueConfig(t, td, "root.default", kv)}
	*h = harness{slots: n, users: map[string]admission.Role{}, jobs: map[string]*hjob{},
		starts: map[string]time.Duration{}}
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "queue" && len(f) >= 2:
			qkv := map[string]string{}
			for _, o := range f[2:] {
				k, v, _ := strings.Cut(o, "=")
				qkv[k] = v
			}
			queues = append(queues, queueConfig(t, td, f[1], qkv))
		case f[0] == "user" && len(f) == 3:
			role, err := admission.ParseRole(f[2])
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			h.users[f[1]] = role
		default:
			td.Fatalf(t, "cluster: bad line %q", line)
		}
	}
	s, err := multijob.New(multijob.Config{Admission: admission.Config{Slots: slots, Queues: queues}})
	if err != nil {
		return "error: " + err.Error()
	}
	h.s = s
	out := []string{fmt.Sprintf("%d slots", n)}
	for _, qc := range queues {
		out = append(out, describeQueue(qc))
	}
	return strings.Join(out, "\n") + "\n"
}

// buildRegions makes a job of independent regions of the given slot
// counts (chained through blocking edges if chain): region i is vertex
// "ri" of that parallelism, and for more than one slot a vertex "ri.x"
// of parallelism 1 it feeds through a pipelined all-to-all edge, which
// makes one region of them.
func buildRegions(t *testing.T, td *datadriven.TestData, name string, sizes []int, chain bool, durs []time.Duration) *topology.JobGraph {
	b := topology.NewBuilder(name)
	prev := ""
	for i, k := range sizes {
		id := fmt.Sprintf("r%d", i)
		b.AddVertex(topology.JobVertex{ID: id, Parallelism: k, Duration: durs[i]})
		last := id
		if k > 1 {
			last = id + ".x"
			b.AddVertex(topology.JobVertex{ID: last, Parallelism: 1, Duration: durs[i]})
			b.ConnectPinned(id, last, exchange.Hash, exchange.PipelinedBounded)
		}
		if chain && prev != "" {
			b.ConnectPinned(prev, id, exchange.Hash, exchange.Blocking)
		}
		prev = last
	}
	g, err := b.Build()
	if err != nil {
		td.Fatalf(t, "%v", err)
	}
	return g
}

func (h *harness) cmdSubmit(t *testing.T, td *datadriven.TestData) string {
	var g *topology.JobGraph
	var err error
	manual := map[string]bool{} // vertices that run until a finish command
	switch {
	case td.HasArg("file"):
		data, rerr := os.ReadFile(filepath.Join(testjobs.Dir(), mustStr(t, td, "file")))
		if rerr != nil {
			td.Fatalf(t, "%v", rerr)
		}
		g, err = topology.DecodeBytes(data)
	case strings.TrimSpace(td.Input) != "":
		g, err = topology.DecodeBytes([]byte(td.Input))
	default:
		var sizes []int
		for _, v := range strings.Split(strArg(td, "regions", "1"), ",") {
			sizes = append(sizes, parseInt(t, td, "regions", v))
		}
		durs := make([]time.Duration, len(sizes))
		ds := strings.Split(strArg(td, "dur", "1s"), ",")
		for i := range durs {
			d := ds[min(i, len(ds)-1)]
			if d == "manual" {
				manual[fmt.Sprintf("r%d", i)], manual[fmt.Sprintf("r%d.x", i)] = true, true
				d = "1s"
			}
			durs[i] = parseDur(t, td, "dur", d)
		}
		if len(ds) > 1 && len(ds) != len(sizes) {
			td.Fatalf(t, "dur: one duration, or one per region")
		}
		g = buildRegions(t, td, mustStr(t, td, "name"), sizes, td.HasArg("chain"), durs)
	}
	if err != nil {
		td.Fatalf(t, "%v", err)
	}
	sub := g.Submission()
	name := strArg(td, "name", g.Name())
	j := &hjob{name: name, rs: region.FromJob(g, exchange.AllBlocking), startup: time.Second}
	for i := range g.NumVertices() {
		d := g.Vertex(topology.JobVertexID(i)).Duration
		if v := g.Vertex(topology.JobVertexID(i)); manual[v.ID] || v.Unbounded {
			d = -1
		}
		j.dur = append(j.dur, d)
	}
	spec := multijob.JobSpec{JobSpec: admission.JobSpec{Name: name, Queue: sub.Queue, User: sub.User, Priority: sub.Priority}, Regions: j.rs}
	at := sub.SubmitAt
	if a := strArg(td, "at", ""); a != "" {
		at = parseDur(t, td, "at", a)
	}
	if p := strArg(td, "prio", ""); p != "" {
		spec.Priority = parseInt(t, td, "prio", p)
	}
	spec.Queue = strArg(td, "queue", spec.Queue)
	spec.User = strArg(td, "user", spec.User)
	if sub.Driver != nil {
		j.driver, j.startup = true, sub.Driver.Startup
	}
	if a, ok := td.Arg("driver"); ok {
		j.driver = true
		if len(a.Vals) > 0 {
			j.startup = parseDur(t, td, "driver", a.Vals[0])
		}
	}
	if j.driver {
		spec.Driver = &resource.Unknown
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
			spec.Gang.MinSlots = parseInt(t, td, "gang", a.Vals[0])
		}
	}
	if spec.Gang != nil {
		if st := strArg(td, "gang-style", ""); st != "" {
			spec.Gang.Hard = st == "hard"
		}
		if d := strArg(td, "gang-timeout", ""); d != "" {
			spec.Gang.Timeout = parseDur(t, td, "gang-timeout", d)
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
			spec.Speculation.BaselineLowerBound = parseDur(t, td, "speculation", a.Vals[0])
		}
	}
	if a, ok := td.Arg("slow"); ok {
		j.slow = map[string]time.Duration{}
		for _, v := range a.Vals {
			task, d, found := strings.Cut(v, ":")
			if !found {
				td.Fatalf(t, "slow=%s: TASK:DURATION", v)
			}
			j.slow[task] = parseDur(t, td, "slow", d)
		}
	}
	if _, dup := h.jobs[name]; !dup {
		h.jobs[name] = j
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%s: priority %d", name, cmp.Or(spec.Priority, admission.DefaultPriority))
	if spec.Queue != "" && spec.Queue != "root.default" {
		fmt.Fprintf(&b, ", queue %s", spec.Queue)
	}
	if j.driver {
		fmt.Fprintf(&b, ", driver (up %s after its slot)", ms(j.startup))
	}
	if spec.Speculation.Enabled {
		fmt.Fprintf(&b, ", speculation (baseline at least %s)", ms(spec.Speculation.BaselineLowerBound))
	}
	for _, task := range slices.Sorted(maps.Keys(j.slow)) {
		fmt.Fprintf(&b, ", %s runs %s", task, ms(j.slow[task]))
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
			timeout = ms(g.Timeout)
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
	apply := func() string {
		if err := h.s.Submit(epoch.Add(h.now), spec); err != nil {
			return "submit " + name + ": error: " + err.Error()
		}
		h.undecided = true
		return name + " arrives"
	}
	return b.String() + "\n" + h.input(t, td, at, apply)
}

// input applies an input now, or schedules it for a later instant.
func (h *harness) input(t *testing.T, td *datadriven.TestData, at time.Duration, apply func() string) string {
	switch {
	case at < h.now:
		td.Fatalf(t, "%s at %s: the time is %s", td.Cmd, ms(at), ms(h.now))
	case at > h.now:
		h.seq++
		h.scheduled = append(h.scheduled, &hinput{at: at, seq: h.seq, apply: apply})
		return fmt.Sprintf("scheduled at %s", ms(at))
	}
	return apply()
}

func (h *harness) principal(name string) admission.Principal {
	return admission.Principal{Name: name, Role: h.users[name]}
}

// cmdInput: set-priority, kill, finish.
func (h *harness) cmdInput(t *testing.T, td *datadriven.TestData) string {
	name := mustStr(t, td, "job")
	at := h.now
	if a := strArg(td, "at", ""); a != "" {
		at = parseDur(t, td, "at", a)
	}
	var apply func() string
	switch td.Cmd {
	case "set-priority":
		by := mustStr(t, td, "by")
		p := parseInt(t, td, "prio", mustStr(t, td, "prio"))
		apply = func() string {
			h.undecided = true
			what := fmt.Sprintf("set-priority %s %d by %s", name, p, by)
			if err := h.s.SetPriority(epoch.Add(h.now), h.principal(by), name, p); err != nil {
				return what + ": refused: " + err.Error()
			}
			return what
		}
	case "kill":
		by := mustStr(t, td, "by")
		apply = func() string {
			h.undecided = true
			what := fmt.Sprintf("kill %s by %s", name, by)
			if err := h.s.Kill(epoch.Add(h.now), h.principal(by), name); err != nil {
				return what + ": refused: " + err.Error()
			}
			return what
		}
	case "finish":
		r := scheduler.RegionID(parseInt(t, td, "region", mustStr(t, td, "region")))
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
func (h *harness) finishTasks(ends []*htask) []string {
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

// ---- time ----

// next returns the next instant something happens, if any.
func (h *harness) next() (time.Duration, bool) {
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
func (h *harness) applyDue(t *testing.T) bool {
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

func (h *harness) cmdAdvance(t *testing.T, td *datadriven.TestData) string {
	to := parseDur(t, td, "to", mustStr(t, td, "to"))
	if to < h.now {
		td.Fatalf(t, "advance to %s: the time is %s", ms(to), ms(h.now))
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
				t.Fatalf("instant %s never settles", ms(at))
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

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// decide calls Ready, applies it to the runtime and renders it.
func (h *harness) decide(t *testing.T) string {
	rd := h.s.Ready()
	h.undecided = false
	out := h.applied
	h.applied = nil
	for _, ev := range rd.Events {
		switch ev.Kind {
		case admission.Reclaimed:
			out = append(out, fmt.Sprintf("reclaim: %s takes %s of %s (%s)", ev.Job, plural(ev.Count, "slot"), ev.Victim, ev.Reason))
		case admission.ReclaimWithdrawn:
			out = append(out, fmt.Sprintf("reclaim withdrawn: %s leaves %s to %s (%s)", ev.Job, plural(ev.Count, "slot"), ev.Victim, ev.Reason))
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
		default:
			out = append(out, fmt.Sprintf("%s: event %d (%s)", ev.Job, ev.Kind, ev.Reason))
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
			out = append(out, fmt.Sprintf("%s: deploy %s (%s)", jr.Job, s, plural(n, "slot")))
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
	return fmt.Sprintf("@%s\n  %s\n", ms(h.now), strings.Join(out, "\n  "))
}

// cmdStatus prints every job's state.
func (h *harness) cmdStatus(t *testing.T) string {
	var b strings.Builder
	for _, name := range h.s.Jobs() {
		st, err := h.s.Status(name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s: %s, holds %s", name, st.Admission, plural(st.Granted, "slot"))
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
			fmt.Fprintf(&b, "; ended %s at %s", st.End.Outcome, ms(st.End.At.Sub(epoch)))
		}
		b.WriteString("\n")
	}
	for _, ab := range inspect.AskedBackSlots(h.s.Admission(), nil) {
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
