package simulator

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// policy is what decides which task gets which slot.
type policy interface {
	start()
	// finished and failed are the model's hooks (after the model updated).
	finished(v int32)
	failed(v, slot int32)
	// afterEvent runs after every calendar event.
	afterEvent()
	// tick fires the policy's timeouts.
	tick()
	nextDeadline() (time.Duration, bool)
	// stopped reports a failed job (the run ends).
	stopped() (error, bool)
	// waitingForSlots lists tasks that asked for a slot and have none.
	waitingForSlots() []int32
	// done reports whether the policy considers the job finished.
	done() bool
	stats(r *Result)
}

// instantPolicy is a policy that decides once per instant rather than
// after every event: the engine calls endInstant when an instant is over
// (the next calendar event is at a later time, or none is left), and
// again if what it did added events at that time. It reports whether it
// acted (the engine then re-arms the policy's deadline).
type instantPolicy interface {
	endInstant() bool
}

// slotRec is one modelled slot of the cluster while a run goes on: who
// holds it since when, and whether its tasks make progress since when.
// The times these add up to are summed over all slots as they end
// (engine.busy, engine.worked): the utilization needs only the sums. It is
// 24 bytes, touched by every task's deploy, progress and end, in a wave
// of tasks over as many slots as the cluster has (its profile, read only
// when the slots are offered, is in engine.slotProfiles).
type slotRec struct {
	occupants   int32
	progressing int32 // occupants making progress
	since       time.Duration
	workSince   time.Duration
}

// engine runs the calendar and keeps the trace; the model holds task
// semantics, the policy hands out slots.
type engine struct {
	cfg    Config
	rs     *region.Regions
	topo   *topology.ExecutionTopology
	model  *model
	policy policy
	rng    *rand.Rand
	slots  []slotRec // the modelled slots (see newEngine)
	// slotProfiles is the profile of each modelled slot; slotNodes its
	// node ("": none; nil if no slot has one).
	slotProfiles []resource.Profile
	slotNodes    []string
	// busy and worked sum, over the slots, the time a slot was held and
	// the time at least one of its tasks made progress, up to the last
	// time each ended (result adds what is still open); drivers the time
	// drivers held their slots, up to the ends of the drivers that left
	// (result adds the drivers still in theirs, from driverSince).
	busy, worked, drivers time.Duration
	driverSince           map[int32]time.Duration
	// clusterSize is the number of slots of the cluster.
	clusterSize int
	events      []runfile.Event
	log         *zap.Logger
	deadline    struct {
		at      time.Duration
		version uint32
		armed   bool
	}
	processed int
	traced    int // trace events, recorded or not
	// atNow and atTime cache at: the events of a wave share their time.
	atNow  time.Duration
	atTime time.Time
	// set and jobs are set in a multi-job run (RunJobs).
	set  *jobSet
	jobs *jobsPolicy
	// instant is the policy if it decides once per instant, else nil.
	instant instantPolicy
	// eagerJobs, in an eager multi-job run (no admission to ask), is each
	// job's first deploy and last finish; eagerEvents refuses the events
	// of its events file.
	eagerJobs   []eagerJob
	eagerEvents *eagerEvents
	// spec is speculative execution (nil if off); firstRuns counts each
	// task's runs in its regions and stragglers the slow attempts, for
	// the straggler model (stragglers.go).
	spec       *specSim
	firstRuns  []uint32
	stragglers int
}

// eagerJob is what an eager multi-job run learns of one job from its
// tasks: its first task's deploy (-1: none yet) and its last task's
// finish.
type eagerJob struct {
	firstDeploy, lastFinish time.Duration
}

func newEngine(cfg Config) (*engine, error) {
	e := newBaseEngine(cfg, 0)
	if cfg.Policy == EagerPolicy {
		e.policy = newEagerPolicy(e)
	} else {
		p, err := newRegionPolicy(e)
		if err != nil {
			return nil, fmt.Errorf("simulator: %w", err)
		}
		e.policy = p
		if e.spec != nil {
			e.model.readFinishedOnly(p.sched.ReadsFinishedOnly)
		}
	}
	return e, nil
}

// newJobsEngine is the engine of a multi-job run: the jobs side by side in
// one model, a scheduler per job behind the admission (or the eager
// baseline over all of them).
func newJobsEngine(cfg Config, jc JobsConfig, set *jobSet) (*engine, error) {
	e := newBaseEngine(cfg, jobsExtraSlots(jc))
	e.set = set
	if cfg.Policy == EagerPolicy {
		ep := newEagerPolicy(e)
		ep.arrivals(jc.Jobs)
		e.policy = ep
		e.eagerJobs = make([]eagerJob, len(jc.Jobs))
		for i := range e.eagerJobs {
			e.eagerJobs[i].firstDeploy = -1
		}
		e.eagerEvents = newEagerEvents(e, jc)
		return e, nil
	}
	jp, err := newJobsPolicy(e, jc, set)
	if err != nil {
		return nil, err
	}
	e.jobs, e.policy, e.instant = jp, jp, jp
	if jc.Speculation.Enabled {
		// As each job's scheduler: a job runs with speculation when it
		// has a task it may speculate (jobsPolicy.submit).
		speculates := make([]bool, len(jc.Jobs))
		for i := range jc.Jobs {
			speculates[i] = jc.Speculation.ValidateJob(set.regions[i]) == nil
		}
		topo := set.union.Topology()
		e.model.readFinishedOnly(func(p topology.ResultPartitionID) bool {
			i, _ := set.of(int32(topo.PartitionProducer(p)))
			return speculates[i] && jc.Speculation.ReadsFinishedOnly(set.union, p)
		})
	}
	return e, nil
}

// jobsExtraSlots counts the slots a multi-job run may hold beyond one per
// task: a driver's per job, and the placeholders of each gang that sets
// its minSlots (those derived count a driver and tasks, and are capped at
// the cluster). A gang's placeholders hold slots the job's tasks may
// never use, yet they hold slots of the cluster that other jobs then
// lack: the run models them. The admission judges the jobs against the
// cluster as configured (admission.Config.Cluster), and every gang it
// accepts (at most the cluster) can be reserved in the modelled slots. A
// gang larger than the cluster counts for nothing: it is rejected and
// holds nothing. The cost is memory in proportion to the gangs' minSlots,
// as to the tasks.
func jobsExtraSlots(jc JobsConfig) int {
	if jc.Policy == EagerPolicy {
		return len(jc.Jobs) // gangs are ignored
	}
	cluster := 0
	for _, c := range jc.Cluster {
		cluster = min(cluster+c.N, region.MaxClusterSlots) // RunJobs checked the total
	}
	extra := len(jc.Jobs) // one more slot per job for its driver
	for _, j := range jc.Jobs {
		if g := j.Job.Submission().Gang; g != nil && g.MinSlots <= cluster {
			extra = min(extra+g.MinSlots, region.MaxClusterSlots)
		}
	}
	return extra
}

// newBaseEngine sets up the model, the slots and the hooks; the caller
// sets the policy. extra counts slots the run may need beyond one per
// task (drivers).
func newBaseEngine(cfg Config, extra int) *engine {
	src := rand.NewPCG(cfg.Seed, 0x5eed)
	rng := rand.New(src)
	rs := cfg.Regions
	if cfg.Policy == RegionPolicy {
		// Ask for the slots region.Check judges: a region whose locality
		// packing does not fit the cluster gets its resource-aware packing.
		rs = rs.ForCluster(cfg.Cluster, cfg.Matching)
	}
	e := &engine{cfg: cfg, rs: rs, topo: cfg.Regions.Topology(), rng: rng, log: cfg.Logger, atTime: epoch}
	if e.log == nil {
		e.log = zap.NewNop()
	}
	// A run never uses more slots of one group of the cluster than there
	// are tasks (and extra, and the speculative attempts each task may run
	// beside its own), so only that many are modelled: --slots 100000000
	// costs nothing more. The cluster's real size still counts for
	// utilization. A modelled slot keeps the node of the slot of the
	// cluster it is (Config.SlotNodes, by the cluster's ids).
	tasks := e.topo.NumExecutionVertices() + extra
	if sp := cfg.Speculation; sp.Enabled && sp.MaxConcurrentExecutions > 1 {
		tasks += e.topo.NumExecutionVertices() * (sp.MaxConcurrentExecutions - 1) // (validated: at most MaxSpeculativeExecutions)
	}
	modelled := 0
	for _, c := range cfg.Cluster {
		modelled += min(c.N, tasks)
	}
	e.slots = make([]slotRec, modelled)
	e.slotProfiles = make([]resource.Profile, 0, modelled)
	first := 0 // the cluster's id of the group's first slot
	for _, c := range cfg.Cluster {
		e.clusterSize = min(e.clusterSize+c.N, region.MaxClusterSlots) // Run checked the total
		for k := range min(c.N, tasks) {
			e.slotProfiles = append(e.slotProfiles, c.Profile)
			if id := first + k; id < len(cfg.SlotNodes) && cfg.SlotNodes[id] != "" {
				if e.slotNodes == nil {
					e.slotNodes = make([]string, modelled)
				}
				e.slotNodes[len(e.slotProfiles)-1] = cfg.SlotNodes[id]
			}
		}
		first += c.N
	}
	failures := map[int32]time.Duration{}
	for _, f := range cfg.Failures {
		failures[int32(f.Task)] = f.After
	}
	var seededTies *rand.PCG
	if cfg.Ties == TiesSeeded {
		seededTies = src // the same source: tie-breakers and the engine's draws in one sequence
	}
	e.model = newModel(e.topo, failures, seededTies)
	e.initStragglers()
	e.initSpeculation()
	// Pending events are mostly the progress ends of deployed tasks, a
	// few per slot, and a wave of them shares its time: room for two per
	// modelled slot in the first bucket (up to 65,536 events, 2 MiB;
	// beyond, a bucket grows as it fills) saves its doublings on the way
	// there.
	e.model.cal.reserve(min(tasks, 2*len(e.slots)+16, 1<<16))
	e.model.onFinished = func(v int32) {
		if e.eagerJobs != nil {
			i, _ := e.set.of(v)
			e.eagerJobs[i].lastFinish = max(e.eagerJobs[i].lastFinish, e.now())
		}
		e.record(runfile.Finish, v, e.model.slot(v))
		e.leaveSlot(v)
		e.policy.finished(v)
	}
	e.model.onProgress = func(v int32, on bool) {
		slot := e.model.slot(v)
		if e.detailed() {
			k := runfile.Stall
			if on {
				k = runfile.Progress
			}
			e.emitDetail(e.taskEvent(k, v, slot))
		}
		s := &e.slots[slot]
		if on {
			if s.progressing == 0 {
				s.workSince = e.now()
			}
			s.progressing++
		} else if s.progressing--; s.progressing == 0 {
			e.worked += e.now() - s.workSince
		}
	}
	e.model.onFailed = func(v int32) {
		slot := e.model.slot(v)
		e.record(runfile.Fail, v, slot)
		e.leaveSlot(v)
		e.model.reset(v)
		e.policy.failed(v, slot)
	}
	return e
}

func (e *engine) now() time.Duration { return e.model.now }

// at is now as the time the library is given (epoch + now).
func (e *engine) at() time.Time {
	if now := e.model.now; now != e.atNow {
		e.atNow, e.atTime = now, epoch.Add(now)
	}
	return e.atTime
}

// poolSlots lists the modelled slots as a slot pool (or an admission)
// knows them: id i is slot i, with its profile.
func (e *engine) poolSlots() []slotpool.Slot {
	slots := make([]slotpool.Slot, len(e.slotProfiles))
	for i, pr := range e.slotProfiles {
		slots[i] = slotpool.Slot{ID: slotpool.SlotID(i), Profile: pr}
		if i < len(e.slotNodes) {
			slots[i].Node = e.slotNodes[i]
		}
	}
	return slots
}

// record counts a trace event and keeps or hands it out if tracing. It
// is small enough to inline: without a trace, an event costs a count.
func (e *engine) record(k runfile.Kind, v int32, slot int32) {
	e.traced++
	if e.tracing() {
		e.recordEvent(k, v, slot)
	}
}

// recordEvent builds a trace event of task v and emits it.
func (e *engine) recordEvent(k runfile.Kind, v int32, slot int32) {
	e.emit(e.taskEvent(k, v, slot))
}

// detailed reports whether events only pictures use are handed out.
func (e *engine) detailed() bool { return e.cfg.Detail && e.cfg.OnEvent != nil }

// emitDetail hands out an event only pictures use (Config.Detail): it is
// neither recorded nor counted.
func (e *engine) emitDetail(ev runfile.Event) {
	if e.detailed() {
		e.cfg.OnEvent(ev)
	}
}

// taskEvent is an event of task v in a slot.
func (e *engine) taskEvent(k runfile.Kind, v int32, slot int32) runfile.Event {
	ev := runfile.Event{At: e.now(), Kind: k, Slot: int(slot), Attempt: int(e.model.runs[v].attempt)}
	if e.spec != nil && e.spec.fromCopy[v] {
		ev.Speculative = true
	}
	if e.set != nil {
		i, local := e.set.of(v)
		ev.Job, ev.Task, ev.Region = e.set.jobs[i].Name, e.set.regions[i].Topology().VertexName(local), int(e.set.regions[i].RegionOf(local))
	} else {
		ev.Task, ev.Region = e.topo.VertexName(topology.ExecutionVertexID(v)), int(e.rs.RegionOf(topology.ExecutionVertexID(v)))
	}
	return ev
}

// tracing reports whether trace events are kept or handed out.
func (e *engine) tracing() bool { return e.cfg.Record || e.cfg.OnEvent != nil }

// emit keeps a trace event (Config.Record) and hands it to Config.OnEvent.
func (e *engine) emit(ev runfile.Event) {
	if e.cfg.Record {
		e.events = append(e.events, ev)
	}
	if e.cfg.OnEvent != nil {
		e.cfg.OnEvent(ev)
	}
}

// occupyDriver puts job i's driver into a slot (traced as task "driver").
func (e *engine) occupyDriver(i int, slot int32) {
	s := &e.slots[slot]
	if s.occupants == 0 {
		s.since = e.now()
	}
	s.occupants++
	if e.driverSince == nil {
		e.driverSince = map[int32]time.Duration{}
	}
	e.driverSince[slot] = e.now()
	e.recordDriver(i, runfile.Deploy, slot)
}

// vacateDriver takes job i's driver out of its slot at the job's end:
// it finishes with a job that finished, and is cancelled with one killed
// or failed.
func (e *engine) vacateDriver(i int, slot int32, finished bool) {
	s := &e.slots[slot]
	e.drivers += e.now() - e.driverSince[slot]
	delete(e.driverSince, slot)
	how := runfile.Cancel
	if finished {
		how = runfile.Finish
	}
	e.recordDriver(i, how, slot)
	if s.occupants--; s.occupants == 0 {
		e.busy += e.now() - s.since
		e.recordDriver(i, runfile.Release, slot)
	}
}

// recordDriver appends a trace event of job i's driver.
func (e *engine) recordDriver(i int, k runfile.Kind, slot int32) {
	e.traced++
	if e.cfg.Record || e.cfg.OnEvent != nil {
		e.emit(runfile.Event{At: e.now(), Kind: k, Job: e.set.jobs[i].Name, Task: runfile.DriverTask, Region: runfile.NoRegion, Slot: int(slot)})
	}
}

// deploy puts task v into a slot (called by the policies); shared says
// the slot is one its hybrid producers hold (scheduler.Deployment.Shared),
// and so does its trace event. A task that finished in an earlier attempt
// (its region was restarted) starts over: its earlier results count no
// more. Until it is deployed again nobody
// reads them, since every consumer region of a restarted region restarts
// too and waits for the new attempt.
func (e *engine) deploy(v int32, slot int32, shared bool) {
	if e.model.tasks[v].phase == finished {
		e.model.reset(v)
	}
	if e.model.slow != nil {
		e.firstStraggles(v)
	}
	if e.spec != nil {
		e.spec.fromCopy[v] = false
	}
	s := &e.slots[slot]
	if s.occupants == 0 {
		s.since = e.now()
	}
	s.occupants++
	if e.eagerJobs != nil {
		if i, _ := e.set.of(v); e.eagerJobs[i].firstDeploy < 0 {
			e.eagerJobs[i].firstDeploy = e.now()
		}
	}
	e.traced++
	if e.tracing() {
		ev := e.taskEvent(runfile.Deploy, v, slot)
		ev.Shared = shared
		e.emit(ev)
	}
	e.model.deploy(v, slot)
}

// cancel stops a deployed task (failover).
func (e *engine) cancel(v int32) {
	if e.model.tasks[v].phase != deployed {
		return
	}
	e.record(runfile.Cancel, v, e.model.slot(v))
	e.leaveSlot(v)
	e.model.reset(v)
}

// leaveSlot counts task v out of its slot; the slot is released (and
// traced) when its last task leaves.
func (e *engine) leaveSlot(v int32) {
	slot := e.model.slot(v)
	if slot < 0 {
		return
	}
	s := &e.slots[slot]
	if s.occupants--; s.occupants == 0 {
		e.busy += e.now() - s.since
		e.record(runfile.Release, v, slot)
	}
}

// run processes the calendar until it is empty or the job failed.
func (e *engine) run() (*Result, error) {
	limit := e.cfg.MaxEvents
	if limit <= 0 {
		limit = 1 << 31
	}
	e.policy.start()
	e.policy.afterEvent()
	e.rearm()
	for {
		if e.instant != nil {
			if at, ok := e.model.cal.nextAt(); !ok || at > e.now() {
				// The instant is over: the policy decides over all of it.
				// What it does may add events at this time (a task of no
				// duration, a driver that starts at once): they are
				// processed next, and the instant ends again after them.
				if e.instant.endInstant() {
					e.rearm()
				}
			}
		}
		if e.model.cal.Len() == 0 {
			break
		}
		if _, failed := e.policy.stopped(); failed {
			break
		}
		ev := e.model.cal.next()
		// A stale event (a task paused, reset or finished since, a pool
		// deadline replaced or withdrawn) is dropped without moving the
		// clock: it must not stretch the makespan.
		switch ev.kind {
		case taskProgressEnd:
			if e.model.runs[ev.task].version != ev.version || !e.model.tasks[ev.task].progressing {
				continue
			}
			e.advance(ev.at)
			e.model.progressEnd(ev.task)
		case jobTimer:
			e.advance(ev.at)
			e.jobs.fire(ev.task, ev.version)
		case eagerEvent:
			e.advance(ev.at)
			e.eagerEvents.refuse(ev.task)
		case eagerArrival:
			e.advance(ev.at)
			e.policy.(*eagerPolicy).arrive(ev.task)
		case speculativeEnd:
			k := copyKey{ev.task, int32(ev.version)}
			c, live := e.spec.copies[k]
			if !live {
				continue
			}
			e.advance(ev.at)
			e.copyEnded(k, c)
		case poolDeadline:
			if !e.deadline.armed || ev.version != e.deadline.version {
				continue
			}
			e.advance(ev.at)
			e.deadline.armed = false
			e.policy.tick()
		}
		// The policy acts after every event; one pool deadline stays armed.
		e.policy.afterEvent()
		e.rearm()
		if e.processed++; e.processed > limit {
			return nil, fmt.Errorf("simulator: more than %d events; the run was stopped", limit)
		}
	}
	return e.result()
}

// advance moves virtual time forward to at (never backwards).
func (e *engine) advance(at time.Duration) {
	if at > e.model.now {
		e.model.now = at
	}
}

// rearm keeps one pool deadline armed for the policy's next deadline.
func (e *engine) rearm() {
	at, ok := e.policy.nextDeadline()
	if !ok {
		e.deadline.armed = false
		return
	}
	if e.deadline.armed && e.deadline.at == at {
		return
	}
	e.deadline.version++
	e.deadline.at, e.deadline.armed = at, true
	e.model.cal.add(timed{at: max(at, e.now()), order: e.model.cal.nextOrder(), kind: poolDeadline, version: e.deadline.version})
}

func (e *engine) result() (*Result, error) {
	now := e.now()
	if now == endOfTime {
		return nil, fmt.Errorf("%w: the run's work goes on past the about 292 years of virtual time (an event that late set it going)", ErrTooLong)
	}
	r := &Result{Makespan: now, Slots: e.clusterSize, Events: e.events, Processed: e.processed, TraceEvents: e.traced}
	busy, worked, drivers := e.busy, e.worked, e.drivers
	for _, since := range e.driverSince {
		drivers += now - since
	}
	for i := range e.slots {
		s := &e.slots[i]
		if s.occupants > 0 {
			busy += now - s.since
		}
		if s.progressing > 0 {
			worked += now - s.workSince
		}
	}
	r.SlotTime = busy
	if now > 0 && e.clusterSize > 0 {
		total := float64(now) * float64(e.clusterSize)
		r.Utilization = float64(busy) / total
		r.WorkUtilization = float64(worked) / total
		// A driver holds its slot alone and makes no task progress: its
		// time is the drivers', not waste.
		r.DriverHeld = float64(drivers) / total
		r.HeldWaiting = float64(max(0, busy-worked-drivers)) / total
	}
	e.policy.stats(r)
	if e.jobs != nil {
		e.jobs.result(r)
		return r, nil
	}
	if err, failed := e.policy.stopped(); failed {
		r.Verdict, r.Err = runfile.Failed, err
		r.Reason = failedReason(err)
		return r, nil
	}
	if e.model.unfinished == 0 {
		if !e.policy.done() {
			// The model and the scheduler disagree: a bug, not a verdict.
			return nil, errors.New("simulator: every task finished but the scheduler's job did not")
		}
		r.Verdict = runfile.Finished
		at := now
		if e.eagerJobs != nil {
			// (The run goes on to the events of its events file.)
			at = 0
			for _, ej := range e.eagerJobs {
				at = max(at, ej.lastFinish)
			}
		}
		what := allOf(len(e.model.tasks), "task")
		if e.eagerJobs != nil {
			what = allOf(len(e.eagerJobs), "job")
		}
		r.Reason = fmt.Sprintf("finished: %s finished at %d ms", what, at.Milliseconds())
		return r, nil
	}
	holding := e.model.waiting()
	waiting := e.policy.waitingForSlots()
	slices.Sort(waiting)
	var blocked []int32
	if len(holding) == 0 && len(waiting) == 0 {
		// Nothing is stuck on slots; tasks not started yet wait for a
		// blocking result whose producer never finishes.
		blocked = e.neverStarted(waiting)
	}
	if len(holding) == 0 && len(waiting) == 0 && len(blocked) == 0 {
		unbounded, consumers, _ := e.runningTasks(0, int32(len(e.model.tasks)))
		r.Verdict = runfile.Steady
		r.Reason = steadyReason(unbounded, consumers)
		return r, nil
	}
	r.Verdict = runfile.Deadlock
	r.Holding, r.Waiting, r.Blocked = e.names(holding), e.names(waiting), e.names(blocked)
	var parts []string
	if len(holding) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s slots while waiting", listNames(r.Holding, 12), verb(len(holding), "holds", "hold")))
	}
	if len(waiting) > 0 {
		what := "for a slot"
		if len(holding) == 0 {
			what = "for a slot that never comes"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", listNames(r.Waiting, 12), verb(len(waiting), "waits", "wait"), what))
	}
	if len(blocked) > 0 {
		parts = append(parts, fmt.Sprintf("%s can never start: a result %s %s (blocking, or selective hybrid from another region) is never complete",
			listNames(r.Blocked, 12), verb(len(blocked), "it", "they"), verb(len(blocked), "reads", "read")))
	}
	// docs/cli.md: the message starts with "deadlock:".
	r.Reason = fmt.Sprintf("deadlock: at %d ms %s", now.Milliseconds(), strings.Join(parts, "; "))
	return r, nil
}

// neverStarted lists the unfinished tasks that are neither deployed nor
// waiting for a slot: they wait for blocking inputs that never complete.
func (e *engine) neverStarted(waiting []int32) []int32 {
	var out []int32
	for v := range e.model.tasks {
		if e.model.tasks[v].phase == idle {
			if _, asked := slices.BinarySearch(waiting, int32(v)); !asked {
				out = append(out, int32(v))
			}
		}
	}
	return out
}

// count renders "1 job" or "3 jobs"; allOf "all 3 jobs" or "the only
// job"; verb picks the singular or plural form for a count.
var (
	count = plural.Count
	allOf = plural.All
	verb  = plural.Of
)

func (e *engine) names(vs []int32) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = e.name(v)
	}
	return out
}

// name is a task's name; in a multi-job run "job:A#0".
func (e *engine) name(v int32) string {
	if e.set != nil {
		i, local := e.set.of(v)
		return e.set.jobs[i].Name + ":" + e.set.regions[i].Topology().VertexName(local)
	}
	return e.topo.VertexName(topology.ExecutionVertexID(v))
}

// failedReason is the verdict line of a failed job: "failed: " and, for
// the scheduler's *RegionError, its reason without a second "job failed".
func failedReason(err error) string {
	if re := (*scheduler.RegionError)(nil); errors.As(err, &re) {
		return "failed: " + re.Reason()
	}
	return fmt.Sprintf("failed: %v", err)
}
