package simulator

import (
	"errors"
	"time"

	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
)

// Speculative execution in the simulator (Config.Speculation): the
// scheduler's detector asks for speculative attempts (a Speculate event
// each) and deploys them into free slots; a speculative attempt runs its
// task's duration (times the straggler factor if it is a straggler
// itself) beside the task's attempt in the model. Only tasks alone in
// their region are speculated, so an attempt reads finished blocking
// inputs, or full hybrid ones, and makes progress from its deployment
// on; an attempt of a task that reads a hybrid result the scheduler says
// is read only once finished (ReadsFinishedOnly: its producer is
// speculable) waits, holding its slot, until every producer of that
// input finished, as the task's attempt does. An attempt whose work is
// done finishes only once its hybrid producers finished, and waits in
// its slot until then. When one finishes, it is reported; the scheduler
// names the winner (a Win event) and cancels the others. A speculative
// attempt that wins takes the place of the task's attempt in the model,
// whose consumers then start as after any finish; the attempt it
// replaced holds its slot until its Cancel.

// SpeculationSummary is what speculative execution did in a run.
type SpeculationSummary struct {
	// Requested counts the speculative attempts the detector asked for;
	// Started those deployed; Won those that finished first.
	Requested, Started, Won int
	// SlotTime is the slot time the speculative attempts held.
	SlotTime time.Duration
	// Stragglers counts the attempts the straggler model made slow
	// (Config.Stragglers), speculative ones included.
	Stragglers int
}

// ErrSpeculationPolicy means Config.Speculation was set with the eager
// policy, which has no scheduler to speculate.
var ErrSpeculationPolicy = errors.New("simulator: speculation needs the region policy")

// checkSpeculation refuses, in this order, a straggler model out of
// range, a speculation setting check refuses (ValidateJob for one job,
// Validate for several: a job with nothing to speculate runs without
// it), and speculation under the eager policy.
func checkSpeculation(cfg Config, check func() error) error {
	if err := checkStragglers(cfg); err != nil {
		return err
	}
	if err := check(); err != nil {
		return err
	}
	if cfg.Speculation.Enabled && cfg.Policy == EagerPolicy {
		return ErrSpeculationPolicy
	}
	return nil
}

// copyKey names an attempt of a task.
type copyKey struct{ v, attempt int32 }

// copyRun is a speculative attempt deployed.
type copyRun struct {
	slot  int32
	since time.Duration // deployed
	// d is how long its work takes; progressing whether it works now (it
	// waits for finished-only inputs before, and for its hybrid
	// producers' finish once done).
	d           time.Duration
	progressing bool
	done        bool
}

// specSim is the engine's state of speculative execution.
type specSim struct {
	copies map[copyKey]copyRun
	// ghosts are the tasks' attempts a speculative attempt beat, by slot,
	// until their Cancel.
	ghosts map[copyKey]int32
	// copiesMade counts, per task, its speculative attempts (the
	// straggler draw); fromCopy says its model attempt is a speculative
	// one that won.
	copiesMade []uint32
	fromCopy   []bool
	slotTime   time.Duration
	// waiting holds, per task, the attempts of copies that wait for
	// finished-only inputs, and done those whose work is done and that
	// wait for their hybrid producers to finish.
	waiting, done map[int32][]int32
}

// initSpeculation sets up speculative execution of a run, if any.
func (e *engine) initSpeculation() {
	if !e.cfg.Speculation.Enabled {
		return
	}
	n := e.topo.NumExecutionVertices()
	e.spec = &specSim{copies: map[copyKey]copyRun{}, ghosts: map[copyKey]int32{},
		copiesMade: make([]uint32, n), fromCopy: make([]bool, n),
		waiting: map[int32][]int32{}, done: map[int32][]int32{}}
	e.model.onReadable = e.copiesReadable
	e.model.onInputsClosed = e.copyTakesOver
}

// deployCopy starts speculative attempt attempt of task v in slot.
func (e *engine) deployCopy(v, attempt, slot int32) {
	s := &e.slots[slot]
	if s.occupants == 0 {
		s.since = e.now()
	}
	s.occupants++
	e.copyEvent(runfile.Deploy, v, attempt, slot)
	d := e.model.duration[e.model.tasks[v].jobVertex]
	if e.model.slow != nil {
		n := e.spec.copiesMade[v]
		if e.straggles(v, n, saltSpeculative) {
			d = scaled(d, e.model.factor)
			e.stragglers++
		}
	}
	e.spec.copiesMade[v]++
	k := copyKey{v, attempt}
	c := copyRun{slot: slot, since: e.now(), d: d}
	if !e.model.readable(v) {
		e.spec.copies[k] = c
		e.spec.waiting[v] = append(e.spec.waiting[v], attempt)
		return
	}
	e.startCopy(k, c)
}

// startCopy lets speculative attempt k work: it ends its work after its
// duration.
func (e *engine) startCopy(k copyKey, c copyRun) {
	s := &e.slots[c.slot]
	if s.progressing == 0 {
		s.workSince = e.now()
	}
	s.progressing++
	c.progressing = true
	e.spec.copies[k] = c
	e.copyDetail(runfile.Progress, k.v, k.attempt, c.slot)
	e.model.cal.add(timed{at: laterBy(e.now(), c.d), order: e.model.cal.nextOrder(), kind: speculativeEnd, task: k.v, version: uint32(k.attempt)})
}

// pauseCopy ends the work of speculative attempt k; it stays in its slot.
func (e *engine) pauseCopy(k copyKey, c copyRun) copyRun {
	if !c.progressing {
		return c
	}
	c.progressing = false
	e.spec.copies[k] = c
	s := &e.slots[c.slot]
	e.copyDetail(runfile.Stall, k.v, k.attempt, c.slot)
	if s.progressing--; s.progressing == 0 {
		e.worked += e.now() - s.workSince
	}
	return c
}

// copiesReadable starts the speculative attempts of task v that waited
// for its finished-only inputs (model.onReadable).
func (e *engine) copiesReadable(v int32) {
	attempts := e.spec.waiting[v]
	if len(attempts) == 0 {
		return
	}
	delete(e.spec.waiting, v)
	for _, a := range attempts {
		k := copyKey{v, a}
		if c, ok := e.spec.copies[k]; ok && !c.progressing && !c.done {
			e.startCopy(k, c)
		}
	}
}

// copyTakesOver puts a speculative attempt of task v that is done in the
// place of the task's attempt once v's hybrid producers all finished
// (model.onInputsClosed): it reports whether there was one, and v then
// finishes.
func (e *engine) copyTakesOver(v int32) bool {
	for _, a := range e.spec.done[v] {
		k := copyKey{v, a}
		if c, ok := e.spec.copies[k]; ok && c.done {
			delete(e.spec.done, v)
			e.takeOver(k, c)
			return true
		}
	}
	delete(e.spec.done, v)
	return false
}

// copyEvent records an event of speculative attempt attempt of task v.
func (e *engine) copyEvent(k runfile.Kind, v, attempt, slot int32) {
	e.attemptEvent(k, v, attempt, slot, true)
}

// attemptEvent records an event of attempt attempt of task v, which need
// not be the task's attempt in the model; speculative marks it.
func (e *engine) attemptEvent(k runfile.Kind, v, attempt, slot int32, speculative bool) {
	e.traced++
	if e.tracing() {
		ev := e.taskEvent(k, v, slot)
		ev.Attempt, ev.Speculative = int(attempt), speculative
		e.emit(ev)
	}
}

// copyDetail hands out a picture-only event of a speculative attempt.
func (e *engine) copyDetail(k runfile.Kind, v, attempt, slot int32) {
	if e.detailed() {
		ev := e.taskEvent(k, v, slot)
		ev.Attempt, ev.Speculative = int(attempt), true
		e.emitDetail(ev)
	}
}

// stopCopy takes a speculative attempt out of its slot (it finished or
// was canceled): its progress and its hold end.
func (e *engine) stopCopy(k copyKey, c copyRun) {
	e.pauseCopy(k, c)
	delete(e.spec.copies, k)
	e.spec.slotTime += e.now() - c.since
}

// leaveCopySlot counts an attempt out of slot, recording the release
// when it was the last one there.
func (e *engine) leaveCopySlot(v, attempt, slot int32, speculative bool) {
	s := &e.slots[slot]
	if s.occupants--; s.occupants == 0 {
		e.busy += e.now() - s.since
		e.attemptEvent(runfile.Release, v, attempt, slot, speculative)
	}
}

// copyEnded handles a speculativeEnd event: the attempt's work is done.
// Once the task's hybrid and pipelined producers have finished, it takes
// the place of the task's attempt in the model, which finishes the task
// (and reports it); the attempt it replaced waits for its Cancel. Before,
// it waits in its slot (copyTakesOver). The run loop drops a stale event
// (the attempt was canceled) and hands the live attempt's state in c.
func (e *engine) copyEnded(k copyKey, c copyRun) {
	v, attempt := k.v, k.attempt
	m := e.model
	t := &m.tasks[v]
	if t.phase == deployed && t.inPipelinedOpen > 0 {
		c = e.pauseCopy(k, c)
		c.done = true
		e.spec.copies[k] = c
		e.spec.done[v] = append(e.spec.done[v], attempt)
		return
	}
	if t.phase != deployed {
		// Only a canceled task has no attempt in the model, and its
		// speculative attempts are canceled with it.
		e.stopCopy(k, c)
		e.leaveCopySlot(v, attempt, c.slot, true)
		return
	}
	e.takeOver(k, c)
	m.finish(v)
}

// takeOver puts speculative attempt k, done, in the place of its task's
// attempt in the model, which the caller then finishes.
func (e *engine) takeOver(k copyKey, c copyRun) {
	e.stopCopy(k, c)
	m := e.model
	v := k.v
	t, r := &m.tasks[v], &m.runs[v]
	if t.progressing {
		m.progressChanged(v, false) // while the model still has its slot
		t.progressing = false
	}
	e.spec.ghosts[copyKey{v, r.attempt}] = m.slot(v)
	r.slot1, r.attempt = c.slot+1, k.attempt
	r.version++
	t.workDone = true
	e.spec.fromCopy[v] = true
}

// cancelSpeculative carries out a Cancel of an attempt that is not the
// task's attempt in the model (a speculative one, or one a speculative
// attempt beat), reporting whether it was one.
func (e *engine) cancelSpeculative(v, attempt int32) bool {
	k := copyKey{v, attempt}
	if c, ok := e.spec.copies[k]; ok {
		e.stopCopy(k, c)
		e.copyEvent(runfile.Cancel, v, attempt, c.slot)
		e.leaveCopySlot(v, attempt, c.slot, true)
		return true
	}
	if slot, ok := e.spec.ghosts[k]; ok {
		delete(e.spec.ghosts, k)
		e.attemptEvent(runfile.Cancel, v, attempt, slot, false)
		e.leaveCopySlot(v, attempt, slot, false)
		return true
	}
	return false
}

// won records the Win of a race.
func (e *engine) won(w scheduler.Task, off int32) {
	v := off + int32(w.Task)
	e.attemptEvent(runfile.Win, v, int32(w.Attempt), e.model.slot(v), e.spec.fromCopy[v])
}

// speculationSummary is the run's speculation counts, zero without
// speculation and stragglers.
func (e *engine) speculationSummary(st scheduler.SpeculationStats) SpeculationSummary {
	if e.spec == nil && e.model.slow == nil {
		return SpeculationSummary{}
	}
	out := SpeculationSummary{Requested: st.Requested, Started: st.Started, Won: st.Won, Stragglers: e.stragglers}
	if e.spec != nil {
		out.SlotTime = e.spec.slotTime
		for _, c := range e.spec.copies {
			out.SlotTime += e.now() - c.since
		}
	}
	return out
}

// CompareSpeculation runs cfg (with Config.Speculation on) and the same
// run without speculation, its trace and pictures off (same seed, same
// stragglers among the attempts both make): with is the first, without
// the second. The makespan saved is without.Makespan - with.Makespan.
func CompareSpeculation(cfg Config) (with, without *Result, err error) {
	if with, err = Run(cfg); err != nil {
		return nil, nil, err
	}
	base := cfg
	base.Speculation = scheduler.Speculation{}
	base.Record, base.OnEvent, base.Detail = false, nil, false
	if without, err = Run(base); err != nil {
		return nil, nil, err
	}
	return with, without, nil
}

// CompareJobsSpeculation runs a run of several jobs (with
// JobsConfig.Speculation on) and the same run without speculation, its
// trace, pictures and audit off (same seed, same stragglers among the
// attempts both make): with and withJobs are the first, without and
// withoutJobs the second.
func CompareJobsSpeculation(cfg JobsConfig) (with *Result, withJobs []JobResult, without *Result, withoutJobs []JobResult, err error) {
	if with, withJobs, err = RunJobs(cfg); err != nil {
		return nil, nil, nil, nil, err
	}
	base := cfg
	base.Speculation = scheduler.Speculation{}
	base.Record, base.OnEvent, base.Detail, base.Audit = false, nil, false, nil
	if without, withoutJobs, err = RunJobs(base); err != nil {
		return nil, nil, nil, nil, err
	}
	return with, withJobs, without, withoutJobs, nil
}
