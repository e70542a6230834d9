package scheduler

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// t0 is the time every harness starts at.
var t0 = time.Unix(0, 0).UTC()

// deployCall is one Ready.Deploy entry the runtime applied.
type deployCall struct {
	V       topology.ExecutionVertexID
	Attempt Attempt
	Slot    slotpool.SlotID
	Call    int  // the harness call (1, 2, ...) whose Ready carried it
	Shared  bool // Deployment.Shared
}

// cancelCall is one Ready.Cancel entry the runtime applied.
type cancelCall struct {
	V       topology.ExecutionVertexID
	Attempt Attempt
	Call    int
}

// releaseCall is one Ready.Released entry.
type releaseCall struct {
	Slot    slotpool.SlotID
	Region  region.ID
	Attempt Attempt
}

// restartCall is one Ready.Restarted entry.
type restartCall struct {
	Failed  topology.ExecutionVertexID
	Regions []region.ID
}

// regionAttempt names one run of a region.
type regionAttempt struct {
	R region.ID
	A Attempt
}

// fakeRuntime is the recording fake runtime: a loop that applies each
// Ready in field order (requests, restarts, cancels, released slots,
// deploys, released partitions, job change, admission messages). It
// records every entry, keeps the tasks the runtime runs (deployed and not
// finished, failed or canceled) per slot, and checks what a runtime can
// check on its own. On every deploy:
//   - the vertex is not running already, and its attempt never goes down;
//   - the slot is one the runtime has (offered, or granted by the cluster)
//     and holds only tasks of the same region slot (same region and
//     attempt, at most one subtask per job vertex);
//   - every blocking partition the vertex reads from outside its region
//     was reported finished in the producer's current attempt, and every
//     producer of a hybrid partition it reads from outside was deployed in
//     its current attempt;
//   - the slot serves the profile of the vertex's region slot.
//
// On every cancel, that the task runs in that attempt; on every released
// slot, that no task runs in it any more; on every request, that the
// region asks for all its slots; on every Ready, that its deadline is the
// scheduler's NextDeadline and that a job change to JobFailed, and only
// that one, carries an error.
//
// Violations are reported with t.Errorf, so a run goes on and shows all.
type fakeRuntime struct {
	t  testing.TB
	rs *region.Regions
	s  *Scheduler

	call     int // current harness call, for grouping deploys
	deploys  []deployCall
	cancels  []cancelCall
	releases []releaseCall
	restarts []restartCall
	requests []regionAttempt
	freed    []topology.ResultPartitionID
	jobs     []JobChange            // every Ready.Job, in order
	toAdm    []slotpool.ToAdmission // every Ready.ToAdmission message, in order
	jobState JobState               // the job state the Ready values said last

	running map[topology.ExecutionVertexID]deployCall
	bySlot  map[slotpool.SlotID][]topology.ExecutionVertexID
	maxUsed int // most slots occupied at once

	// known slots and their profiles; nil map means "do not check".
	slotProfile map[slotpool.SlotID]resource.Profile
	matching    resource.Matching
	// slotOwner is, per slot in use, the region run whose bulk got it.
	slotOwner map[slotpool.SlotID]regionAttempt

	finished    map[topology.ExecutionVertexID]Attempt // reported finished, current attempt
	lastAttempt map[topology.ExecutionVertexID]Attempt // last deployed attempt

	// per vertex, its region slot: index into rs.Slots(region) and profile.
	slotIndex   []int
	slotProfOfV []resource.Profile
	regionSlots [][]region.Slot
}

// newFakeRuntime returns a fake runtime for the regions of one job; its s
// must be set before it applies a Ready.
func newFakeRuntime(t testing.TB, rs *region.Regions) *fakeRuntime {
	f := &fakeRuntime{
		t:           t,
		rs:          rs,
		running:     map[topology.ExecutionVertexID]deployCall{},
		bySlot:      map[slotpool.SlotID][]topology.ExecutionVertexID{},
		slotProfile: map[slotpool.SlotID]resource.Profile{},
		slotOwner:   map[slotpool.SlotID]regionAttempt{},
		finished:    map[topology.ExecutionVertexID]Attempt{},
		lastAttempt: map[topology.ExecutionVertexID]Attempt{},
	}
	n := rs.Topology().NumExecutionVertices()
	f.slotIndex = make([]int, n)
	f.slotProfOfV = make([]resource.Profile, n)
	f.regionSlots = make([][]region.Slot, rs.NumRegions())
	for r := range rs.NumRegions() {
		f.regionSlots[r] = rs.Slots(region.ID(r))
		for i, sl := range f.regionSlots[r] {
			for _, v := range sl.Members {
				f.slotIndex[v] = i
				f.slotProfOfV[v] = sl.Profile
			}
		}
	}
	return f
}

// name renders a vertex as "A#0".
func (f *fakeRuntime) name(v topology.ExecutionVertexID) string {
	return f.rs.Topology().VertexName(v)
}

// sync drains the scheduler's Ready and applies it.
func (f *fakeRuntime) sync() {
	f.t.Helper()
	f.apply(f.s.Ready())
}

// apply applies one Ready in field order, cancels before deploys; the
// restarts go before the deploys too (a restarted region's results are
// gone before anything is deployed again).
func (f *fakeRuntime) apply(rd Ready) {
	f.t.Helper()
	for _, rq := range rd.Requests {
		f.requested(rq)
	}
	for _, rs := range rd.Restarted {
		f.restarting(rs)
	}
	for _, c := range rd.Cancel {
		f.cancel(c.Task, c.Attempt)
	}
	for _, rl := range rd.Released {
		f.slotReleased(releaseCall(rl))
	}
	for _, d := range rd.Deploy {
		if r := f.rs.RegionOf(d.Task); r != d.Region {
			f.t.Errorf("deploy %s@%d says region %d, it is in region %d", f.name(d.Task), d.Attempt, d.Region, r)
		}
		f.deploy(d.Task, d.Attempt, d.Slot, d.Shared)
	}
	f.freed = append(f.freed, rd.PartitionsReleased...)
	if rd.Job != nil {
		f.jobs = append(f.jobs, *rd.Job)
		f.jobState = rd.Job.State
		if (rd.Job.State == JobFailed) != (rd.Job.Err != nil) {
			f.t.Errorf("job change to %v with error %v", rd.Job.State, rd.Job.Err)
		}
	}
	f.toAdm = append(f.toAdm, rd.ToAdmission...)
	at, ok := f.s.NextDeadline()
	if !ok {
		at = time.Time{}
	}
	if !rd.Deadline.Equal(at) {
		f.t.Errorf("Ready.Deadline is %v, NextDeadline %v", rd.Deadline, at)
	}
}

// deploy applies one Ready.Deploy entry.
func (f *fakeRuntime) deploy(v topology.ExecutionVertexID, attempt Attempt, slot slotpool.SlotID, shared bool) {
	t := f.t
	t.Helper()
	d := deployCall{V: v, Attempt: attempt, Slot: slot, Call: f.call, Shared: shared}
	f.deploys = append(f.deploys, d)
	if old, ok := f.running[v]; ok {
		t.Errorf("deploy %s@%d in slot %d: already running as attempt %d in slot %d", f.name(v), attempt, slot, old.Attempt, old.Slot)
	}
	if last, ok := f.lastAttempt[v]; ok && attempt <= last {
		t.Errorf("deploy %s@%d: attempt does not grow (last deployed %d)", f.name(v), attempt, last)
	}
	f.lastAttempt[v] = attempt
	prof, known := f.slotProfile[slot]
	if !known {
		t.Errorf("deploy %s@%d into slot %d, which the runtime never provided", f.name(v), attempt, slot)
	} else if need := f.slotProfOfV[v]; !f.matching.Serves(prof, need) {
		t.Errorf("deploy %s@%d into slot %d of %v, which does not serve its region slot's %v", f.name(v), attempt, slot, prof, need)
	}
	r := f.rs.RegionOf(v)
	jv := f.rs.Topology().JobVertexOf(v)
	if shared {
		f.checkShared(v, attempt, slot)
	} else if len(f.bySlot[slot]) == 0 {
		f.slotOwner[slot] = regionAttempt{r, attempt}
	}
	for _, u := range f.bySlot[slot] {
		o := f.running[u]
		if !shared && (f.rs.RegionOf(u) != r || o.Attempt != attempt || f.slotIndex[u] != f.slotIndex[v]) {
			t.Errorf("deploy %s@%d into slot %d, which runs %s@%d of another region slot", f.name(v), attempt, slot, f.name(u), o.Attempt)
		}
		if f.rs.Topology().JobVertexOf(u) == jv {
			t.Errorf("deploy %s@%d into slot %d, which runs %s of the same job vertex", f.name(v), attempt, slot, f.name(u))
		}
	}
	for _, p := range f.blockingInputsOutside(v) {
		if a, ok := f.finished[p]; !ok || a != f.currentAttempt(p) {
			t.Errorf("deploy %s@%d before its blocking input from %s finished", f.name(v), attempt, f.name(p))
		}
	}
	for _, p := range f.inputsOutside(v, true) {
		if a, ok := f.lastAttempt[p]; !ok || a != f.currentAttempt(p) {
			t.Errorf("deploy %s@%d before its hybrid producer %s was deployed", f.name(v), attempt, f.name(p))
		}
	}
	f.running[v] = d
	f.bySlot[slot] = append(f.bySlot[slot], v)
	f.maxUsed = max(f.maxUsed, len(f.bySlot))
}

// checkShared checks a deployment of v into a slot its region shares
// with its hybrid producers: a task in the slot that belongs to another
// region is of the same slot sharing group, the slot runs a hybrid
// producer of v's region (or v's region's own tasks, placed there in the
// same call), and it serves what every region slot in it needs together.
func (f *fakeRuntime) checkShared(v topology.ExecutionVertexID, attempt Attempt, slot slotpool.SlotID) {
	t := f.t
	t.Helper()
	topo := f.rs.Topology()
	r := f.rs.RegionOf(v)
	group := func(u topology.ExecutionVertexID) string {
		return topo.Job().Vertex(topo.JobVertexOf(u)).SlotSharingGroup
	}
	producers := map[topology.ExecutionVertexID]bool{}
	for _, w := range f.rs.Members(r) {
		for _, p := range f.inputsOutside(w, true) {
			producers[p] = true
		}
	}
	bins := map[regionAttempt]map[int]bool{{r, attempt}: {f.slotIndex[v]: true}}
	total := f.slotProfOfV[v]
	host := false
	for _, u := range f.bySlot[slot] {
		ru, au := f.rs.RegionOf(u), f.running[u].Attempt
		if ru == r && au == attempt && f.slotIndex[u] == f.slotIndex[v] {
			continue
		}
		if ru == r {
			t.Errorf("shared deploy %s@%d into slot %d, which runs %s@%d of its own region", f.name(v), attempt, slot, f.name(u), au)
		}
		if group(u) != group(v) {
			t.Errorf("shared deploy %s@%d into slot %d of group %q, which runs %s of group %q", f.name(v), attempt, slot, group(v), f.name(u), group(u))
		}
		host = host || producers[u]
		ra := regionAttempt{ru, au}
		if bins[ra] == nil {
			bins[ra] = map[int]bool{}
		}
		if !bins[ra][f.slotIndex[u]] {
			bins[ra][f.slotIndex[u]] = true
			total = total.Add(f.slotProfOfV[u])
		}
	}
	if !host && len(f.bySlot[slot]) > 0 {
		if u := f.bySlot[slot][0]; f.rs.RegionOf(u) != r {
			t.Errorf("shared deploy %s@%d into slot %d, where no hybrid producer of its region runs", f.name(v), attempt, slot)
		}
	}
	if prof, ok := f.slotProfile[slot]; ok && !total.FitsIn(prof) {
		t.Errorf("shared deploy %s@%d into slot %d of %v: its region slots need %v together", f.name(v), attempt, slot, prof, total)
	}
}

// cancel applies one Ready.Cancel entry: the task must run in that
// attempt.
func (f *fakeRuntime) cancel(v topology.ExecutionVertexID, attempt Attempt) {
	f.t.Helper()
	f.cancels = append(f.cancels, cancelCall{V: v, Attempt: attempt, Call: f.call})
	d, ok := f.running[v]
	if !ok || d.Attempt != attempt {
		f.t.Errorf("cancel %s@%d, which does not run (running: %v %v)", f.name(v), attempt, ok, d)
		return
	}
	f.ended(v)
}

// ended forgets a running task.
func (f *fakeRuntime) ended(v topology.ExecutionVertexID) {
	d := f.running[v]
	delete(f.running, v)
	rest := slices.DeleteFunc(f.bySlot[d.Slot], func(u topology.ExecutionVertexID) bool { return u == v })
	if len(rest) == 0 {
		delete(f.bySlot, d.Slot)
		delete(f.slotOwner, d.Slot)
	} else {
		f.bySlot[d.Slot] = rest
	}
}

// requested applies one Ready.Requests entry: the region asks for every
// slot it needs.
func (f *fakeRuntime) requested(rq Request) {
	f.t.Helper()
	f.requests = append(f.requests, regionAttempt{rq.Region, rq.Attempt})
	if len(rq.Slots) != f.rs.SlotCount(rq.Region) {
		f.t.Errorf("region %d asked for %d slots, needs %d", rq.Region, len(rq.Slots), f.rs.SlotCount(rq.Region))
	}
}

// slotReleased applies one Ready.Released entry: the slot must hold no
// task any more (the cancels of the same Ready were applied first).
func (f *fakeRuntime) slotReleased(rl releaseCall) {
	f.t.Helper()
	f.releases = append(f.releases, rl)
	if us := f.bySlot[rl.Slot]; len(us) > 0 {
		f.t.Errorf("slot %d of region %d@%d released while %s still runs in it", rl.Slot, rl.Region, rl.Attempt, f.name(us[0]))
	}
}

// restarting applies one Ready.Restarted entry: the restarted regions'
// results are gone.
func (f *fakeRuntime) restarting(rs Restart) {
	f.restarts = append(f.restarts, restartCall{rs.Failed, slices.Clone(rs.Regions)})
	for _, r := range rs.Regions {
		for _, v := range f.rs.Members(r) {
			delete(f.finished, v)
		}
	}
}

// currentAttempt is the attempt of v's region now.
func (f *fakeRuntime) currentAttempt(v topology.ExecutionVertexID) Attempt {
	st, err := f.s.Task(v)
	require.NoError(f.t, err)
	return st.Attempt
}

// blockingInputsOutside lists the producers of the blocking partitions v
// reads that are outside v's region.
func (f *fakeRuntime) blockingInputsOutside(v topology.ExecutionVertexID) []topology.ExecutionVertexID {
	return f.inputsOutside(v, false)
}

// finishable reports whether every producer of a hybrid partition v reads
// finished in its current attempt: v may report its own finish.
func (f *fakeRuntime) finishable(v topology.ExecutionVertexID) bool {
	topo := f.rs.Topology()
	for _, e := range topo.Job().InEdges(topo.JobVertexOf(v)) {
		if !topo.PartitionType(e).IsHybrid() {
			continue
		}
		g := topo.Group(topo.ConsumedGroup(e, topo.SubtaskIndex(v)))
		for p := g.Producers.Start; p < g.Producers.End; p++ {
			if a, ok := f.finished[topology.ExecutionVertexID(p)]; !ok || a != f.currentAttempt(topology.ExecutionVertexID(p)) {
				return false
			}
		}
	}
	return true
}

// inputsOutside lists the producers outside v's region of the blocking
// (hybrid: false) or hybrid partitions v reads.
func (f *fakeRuntime) inputsOutside(v topology.ExecutionVertexID, hybrid bool) []topology.ExecutionVertexID {
	topo := f.rs.Topology()
	jv := topo.JobVertexOf(v)
	r := f.rs.RegionOf(v)
	var out []topology.ExecutionVertexID
	for _, e := range topo.Job().InEdges(jv) {
		if pt := topo.PartitionType(e); pt.IsPipelined() || pt.IsHybrid() != hybrid {
			continue
		}
		g := topo.Group(topo.ConsumedGroup(e, topo.SubtaskIndex(v)))
		for p := g.Producers.Start; p < g.Producers.End; p++ {
			if u := topology.ExecutionVertexID(p); f.rs.RegionOf(u) != r {
				out = append(out, u)
			}
		}
	}
	return out
}

// runningIDs returns the running tasks, ascending (deterministic).
func (f *fakeRuntime) runningIDs() []topology.ExecutionVertexID {
	ids := make([]topology.ExecutionVertexID, 0, len(f.running))
	for v := range f.running {
		ids = append(ids, v)
	}
	slices.Sort(ids)
	return ids
}

// runningIn returns the tasks running in slot, ascending.
func (f *fakeRuntime) runningIn(slot slotpool.SlotID) []topology.ExecutionVertexID {
	return slices.Sorted(slices.Values(f.bySlot[slot]))
}

// deploysIn returns the deploys made during harness call c.
func (f *fakeRuntime) deploysIn(c int) []deployCall {
	var out []deployCall
	for _, d := range f.deploys {
		if d.Call == c {
			out = append(out, d)
		}
	}
	return out
}

// harness drives a Scheduler with a fakeRuntime: after every input it
// applies the Ready and checks the invariants.
type harness struct {
	t   testing.TB
	s   *Scheduler
	f   *fakeRuntime
	rs  *region.Regions
	now time.Time
	rng *rand.Rand

	nextSlot slotpool.SlotID
	inPool   map[slotpool.SlotID]bool // slots offered and not lost
	// deployedIn maps each run of a region to the call that deployed it.
	deployedIn map[regionAttempt]int
	checked    int // last call whose deploys were checked
}

// newHarness returns a harness around mustNew(t, rs, cfg), whose random choices
// follow seed.
func newHarness(t testing.TB, rs *region.Regions, cfg Config, seed uint64) *harness {
	f := newFakeRuntime(t, rs)
	f.matching = cfg.Pool.Matching
	h := &harness{
		t:          t,
		f:          f,
		rs:         rs,
		now:        t0,
		rng:        rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		nextSlot:   1,
		inPool:     map[slotpool.SlotID]bool{},
		deployedIn: map[regionAttempt]int{},
	}
	h.s = mustNew(t, rs, cfg)
	f.s = h.s
	return h
}

// begin opens a new harness call.
func (h *harness) begin() { h.f.call++ }

// unknownSlots makes n slots of unknown size with fresh ids.
func (h *harness) unknownSlots(n int) []slotpool.Slot {
	return h.sized(slices.Repeat([]resource.Profile{resource.Profile{}}, n)...)
}

// sized makes one slot per profile, with fresh ids.
func (h *harness) sized(profiles ...resource.Profile) []slotpool.Slot {
	out := make([]slotpool.Slot, len(profiles))
	for i, p := range profiles {
		out[i] = slotpool.Slot{ID: h.nextSlot, Profile: p}
		h.nextSlot++
	}
	return out
}

// provide tells the runtime side about slots it may see deploys into
// (the admission path, where the scheduler never sees Offer).
func (h *harness) provide(slots ...slotpool.Slot) {
	for _, sl := range slots {
		h.f.slotProfile[sl.ID] = sl.Profile
	}
}

// offer offers slots to the scheduler.
func (h *harness) offer(slots ...slotpool.Slot) {
	h.t.Helper()
	h.provide(slots...)
	h.begin()
	require.NoError(h.t, h.s.Offer(h.now, slots...))
	for _, sl := range slots {
		h.inPool[sl.ID] = true
	}
	h.check()
}

// setCapacity declares the cluster's capacity.
func (h *harness) setCapacity(capacity []resource.Count) {
	h.t.Helper()
	h.begin()
	require.NoError(h.t, h.s.SetCapacity(h.now, capacity))
	h.check()
}

// start starts the job, which must not fail at once.
func (h *harness) start() {
	h.t.Helper()
	require.NoError(h.t, h.startErr())
}

// startErr starts the job and returns Start's error.
func (h *harness) startErr() error {
	h.t.Helper()
	h.begin()
	err := h.s.Start(h.now)
	h.check()
	return err
}

// running reports a deployed task running.
func (h *harness) running(v topology.ExecutionVertexID) {
	h.t.Helper()
	d, ok := h.f.running[v]
	require.True(h.t, ok, "%s is not running", h.f.name(v))
	h.begin()
	require.NoError(h.t, h.s.TaskRunning(h.now, v, d.Attempt))
	h.check()
}

// finish reports a running task finished.
func (h *harness) finish(v topology.ExecutionVertexID) {
	h.t.Helper()
	d, ok := h.f.running[v]
	require.True(h.t, ok, "%s is not running", h.f.name(v))
	h.f.ended(v)
	h.f.finished[v] = d.Attempt
	h.begin()
	require.NoError(h.t, h.s.TaskFinished(h.now, v, d.Attempt))
	h.check()
}

// fail reports a running task failed.
func (h *harness) fail(v topology.ExecutionVertexID, lost ...topology.ResultPartitionID) {
	h.t.Helper()
	d, ok := h.f.running[v]
	require.True(h.t, ok, "%s is not running", h.f.name(v))
	h.f.ended(v)
	h.begin()
	require.NoError(h.t, h.s.TaskFailed(h.now, v, d.Attempt, lost...))
	h.check()
}

// lose reports a slot gone.
func (h *harness) lose(slot slotpool.SlotID) {
	h.t.Helper()
	h.begin()
	require.NoError(h.t, h.s.SlotLost(h.now, slot))
	delete(h.inPool, slot)
	h.check()
}

// tick advances the clock to at and ticks.
func (h *harness) tick(at time.Time) {
	h.t.Helper()
	h.now = at
	h.begin()
	require.NoError(h.t, h.s.Tick(h.now))
	h.check()
}

// byName resolves "A#0".
func (h *harness) byName(name string) topology.ExecutionVertexID {
	h.t.Helper()
	v, err := h.rs.Topology().ParseVertexName(name)
	require.NoError(h.t, err)
	return v
}

// step finishes one running task chosen at random (sometimes reporting it
// running first) among those whose hybrid producers finished; false if
// nothing runs. Now and then it reports the finish of a task whose hybrid
// producer runs, which the scheduler refuses, changing nothing.
func (h *harness) step() bool {
	all := h.f.runningIDs()
	if len(all) == 0 {
		return false
	}
	ids := slices.DeleteFunc(slices.Clone(all), func(v topology.ExecutionVertexID) bool { return !h.f.finishable(v) })
	if len(ids) < len(all) && h.rng.IntN(4) == 0 {
		early := all[slices.IndexFunc(all, func(v topology.ExecutionVertexID) bool { return !h.f.finishable(v) })]
		h.begin()
		err := h.s.TaskFinished(h.now, early, h.f.running[early].Attempt)
		require.ErrorIs(h.t, err, strategy.ErrEarlyFinish, "finish of %s before its hybrid producers", h.f.name(early))
		h.check()
	}
	require.NotEmpty(h.t, ids, "every running task waits for a hybrid producer")
	v := ids[h.rng.IntN(len(ids))]
	if h.rng.IntN(3) == 0 {
		if st, err := h.s.Task(v); err == nil && st.State == TaskDeploying {
			h.running(v)
		}
	}
	h.finish(v)
	return true
}

// drive finishes tasks in random order until the job is not running or
// nothing runs; it fails the test if the job stalls.
func (h *harness) drive() {
	h.t.Helper()
	for i := 0; h.s.State() == JobRunning; i++ {
		require.Less(h.t, i, 100_000, "no end in sight")
		if !h.step() {
			require.Failf(h.t, "job stalls", "state %v, nothing runs, waiting regions %v", h.s.State(), h.s.Status().Waiting)
		}
	}
}

// check applies the scheduler's Ready to the fake runtime and verifies the
// invariants that hold between calls:
//   - every region run deployed in this call deployed all its members in
//     it, one pool slot per region slot, shared slots together, and no
//     region run deploys in two calls;
//   - the slots the runtime has tasks in are exactly the pool's in-use
//     slots, each held by the bulk of the region run that runs in it;
//   - no more slots are used than the runtime has;
//   - the job state the Ready values told is the scheduler's;
//   - the scheduler's own bookkeeping and the pool's invariants hold.
func (h *harness) check() {
	h.t.Helper()
	t, f, s := h.t, h.f, h.s
	f.sync()
	byRun := map[regionAttempt][]deployCall{}
	var batch []deployCall
	if h.checked < f.call {
		h.checked = f.call
		batch = f.deploysIn(f.call)
	}
	for _, d := range batch {
		ra := regionAttempt{h.rs.RegionOf(d.V), d.Attempt}
		byRun[ra] = append(byRun[ra], d)
	}
	for ra, ds := range byRun {
		if c, ok := h.deployedIn[ra]; ok {
			t.Errorf("region %d@%d deployed in calls %d and %d", ra.R, ra.A, c, f.call)
		}
		h.deployedIn[ra] = f.call
		if len(ds) != h.rs.Size(ra.R) {
			t.Errorf("region %d@%d %s: %d of %d members deployed in one call", ra.R, ra.A, h.rs.MemberNames(ra.R, 8), len(ds), h.rs.Size(ra.R))
		}
		slotOfIdx := map[int]slotpool.SlotID{}
		idxOfSlot := map[slotpool.SlotID]int{}
		for _, d := range ds {
			i := f.slotIndex[d.V]
			if sl, ok := slotOfIdx[i]; ok && sl != d.Slot {
				t.Errorf("region %d@%d: %s in slot %d, its slot mates in slot %d", ra.R, ra.A, f.name(d.V), d.Slot, sl)
			}
			if j, ok := idxOfSlot[d.Slot]; ok && j != i {
				t.Errorf("region %d@%d: region slots %d and %d share pool slot %d", ra.R, ra.A, i, j, d.Slot)
			}
			slotOfIdx[i], idxOfSlot[d.Slot] = d.Slot, i
		}
	}
	st := s.Status().Pool
	if st.InUse != len(f.bySlot) {
		t.Errorf("pool has %d slots in use, the runtime runs tasks in %d", st.InUse, len(f.bySlot))
	}
	for slot, vs := range f.bySlot {
		d := f.running[vs[0]]
		info, ok := s.pool.Slot(slot)
		owner := f.slotOwner[slot]
		want := bulkID(owner.R, strategy.Attempt(owner.A))
		if !ok || info.State != pool.SlotInUse || info.Bulk != want {
			t.Errorf("slot %d runs %s@%d but the pool says %v %v bulk %d (want in-use by bulk %d)", slot, f.name(d.V), d.Attempt, ok, info.State, info.Bulk, want)
		}
		if got, ok := s.SlotOf(d.V); !ok || got != slot {
			t.Errorf("SlotOf(%s) = %d, %v; runs in %d", f.name(d.V), got, ok, slot)
		}
	}
	if s.slots.len() != len(f.bySlot) {
		t.Errorf("scheduler tracks %d slots in use, the runtime %d", s.slots.len(), len(f.bySlot))
	}
	if len(h.inPool) > 0 && len(f.bySlot) > len(h.inPool) {
		t.Errorf("%d slots in use, only %d offered", len(f.bySlot), len(h.inPool))
	}
	if f.jobState != s.State() {
		t.Errorf("the Ready values say the job is %v, it is %v", f.jobState, s.State())
	}
	if s.State() == JobFailed && len(f.jobs) > 0 && f.jobs[len(f.jobs)-1].Err != s.Err() {
		t.Errorf("Ready.Job carries %v, Err is %v", f.jobs[len(f.jobs)-1].Err, s.Err())
	}
	if err := s.pool.CheckInvariants(); err != nil {
		t.Errorf("pool: %v", err)
	}
}

// checkClean verifies that a job that ended left nothing behind: no slot
// in use, no waiting bulk, no bulk record in the pool, nothing left to
// hand out.
func (h *harness) checkClean() {
	h.t.Helper()
	st := h.s.Status()
	require.Zero(h.t, st.Pool.InUse, "slots in use")
	require.Zero(h.t, st.Pool.Held, "slots held")
	require.Zero(h.t, st.Pool.Waiting, "waiting bulks")
	require.Empty(h.t, st.Waiting, "waiting regions")
	require.Empty(h.t, st.Deployed, "deployed regions")
	require.Zero(h.t, h.s.slots.len(), "slots tracked")
	require.Empty(h.t, h.f.running)
	require.False(h.t, h.s.HasReady(), "a Ready is pending")
	for r := range h.rs.NumRegions() {
		rst, err := h.s.strategy.Region(region.ID(r))
		require.NoError(h.t, err)
		for a := strategy.Attempt(0); a <= rst.Attempt; a++ {
			require.Equal(h.t, pool.BulkUnknown, h.s.pool.State(bulkID(region.ID(r), a)), "bulk of region %d@%d not forgotten", r, a)
		}
		run := h.s.regions[r]
		require.False(h.t, run.waiting, "region %d bulk", r)
		require.False(h.t, run.deployed, "region %d deployed bulk", r)
		require.Zero(h.t, run.live(), "region %d slots", r)
	}
	require.Len(h.t, h.s.freeLives, len(h.s.lives), "every live entry is free")
}

// stats returns the scheduler's counters.
func (h *harness) stats() Stats { return h.s.Status().Stats }

// flip119 decodes examples/jobs/flip119.json.
func flip119(t testing.TB) *topology.JobGraph { return testjobs.FLIP119(t) }

// build builds a job or fails the test.
func build(t testing.TB, b *topology.Builder) *topology.JobGraph {
	t.Helper()
	g, err := b.Build()
	require.NoError(t, err)
	return g
}

// sourceRegions lists the regions without a blocking input from outside.
func sourceRegions(rs *region.Regions) []region.ID {
	var out []region.ID
	for r := range rs.NumRegions() {
		if len(rs.ConsumedGroups(region.ID(r))) == 0 {
			out = append(out, region.ID(r))
		}
	}
	return out
}

// modes is exchange.Modes with names, for subtests.
func modes() []exchange.Mode { return exchange.Modes() }

// mustNew is New for a Config the test knows is valid.
func mustNew(tb testing.TB, rs *region.Regions, cfg Config) *Scheduler {
	tb.Helper()
	s, err := New(rs, cfg)
	require.NoError(tb, err)
	return s
}
