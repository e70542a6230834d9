package scheduler

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// Speculation configures speculative execution of slow tasks
// (stragglers), as Flink's speculative scheduler does it for batch jobs:
// a slow-task detector compares each running task with the execution
// times of its job vertex's finished tasks, and a slow task gets further
// attempts, run side by side in slots off the nodes found slow; the first
// attempt to finish wins and the others are canceled.
//
// The zero value is off. DefaultSpeculation returns Flink's defaults,
// turned on; change the fields from there. With Enabled, every field is
// taken as it is (Validate says which values are valid).
//
// # The detector
//
// Every CheckInterval from Start (on the grid Start + k × CheckInterval,
// fired by Tick at Ready.Deadline), for each job vertex with k =
// round(BaselineRatio × parallelism) of its subtasks finished, the
// baseline is
//
//	max(BaselineLowerBound, BaselineMultiplier × median)
//
// where median is the middle (index k/2) of the k shortest execution
// times of its finished subtasks: from the deployment of the attempt that
// finished to its finish. An attempt of the vertex that runs (deployed,
// not ended) for at least the baseline is slow. A vertex with k = 0 (a
// ratio of 0) has the lower bound as its baseline from the start.
//
// # What a slow task gets
//
// The nodes of its slow attempts are blocked for BlockSlowNodeDuration
// (Slot.Node; a slot without a node is a node of its own): no speculative
// attempt is placed there until the block expires (a block found again
// is extended). The task gets new attempts up to MaxConcurrentExecutions
// at once, each asking for one slot of the task's profile (listed in
// Ready.Requests with Speculative set). A speculative attempt runs only
// in a slot the pool holds free while no region waits for slots: it waits
// behind every regular request, never takes a slot a waiting region
// could start with, and never asks an admission for more slots. It is
// deployed like any task (Ready.Deploy, Speculative set), and reports
// with its own attempt.
//
// Attempt numbers of a task only grow: the attempts of one task are
// numbered in the order they are made, and a region restarted after its
// tasks had speculative attempts continues after the highest number
// used. Reports of any attempt are accepted: the first finish wins (it is
// listed in Ready.Won); every other attempt of the task is canceled
// (Ready.Cancel) and its slot returned; consumers read the winner's
// output. A failed attempt while another attempt of the task runs is
// dropped (its slot returned, nothing restarts), unless it reports lost
// input partitions; the last attempt's failure fails over as usual. A
// lost slot of a speculative attempt drops that attempt the same way; a
// lost slot of the task's first attempt fails the task over (its
// speculative attempts are canceled with its region).
//
// # Which tasks
//
// A task is speculated only if it is a pipelined region of its own and
// bounded, reads only blocking or full hybrid results (kept whole, so a
// second attempt reads the same inputs again) and writes only blocking
// or full hybrid ones. A task that shares a pipelined region with other
// tasks, or reads or writes a selective hybrid result, is never
// speculated: a neighbour reads one attempt of it live, or it reads its
// input live, and a selective result cannot be read a second time.
// Speculable tells which tasks are; a job without any is refused: New
// returns a *SpeculationError (as Flink speculates only with blocking or
// hybrid exchanges).
//
// # Full hybrid results of speculable tasks
//
// As in Flink, the consumers of a full hybrid result whose producer may
// be speculated read it only from the winning attempt once it finished,
// never live from one attempt that may lose: ReadsFinishedOnly names
// those results. Scheduling does not change: a consumer region still
// asks for slots once its hybrid producers are deployed, and waits,
// deployed, for the winner's finish before it reads the result. A
// consumer still never finishes before its hybrid producers
// (TaskFinished).
type Speculation struct {
	// Enabled turns speculative execution on.
	Enabled bool
	// BaselineRatio is the share of a vertex's subtasks that must have
	// finished before its baseline is known, 0 ... 1 (Flink's
	// slow-task-detector.execution-time.baseline-ratio, 0.75).
	BaselineRatio float64
	// BaselineMultiplier multiplies the median of the finished execution
	// times, at least 1 (baseline-multiplier, 1.5).
	BaselineMultiplier float64
	// BaselineLowerBound is the least baseline, at least 0
	// (baseline-lower-bound, 1 minute).
	BaselineLowerBound time.Duration
	// CheckInterval is how often the detector looks, more than 0
	// (slow-task-detector.check-interval, 1 second).
	CheckInterval time.Duration
	// MaxConcurrentExecutions is how many attempts of one task may run
	// at once, its first included, 2 ... 1024
	// (execution.batch.speculative.max-concurrent-executions, 2).
	MaxConcurrentExecutions int
	// BlockSlowNodeDuration is how long a node found slow gets no
	// speculative attempt, at least 0 (0: nodes are not blocked)
	// (execution.batch.speculative.block-slow-node-duration, 1 minute).
	BlockSlowNodeDuration time.Duration
}

// DefaultSpeculation returns Flink's defaults, enabled: baseline ratio
// 0.75, multiplier 1.5, lower bound 1 minute, checked every second, at
// most 2 attempts of a task at once, slow nodes blocked for 1 minute.
func DefaultSpeculation() Speculation {
	return Speculation{
		Enabled:                 true,
		BaselineRatio:           0.75,
		BaselineMultiplier:      1.5,
		BaselineLowerBound:      time.Minute,
		CheckInterval:           time.Second,
		MaxConcurrentExecutions: 2,
		BlockSlowNodeDuration:   time.Minute,
	}
}

// MaxSpeculativeExecutions bounds Speculation.MaxConcurrentExecutions.
const MaxSpeculativeExecutions = 1024

// ErrBadSpeculation is wrapped by a *SpeculationError.
var ErrBadSpeculation = errors.New("scheduler: invalid speculation setting")

// SpeculationError names a Speculation field whose value is not valid,
// and the valid values.
type SpeculationError struct {
	Field string // "BaselineRatio", ...
	Value string // the value given
	Valid string // the valid values, e.g. "0 ... 1"
}

// Error renders e.g. "scheduler: invalid speculation setting:
// BaselineRatio 1.5 (valid: 0 ... 1)".
func (e *SpeculationError) Error() string {
	return fmt.Sprintf("%v: %s %s (valid: %s)", ErrBadSpeculation, e.Field, e.Value, e.Valid)
}

// Unwrap returns ErrBadSpeculation and ErrInvalidConfig: a Config with
// such a Speculation is invalid.
func (e *SpeculationError) Unwrap() []error { return []error{ErrBadSpeculation, ErrInvalidConfig} }

// Validate returns a *SpeculationError for the first field of an enabled
// configuration that is out of range; nil if it is valid or off.
func (c Speculation) Validate() error {
	if !c.Enabled {
		return nil
	}
	float := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch {
	case !(c.BaselineRatio >= 0 && c.BaselineRatio <= 1):
		return &SpeculationError{Field: "BaselineRatio", Value: float(c.BaselineRatio), Valid: "0 ... 1"}
	case !(c.BaselineMultiplier >= 1) || c.BaselineMultiplier > 1e9:
		return &SpeculationError{Field: "BaselineMultiplier", Value: float(c.BaselineMultiplier), Valid: "1 ... 1e9"}
	case c.BaselineLowerBound < 0:
		return &SpeculationError{Field: "BaselineLowerBound", Value: c.BaselineLowerBound.String(), Valid: "0 or more"}
	case c.CheckInterval <= 0:
		return &SpeculationError{Field: "CheckInterval", Value: c.CheckInterval.String(), Valid: "more than 0"}
	case c.MaxConcurrentExecutions < 2 || c.MaxConcurrentExecutions > MaxSpeculativeExecutions:
		return &SpeculationError{Field: "MaxConcurrentExecutions", Value: strconv.Itoa(c.MaxConcurrentExecutions),
			Valid: "2 ... " + strconv.Itoa(MaxSpeculativeExecutions)}
	case c.BlockSlowNodeDuration < 0:
		return &SpeculationError{Field: "BlockSlowNodeDuration", Value: c.BlockSlowNodeDuration.String(), Valid: "0 or more"}
	}
	return nil
}

// Speculable reports whether task v can get speculative attempts: it is
// a pipelined region of its own and bounded, reads only blocking or full
// hybrid results and writes only blocking or full hybrid ones (see
// Speculation). It tells what the job allows, whether speculation is on
// or not. An id out of range is not.
func (s *Scheduler) Speculable(v TaskID) bool { return speculable(s.rs, v) }

// ReadsFinishedOnly reports whether the consumers of result partition p
// read it only once it is finished, from the attempt of its producer that
// won: p is a full hybrid result, its producer is Speculable, and
// speculation is on (Config.Speculation.Enabled with a valid setting).
// A runtime then hands a consumer of p the winner's result once its
// finish was reported, never the live output of an attempt that may
// still lose; it reads every other hybrid result live. False if
// speculation is off, for blocking, pipelined and selective hybrid
// results, and for an id out of range.
func (s *Scheduler) ReadsFinishedOnly(p PartitionID) bool {
	return s.spec != nil && s.spec.cfg.ReadsFinishedOnly(s.rs, p)
}

// ReadsFinishedOnly is Scheduler.ReadsFinishedOnly for a scheduler of
// the job of rs whose Config.Speculation is c (one ValidateJob accepts for
// rs): a runtime that knows the setting, not the scheduler (the simulator
// of many jobs), asks here.
func (c Speculation) ReadsFinishedOnly(rs *region.Regions, p PartitionID) bool {
	topo := rs.Topology()
	if !c.Enabled || p < 0 || int(p) >= topo.NumPartitions() {
		return false
	}
	return topo.PartitionType(topo.EdgeOfPartition(p)) == exchange.HybridFull && speculable(rs, topo.PartitionProducer(p))
}

// speculable is Speculable for the task v of rs.
func speculable(rs *region.Regions, v TaskID) bool {
	topo := rs.Topology()
	if v < 0 || int(v) >= topo.NumExecutionVertices() {
		return false
	}
	if _, one := rs.OnlyMember(rs.RegionOf(v)); !one {
		return false
	}
	jv := topo.JobVertexOf(v)
	for _, e := range topo.Job().InEdges(jv) {
		if topo.PartitionType(e) == exchange.HybridSelective {
			return false // not kept whole: a second attempt could not read it again
		}
	}
	for _, e := range topo.Job().OutEdges(jv) {
		if topo.PartitionType(e) == exchange.HybridSelective {
			return false // its consumers read one attempt's result live, and cannot read it again
		}
	}
	return !topo.Job().Vertex(jv).Unbounded
}

// ValidateJob returns a *SpeculationError if c cannot run on the job of rs:
// an invalid setting (Validate), or speculation on for a job none of
// whose tasks may have a speculative attempt (see
// Scheduler.Speculable): every task shares a pipelined region, reads or
// writes a selective hybrid result, or runs unbounded. Flink likewise
// speculates only in jobs whose exchanges are blocking or hybrid.
func (c Speculation) ValidateJob(rs *region.Regions) error {
	if err := c.Validate(); err != nil || !c.Enabled {
		return err
	}
	for v := range TaskID(rs.Topology().NumExecutionVertices()) {
		if speculable(rs, v) {
			return nil
		}
	}
	return &SpeculationError{Field: "Enabled", Value: "true",
		Valid: "false for this job: no task is alone in its region, reading blocking or full hybrid results and writing blocking or full hybrid ones (every task shares a pipelined region, reads or writes a selective hybrid result, or runs unbounded)"}
}

// speculator is the scheduler's speculative execution: the detector's
// statistics, the tasks with speculative attempts, the blocklist.
type speculator struct {
	s     *Scheduler // the scheduler it works for
	cfg   Speculation
	start time.Time // Start's time: the detector's grid and the times below count from it
	// next is the detector's next check, on the grid.
	next time.Time
	// idle: the detector's last look found no attempt it watches running
	// (a vertex with a baseline has unfinished subtasks, but none of them
	// deployed): it looks again only after a deployment, a finish or a
	// restart (deployed, finished, restarting), so that a job whose
	// remaining tasks wait for slots has no deadline of its own and a run
	// where nothing can progress ends.
	idle bool

	// Per execution vertex: when its current first attempt (the region's)
	// was deployed, and, once finished, how long the winner ran (-1 while
	// not finished).
	deployedAt []time.Duration
	ranFor     []time.Duration
	// Per job vertex.
	vertices []specVertex

	// tasks are the tasks with speculative attempts (asked for or
	// running), by id.
	tasks map[TaskID]*specTask
	// firstLost holds, for a task whose region's attempt lost its race (or
	// failed while others ran), that region attempt + 1: the attempt's
	// late reports are dropped.
	firstLost map[TaskID]strategy.Attempt
	// pending lists the speculative attempts waiting for a slot, oldest
	// first.
	pending []specRef
	// blocked holds the nodes blocked until the time given.
	blocked map[nodeKey]time.Time

	// shift and top are, per region, nil until a speculative attempt was
	// made: the region attempt a of the strategy is attempt a + shift[r]
	// outside, and top[r] is the highest attempt number given out in r.
	shift, top []int32
	// bulks numbers the pool bulks of speculative attempts: -1, -2, ...
	bulks slotpool.BulkID

	requested, started, won int
	scratch                 []time.Duration

	// asking lists the speculative attempts whose slots are asked of the
	// admission, oldest first; placing is set while place runs
	// (specask.go).
	asking  []specAsking
	placing bool
}

// specVertex is what the detector knows of one job vertex.
type specVertex struct {
	need     int // k: finished subtasks needed for a baseline
	finished int
	baseline time.Duration
	fresh    bool // baseline is computed for the finished set as it is
}

// specTask is a task with speculative attempts.
type specTask struct {
	v       TaskID
	r       region.ID
	attempt strategy.Attempt // the region attempt they speculate in
	// req is what each of its attempts asks of the pool: one slot of the
	// task's profile.
	req pool.Request
	// firstGone: the region's attempt of the task failed while others ran.
	firstGone bool
	copies    []specCopy
}

// specCopy is one speculative attempt.
type specCopy struct {
	id       Attempt
	placed   bool
	slot     SlotID
	deployed time.Duration // since speculator.start
	// asked: its slot is asked of the admission (specask.go), by the
	// pool bulk asked.
	asked slotpool.BulkID
}

// specRef names a speculative attempt waiting for a slot.
type specRef struct {
	v  TaskID
	id Attempt
}

// nodeKey is what a blocklist entry blocks: a node, or a slot without one.
type nodeKey struct {
	node string
	slot SlotID
}

func keyOf(sl slotpool.Slot) nodeKey {
	if sl.Node != "" {
		return nodeKey{node: sl.Node}
	}
	return nodeKey{slot: sl.ID}
}

func newSpeculator(s *Scheduler, cfg Speculation) *speculator {
	topo := s.rs.Topology()
	job := topo.Job()
	sp := &speculator{
		s:          s,
		cfg:        cfg,
		deployedAt: make([]time.Duration, topo.NumExecutionVertices()),
		ranFor:     make([]time.Duration, topo.NumExecutionVertices()),
		vertices:   make([]specVertex, job.NumVertices()),
		tasks:      map[TaskID]*specTask{},
		firstLost:  map[TaskID]strategy.Attempt{},
		blocked:    map[nodeKey]time.Time{},
	}
	for i := range sp.ranFor {
		sp.ranFor[i] = -1
	}
	for jv := range sp.vertices {
		p := job.Vertex(topology.JobVertexID(jv)).Parallelism
		sp.vertices[jv].need = int(float64(p)*cfg.BaselineRatio + 0.5) // Math.round
	}
	return sp
}

// ext is the attempt number outside of region r's strategy attempt a.
func (s *Scheduler) ext(r region.ID, a strategy.Attempt) Attempt {
	if s.spec == nil || s.spec.shift == nil {
		return Attempt(a)
	}
	return Attempt(a) + Attempt(s.spec.shift[r])
}

// since is now on the speculator's clock.
func (sp *speculator) since(now time.Time) time.Duration { return now.Sub(sp.start) }

// begin starts the detector's clock (Start).
func (sp *speculator) begin(now time.Time) {
	sp.start = now
	sp.next = now.Add(sp.cfg.CheckInterval)
}

// deployed records the deployment of a region's attempt of task v.
func (sp *speculator) deployed(v TaskID) {
	s := sp.s
	sp.deployedAt[v] = sp.since(s.last)
	sp.idle = false
}

// finished records a task's finish (of the winner, whose deployment
// deployedAt holds).
func (sp *speculator) finished(now time.Time, v TaskID) {
	s := sp.s
	if sp.ranFor[v] >= 0 {
		return
	}
	sp.ranFor[v] = sp.since(now) - sp.deployedAt[v]
	vx := &sp.vertices[s.rs.Topology().JobVertexOf(v)]
	vx.finished++
	vx.fresh = false
	sp.idle = false // its vertex may have a baseline now, for attempts already running
}

// restarting forgets the finishes of the members of restarted
// regions, cancels their speculative attempts' bookkeeping, and numbers
// each region's next attempt after every attempt number it gave out.
func (sp *speculator) restarting(regions []region.ID) {
	s := sp.s
	topo := s.rs.Topology()
	sp.idle = false
	for _, r := range regions {
		for _, v := range s.rs.Members(r) {
			delete(sp.firstLost, v)
			if sp.ranFor[v] >= 0 {
				sp.ranFor[v] = -1
				vx := &sp.vertices[topo.JobVertexOf(v)]
				vx.finished--
				vx.fresh = false
			}
		}
		if sp.shift != nil && sp.top[r] > 0 {
			cur := int32(s.strategy.Attempt(r))
			sp.shift[r] = max(sp.top[r], cur+sp.shift[r]) - cur
		}
	}
}

// deadline is when Tick next has speculation work: the detector's
// next check while some vertex has a baseline and unfinished subtasks,
// or a block's end while a speculative attempt waits for a slot.
func (sp *speculator) deadline() (time.Time, bool) {
	s := sp.s
	if s.state != JobRunning {
		return time.Time{}, false
	}
	var at time.Time
	ok := false
	if !sp.idle && sp.watching() {
		at, ok = sp.nextCheck(), true
	}
	if len(sp.pending) > 0 {
		for _, until := range sp.blocked {
			if until.After(s.last) && (!ok || until.Before(at)) {
				at, ok = until, true
			}
		}
	}
	return at, ok
}

// watching reports whether a vertex has a baseline and unfinished
// subtasks: only then can the detector find a slow task.
func (sp *speculator) watching() bool {
	s := sp.s
	topo := s.rs.Topology()
	for jv := range sp.vertices {
		vx := &sp.vertices[jv]
		if vx.finished >= vx.need && vx.finished < topo.VerticesOf(topology.JobVertexID(jv)).Len() {
			return true
		}
	}
	return false
}

// nextCheck returns when the detector looks next: the grid point after
// its last look, or if the latest input came later, the grid point at or
// after that input. A query: what NextDeadline says and what Tick does
// do not depend on whether NextDeadline was asked in between.
func (sp *speculator) nextCheck() time.Time {
	s := sp.s
	if !sp.next.Before(s.last) {
		return sp.next
	}
	k := (s.last.Sub(sp.start) + sp.cfg.CheckInterval - 1) / sp.cfg.CheckInterval
	return sp.start.Add(k * sp.cfg.CheckInterval)
}

// tick runs the detector if a check is due.
func (sp *speculator) tick(now time.Time) {
	s := sp.s
	if s.state != JobRunning || now.Before(sp.nextCheck()) {
		return
	}
	k := now.Sub(sp.start)/sp.cfg.CheckInterval + 1
	sp.next = sp.start.Add(k * sp.cfg.CheckInterval)
	sp.detect(now)
}

// baseline returns the baseline of job vertex jv (it has one).
func (sp *speculator) baseline(topo *topology.ExecutionTopology, jv topology.JobVertexID) time.Duration {
	vx := &sp.vertices[jv]
	if vx.fresh {
		return vx.baseline
	}
	var median time.Duration
	if vx.need > 0 {
		times := sp.scratch[:0]
		vs := topo.VerticesOf(jv)
		for v := vs.Start; v < vs.End; v++ {
			if d := sp.ranFor[v]; d >= 0 {
				times = append(times, d)
			}
		}
		slices.Sort(times)
		median = times[vx.need/2] // of the need shortest
		sp.scratch = times
	}
	b := time.Duration(float64(median) * sp.cfg.BaselineMultiplier)
	if float64(median)*sp.cfg.BaselineMultiplier >= float64(1<<62) {
		b = 1 << 62
	}
	vx.baseline, vx.fresh = max(b, sp.cfg.BaselineLowerBound), true
	return vx.baseline
}

// detect is one check of the detector: it finds the slow attempts, blocks
// their nodes and asks for speculative attempts.
func (sp *speculator) detect(now time.Time) {
	s := sp.s
	topo := s.rs.Topology()
	at := sp.since(now)
	watchable, watched := 0, 0 // vertices with a baseline and unfinished subtasks; their running attempts looked at
	for jv := range topology.JobVertexID(len(sp.vertices)) {
		vx := &sp.vertices[jv]
		vs := topo.VerticesOf(jv)
		if vx.finished < vx.need || vx.finished >= vs.Len() {
			continue
		}
		watchable++
		baseline := sp.baseline(topo, jv)
		for i := vs.Start; i < vs.End; i++ {
			v := TaskID(i)
			if sp.ranFor[v] >= 0 || !s.Speculable(v) {
				continue
			}
			st, err := s.strategy.Vertex(v)
			if err != nil || (st.State != strategy.TaskDeploying && st.State != strategy.TaskRunning) {
				continue
			}
			watched++
			sp.checkSlow(now, v, at, baseline)
		}
	}
	sp.idle = watchable > 0 && watched == 0
}

// checkSlow looks at the running attempts of task v: if one is slow, the
// nodes of the slow ones are blocked and the task gets attempts up to
// the limit.
func (sp *speculator) checkSlow(now time.Time, v TaskID, at, baseline time.Duration) {
	s := sp.s
	t := sp.tasks[v]
	slow := false
	live := 0
	if t == nil || !t.firstGone {
		live++
		if at-sp.deployedAt[v] >= baseline {
			slow = true
			sp.block(now, s.slotOf(v, s.rs.RegionOf(v)))
		}
	}
	if t != nil {
		live += len(t.copies)
		for _, c := range t.copies {
			if c.placed && at-c.deployed >= baseline {
				slow = true
				sp.block(now, c.slot)
			}
		}
	}
	if !slow {
		return
	}
	for ; live < sp.cfg.MaxConcurrentExecutions; live++ {
		t = sp.newCopy(v, t)
	}
}

// block blocks the node of slot until now + BlockSlowNodeDuration.
func (sp *speculator) block(now time.Time, slot SlotID) {
	s := sp.s
	d := sp.cfg.BlockSlowNodeDuration
	if d <= 0 {
		return
	}
	info, ok := s.pool.Slot(slot)
	if !ok {
		return
	}
	k := keyOf(info.Slot)
	if until := now.Add(d); until.After(sp.blocked[k]) {
		sp.blocked[k] = until
	}
}

// newCopy asks for one more speculative attempt of task v (t its record,
// nil if it has none yet) and returns the record.
func (sp *speculator) newCopy(v TaskID, t *specTask) *specTask {
	s := sp.s
	r := s.rs.RegionOf(v)
	if t == nil {
		t = &specTask{v: v, r: r, attempt: s.strategy.Attempt(r)}
		sp.tasks[v] = t
	}
	if sp.shift == nil {
		sp.shift = make([]int32, len(s.regions))
		sp.top = make([]int32, len(s.regions))
	}
	id := max(sp.top[r], int32(s.ext(r, t.attempt))) + 1
	sp.top[r] = id
	t.copies = append(t.copies, specCopy{id: Attempt(id)})
	sp.pending = append(sp.pending, specRef{v: v, id: Attempt(id)})
	sp.requested++
	i := len(s.oneSlots)
	s.oneSlots = s.rs.AppendSlots(s.oneSlots, r)
	t.req = pool.Request{Profile: s.oneSlots[i].Profile}
	s.rd.Requests = append(s.rd.Requests, Request{Region: r, Attempt: Attempt(id),
		Slots: s.oneSlots[i:len(s.oneSlots):len(s.oneSlots)], Speculative: true})
	return t
}

// place puts waiting speculative attempts into free slots off the
// blocked nodes, oldest first, while no region waits for slots; with a
// pool that returns freed slots it asks the admission for the slots
// instead (specask.go).
func (sp *speculator) place(now time.Time) {
	s := sp.s
	if sp.placing {
		return // a drain of ask's
	}
	sp.placing = true
	defer func() { sp.placing = false }()
	for {
		asked := sp.granted(now)
		asked = sp.withdraw(now) || asked
		asked = sp.placeFree(now) || asked
		if !asked || !s.pool.HasEvents() {
			return
		}
		s.drain(now) // the asks go out, and what the admission answers comes in
	}
}

// placeFree is place's pass over the waiting attempts: each goes
// into a free slot, or asks the admission for one if the pool returns
// freed slots. It reports whether it asked.
func (sp *speculator) placeFree(now time.Time) (asked bool) {
	s := sp.s
	if len(sp.pending) == 0 || s.state != JobRunning || s.pool.Stats().Waiting > 0 {
		return false
	}
	for k, until := range sp.blocked {
		if !until.After(now) {
			delete(sp.blocked, k)
		}
	}
	accept := func(sl slotpool.Slot) bool {
		_, blocked := sp.blocked[keyOf(sl)]
		return !blocked
	}
	kept := sp.pending[:0]
	for _, ref := range sp.pending {
		t := sp.tasks[ref.v]
		c := t.copy(ref.id)
		if c == nil || c.placed {
			continue // canceled meanwhile
		}
		if c.asked != 0 {
			kept = append(kept, ref) // its slot is asked for
			continue
		}
		slot, ok := s.pool.FreeSlotFor(t.req, accept)
		if !ok && s.pool.ReturnsFreed() {
			asked = sp.ask(ref, c, t.req) || asked
			kept = append(kept, ref)
			continue
		}
		if ok {
			sp.bulks--
			if err := s.pool.Take(now, pool.Bulk{ID: sp.bulks, Requests: []pool.Request{t.req}}, slot.ID); err != nil {
				ok = false // only a programming error can get here: the slot is free and serves the request
			}
		}
		if !ok {
			kept = append(kept, ref)
			continue
		}
		sp.deploy(now, t, c, ref, slot.ID)
	}
	clear(sp.pending[len(kept):])
	sp.pending = kept
	return asked
}

// deploy deploys speculative attempt c (ref) of t into slot.
func (sp *speculator) deploy(now time.Time, t *specTask, c *specCopy, ref specRef, slot SlotID) {
	s := sp.s
	c.placed, c.slot, c.deployed = true, slot, sp.since(now)
	sp.started++
	s.rd.Deploy = append(s.rd.Deploy, Deployment{Task: ref.v, Attempt: ref.id, Slot: slot, Region: t.r, Speculative: true})
}

// copy returns the speculative attempt id of t, or nil.
func (t *specTask) copy(id Attempt) *specCopy {
	if t == nil {
		return nil
	}
	for i := range t.copies {
		if t.copies[i].id == id {
			return &t.copies[i]
		}
	}
	return nil
}

// placedCopies counts t's speculative attempts that run, other than skip.
func (t *specTask) placedCopies(skip Attempt) int {
	n := 0
	for _, c := range t.copies {
		if c.placed && c.id != skip {
			n++
		}
	}
	return n
}

// report handles a report of attempt e of task v (op names it, to is
// the state reported, lost the partitions a failure reports lost) when
// speculation is on. handled: the report was dealt with here (err is the
// answer); otherwise the caller goes on with the strategy's attempt a.
func (sp *speculator) report(now time.Time, op string, v TaskID, e Attempt, to strategy.ExecutionState,
	lost []PartitionID) (a strategy.Attempt, handled bool, err error) {
	s := sp.s
	if v < 0 || int(v) >= len(sp.deployedAt) {
		return strategy.Attempt(e), false, nil // the strategy names the error
	}
	r := s.rs.RegionOf(v)
	t := sp.tasks[v]
	if sp.shift == nil || (t == nil && sp.top[r] == 0) {
		return strategy.Attempt(e), false, nil
	}
	cur := s.strategy.Attempt(r)
	first := s.ext(r, cur)
	if to == strategy.TaskFailed {
		n := PartitionID(s.rs.Topology().NumPartitions())
		for _, p := range lost {
			if p < 0 || p >= n {
				return 0, true, s.wrap(op, v, &strategy.UnknownPartitionError{Partition: p})
			}
		}
	}
	var c *specCopy
	switch {
	case t != nil && t.attempt == cur && e == first:
		if t.firstGone {
			return 0, true, nil // dropped already
		}
	case t != nil && t.attempt == cur && t.copy(e) != nil && t.copy(e).placed:
		c = t.copy(e)
	case e > max(first, Attempt(sp.top[r])):
		return strategy.Attempt(e - Attempt(sp.shift[r])), false, nil // not begun: the strategy says so
	case e != first || sp.firstLost[v] == cur+1:
		return 0, true, nil // an attempt replaced, dropped, canceled, or that lost
	default:
		return cur, false, nil // the region's attempt of a task without speculative attempts
	}
	switch to {
	case strategy.TaskRunning, strategy.TaskDeploying:
		if c == nil {
			return cur, false, nil
		}
		return 0, true, nil
	case strategy.TaskFinished:
		if err := s.strategy.CheckFinish(v); err != nil {
			return 0, true, s.wrap(op, v, err) // refused before the race ends: nothing changes
		}
		sp.win(now, t, c)
		return cur, false, nil
	case strategy.TaskFailed:
		others := t.placedCopies(e)
		if c != nil && !t.firstGone {
			others++
		}
		if others > 0 && len(lost) == 0 {
			sp.dropAttempt(now, t, c)
			s.drain(now)
			return 0, true, nil
		}
		// The task fails over: the others go with it.
		if c != nil {
			sp.releaseCopy(now, t, c)
		}
		sp.stopCopies(now, t, e)
		if c != nil && !t.firstGone {
			s.emitCancel(v, cur)
		}
		delete(sp.tasks, v)
		return cur, false, nil
	}
	return cur, false, nil
}

// win ends the race of task t: attempt c won (nil: the region's attempt).
// The others are canceled and their slots returned; the region's attempt's
// slot is returned by the caller (taskEnded), and its finish recorded
// with the winner's deployment.
func (sp *speculator) win(now time.Time, t *specTask, c *specCopy) {
	s := sp.s
	winner := s.ext(t.r, t.attempt)
	if c != nil {
		winner = c.id
		sp.won++
		sp.deployedAt[t.v] = c.deployed
		sp.firstLost[t.v] = t.attempt + 1
		if !t.firstGone {
			s.emitCancel(t.v, t.attempt)
		}
		sp.releaseCopy(now, t, c)
	}
	sp.stopCopies(now, t, winner)
	s.rd.Won = append(s.rd.Won, Task{Task: t.v, Attempt: winner})
	delete(sp.tasks, t.v)
}

// dropAttempt drops one failed attempt of t while others run: c, or the
// region's attempt if nil.
func (sp *speculator) dropAttempt(now time.Time, t *specTask, c *specCopy) {
	s := sp.s
	if c == nil {
		t.firstGone = true
		sp.firstLost[t.v] = t.attempt + 1
		s.taskEnded(now, t.v)
		return
	}
	sp.releaseCopy(now, t, c)
	t.copies = slices.DeleteFunc(t.copies, func(x specCopy) bool { return x.id == c.id })
}

// stopCopies cancels t's speculative attempts other than keep and returns
// their slots (those waiting for one are forgotten).
func (sp *speculator) stopCopies(now time.Time, t *specTask, keep Attempt) {
	for i := range t.copies {
		c := &t.copies[i]
		if c.id == keep || !c.placed {
			continue
		}
		sp.cancelCopy(c.id, t.v)
		sp.releaseCopy(now, t, c)
	}
	t.copies = t.copies[:0]
}

// cancelCopy asks the runtime to stop a speculative attempt; a deployment
// of it not handed out yet is withdrawn instead.
func (sp *speculator) cancelCopy(id Attempt, v TaskID) {
	s := sp.s
	for i := range s.rd.Deploy {
		if d := &s.rd.Deploy[i]; d.Task == v && d.Attempt == id && d.Speculative {
			d.Task = -1 // dropped by Ready
			return
		}
	}
	s.rd.Cancel = append(s.rd.Cancel, Task{Task: v, Attempt: id})
}

// releaseCopy returns the slot of a speculative attempt of t.
func (sp *speculator) releaseCopy(now time.Time, t *specTask, c *specCopy) {
	s := sp.s
	if !c.placed {
		return
	}
	c.placed = false
	if err := s.pool.Release(now, c.slot); err == nil {
		s.rd.Released = append(s.rd.Released, Release{Slot: c.slot, Region: t.r, Attempt: c.id})
	}
}

// stop cancels the speculative attempts of the tasks of the regions
// being stopped (a failover, or the job failing).
func (sp *speculator) stop(now time.Time, regions []region.ID) {
	if len(sp.tasks) == 0 {
		return
	}
	stopping := make(map[region.ID]bool, len(regions))
	for _, r := range regions {
		stopping[r] = true
	}
	for _, v := range slices.Sorted(maps.Keys(sp.tasks)) {
		if t := sp.tasks[v]; stopping[t.r] {
			sp.stopCopies(now, t, -1)
			delete(sp.tasks, v)
		}
	}
}

// slotLost handles a lost slot the regions do not hold: a speculative
// attempt's. It is dropped; if it was the task's last attempt, the task
// fails over.
func (sp *speculator) slotLost(now time.Time, ev pool.Lost) {
	s := sp.s
	for _, v := range slices.Sorted(maps.Keys(sp.tasks)) {
		t := sp.tasks[v]
		for i := range t.copies {
			c := &t.copies[i]
			if !c.placed || c.slot != ev.Slot {
				continue
			}
			c.placed = false // the pool took it away
			sp.cancelCopy(c.id, v)
			t.copies = slices.Delete(t.copies, i, i+1)
			if t.firstGone && t.placedCopies(-1) == 0 && s.state == JobRunning {
				delete(sp.tasks, v)
				if _, err := s.strategy.UpdateState(v, t.attempt, strategy.TaskFailed); err == nil {
					s.failover(now, v, nil)
				}
			}
			return
		}
	}
}

// SpeculationStats counts what speculative execution did.
type SpeculationStats struct {
	// Requested counts the speculative attempts asked for; Started those
	// deployed; Won those that finished first.
	Requested, Started, Won int
	// Blocked counts the nodes (or slots without a node) blocked now.
	Blocked int
}

// SpeculationStats returns the counts of speculative execution (zero if
// it is off).
func (s *Scheduler) SpeculationStats() SpeculationStats {
	sp := s.spec
	if sp == nil {
		return SpeculationStats{}
	}
	n := 0
	for _, until := range sp.blocked {
		if until.After(s.last) {
			n++
		}
	}
	return SpeculationStats{Requested: sp.requested, Started: sp.started, Won: sp.won, Blocked: n}
}
