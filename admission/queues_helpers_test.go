package admission

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regionsched/regionsched/internal/heap"
	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// The multi-job harness: a Queues admission, and per job a pool.Pool
// linked to the job's Port (through simPort, which records what passes).
// Each job runs its regions in order, at most `inflight` of them submitted
// at once; a region is a bulk of unknown-profile requests; a fulfilled
// region runs for its duration in virtual time, then its slots are
// released. Time jumps from event to event. After every step every job
// whose port has messages is pumped until all are quiet, and (with checks
// on) the invariants are checked.

// simJob is one job of the harness.
type simJob struct {
	name     string
	spec     JobSpec
	submitAt time.Time
	regions  []int           // slots per region, run in order
	durs     []time.Duration // how long each region runs
	inflight int             // regions submitted at once (>= 1)
	startup  time.Duration   // after the driver's grant, before the first region

	port   *port
	pool   *pool.Pool
	link   *pool.Link
	next   int                 // next region to submit
	live   int                 // regions submitted, not finished
	inUse  [][]slotpool.SlotID // the slots of the running bulks, by bulk id (nil: not running)
	begun  bool                // regions started
	done   bool                // Finished (or rejected)
	wake   time.Time           // the pool's deadline in the timer queue
	failed []error             // bulks that failed
	// restarted maps the bulks of regions run again (after a preemption)
	// to their region index; lost counts the regions lost.
	restarted map[slotpool.BulkID]int
	lost      int

	dirty                 bool // to pump
	deployed              bool
	firstDeploy, finished time.Time
	slotTime              time.Duration // integral of granted slots over time
}

// running returns the slots of bulk b while it runs, else nil.
func (j *simJob) running(b slotpool.BulkID) []slotpool.SlotID {
	if int(b) < len(j.inUse) {
		return j.inUse[b]
	}
	return nil
}

// region returns the index of the region bulk b runs.
func (j *simJob) region(b slotpool.BulkID) int {
	if r, ok := j.restarted[b]; ok {
		return r
	}
	return int(b) - 1
}

// simTimer is a harness event at a virtual time.
type simTimer struct {
	at   time.Time
	seq  uint64
	kind timerKind
	job  *simJob
	bulk slotpool.BulkID
}

type timerKind uint8

const (
	tSubmit    timerKind = iota // submit the job to the admission
	tBegin                      // the driver started: submit the first regions
	tFinish                     // a region's tasks end
	tPoolTimer                  // the pool has a deadline
)

// timerBefore orders harness timers by time, then by the order they were
// set.
func timerBefore(a, b simTimer) bool {
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.seq < b.seq
}

// sim is the harness.
type sim struct {
	tb      testing.TB
	q       *Queues
	now     time.Time
	poolCfg pool.Config
	nop     *zap.Logger // the pools' and links' logger, one for all
	jobs    []*simJob
	byName  map[string]*simJob
	byID    []*simJob      // by JobID: in submission order
	dirty   []*simJob      // jobs acted on at this instant, to pump
	pumped  []*simJob      // the batch pump works through (dirty's spare storage)
	noReqs  []pool.Request // zero requests: a region's bulk (the pool keeps none of them)
	// firstLive: every job before it is done.
	firstLive int
	timers    *heap.Heap[simTimer]
	seq       uint64

	checks bool     // check the invariants after every step
	record bool     // keep an event log
	log    []string // what happened, in order (with record)

	msgs     int // messages to the admission at this instant
	grants   int // Grant messages and driver grants: the admission's decisions
	reclaims int
	revokes  int // preemptions
	// rounds counts the pump's rounds: each delivers what the pools sent
	// and calls Decide once.
	rounds   int
	progress uint64 // bumps whenever something happens to a job
	errs     []string
	// onStep, if set, runs after every step (pumped, checked).
	onStep func()
	// sinceProgress counts steps in a row in which nothing happened.
	sinceProgress int
}

// simConfig configures a harness.
type simConfig struct {
	checks, record bool
	idle           time.Duration // the pools' IdleTimeout (default 1 ms)
	// poolTimeout is the pools' fulfillability timeout (default 1000 h).
	// slotpool.NoTimeout (none) is for runs without checks: a pool's
	// CheckInvariants expects an unfulfillable bulk's timer armed.
	poolTimeout time.Duration
	// returnFreed gives a slot back to the admission as soon as its
	// tasks end (pool.Config.ReturnFreed, as the multi-job runtime's
	// pools do), with an idle timeout of 1 ns.
	returnFreed bool
}

// newSim returns a harness with a new admission of cfg.
func newSim(tb testing.TB, cfg Config, sc simConfig) *sim {
	tb.Helper()
	s := emptySim(tb, sc)
	s.start(cfg)
	return s
}

// emptySim returns a harness without jobs and without its admission: jobs
// may be added, and start makes the admission before it runs.
func emptySim(tb testing.TB, sc simConfig) *sim {
	if sc.idle == 0 {
		sc.idle = time.Millisecond
		if sc.returnFreed {
			sc.idle = time.Nanosecond
		}
	}
	if sc.poolTimeout == 0 {
		sc.poolTimeout = 1000 * time.Hour
	}
	nop := zap.NewNop()
	return &sim{
		tb: tb, now: t0, nop: nop,
		poolCfg: pool.Config{Admission: true, ReturnFreed: sc.returnFreed, IdleTimeout: sc.idle, Timeout: sc.poolTimeout, Logger: nop},
		byName:  map[string]*simJob{},
		timers:  heap.New(timerBefore, nil),
		checks:  sc.checks, record: sc.record,
	}
}

// simLog turns on the admission's debug log (zap, on standard error) in
// every run of the harness: a replay of one seed.
var simLog = flag.Bool("simlog", false, "the admission's debug log of every run of the test harness, on standard error (with one seed)")

// start makes the admission the jobs are submitted to; with checks on,
// every claim across queues is checked against the walk of the victims
// tree (Queues.checkLive), and every instant's preemptions across queues
// against the guarantees (Queues.checkReclaims).
func (s *sim) start(cfg Config) {
	s.tb.Helper()
	if *simLog {
		cfg.Logger, _ = zap.NewDevelopment()
	}
	q, err := New(cfg)
	require.NoError(s.tb, err)
	q.checkLive = s.checks // (every claim's streams checked against the walk)
	q.checkReclaims = s.checks
	s.q = q
}

// clusterSlots returns n slots of profile small, ids 1..n (the jobs'
// requests are of unknown profile: any slot serves them).
func clusterSlots(n int) []slotpool.Slot {
	out := make([]slotpool.Slot, n)
	for i := range out {
		out[i] = slotpool.Slot{ID: slotpool.SlotID(i + 1), Profile: small}
	}
	return out
}

// add schedules a job: submitted at submitAt (relative to t0), its regions
// of the given sizes, each running dur(i).
func (s *sim) add(spec JobSpec, at time.Duration, regions []int, durs []time.Duration, inflight int, startup time.Duration) *simJob {
	s.tb.Helper()
	require.Len(s.tb, durs, len(regions))
	if inflight < 1 {
		inflight = 1
	}
	largest := 0
	for _, k := range regions {
		largest = max(largest, k)
	}
	if spec.Largest == nil && largest > 0 {
		spec.Largest = []resource.Count{{Profile: resource.Unknown, N: largest}}
	}
	if spec.Driver != nil && spec.Start == nil {
		// what the job asks for once its driver is up: its first regions
		n := 0
		for _, k := range regions[:min(max(inflight, 1), len(regions))] {
			n += k
		}
		if n > 0 {
			spec.Start = []resource.Count{{Profile: resource.Unknown, N: n}}
		}
	}
	if spec.Driver != nil && startup == 0 {
		spec.StartAtOnce = true // (the harness begins it at the instant of its grant)
	}
	j := &simJob{
		name: spec.Name, spec: spec, submitAt: t0.Add(at), regions: regions, durs: durs,
		inflight: inflight, startup: startup,
	}
	// The job's pool and link are made now, with the job: a benchmark
	// builds them with its inputs, before it starts its timer.
	j.pool = pool.New(s.poolCfg)
	j.link = pool.NewLink(j.pool, &simPort{s: s, j: j}, s.nop)
	s.jobs = append(s.jobs, j)
	s.byName[j.name] = j
	s.push(simTimer{at: j.submitAt, kind: tSubmit, job: j})
	return j
}

// uniform returns n copies of d.
func uniform(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// repeat returns n copies of k.
func repeat(n, k int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = k
	}
	return out
}

func (s *sim) push(t simTimer) {
	t.seq = s.seq
	s.seq++
	s.timers.Push(t)
}

// logf adds a line to the event log. Callers test s.record first: the
// arguments of a call are boxed before it, and benchmarks run without a
// log.
func (s *sim) logf(format string, args ...any) {
	if s.record {
		s.log = append(s.log, fmt.Sprintf("%5dms ", s.now.Sub(t0).Milliseconds())+fmt.Sprintf(format, args...))
	}
}

func (s *sim) fail(format string, args ...any) {
	s.errs = append(s.errs, fmt.Sprintf("%v: ", s.now.Sub(t0))+fmt.Sprintf(format, args...))
}

// simPort is the Admission each job's Link talks to: the job's Port, with
// the grants counted and the messages logged. Its Tick and NextDeadline are
// empty: the harness ticks the admission (one for all jobs) itself.
type simPort struct {
	s *sim
	j *simJob
}

func (p *simPort) Handle(now time.Time, msg slotpool.ToAdmission) error {
	// A pool and the admission that exchange messages without end at one
	// instant (a livelock) would hang Link.Ready: fail instead.
	if p.s.msgs++; p.s.msgs > 100000 {
		p.s.tb.Fatalf("%slivelock at %v: job %s keeps sending, last %#v\n%s\n%s", p.s.title(), p.s.now.Sub(t0), p.j.name, msg, p.s.tail(30), p.s.dump())
	}
	err := p.j.port.Handle(now, msg)
	if err != nil {
		p.s.fail("job %s: admission refused %#v: %v", p.j.name, msg, err)
	}
	return err
}

func (p *simPort) Ready() []slotpool.FromAdmission {
	msgs := p.j.port.Ready()
	for _, m := range msgs {
		switch m := m.(type) {
		case slotpool.Grant:
			p.s.grants++
			p.s.progress++
			if p.s.record {
				ids := make([]slotpool.SlotID, len(m.Slots))
				for i, sl := range m.Slots {
					ids[i] = sl.ID
				}
				p.s.logf("%s grant ask %d %v", p.j.name, m.Ask, ids)
			}
		case slotpool.Reclaim:
			p.s.reclaims++
			if p.s.record {
				p.s.logf("%s reclaim %d", p.j.name, m.Slot)
			}
		case slotpool.Revoke:
			if m.Reason != slotpool.ReasonPreempted {
				p.s.fail("job %s: unexpected revoke %v", p.j.name, m)
			}
			p.s.revokes++
			if p.s.record {
				p.s.logf("%s revoke %d", p.j.name, m.Slot)
			}
		}
	}
	return msgs
}

func (p *simPort) Tick(time.Time)                  {}
func (p *simPort) NextDeadline() (time.Time, bool) { return time.Time{}, false }

// run advances the harness until every job is done, nothing more can
// happen (a deadlock: it returns false), or the virtual time passes
// horizon (relative to t0; 0 = none).
func (s *sim) run(horizon time.Duration) (finished bool) {
	s.tb.Helper()
	for {
		s.pump()
		s.afterStep()
		if s.allDone() {
			return true
		}
		next, ok := s.nextTime()
		// Nothing left but the pools' fulfillability timeouts (1000 h)
		// or idle timers that change nothing: a deadlock.
		if !ok || s.sinceProgress > 50 || next.Sub(s.now) > 100*time.Hour {
			return false
		}
		if horizon > 0 && next.After(t0.Add(horizon)) {
			s.account(t0.Add(horizon))
			s.now = t0.Add(horizon)
			return false
		}
		s.account(next)
		s.now = next
		before := s.progress
		s.step()
		if s.progress == before {
			s.sinceProgress++
		} else {
			s.sinceProgress = 0
		}
	}
}

// account adds the slots each job holds over [now, to) to its slot-time.
func (s *sim) account(to time.Time) {
	d := to.Sub(s.now)
	if d <= 0 || !(s.checks || s.record) { // benchmarks skip it: it visits every job
		return
	}
	for _, j := range s.jobs {
		if j.port != nil && !j.done {
			j.slotTime += time.Duration(j.port.Granted()) * d
		}
	}
}

func (s *sim) allDone() bool {
	for s.firstLive < len(s.jobs) && s.jobs[s.firstLive].done {
		s.firstLive++
	}
	for _, j := range s.jobs[s.firstLive:] {
		if !j.done {
			return false
		}
	}
	return true
}

// nextTime is the earliest harness timer or admission deadline.
func (s *sim) nextTime() (time.Time, bool) {
	var at time.Time
	ok := false
	if s.timers.Len() > 0 {
		at, ok = s.timers.Min().at, true
	}
	if t, dok := s.q.NextDeadline(); dok && (!ok || t.Before(at)) {
		at, ok = t, true
	}
	if ok && at.Before(s.now) {
		at = s.now
	}
	return at, ok
}

// step fires what is due at now.
func (s *sim) step() {
	s.msgs = 0
	s.q.Tick(s.now)
	for s.timers.Len() > 0 && !s.timers.Min().at.After(s.now) {
		t := s.timers.Pop()
		j := t.job
		s.markDirty(j)
		switch t.kind {
		case tSubmit:
			s.submitJob(j)
		case tBegin:
			s.progress++
			j.begun = true
			if s.record {
				s.logf("%s begins", j.name)
			}
			s.submitRegions(j)
		case tFinish:
			if j.done { // killed
				continue
			}
			s.progress++
			s.finishRegion(j, t.bulk)
		case tPoolTimer:
			if j.done || !j.wake.Equal(t.at) {
				continue
			}
			j.wake = time.Time{}
			j.pool.Tick(s.now)
		}
	}
}

func (s *sim) submitJob(j *simJob) {
	s.progress++
	port, err := s.q.submit(s.now, j.spec)
	if err != nil {
		s.fail("submit %s: %v", j.name, err)
		j.done = true
		return
	}
	j.port = port
	s.byID = append(s.byID, j)
	if port.State() == JobRejected {
		if s.record {
			s.logf("%s rejected: %v", j.name, port.Err())
		}
		j.link.Ready(s.now) // the capacity
		j.done = true
		return
	}
	if j.spec.Driver == nil {
		j.begun = true
		s.submitRegions(j)
	}
}

// submitRegions keeps `inflight` regions of the job submitted.
func (s *sim) submitRegions(j *simJob) {
	for j.live < j.inflight && j.next < len(j.regions) {
		if n := j.regions[j.next]; len(s.noReqs) < n {
			s.noReqs = make([]pool.Request, n)
		}
		reqs := s.noReqs[:j.regions[j.next]]
		j.next++
		j.live++
		if err := j.pool.Submit(s.now, pool.Bulk{ID: slotpool.BulkID(j.next), Requests: reqs}); err != nil {
			s.fail("job %s: submit region %d: %v", j.name, j.next, err)
		}
	}
	s.maybeFinish(j)
}

func (s *sim) finishRegion(j *simJob, b slotpool.BulkID) {
	ids := j.running(b)
	if ids == nil {
		return // lost (preempted) and run again as another bulk
	}
	for _, id := range ids {
		if err := j.pool.Release(s.now, id); err != nil {
			s.fail("job %s: release %d: %v", j.name, id, err)
		}
	}
	j.inUse[b] = nil
	j.live--
	if s.record {
		s.logf("%s region %d done", j.name, b)
	}
	s.submitRegions(j)
}

// maybeFinish ends a job whose regions are all done.
func (s *sim) maybeFinish(j *simJob) {
	if j.done || j.live > 0 || j.next < len(j.regions) {
		return
	}
	if err := j.port.Finished(s.now); err != nil {
		s.fail("job %s: finished: %v", j.name, err)
	}
	j.done = true
	j.finished = s.now
}

// pump carries messages until every port and pool is quiet: the jobs
// acted on at this instant pass their pools' messages to the admission
// (every input of the instant is applied first), the admission decides
// over them, then it pumps the jobs it gave messages (Queues.Pending),
// and decides again, until there are none.
func (s *sim) pump() {
	for round := 0; ; round++ {
		if round > 10000 {
			s.tb.Fatalf("%spump does not settle at %v\n%s\n%s", s.title(), s.now.Sub(t0), s.tail(30), s.dump())
		}
		s.deliver()
		s.rounds++
		s.q.Decide(s.now)
		for _, ev := range s.q.Events() {
			s.onEvent(ev)
		}
		for _, id := range s.q.Pending() {
			s.markDirty(s.byID[id])
		}
		if len(s.dirty) == 0 {
			return
		}
		if t, ok := s.q.NextDeadline(); ok && !t.After(s.now) {
			// A decision cut for a driver up at once (startcut.go): the
			// job begins, and the admission decides the rest of the
			// instant with its first asks in (the next step).
			s.deliver()
			return
		}
	}
}

// deliver pumps the jobs marked dirty: their pools and the admission
// exchange what they have for each other.
func (s *sim) deliver() {
	batch := s.dirty
	s.dirty, s.pumped = s.pumped[:0], batch
	for _, j := range batch {
		j.dirty = false
		if j.port == nil || j.done {
			continue
		}
		// Notes, as a runtime reads them: a Fulfilled is not boxed.
		for _, n := range j.link.Notes(s.now) {
			if n.Other == nil {
				s.onFulfilled(j, n.Fulfilled)
				continue
			}
			s.onPoolEvent(j, n.Other)
		}
		if !j.done {
			s.wakePool(j)
		}
	}
}

// title is the first line of the log (a random mix names its seed
// there) and a line break, or "" without a log.
func (s *sim) title() string {
	if len(s.log) == 0 {
		return ""
	}
	return s.log[0] + "\n"
}

// markDirty adds a job to those to pump.
func (s *sim) markDirty(j *simJob) {
	if !j.dirty {
		j.dirty = true
		s.dirty = append(s.dirty, j)
	}
}

// wakePool puts the pool's deadline in the timer queue.
func (s *sim) wakePool(j *simJob) {
	t, ok := j.pool.NextDeadline()
	if !ok || t.Equal(j.wake) {
		return
	}
	if t.Before(s.now) {
		t = s.now
	}
	j.wake = t
	s.push(simTimer{at: t, kind: tPoolTimer, job: j})
}

// onFulfilled starts a region: it runs for its duration. (A Fulfilled's
// slots are a fresh slice, the harness's to keep.)
func (s *sim) onFulfilled(j *simJob, e pool.Fulfilled) {
	s.progress++
	if int(e.Bulk) >= len(j.inUse) {
		// Made as its first region starts (a waiting job needs none),
		// with room for every region; grown if a bulk id goes beyond.
		n := max(int(e.Bulk), len(j.regions)) + 1
		j.inUse = slices.Grow(j.inUse, n-len(j.inUse))[:n]
	}
	j.inUse[e.Bulk] = e.Slots
	if e.Slots == nil { // (an empty bulk runs too)
		j.inUse[e.Bulk] = []slotpool.SlotID{}
	}
	if s.record {
		s.logf("%s region %d fulfilled %v", j.name, e.Bulk, e.Slots)
	}
	s.push(simTimer{at: s.now.Add(j.durs[j.region(e.Bulk)]), kind: tFinish, job: j, bulk: e.Bulk})
	if !j.deployed {
		j.deployed, j.firstDeploy = true, s.now
		j.port.Deployed(s.now)
	}
}

func (s *sim) onPoolEvent(j *simJob, ev pool.Event) {
	switch e := ev.(type) {
	case pool.Lost:
		// A preempted task: its region stops (the slots still in use
		// are released) and runs again as a new bulk; the pool has new
		// messages then, so the job is pumped again.
		ids := j.running(e.Bulk)
		if ids == nil {
			return
		}
		s.markDirty(j)
		s.progress++
		j.lost++
		if s.record {
			s.logf("%s region %d lost slot %d (%v)", j.name, e.Bulk, e.Slot, e.Reason)
		}
		for _, id := range ids {
			// (the id may name a slot granted again since, to another bulk)
			if info, ok := j.pool.Slot(id); ok && info.State == pool.SlotInUse && info.Bulk == e.Bulk {
				if err := j.pool.Release(s.now, id); err != nil {
					s.fail("job %s: release %d: %v", j.name, id, err)
				}
			}
		}
		j.inUse[e.Bulk] = nil
		if j.restarted == nil {
			j.restarted = map[slotpool.BulkID]int{}
		}
		again := slotpool.BulkID(len(j.regions) + 1 + len(j.restarted))
		j.restarted[again] = j.region(e.Bulk)
		if err := j.pool.Submit(s.now, pool.Bulk{ID: again, Requests: make([]pool.Request, j.regions[j.region(e.Bulk)])}); err != nil {
			s.fail("job %s: resubmit region: %v", j.name, err)
		}
	case pool.Failed:
		s.progress++
		j.failed = append(j.failed, e.Err)
		j.live--
		if s.record {
			s.logf("%s region %d failed: %v", j.name, e.Bulk, e.Err)
		}
		s.markDirty(j)
		s.submitRegions(j)
	default:
		s.fail("job %s: unexpected pool event %#v", j.name, ev)
	}
}

func (s *sim) onEvent(ev Event) {
	switch ev.Kind {
	case StateChanged:
		s.progress++
		if ev.To == JobFailed { // the admission failed it: the runtime stops its pool
			s.byID[ev.ID].done = true
		}
		if s.record {
			s.logf("%s %v -> %v (%s)", ev.Job, ev.From, ev.To, ev.Reason)
		}
	case PlaceholdersReleased, PlaceholderMismatch:
		if s.record {
			s.logf("%s placeholders: %s", ev.Job, ev.Reason)
		}
	case DriverGranted:
		s.progress++
		if s.record {
			s.logf("%s driver on slot %d", ev.Job, ev.Slot)
		}
		if j := s.byID[ev.ID]; !j.begun {
			s.push(simTimer{at: s.now.Add(j.startup), kind: tBegin, job: j})
		}
	}
}

// afterStep checks the invariants (with checks on) and runs onStep.
func (s *sim) afterStep() {
	s.tb.Helper()
	require.Empty(s.tb, s.errs, "protocol errors")
	if s.checks {
		if err := s.invariants(); err != nil {
			s.tb.Fatalf("%sat %v: %v\n%s", s.title(), s.now.Sub(t0), err, s.tail(30))
		}
	}
	if s.onStep != nil {
		s.onStep()
	}
}

// dump describes the jobs, their asks and the cluster's slots.
func (s *sim) dump() string {
	var b strings.Builder
	for _, j := range s.q.jobs {
		if j == nil { // forgotten
			continue
		}
		fmt.Fprintf(&b, "job %s %v queue %s prio %d granted %d driver %v asks:", j.spec.Name, j.state, j.queue.cfg.Name, j.spec.Priority, j.granted, j.spec.Driver != nil)
		for a := j.asks.first; a != nil; a = a.next {
			fmt.Fprintf(&b, " %d%v", a.id, a.left)
		}
		if sj := s.byName[j.spec.Name]; sj != nil && sj.pool != nil && !sj.done {
			fmt.Fprintf(&b, " pool %+v", sj.pool.Stats())
		}
		b.WriteString("\n")
	}
	for _, qu := range s.q.qorder {
		fmt.Fprintf(&b, "queue %+v running %d starting %d\n", qu.cfg, qu.running, qu.starting)
	}
	for _, cs := range s.q.slots {
		fmt.Fprintf(&b, "slot %d state %d owner %d; ", cs.slot.ID, cs.state, cs.owner)
	}
	return b.String()
}

// tail returns the last n lines of the log.
func (s *sim) tail(n int) string {
	return strings.Join(s.log[max(0, len(s.log)-n):], "\n")
}

// invariants checks, with everything quiet, the admission's own
// invariants (Queues.CheckInvariants) and that it agrees with the pools:
//   - every slot the admission granted to a job is in that job's pool (not
//     releasing), each pool holds exactly the slots granted to its job, so
//     no slot is in two pools; a slot being reclaimed is in use and marked
//     reclaimed in its pool, and only those and slots whose claim was
//     given up (granted again) are;
//   - every live pool's own invariants hold.
func (s *sim) invariants() error {
	q := s.q
	if err := q.checkInvariants(); err != nil {
		return err
	}
	inPools := make([]int, len(q.jobs))
	for i := range q.slots {
		cs := &q.slots[i]
		if cs.state != slotGranted && cs.state != slotReclaiming {
			continue // free, reserved, a driver's or a placeholder: in no pool
		}
		owner := q.jobs[cs.owner]
		sj := s.byName[owner.spec.Name]
		info, ok := sj.pool.Slot(cs.slot.ID)
		if !ok {
			return fmt.Errorf("slot %d granted to %s (%v) is not in its pool", cs.slot.ID, owner.spec.Name, cs.state)
		}
		if info.State == pool.SlotReleasing {
			return fmt.Errorf("slot %d of %s still releasing when quiet", cs.slot.ID, owner.spec.Name)
		}
		// A slot being reclaimed is marked so in its pool; one whose claim
		// was given up is granted again in the admission, and its pool
		// still gives it back when its task ends.
		if (cs.state == slotReclaiming && !info.Reclaimed) || (info.Reclaimed && info.State != pool.SlotInUse) {
			return fmt.Errorf("slot %d of %s: admission %v, pool %v reclaimed=%v", cs.slot.ID, owner.spec.Name, cs.state, info.State, info.Reclaimed)
		}
		inPools[cs.owner]++
	}
	kept := map[slotpool.SlotID]KeptSlot{}
	for _, k := range q.Kept(nil) {
		if _, dup := kept[k.Slot]; dup {
			return fmt.Errorf("Kept lists slot %d twice", k.Slot)
		}
		kept[k.Slot] = k
	}
	for i := range q.slots {
		cs := &q.slots[i]
		k, listed := kept[cs.slot.ID]
		switch cs.state {
		case slotPlaceholder:
			if want := (KeptSlot{Slot: cs.slot.ID, Job: q.jobs[cs.owner].spec.Name, Placeholder: true}); k != want {
				return fmt.Errorf("slot %d: a placeholder of %s, Kept says %+v (listed %v)", cs.slot.ID, want.Job, k, listed)
			}
		case slotReserved:
			if want := (KeptSlot{Slot: cs.slot.ID, Job: q.jobs[cs.claimant].spec.Name}); k != want {
				return fmt.Errorf("slot %d: reserved for %s, Kept says %+v (listed %v)", cs.slot.ID, want.Job, k, listed)
			}
		default:
			if listed {
				return fmt.Errorf("slot %d is %v, Kept lists it: %+v", cs.slot.ID, cs.state, k)
			}
		}
	}
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		sj := s.byName[j.spec.Name]
		if sj == nil || sj.pool == nil || sj.done {
			continue
		}
		st := sj.pool.Stats()
		if st.Slots != inPools[j.id] || st.Releasing != 0 {
			return fmt.Errorf("job %s: pool holds %d slots (%d releasing), admission granted it %d", j.spec.Name, st.Slots, st.Releasing, inPools[j.id])
		}
		if err := sj.pool.CheckInvariants(); err != nil {
			return fmt.Errorf("job %s: pool: %w", j.spec.Name, err)
		}
	}
	return nil
}

// states returns the state of every job, by name.
func (s *sim) states() map[string]JobState {
	out := map[string]JobState{}
	for _, j := range s.jobs {
		if j.port != nil {
			out[j.name] = j.port.State()
		}
	}
	return out
}

// ask sends an all-or-nothing ask of n unknown-profile slots to a port,
// and the admission decides.
func ask(t *testing.T, p *port, now time.Time, id slotpool.AskID, n int) {
	t.Helper()
	require.NoError(t, p.Handle(now, wholeAsk(id, n)))
	p.q.Decide(now)
}

// wholeAsk is an all-or-nothing ask of n unknown-profile slots for bulk
// id.
func wholeAsk(id slotpool.AskID, n int) slotpool.Ask {
	return slotpool.Ask{ID: id, Bulk: slotpool.BulkID(id), Gang: slotpool.Gang{
		Groups: []slotpool.TaskGroup{{Profile: resource.Unknown, MinMembers: n}}, AllOrNothing: true,
	}}
}

// grantedSlots returns the slots of the Grants among msgs.
func grantedSlots(msgs []slotpool.FromAdmission) []slotpool.SlotID {
	var out []slotpool.SlotID
	for _, m := range msgs {
		if g, ok := m.(slotpool.Grant); ok {
			for _, sl := range g.Slots {
				out = append(out, sl.ID)
			}
		}
	}
	return out
}
