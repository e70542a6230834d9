package simulator

import (
	"errors"
	"time"

	"github.com/regionsched/regionsched/scheduler"
)

// Speculative execution in the simulator (Config.Speculation): the
// scheduler's detector asks for speculative attempts (a Speculate event
// each) and deploys them into free slots; a speculative attempt runs its
// task's duration (times the straggler factor if it is a straggler
// itself) beside the task's attempt in the model. Only tasks alone in
// their region are speculated, so an attempt reads finished blocking
// inputs and makes progress from its deployment on. When one finishes,
// it is reported; the scheduler names the winner (a Win event) and
// cancels the others. A speculative attempt that wins takes the place of
// the task's attempt in the model, whose consumers then start as after
// any finish; the attempt it replaced holds its slot until its Cancel.

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

// copyKey names an attempt of a task.
type copyKey struct{ v, attempt int32 }

// copyRun is a speculative attempt that runs.
type copyRun struct {
	slot  int32
	since time.Duration
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
}

// initSpeculation sets up speculative execution of a run, if any.
func (e *engine) initSpeculation() {
	if !e.cfg.Speculation.Enabled {
		return
	}
	n := e.topo.NumExecutionVertices()
	e.spec = &specSim{copies: map[copyKey]copyRun{}, ghosts: map[copyKey]int32{},
		copiesMade: make([]uint32, n), fromCopy: make([]bool, n)}
}

// speculationRequested records a speculative request (Speculate).
func (e *engine) speculationRequested(v, attempt int32) {
	e.traced++
	if e.tracing() {
		ev := e.taskEvent(Speculate, v, NoSlot)
		ev.Attempt, ev.Speculative = int(attempt), true
		e.emit(ev)
	}
}

// deployCopy starts speculative attempt attempt of task v in slot.
func (e *engine) deployCopy(v, attempt, slot int32) {
	s := &e.slots[slot]
	if s.occupants == 0 {
		s.since = e.now()
	}
	s.occupants++
	if s.progressing == 0 {
		s.workSince = e.now()
	}
	s.progressing++
	e.copyEvent(Deploy, v, attempt, slot)
	e.copyDetail(Progress, v, attempt, slot)
	d := e.model.duration[e.model.tasks[v].jobVertex]
	if e.model.slow != nil {
		n := e.spec.copiesMade[v]
		if e.straggles(v, n, saltSpeculative) {
			d = scaled(d, e.model.factor)
			e.stragglers++
		}
	}
	e.spec.copiesMade[v]++
	e.spec.copies[copyKey{v, attempt}] = copyRun{slot: slot, since: e.now()}
	e.model.cal.add(timed{at: e.now() + d, order: e.model.cal.nextOrder(), kind: speculativeEnd, task: v, version: uint32(attempt)})
}

// copyEvent records an event of speculative attempt attempt of task v.
func (e *engine) copyEvent(k Kind, v, attempt, slot int32) {
	e.traced++
	if e.tracing() {
		ev := e.taskEvent(k, v, slot)
		ev.Attempt, ev.Speculative = int(attempt), true
		e.emit(ev)
	}
}

// copyDetail hands out a picture-only event of a speculative attempt.
func (e *engine) copyDetail(k Kind, v, attempt, slot int32) {
	if e.detailed() {
		ev := e.taskEvent(k, v, slot)
		ev.Attempt, ev.Speculative = int(attempt), true
		e.emitDetail(ev)
	}
}

// stopCopy takes a speculative attempt out of its slot (it finished or
// was canceled): its progress and its hold end.
func (e *engine) stopCopy(k copyKey, c copyRun) {
	delete(e.spec.copies, k)
	s := &e.slots[c.slot]
	e.copyDetail(Stall, k.v, k.attempt, c.slot)
	if s.progressing--; s.progressing == 0 {
		e.worked += e.now() - s.workSince
	}
	e.spec.slotTime += e.now() - c.since
}

// leaveCopySlot counts an attempt out of slot, recording the release
// when it was the last one there.
func (e *engine) leaveCopySlot(v, attempt, slot int32, speculative bool) {
	s := &e.slots[slot]
	if s.occupants--; s.occupants == 0 {
		e.busy += e.now() - s.since
		e.traced++
		if e.tracing() {
			ev := e.taskEvent(Release, v, slot)
			ev.Attempt, ev.Speculative = int(attempt), speculative
			e.emit(ev)
		}
	}
}

// copyEnded handles a speculativeEnd event: the attempt finished. It
// takes the place of the task's attempt in the model, which finishes the
// task (and reports it); the attempt it replaced waits for its Cancel.
// A stale event (the attempt was canceled) is dropped.
func (e *engine) copyEnded(v, attempt int32) {
	k := copyKey{v, attempt}
	c, ok := e.spec.copies[k]
	if !ok {
		return
	}
	e.stopCopy(k, c)
	m := e.model
	t, r := &m.tasks[v], &m.runs[v]
	if t.phase != deployed {
		// Only a canceled task has no attempt in the model, and its
		// speculative attempts are canceled with it.
		e.leaveCopySlot(v, attempt, c.slot, true)
		return
	}
	if t.progressing {
		m.progressChanged(v, false) // while the model still has its slot
		t.progressing = false
	}
	e.spec.ghosts[copyKey{v, r.attempt}] = m.slot(v)
	r.slot1, r.attempt = c.slot+1, attempt
	r.version++
	t.workDone = true
	e.spec.fromCopy[v] = true
	m.finish(v)
}

// cancelSpeculative carries out a Cancel of an attempt that is not the
// task's attempt in the model (a speculative one, or one a speculative
// attempt beat), reporting whether it was one.
func (e *engine) cancelSpeculative(v, attempt int32) bool {
	k := copyKey{v, attempt}
	if c, ok := e.spec.copies[k]; ok {
		e.stopCopy(k, c)
		e.copyEvent(Cancel, v, attempt, c.slot)
		e.leaveCopySlot(v, attempt, c.slot, true)
		return true
	}
	if slot, ok := e.spec.ghosts[k]; ok {
		delete(e.spec.ghosts, k)
		e.traced++
		if e.tracing() {
			ev := e.taskEvent(Cancel, v, slot)
			ev.Attempt, ev.Speculative = int(attempt), false
			e.emit(ev)
		}
		e.leaveCopySlot(v, attempt, slot, false)
		return true
	}
	return false
}

// won records the Win of a race.
func (e *engine) won(w scheduler.Task, off int32) {
	v := off + int32(w.Task)
	e.traced++
	if e.tracing() {
		ev := e.taskEvent(Win, v, e.model.slot(v))
		ev.Attempt, ev.Speculative = int(w.Attempt), e.spec.fromCopy[v]
		e.emit(ev)
	}
}

// speculationSummary fills in the run's speculation counts.
func (e *engine) speculationSummary(st scheduler.SpeculationStats) SpeculationSummary {
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
