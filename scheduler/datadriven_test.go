package scheduler_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/scenario"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// TestScenarios runs the scenarios of testdata/*.txt: each file drives one
// Scheduler step by step in virtual time and shows what it hands out.
// Regenerate the expected output with
//
//	go test ./scheduler/ -run TestScenarios -rewrite
//
// and read the diff: every line must be what the rules say.
//
// The commands (t= is the virtual time in ms from epoch 0; without it the
// time of the previous command is used):
//
//	job file=F | <JSON in the input>  [mode=M] [timeout=MS] [idle=MS] [matching=exact] [share=S] [sharing=off]
//	    decode the job (examples/jobs/F), print its regions and the slots
//	    each needs; timeout is the pool's fulfillability timeout, share
//	    the selective share of hybrid inputs (Config.SelectiveShare),
//	    sharing=off keeps hybrid consumers out of their producers' slots
//	    (Config.DisableHybridSlotSharing)
//	cluster slots=N | <lines "N [cpu=C mem=M ext=K ...]">  [node=NAME] [t=]
//	    offer slots to the pool (ids 1, 2, ... in order of appearance),
//	    all on node NAME if given
//	speculation [ratio=F] [multiplier=F] [lower-bound=MS] [interval=MS]
//	            [max=N] [block=MS]
//	    turn speculative execution on (DefaultSpeculation, with the
//	    knobs given); before anything that creates the scheduler
//	speculation-stats
//	    print SpeculationStats
//	speculable
//	    print the tasks Speculable names and the results
//	    ReadsFinishedOnly names
//	admission slots=N | <lines as cluster>
//	    the slots belong to an admission.StaticCluster plugged in through
//	    Config.Admission: the pool asks, the cluster grants
//	admission external
//	    the pool's messages come out in the Ready (to-admission ...) and
//	    the answers go in with admit
//	admit grant ask=A slots=N | admit revoke|reclaim|confirm slot=S | admit capacity slots=N  [t=]
//	capacity [slots=N | <lines as cluster>]  [t=]
//	    SetCapacity; without slots, every slot offered or granted so far
//	start [t=]
//	running|finish V... [attempt=N] [t=]
//	    report the tasks; the attempt is the task's current one unless given
//	fail V [attempt=N] [lost=(V, V->TARGET, ...)] [t=]
//	    report a failure; lost names blocking partitions that are gone
//	    (V: every blocking partition V writes)
//	finish-deployed [t=]
//	    finish every task the printed Readies deployed and nothing ended
//	lose-slot S [t=]
//	revoke S [reason=R] [t=] | reclaim S [t=]
//	    the StaticCluster revokes or reclaims slot S; Tick carries it
//	tick [t=]
//	ready     print the Ready, one line per item
//	status    print Status
//	tasks     print every task's state and attempt
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{t: t}
		datadriven.RunTest(t, path, h.run)
	})
}

// harness is the interpreter's state: one job, one scheduler, and the
// runtime's view of what runs.
type harness struct {
	t testing.TB

	job  *topology.JobGraph
	rs   *region.Regions
	cfg  scheduler.Config
	s    *scheduler.Scheduler
	now  time.Time
	used bool // the scheduler took some input (now is set)

	cluster  *admission.StaticCluster
	external bool // admission outside the scheduler (ToAdmission/Admit)
	slots    []slotpool.Slot
	nextSlot slotpool.SlotID

	// deployed is the runtime's view: the tasks the printed Readies
	// deployed that did not finish, fail or get canceled since.
	deployed map[scheduler.TaskID]scheduler.Attempt
}

func (h *harness) run(t *testing.T, td *datadriven.TestData) string {
	h.t = t
	if td.Cmd != "job" && h.rs == nil {
		td.Fatalf(t, "%s before job", td.Cmd)
	}
	switch td.Cmd {
	case "job":
		return h.cmdJob(t, td)
	case "cluster":
		return h.cmdCluster(t, td)
	case "admission":
		return h.cmdAdmission(t, td)
	case "speculation":
		return h.cmdSpeculation(t, td)
	case "speculation-stats":
		return h.cmdSpeculationStats(t, td)
	case "speculable":
		return h.cmdSpeculable(t, td)
	case "admit":
		return h.cmdAdmit(t, td)
	case "capacity":
		return h.cmdCapacity(t, td)
	case "start":
		return scenario.Result(h.sched(t, td).Start(h.at(t, td)))
	case "running", "finish":
		return h.cmdReport(t, td)
	case "fail":
		return h.cmdFail(t, td)
	case "finish-deployed":
		return h.cmdFinishDeployed(t, td)
	case "lose-slot":
		s := h.sched(t, td)
		return scenario.Result(s.SlotLost(h.at(t, td), h.slotArg(t, td)))
	case "revoke", "reclaim":
		return h.cmdClusterTakes(t, td)
	case "tick":
		return scenario.Result(h.sched(t, td).Tick(h.at(t, td)))
	case "ready":
		return h.cmdReady(t, td)
	case "status":
		return h.cmdStatus(t, td)
	case "tasks":
		return h.cmdTasks(t, td)
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

// ---- setup ----

func (h *harness) cmdJob(t *testing.T, td *datadriven.TestData) string {
	job, err := topology.DecodeBytes(scenario.JobData(t, td))
	if err != nil {
		return "error: " + err.Error()
	}
	mode := exchange.AllBlocking
	if td.HasArg("mode") {
		var m string
		td.ScanArgs(t, "mode", &m)
		if mode, err = exchange.ParseMode(m); err != nil {
			td.Fatalf(t, "%v", err)
		}
	}
	*h = harness{t: t, job: job, rs: region.FromJob(job, mode), nextSlot: 1,
		deployed: map[scheduler.TaskID]scheduler.Attempt{}}
	if td.HasArg("timeout") {
		h.cfg.Pool.Timeout = time.Duration(scenario.Int(t, td, "timeout")) * time.Millisecond
	}
	if td.HasArg("idle") {
		h.cfg.Pool.IdleTimeout = time.Duration(scenario.Int(t, td, "idle")) * time.Millisecond
	}
	if td.HasArg("share") {
		var share string
		td.ScanArgs(t, "share", &share)
		f, err := strconv.ParseFloat(share, 64)
		if err != nil || strategy.ValidateSelectiveShare(f) != nil {
			td.Fatalf(t, "share=%s: a number in (0, 1]", share)
		}
		h.cfg.SelectiveShare = f
	}
	if td.HasArg("sharing") {
		var v string
		td.ScanArgs(t, "sharing", &v)
		if v != "off" {
			td.Fatalf(t, "sharing=%s: only off", v)
		}
		h.cfg.DisableHybridSlotSharing = true
	}
	if td.HasArg("matching") {
		var m string
		td.ScanArgs(t, "matching", &m)
		if m != "exact" {
			td.Fatalf(t, "matching=%s: only exact", m)
		}
		h.cfg.Pool.Matching = resource.ExactMatch
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s, minimum slots %d\n", job.Name(), mode, scenario.Plural(h.rs.NumRegions(), "region"), h.rs.MinimumSlots())
	for r := range region.ID(h.rs.NumRegions()) {
		fmt.Fprintf(&b, "region %d %s: %s\n", r, h.rs.MemberNames(r, 16), h.slotList(h.rs.Slots(r)))
	}
	return b.String()
}

// shared marks a deployment into a slot of the task's hybrid producers.
func shared(yes bool) string {
	if yes {
		return " (shared)"
	}
	return ""
}

// cmdCluster offers slots to the pool.
func (h *harness) cmdCluster(t *testing.T, td *datadriven.TestData) string {
	s := h.sched(t, td)
	if h.cluster != nil || h.external {
		td.Fatalf(t, "cluster: the slots come from the admission")
	}
	slots := h.newSlots(t, td)
	if err := s.Offer(h.at(t, td), slots...); err != nil {
		return "error: " + err.Error()
	}
	return "offered " + scenario.DescribeSlots(slots)
}

// cmdAdmission plugs an admission in; it must come before anything that
// creates the scheduler.
func (h *harness) cmdAdmission(t *testing.T, td *datadriven.TestData) string {
	if h.s != nil {
		td.Fatalf(t, "admission after the scheduler was created")
	}
	if td.HasArg("external") {
		h.external = true
		h.cfg.ExternalAdmission = true
		h.sched(t, td)
		return "external admission: the pool's messages come out in the Ready"
	}
	slots := h.newSlots(t, td)
	c, err := admission.NewStaticCluster(h.cfg.Pool.Matching, slots...)
	if err != nil {
		td.Fatalf(t, "%v", err)
	}
	h.cluster = c
	h.cfg.Admission = c
	h.sched(t, td)
	return "static cluster of " + scenario.DescribeSlots(slots)
}

// cmdAdmit carries an answer of an external admission.
func (h *harness) cmdAdmit(t *testing.T, td *datadriven.TestData) string {
	s := h.sched(t, td)
	if !h.external {
		td.Fatalf(t, "admit needs admission external")
	}
	if len(td.CmdArgs) == 0 {
		td.Fatalf(t, "admit: grant, revoke, reclaim, confirm or capacity")
	}
	var msg slotpool.FromAdmission
	switch kind := td.CmdArgs[0].Key; kind {
	case "grant":
		msg = slotpool.Grant{Ask: slotpool.AskID(scenario.Int(t, td, "ask")), Slots: h.newSlots(t, td)}
	case "revoke":
		msg = slotpool.Revoke{Slot: slotpool.SlotID(scenario.Int(t, td, "slot")), Reason: h.reasonArg(t, td)}
	case "reclaim":
		msg = slotpool.Reclaim{Slot: slotpool.SlotID(scenario.Int(t, td, "slot"))}
	case "confirm":
		msg = slotpool.ReleaseConfirmed{Slot: slotpool.SlotID(scenario.Int(t, td, "slot")), Reason: h.reasonArg(t, td)}
	case "capacity":
		msg = slotpool.Capacity{Slots: tally(scenario.Profiles(t, td))}
	default:
		td.Fatalf(t, "admit %s: unknown message", kind)
	}
	return scenario.Result(s.Admit(h.at(t, td), msg))
}

func (h *harness) cmdCapacity(t *testing.T, td *datadriven.TestData) string {
	s := h.sched(t, td)
	var profiles []resource.Profile
	if td.HasArg("slots") || td.Input != "" {
		profiles = scenario.Profiles(t, td)
	} else {
		for _, sl := range h.slots {
			profiles = append(profiles, sl.Profile)
		}
	}
	return scenario.Result(s.SetCapacity(h.at(t, td), tally(profiles)))
}

// sched returns the scheduler, creating it on first use.
func (h *harness) sched(t *testing.T, td *datadriven.TestData) *scheduler.Scheduler {
	if h.s == nil {
		h.s = newScheduler(t, h.rs, h.cfg)
	}
	return h.s
}

// ---- task reports ----

func (h *harness) cmdReport(t *testing.T, td *datadriven.TestData) string {
	s := h.sched(t, td)
	now := h.at(t, td)
	var out []string
	for _, v := range h.tasksArg(t, td) {
		a := h.attempt(t, td, v)
		var err error
		if td.Cmd == "running" {
			err = s.TaskRunning(now, v, a)
		} else {
			err = s.TaskFinished(now, v, a)
			if err == nil && h.deployed[v] == a {
				delete(h.deployed, v)
			}
		}
		if err != nil {
			out = append(out, "error: "+err.Error())
		}
	}
	return scenario.Lines(out)
}

func (h *harness) cmdFail(t *testing.T, td *datadriven.TestData) string {
	s := h.sched(t, td)
	vs := h.tasksArg(t, td)
	if len(vs) != 1 {
		td.Fatalf(t, "fail: one task")
	}
	v := vs[0]
	a := h.attempt(t, td, v)
	var lost []scheduler.PartitionID
	if arg, ok := td.Arg("lost"); ok {
		for _, name := range arg.Vals {
			lost = append(lost, h.partitions(t, td, name)...)
		}
	}
	err := s.TaskFailed(h.at(t, td), v, a, lost...)
	if err == nil && h.deployed[v] == a {
		delete(h.deployed, v)
	}
	return scenario.Result(err)
}

func (h *harness) cmdFinishDeployed(t *testing.T, td *datadriven.TestData) string {
	s := h.sched(t, td)
	now := h.at(t, td)
	vs := make([]scheduler.TaskID, 0, len(h.deployed))
	for v := range h.deployed {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	if len(vs) == 0 {
		return "nothing deployed"
	}
	var names, out []string
	for _, v := range vs {
		a := h.deployed[v]
		names = append(names, h.name(v))
		if err := s.TaskFinished(now, v, a); err != nil {
			out = append(out, "error: "+err.Error())
			continue
		}
		delete(h.deployed, v)
	}
	return scenario.Lines(append([]string{"finished " + strings.Join(names, ", ")}, out...))
}

// ---- slots ----

func (h *harness) cmdClusterTakes(t *testing.T, td *datadriven.TestData) string {
	s := h.sched(t, td)
	if h.cluster == nil {
		td.Fatalf(t, "%s needs a static cluster (admission slots=...)", td.Cmd)
	}
	slot := h.slotArg(t, td)
	var err error
	if td.Cmd == "revoke" {
		err = h.cluster.Revoke(slot, h.reasonArg(t, td))
	} else {
		err = h.cluster.Reclaim(slot)
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return scenario.Result(s.Tick(h.at(t, td))) // the loop carries the cluster's message
}

// ---- outputs ----

func (h *harness) cmdReady(t *testing.T, td *datadriven.TestData) string {
	rd := h.sched(t, td).Ready()
	var out []string
	for _, r := range rd.Requests {
		out = append(out, fmt.Sprintf("request region %d attempt %d: %s%s", r.Region, r.Attempt, h.slotList(r.Slots), speculative(r.Speculative)))
	}
	for _, c := range rd.Cancel {
		out = append(out, fmt.Sprintf("cancel %s attempt %d", h.name(c.Task), c.Attempt))
		if h.deployed[c.Task] == c.Attempt {
			delete(h.deployed, c.Task)
		}
	}
	for _, r := range rd.Released {
		out = append(out, fmt.Sprintf("release slot %d (region %d attempt %d)", r.Slot, r.Region, r.Attempt))
	}
	for _, d := range rd.Deploy {
		out = append(out, fmt.Sprintf("deploy %s attempt %d slot %d%s%s", h.name(d.Task), d.Attempt, d.Slot, speculative(d.Speculative), shared(d.Shared)))
		if !d.Speculative {
			h.deployed[d.Task] = d.Attempt
		}
	}
	for _, w := range rd.Won {
		out = append(out, fmt.Sprintf("won %s attempt %d", h.name(w.Task), w.Attempt))
	}
	for _, r := range rd.Restarted {
		out = append(out, fmt.Sprintf("restart after %s: regions %v", h.name(r.Failed), r.Regions))
	}
	if len(rd.PartitionsReleased) > 0 {
		names := make([]string, len(rd.PartitionsReleased))
		for i, p := range rd.PartitionsReleased {
			names[i] = h.partitionName(p)
		}
		out = append(out, fmt.Sprintf("partitions released [%s]", strings.Join(names, ", ")))
	}
	if j := rd.Job; j != nil {
		if j.Err != nil {
			out = append(out, fmt.Sprintf("job %s: %v", j.State, j.Err))
		} else {
			out = append(out, "job "+j.State.String())
		}
	}
	for _, m := range rd.ToAdmission {
		out = append(out, "to-admission "+describeToAdmission(m))
	}
	if !rd.Deadline.IsZero() {
		out = append(out, fmt.Sprintf("deadline %dms", rd.Deadline.UnixMilli()))
	}
	if len(out) == 0 {
		return "(nothing)"
	}
	return scenario.Lines(out)
}

func (h *harness) cmdStatus(t *testing.T, td *datadriven.TestData) string {
	st := h.sched(t, td).Status()
	var b strings.Builder
	fmt.Fprintf(&b, "job %s", st.State)
	if st.Err != nil {
		fmt.Fprintf(&b, ": %v", st.Err)
	}
	fmt.Fprintf(&b, "\nwaiting regions %v\ndeployed regions %v\n", st.Waiting, st.Deployed)
	p := st.Pool
	fmt.Fprintf(&b, "pool: %s (%d free, %d held, %d in use), %d releasing, %s\n",
		scenario.Plural(p.Slots, "slot"), p.Free, p.Held, p.InUse, p.Releasing, scenario.Plural(p.Waiting, "waiting bulk"))
	fmt.Fprintf(&b, "stats: %s", scenario.Plural(st.Stats.RegionsDeployed, "region deployment"))
	if st.Stats.RegionsShared > 0 {
		fmt.Fprintf(&b, " (%d into shared slots)", st.Stats.RegionsShared)
	}
	fmt.Fprintf(&b, ", %s, %s\n", scenario.Plural(st.Stats.Failovers, "failover"), scenario.Plural(st.Stats.RegionRestarts, "region restart"))
	return b.String()
}

// cmdTasks prints the state of every task that left TaskCreated (or of
// the named ones), with its slot while deployed.
func (h *harness) cmdTasks(t *testing.T, td *datadriven.TestData) string {
	s := h.sched(t, td)
	topo := h.rs.Topology()
	var out []string
	for v := range scheduler.TaskID(topo.NumExecutionVertices()) {
		st, err := s.Task(v)
		if err != nil {
			td.Fatalf(t, "%v", err)
		}
		line := fmt.Sprintf("%s %s attempt %d", h.name(v), st.State, st.Attempt)
		if slot, ok := s.SlotOf(v); ok {
			line += fmt.Sprintf(" slot %d", slot)
		}
		out = append(out, line)
	}
	return scenario.Lines(out)
}

// ---- argument helpers ----

// at returns the time of the command (t=MS, else the previous time).
func (h *harness) at(t *testing.T, td *datadriven.TestData) time.Time {
	if td.HasArg("t") {
		h.now = time.UnixMilli(int64(scenario.Int(t, td, "t"))).UTC()
	} else if !h.used {
		h.now = time.UnixMilli(0).UTC()
	}
	h.used = true
	return h.now
}

// slotArg is the first bare argument, a slot id.
func (h *harness) slotArg(t *testing.T, td *datadriven.TestData) slotpool.SlotID {
	for _, a := range td.CmdArgs {
		if len(a.Vals) == 0 {
			n, err := strconv.ParseInt(a.Key, 10, 64)
			if err != nil {
				td.Fatalf(t, "slot id %q: %v", a.Key, err)
			}
			return slotpool.SlotID(n)
		}
	}
	td.Fatalf(t, "%s: no slot id", td.Cmd)
	return 0
}

func (h *harness) reasonArg(t *testing.T, td *datadriven.TestData) slotpool.Reason {
	if !td.HasArg("reason") {
		return slotpool.ReasonPreempted
	}
	var name string
	td.ScanArgs(t, "reason", &name)
	for r := slotpool.ReasonStopped; r <= slotpool.ReasonLost; r++ {
		if r.String() == name {
			return r
		}
	}
	td.Fatalf(t, "unknown reason %q", name)
	return 0
}

// tasksArg returns the bare arguments as task names ("A#0").
func (h *harness) tasksArg(t *testing.T, td *datadriven.TestData) []scheduler.TaskID {
	var vs []scheduler.TaskID
	for _, a := range td.CmdArgs {
		if len(a.Vals) == 0 {
			vs = append(vs, h.vertex(t, td, a.Key))
		}
	}
	if len(vs) == 0 {
		td.Fatalf(t, "%s: no task named", td.Cmd)
	}
	return vs
}

func (h *harness) vertex(t *testing.T, td *datadriven.TestData, name string) scheduler.TaskID {
	v, err := h.rs.Topology().ParseVertexName(name)
	if err != nil {
		td.Fatalf(t, "%v", err)
	}
	return v
}

// attempt is attempt=N, else the task's current attempt.
func (h *harness) attempt(t *testing.T, td *datadriven.TestData, v scheduler.TaskID) scheduler.Attempt {
	if td.HasArg("attempt") {
		return scheduler.Attempt(scenario.Int(t, td, "attempt"))
	}
	st, err := h.s.Task(v)
	if err != nil {
		td.Fatalf(t, "%v", err)
	}
	return st.Attempt
}

// partitions resolves "A#0" (every blocking partition A#0 writes) or
// "A#0->B" (the one it writes for B).
func (h *harness) partitions(t *testing.T, td *datadriven.TestData, name string) []scheduler.PartitionID {
	topo := h.rs.Topology()
	job := topo.Job()
	producer, target, _ := strings.Cut(name, "->")
	v := h.vertex(t, td, producer)
	var out []scheduler.PartitionID
	for _, e := range job.OutEdges(topo.JobVertexOf(v)) {
		_, tgt := job.EdgeEnds(e)
		if topo.PartitionType(e).IsPipelined() || (target != "" && job.Vertex(tgt).ID != target) {
			continue
		}
		out = append(out, topo.PartitionOf(e, v))
	}
	if len(out) == 0 {
		td.Fatalf(t, "%s writes no blocking partition %q", producer, name)
	}
	return out
}

// newSlots gives the profiles of slotsSpec fresh ids.
func (h *harness) newSlots(t *testing.T, td *datadriven.TestData) []slotpool.Slot {
	profiles := scenario.Profiles(t, td)
	slots := make([]slotpool.Slot, len(profiles))
	for i, p := range profiles {
		slots[i] = slotpool.Slot{ID: h.nextSlot, Profile: p}
		if td.HasArg("node") {
			td.ScanArgs(t, "node", &slots[i].Node)
		}
		h.nextSlot++
	}
	h.slots = append(h.slots, slots...)
	return slots
}

// ---- rendering ----

func (h *harness) name(v scheduler.TaskID) string { return h.rs.Topology().VertexName(v) }

// slotList renders slots as "{A#0, B#0} {A#1}", a known profile after a
// colon, ":unbounded" for a slot held indefinitely.
func (h *harness) slotList(slots []region.Slot) string {
	parts := make([]string, len(slots))
	for i, sl := range slots {
		names := make([]string, len(sl.Members))
		for j, v := range sl.Members {
			names[j] = h.name(v)
		}
		parts[i] = "{" + strings.Join(names, ", ") + "}"
		if !sl.Profile.IsUnknown() {
			parts[i] += ":" + sl.Profile.String()
		}
		if sl.Unbounded {
			parts[i] += ":unbounded"
		}
	}
	return strings.Join(parts, " ")
}

// partitionName renders a partition as "A#0->B" (producer, consumer vertex).
func (h *harness) partitionName(p scheduler.PartitionID) string {
	topo := h.rs.Topology()
	_, tgt := topo.Job().EdgeEnds(topo.EdgeOfPartition(p))
	return h.name(topo.PartitionProducer(p)) + "->" + topo.Job().Vertex(tgt).ID
}

func describeToAdmission(m slotpool.ToAdmission) string {
	switch m := m.(type) {
	case slotpool.Ask:
		groups := make([]string, len(m.Gang.Groups))
		for i, g := range m.Gang.Groups {
			groups[i] = resource.Count{Profile: g.Profile, N: g.MinMembers}.String()
		}
		gang := ""
		if m.Gang.AllOrNothing {
			gang = ", all-or-nothing"
		}
		return fmt.Sprintf("ask %d (bulk %d): %s%s", m.ID, m.Bulk, strings.Join(groups, " + "), gang)
	case slotpool.AskRelease:
		return fmt.Sprintf("ask-release %d (%v)", m.ID, m.Reason)
	case slotpool.SlotRelease:
		return fmt.Sprintf("slot-release %d (%v)", m.Slot, m.Reason)
	}
	return fmt.Sprintf("%T %+v", m, m)
}

func tally(profiles []resource.Profile) []resource.Count { return resource.Tally(profiles) }
