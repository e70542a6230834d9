package simulator

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// phase is where a task attempt is.
type phase uint8

const (
	idle     phase = iota // not deployed (never, or canceled/failed and waiting to be redeployed)
	deployed              // holds a slot
	finished              // done; its partitions are complete
)

// never is the "duration" of an unbounded task.
const never = time.Duration(math.MaxInt64)

// task is the state of one execution vertex that a change of its
// producers or consumers reads (model.reevaluate): 24 bytes, so that
// finishing a wave of producers touches few cache lines of their
// consumers. The rest of its state is in model.runs.
type task struct {
	phase       phase
	progressing bool
	workDone    bool // its own work is done; it waits for its pipelined producers to finish
	jobVertex   int32
	// Counts of unmet conditions (see model.reevaluate):
	inUndeployed    int32 // pipelined and hybrid input groups with a producer not deployed
	outUndeployed   int32 // pipelined output groups with a consumer not deployed
	inBlockingOpen  int32 // blocking input groups with an unfinished partition
	inPipelinedOpen int32 // pipelined and hybrid input groups with an unfinished producer
}

// taskRun is the state of a task's current attempt, read when it is
// deployed, starts or stops progress, or ends. Its zero value is a task
// never deployed, so a new model writes none of it.
type taskRun struct {
	since   time.Duration // progressing since
	done    time.Duration // progress of the current attempt
	slot1   int32         // 1 + its slot while deployed, else 0
	attempt int32
	version uint32
	// asked1 is 1 + the attempt of the task's open request (asked for a
	// slot, not deployed since, not withdrawn), else 0; see
	// regionPolicy.supersede.
	asked1 int32
}

// model holds the execution semantics of docs/architecture.md on top of
// the execution topology: a deployed task makes progress only while all
// its pipelined producers and consumers and its hybrid producers are
// deployed (or finished) and all blocking partitions it reads are
// finished; its duration advances only then; it cannot finish before its
// pipelined and hybrid producers finish. A hybrid exchange is a pipelined
// one without back pressure: the consumer reads what the producer wrote
// so far (live, or persisted), so its work overlaps the producer's, and
// the producer never waits for its consumers. A hybrid input group
// read only once finished (readFinishedOnly, under speculation) stops
// its consumer's progress, like a blocking one, until every producer of
// it finished; it does not delay the consumer's deployment. Group
// counters keep every
// transition O(1) per task plus O(group) when a group counter crosses
// zero, so all-to-all exchanges are never expanded.
type model struct {
	topo  *topology.ExecutionTopology
	tasks []task
	runs  []taskRun // per task, beside tasks
	// failAt holds the injected failures not spent yet: the progress at
	// which the first attempt of a task that runs fails.
	failAt    map[int32]time.Duration
	duration  []time.Duration // per job vertex
	pipelined []bool          // per job edge
	hybrid    []bool          // per job edge
	// live is, per job edge, pipelined or hybrid: its consumers cannot
	// finish before its producers.
	live []bool
	// forward is, per job edge, whether it is a blocking forward edge:
	// group k is producer k's partition, read by consumer k, and its one
	// producer's finish is its last (no count in unfinishedProducers).
	forward []bool
	// per job vertex: whether it has a pipelined input (output) edge, and
	// a hybrid output edge; deploy walks no groups of a vertex without
	// (all-blocking jobs).
	pipelinedIn, pipelinedOut, hybridOut []bool
	// per partition group; the undeployed counts are read only for
	// groups of pipelined edges, the undeployed producers of hybrid ones
	// too (nil in an all-blocking job), the unfinished count for groups
	// of other than blocking forward edges
	undeployedProducers []int32
	undeployedConsumers []int32
	unfinishedProducers []int32

	// Hybrid results read only once finished (readFinishedOnly; nil
	// without any): finishedOnly is, per partition group, whether its
	// consumers read it only once every producer of it finished, and
	// finishedOpen, per task, how many such input groups of it have an
	// unfinished producer. A task with one makes no progress.
	finishedOnly []bool
	finishedOpen []int32

	// slow is, per task, whether its current attempt is a straggler,
	// which takes factor times its duration (nil without stragglers; see
	// stragglers.go).
	slow   []bool
	factor float64

	now        time.Duration
	cal        calendar
	unfinished int     // tasks not finished
	finishBuf  []int32 // scratch of finish

	// hooks for the policy
	onFinished    func(v int32)
	onFailed      func(v int32)
	onRequestable func(v int32)          // an idle task whose blocking inputs are finished and pipelined producers deployed
	onProgress    func(v int32, on bool) // a deployed task starts or stops making progress (its slot is still set)
	// With results read only once finished (speculation): onReadable
	// tells that the finished-only inputs of a deployed task are all
	// finished; onInputsClosed that the hybrid and pipelined producers
	// of a deployed task whose own attempt is not done all finished, and
	// asks whether another attempt of it that is done takes its place
	// (then it finishes). Neither may finish a task itself.
	onReadable     func(v int32)
	onInputsClosed func(v int32) bool

	// spareSched is the scheduler an ended run left with the tables (see
	// modelTables), until a run of one job takes it.
	spareSched *scheduler.Scheduler
}

func newModel(t *topology.ExecutionTopology, failures map[int32]time.Duration, seededTies *rand.PCG) *model {
	job := t.Job()
	spare := takeTables(t.NumExecutionVertices(), t.NumGroups())
	m := &model{
		topo:                t,
		tasks:               spare.tasks,
		runs:                spare.runs,
		spareSched:          spare.sched,
		duration:            make([]time.Duration, job.NumVertices()),
		pipelined:           make([]bool, job.NumEdges()),
		hybrid:              make([]bool, job.NumEdges()),
		live:                make([]bool, job.NumEdges()),
		forward:             make([]bool, job.NumEdges()),
		pipelinedIn:         make([]bool, job.NumVertices()),
		pipelinedOut:        make([]bool, job.NumVertices()),
		hybridOut:           make([]bool, job.NumVertices()),
		unfinishedProducers: spare.unfinishedProducers,
		unfinished:          t.NumExecutionVertices(),
	}
	m.cal.seeded = seededTies
	for jv := range topology.JobVertexID(job.NumVertices()) {
		vx := job.Vertex(jv)
		m.duration[jv] = vx.Duration
		if vx.Unbounded {
			m.duration[jv] = never
		}
		vs := t.VerticesOf(jv)
		for v := vs.Start; v < vs.End; v++ {
			m.tasks[v].jobVertex = int32(jv)
		}
	}
	for v, at := range failures {
		if at >= 0 {
			if m.failAt == nil {
				m.failAt = map[int32]time.Duration{}
			}
			m.failAt[v] = at
		}
	}
	for e := range topology.JobEdgeID(job.NumEdges()) {
		m.pipelined[e] = t.PartitionType(e).IsPipelined()
		m.hybrid[e] = t.PartitionType(e).IsHybrid()
		m.live[e] = m.pipelined[e] || m.hybrid[e]
		src, dst := job.EdgeEnds(e)
		if m.pipelined[e] {
			m.pipelinedOut[src], m.pipelinedIn[dst] = true, true
		}
		if m.hybrid[e] {
			m.hybridOut[src] = true
		}
		if m.live[e] && m.undeployedProducers == nil {
			m.undeployedProducers = make([]int32, t.NumGroups())
			m.undeployedConsumers = make([]int32, t.NumGroups())
		}
		gs := t.GroupsOf(e)
		if !m.live[e] && gs.Len() == t.VerticesOf(src).Len() && gs.Len() == t.VerticesOf(dst).Len() {
			// A blocking forward edge (as many groups as producers and
			// as consumers): group k is producer k's partition, read by
			// consumer k; no group to look up, no count to keep.
			m.forward[e] = true
			cs := t.VerticesOf(dst).Start
			for k := range int32(gs.Len()) {
				m.tasks[cs+k].inBlockingOpen++
			}
			continue
		}
		for g := gs.Start; g < gs.End; g++ {
			pg := t.GroupOnEdge(e, topology.GroupID(g))
			m.unfinishedProducers[g] = int32(pg.Producers.Len())
			if m.live[e] {
				m.undeployedProducers[g] = int32(pg.Producers.Len())
				for c := pg.Consumers.Start; c < pg.Consumers.End; c++ {
					m.tasks[c].inUndeployed++
					m.tasks[c].inPipelinedOpen++
				}
			}
			if m.pipelined[e] {
				m.undeployedConsumers[g] = int32(pg.Consumers.Len())
				for p := pg.Producers.Start; p < pg.Producers.End; p++ {
					m.tasks[p].outUndeployed++
				}
			} else if !m.hybrid[e] {
				for c := pg.Consumers.Start; c < pg.Consumers.End; c++ {
					m.tasks[c].inBlockingOpen++
				}
			}
		}
	}
	return m
}

// readFinishedOnly marks the hybrid input groups whose consumers read
// them only once finished: those with a partition finishedOnly names (the
// scheduler's ReadsFinishedOnly, under speculation). A consumer of such a
// group is deployed as before (once its producers are), but makes
// progress only once every producer of every such group of it finished:
// it reads nothing of a partially finished group (Flink may read the
// finished partitions of one; that is not modelled, so the model is
// conservative). Called before the run starts; it walks each hybrid
// group's partitions and consumers once, and the runs keep O(1) counters
// per group as for blocking inputs.
func (m *model) readFinishedOnly(finishedOnly func(p topology.ResultPartitionID) bool) {
	job := m.topo.Job()
	for e := range topology.JobEdgeID(job.NumEdges()) {
		if !m.hybrid[e] {
			continue
		}
		gs := m.topo.GroupsOf(e)
		for g := gs.Start; g < gs.End; g++ {
			first, n := m.topo.GroupPartitions(topology.GroupID(g))
			marked := false
			for p := first; p < first+topology.ResultPartitionID(n) && !marked; p++ {
				marked = finishedOnly(p)
			}
			if !marked {
				continue
			}
			if m.finishedOnly == nil {
				m.finishedOnly = make([]bool, m.topo.NumGroups())
				m.finishedOpen = make([]int32, len(m.tasks))
			}
			m.finishedOnly[g] = true
			if m.unfinishedProducers[g] == 0 {
				continue
			}
			pg := m.topo.GroupOnEdge(e, topology.GroupID(g))
			for c := pg.Consumers.Start; c < pg.Consumers.End; c++ {
				m.finishedOpen[c]++
			}
		}
	}
}

// readable reports whether every finished-only input group of task v is
// finished (always without such groups).
func (m *model) readable(v int32) bool { return m.finishedOpen == nil || m.finishedOpen[v] == 0 }

// requestable reports whether an idle task may ask for a slot under the
// eager policy: its blocking inputs are finished and its pipelined and
// hybrid producers are deployed.
func (m *model) requestable(v int32) bool {
	t := &m.tasks[v]
	return t.phase == idle && t.inBlockingOpen == 0 && t.inUndeployed == 0
}

// forEachGroup calls f for every input (or output) group of task v with
// the job edge and whether it is pipelined.
func (m *model) forEachGroup(v int32, inputs bool, f func(e topology.JobEdgeID, g topology.GroupID)) {
	job := m.topo.Job()
	jv := topology.JobVertexID(m.tasks[v].jobVertex)
	sub := int(v - m.topo.VerticesOf(jv).Start)
	edges := job.OutEdges(jv)
	if inputs {
		edges = job.InEdges(jv)
	}
	for _, e := range edges {
		if inputs {
			f(e, m.topo.ConsumedGroup(e, sub))
		} else {
			f(e, m.topo.ProducedGroup(e, sub))
		}
	}
}

// deploy puts an idle task into a slot. It walks the pipelined input and
// output groups in plain loops (no forEachGroup closures), as finish
// does: it runs for every task.
func (m *model) deploy(v, slot int32) {
	m.tasks[v].phase, m.runs[v].slot1 = deployed, slot+1
	jv := topology.JobVertexID(m.tasks[v].jobVertex)
	if m.pipelinedIn[jv] || m.pipelinedOut[jv] || m.hybridOut[jv] {
		job := m.topo.Job()
		sub := int(v - m.topo.VerticesOf(jv).Start)
		if m.pipelinedIn[jv] {
			m.deployedIn(job.InEdges(jv), sub, true)
		}
		if m.pipelinedOut[jv] || m.hybridOut[jv] {
			m.deployedIn(job.OutEdges(jv), sub, false)
		}
	}
	m.reevaluate(v)
}

// deployedIn counts subtask sub of a task just deployed into its groups
// on the pipelined edges among edges: its input groups (their
// undeployed consumers) if inputs, else its output groups (their
// undeployed producers), hybrid ones too. The tasks on the other side of
// a group whose last such member it was lose an undeployed group and are
// reevaluated.
func (m *model) deployedIn(edges []topology.JobEdgeID, sub int, inputs bool) {
	for _, e := range edges {
		if !m.pipelined[e] && (inputs || !m.hybrid[e]) {
			continue
		}
		var g topology.GroupID
		undeployed := m.undeployedProducers
		if inputs {
			g, undeployed = m.topo.ConsumedGroup(e, sub), m.undeployedConsumers
		} else {
			g = m.topo.ProducedGroup(e, sub)
		}
		if undeployed[g]--; undeployed[g] != 0 {
			continue
		}
		pg := m.topo.GroupOnEdge(e, g)
		others := pg.Consumers
		if inputs {
			others = pg.Producers
		}
		for o := others.Start; o < others.End; o++ {
			if inputs {
				m.tasks[o].outUndeployed--
			} else {
				m.tasks[o].inUndeployed--
			}
			m.reevaluate(o)
		}
	}
}

// slot returns the slot task v is deployed in, or -1.
func (m *model) slot(v int32) int32 { return m.runs[v].slot1 - 1 }

// reset takes a deployed or finished task back to idle (canceled, failed
// or restarted): its progress is lost, and if it had finished its
// partitions count as unfinished again.
func (m *model) reset(v int32) {
	t := &m.tasks[v]
	if t.phase == idle {
		return
	}
	if m.failAt != nil {
		delete(m.failAt, v) // the first attempt that ran is over: an injected failure is spent
	}
	if t.progressing {
		m.progressChanged(v, false) // before its slot is cleared
	}
	wasFinished := t.phase == finished
	t.phase, t.progressing, t.workDone = idle, false, false
	r := &m.runs[v]
	r.slot1, r.done = 0, 0
	r.version++
	if wasFinished {
		m.unfinished++
		m.forEachGroup(v, false, func(e topology.JobEdgeID, g topology.GroupID) {
			if m.forward[e] || m.producerReset(g) {
				live := m.live[e]
				m.forConsumers(e, g, func(c int32) {
					if live {
						m.tasks[c].inPipelinedOpen++
						if m.finishedOnly != nil && m.finishedOnly[g] {
							m.finishedOpen[c]++
						}
					} else {
						m.tasks[c].inBlockingOpen++
					}
					m.reevaluate(c)
				})
			}
		})
	}
	m.forEachGroup(v, true, func(e topology.JobEdgeID, g topology.GroupID) {
		if m.pipelined[e] {
			if m.undeployedConsumers[g]++; m.undeployedConsumers[g] == 1 {
				m.forProducers(e, g, func(p int32) { m.tasks[p].outUndeployed++; m.reevaluate(p) })
			}
		}
	})
	m.forEachGroup(v, false, func(e topology.JobEdgeID, g topology.GroupID) {
		if m.live[e] {
			if m.undeployedProducers[g]++; m.undeployedProducers[g] == 1 {
				m.forConsumers(e, g, func(c int32) { m.tasks[c].inUndeployed++; m.reevaluate(c) })
			}
		}
	})
}

// reevaluate starts or stops a task's progress after a change.
func (m *model) reevaluate(v int32) {
	t := &m.tasks[v]
	want := t.phase == deployed && !t.workDone && t.inUndeployed == 0 && t.outUndeployed == 0 && t.inBlockingOpen == 0 &&
		m.readable(v)
	switch {
	case want && !t.progressing:
		r := &m.runs[v]
		t.progressing, r.since = true, m.now
		r.version++
		m.progressChanged(v, true)
		m.scheduleProgressEnd(v)
	case !want && t.progressing:
		r := &m.runs[v]
		r.done += m.now - r.since
		t.progressing = false
		r.version++
		m.progressChanged(v, false)
	}
	if t.phase == idle && m.onRequestable != nil && m.requestable(v) {
		m.onRequestable(v)
	}
}

// progressChanged tells the onProgress hook that task v started (on) or
// stopped making progress.
func (m *model) progressChanged(v int32, on bool) {
	if m.onProgress != nil {
		m.onProgress(v, on)
	}
}

func (m *model) scheduleProgressEnd(v int32) {
	r := &m.runs[v]
	target := m.duration[m.tasks[v].jobVertex]
	if m.slow != nil && m.slow[v] && target != never {
		target = scaled(target, m.factor)
	}
	if m.failAt != nil { // (without injected failures: no map lookup, a call even on nil)
		if at, ok := m.failAt[v]; ok && at < target {
			target = at
		}
	}
	if target == never {
		return
	}
	m.cal.add(timed{at: laterBy(m.now, max(0, target-r.done)), order: m.cal.nextOrder(), kind: taskProgressEnd, task: v, version: r.version})
}

// progressEnd handles a taskProgressEnd event: the attempt fails if an
// injected failure point is reached, otherwise its work is done and it
// finishes as soon as its pipelined and hybrid producers have finished.
func (m *model) progressEnd(v int32) {
	t, r := &m.tasks[v], &m.runs[v]
	r.done += m.now - r.since
	r.since = m.now
	if m.failAt != nil {
		if at, ok := m.failAt[v]; ok && at < m.duration[t.jobVertex] && r.done >= at {
			delete(m.failAt, v)
			m.onFailed(v)
			return
		}
	}
	t.workDone, t.progressing = true, false
	r.version++
	m.progressChanged(v, false)
	if t.inPipelinedOpen == 0 {
		m.finish(v)
	}
}

// finish marks a task finished, completes its partitions and lets
// consumers that waited only for it finish too (iteratively). It walks
// the output groups in plain loops (no forEachGroup closures): it runs
// for every task.
func (m *model) finish(first int32) {
	work := append(m.finishBuf[:0], first) // finish is never re-entered
	job := m.topo.Job()
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		t := &m.tasks[v]
		if t.phase != deployed || !t.workDone {
			continue // canceled by the hooks of an earlier finish in this loop (e.g. the job failed)
		}
		t.phase = finished
		m.unfinished--
		jv := topology.JobVertexID(t.jobVertex)
		sub := int(v - m.topo.VerticesOf(jv).Start)
		for _, e := range job.OutEdges(jv) {
			g := m.topo.ProducedGroup(e, sub)
			if !m.forward[e] && !m.producerFinished(g) {
				continue
			}
			live := m.live[e]
			finishedOnly := m.finishedOnly != nil && m.finishedOnly[g]
			cs := m.topo.GroupOnEdge(e, g).Consumers
			for c := cs.Start; c < cs.End; c++ {
				ct := &m.tasks[c]
				if live {
					if finishedOnly {
						m.inputFinished(c)
					}
					if ct.inPipelinedOpen--; ct.inPipelinedOpen == 0 && ct.phase == deployed {
						if ct.workDone || (m.onInputsClosed != nil && m.onInputsClosed(c)) {
							work = append(work, c)
						}
					}
					continue
				}
				ct.inBlockingOpen--
				m.reevaluate(c)
			}
		}
		m.onFinished(v)
	}
	m.finishBuf = work[:0]
}

// inputFinished counts a finished-only input group of task c off that
// just finished: with its last, c may make progress (reevaluate), and
// onReadable is told.
func (m *model) inputFinished(c int32) {
	if m.finishedOpen[c]--; m.finishedOpen[c] != 0 {
		return
	}
	m.reevaluate(c)
	if m.onReadable != nil && m.tasks[c].phase == deployed {
		m.onReadable(c)
	}
}

// producerFinished counts a finished producer off group g (not of a
// forward edge) and reports whether it was the last.
func (m *model) producerFinished(g topology.GroupID) bool {
	m.unfinishedProducers[g]--
	return m.unfinishedProducers[g] == 0
}

// producerReset counts a producer of group g (not of a forward edge) that
// is unfinished again and reports whether it is the only one.
func (m *model) producerReset(g topology.GroupID) bool {
	m.unfinishedProducers[g]++
	return m.unfinishedProducers[g] == 1
}

// forProducers calls f for every producer of group g of edge e.
func (m *model) forProducers(e topology.JobEdgeID, g topology.GroupID, f func(int32)) {
	pg := m.topo.GroupOnEdge(e, g)
	for p := pg.Producers.Start; p < pg.Producers.End; p++ {
		f(p)
	}
}

// forConsumers calls f for every consumer of group g of edge e.
func (m *model) forConsumers(e topology.JobEdgeID, g topology.GroupID, f func(int32)) {
	pg := m.topo.GroupOnEdge(e, g)
	for c := pg.Consumers.Start; c < pg.Consumers.End; c++ {
		f(c)
	}
}

// waiting lists the deployed tasks that hold a slot while waiting, in id
// order, once the calendar is empty. A deployed task that is not
// progressing waits, unless it is live: its work is done and it only
// waits for pipelined or hybrid producers that are themselves live or
// progressing forever (a bounded consumer of an unbounded stream runs as long as the
// stream does: that is a steady state, not a deadlock).
func (m *model) waiting() []int32 {
	const (
		unknown int8 = iota
		alive
		dead
	)
	job := m.topo.Job()
	live := make([]bool, len(m.tasks))
	groupState := map[topology.GroupID]int8{}
	groupLive := func(g topology.GroupID) bool {
		if st := groupState[g]; st != unknown {
			return st == alive
		}
		ok := true
		pg := m.topo.Group(g)
		for p := pg.Producers.Start; p < pg.Producers.End && ok; p++ {
			ok = m.tasks[p].phase == finished || live[p]
		}
		groupState[g] = dead
		if ok {
			groupState[g] = alive
		}
		return ok
	}
	var out []int32
	// Producers before consumers: a pipelined producer's liveness is known
	// when its consumers are looked at.
	for _, jv := range job.TopologicalOrder() {
		vs := m.topo.VerticesOf(jv)
		for v := vs.Start; v < vs.End; v++ {
			t := &m.tasks[v]
			if t.phase != deployed {
				continue
			}
			if t.progressing {
				live[v] = true
				continue
			}
			if t.workDone {
				ok := true
				m.forEachGroup(v, true, func(e topology.JobEdgeID, g topology.GroupID) {
					if ok && m.live[e] && m.unfinishedProducers[g] > 0 {
						ok = groupLive(g)
					}
				})
				if ok {
					live[v] = true
					continue
				}
			}
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// modelTables are a model's per-task and per-group tables. A run of one
// job hands them back when it ends (model.release) for the next run in
// the process: a run of millions of tasks then writes memory that is
// mapped already, where fresh tables would fault in their pages one by
// one, in the order the run's tasks deploy, on every run.
//
// The scheduler of a run of one job goes with them (sched, nil for
// other runs): the next run's takes the storage of its per-region,
// per-group and per-task tables (package internal/schedreuse). They go
// to the next run together, in one entry of spareTables, so that what
// ends a spare entry (a garbage collection) ends both.
type modelTables struct {
	tasks               []task
	runs                []taskRun
	unfinishedProducers []int32
	sched               *scheduler.Scheduler
}

// spareTables holds the tables of ended runs (*modelTables).
var spareTables sync.Pool

// takeTables returns zeroed tables for tasks tasks and groups groups:
// those of an ended run if it left some, else new ones.
func takeTables(tasks, groups int) modelTables {
	mt, _ := spareTables.Get().(*modelTables)
	if mt == nil {
		mt = &modelTables{}
	}
	return modelTables{tasks: zeroed(mt.tasks, tasks), runs: zeroed(mt.runs, tasks),
		unfinishedProducers: zeroed(mt.unfinishedProducers, groups), sched: mt.sched}
}

// zeroed returns n zero values in old's storage if it holds them, else in
// new storage.
func zeroed[T any](old []T, n int) []T {
	if cap(old) < n {
		return make([]T, n)
	}
	old = old[:n]
	clear(old)
	return old
}

// release hands the model's tables over to the next run, with the
// scheduler of the run (nil: none): neither is used after, and nothing of
// a Result refers to them.
func (m *model) release(sched *scheduler.Scheduler) {
	spareTables.Put(&modelTables{tasks: m.tasks, runs: m.runs, unfinishedProducers: m.unfinishedProducers, sched: sched})
	m.tasks, m.runs, m.unfinishedProducers, m.spareSched = nil, nil, nil, nil
}
