package scheduler

import (
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// TaskRunning reports that a deployed task runs. A report of an attempt
// that a restart replaced is ignored.
//
// Errors: ErrNotRunning if the job is not running; a *TimeError if now is
// before an earlier call's time; an error in an *OpError for a task
// that does not exist (ErrUnknownVertex), an attempt that has not
// begun (ErrUnknownAttempt) or a report its state does not allow
// (ErrInvalidTransition, e.g. a task never deployed).
// Nothing changes then.
func (s *Scheduler) TaskRunning(now time.Time, v TaskID, attempt Attempt) error {
	return s.report(now, "task-running", v, attempt, strategy.TaskRunning)
}

// TaskFinished reports that a task finished: its slot is returned once
// every task sharing it finished, and regions whose inputs are now
// consumable ask for slots. A report of a replaced attempt is ignored.
//
// Errors: as TaskRunning, and a *strategy.EarlyFinishError in an *OpError
// (errors.Is strategy.ErrEarlyFinish) for a task that reads a hybrid
// result whose producer has not finished: nothing changes, the task still
// runs; report the producer's finish first, then this one again.
func (s *Scheduler) TaskFinished(now time.Time, v TaskID, attempt Attempt) error {
	return s.report(now, "task-finished", v, attempt, strategy.TaskFinished)
}

// TaskFailed reports that a task failed. Its region, the producers of
// unavailable inputs (lost: partitions the runtime knows are gone, e.g.
// on a lost machine) and every consumer region downstream restart: their
// tasks are canceled, their slots returned, and they ask for slots again
// when their inputs are complete (Ready.Restarted, Ready.Cancel). A
// report of a replaced attempt is ignored.
//
// Errors: as TaskRunning, and an unknown lost partition returns a
// *UnknownPartitionError in an *OpError. Nothing changes then.
func (s *Scheduler) TaskFailed(now time.Time, v TaskID, attempt Attempt, lost ...PartitionID) error {
	const op = "task-failed"
	a := strategy.Attempt(attempt) // the strategy's: the same number without speculation
	if sp := s.spec; sp != nil && s.state == JobRunning && s.checkTime(now) == nil {
		var handled bool
		var err error
		if a, handled, err = sp.report(now, op, v, attempt, strategy.TaskFailed, lost); handled {
			return err
		}
	}
	if err := s.checkReport(now, op, v, a, strategy.TaskFailed); err != nil {
		return err
	}
	n := PartitionID(s.rs.Topology().NumPartitions())
	for _, p := range lost {
		if p < 0 || p >= n {
			return s.wrap(op, v, &strategy.UnknownPartitionError{Partition: p})
		}
	}
	if _, err := s.strategy.UpdateState(v, a, strategy.TaskFailed); err != nil {
		return s.ignoreStale(op, v, err)
	}
	s.failover(now, v, lost)
	s.drain(now)
	return nil
}

// report handles a running or finished report. It checks what
// checkReport does, the never-deployed task included: the strategy
// refuses that one itself (strategy.WithDeployedReports), with the same
// error and before it changes anything, so a report costs one look at the
// task's state, not two. With speculation, a report of a speculative
// attempt, or of a task racing one, is dealt with by the speculator; the
// others go on to the strategy, a finish recorded for the detector. A
// report the strategy took is carried out: a finished task leaves its
// slot, the strategy's decisions are applied, and the job finishes with
// its last task.
func (s *Scheduler) report(now time.Time, op string, v TaskID, attempt Attempt, to strategy.ExecutionState) error {
	if s.state != JobRunning {
		return ErrNotRunning
	}
	if err := s.checkTime(now); err != nil {
		return err
	}
	a := strategy.Attempt(attempt)
	if sp := s.spec; sp != nil {
		var handled bool
		var err error
		if a, handled, err = sp.report(now, op, v, attempt, to, nil); handled {
			return err
		}
	}
	var d strategy.Decisions
	if err := s.strategy.UpdateStateInto(&d, v, a, to); err != nil {
		return s.ignoreStale(op, v, err) // a report of a replaced attempt is ignored
	}
	if to == strategy.TaskFinished {
		if sp := s.spec; sp != nil {
			sp.finished(now, v)
		}
		s.taskEnded(now, v)
	}
	s.apply(now, &d)
	s.drain(now)
	if to == strategy.TaskFinished && s.state == JobRunning && s.strategy.Finished() {
		s.setState(JobFinished, nil)
	}
	return nil
}

// checkReport refuses what the strategy alone would accept but the
// scheduler knows is wrong: any report while the job is not running, time
// going back, and a report of a task of the current attempt that was
// never deployed (Scheduled: its region still waits for slots, so no slot
// of it may be counted out, and no partition of it can exist).
func (s *Scheduler) checkReport(now time.Time, op string, v TaskID, attempt strategy.Attempt, to strategy.ExecutionState) error {
	if s.state != JobRunning {
		return ErrNotRunning
	}
	if err := s.checkTime(now); err != nil {
		return err
	}
	st, err := s.strategy.Vertex(v)
	if err != nil {
		return s.wrap(op, v, err)
	}
	if st.State == strategy.TaskScheduled && attempt == st.Attempt {
		return s.wrap(op, v, &strategy.TransitionError{Vertex: v, Name: s.rs.Topology().VertexName(v), From: st.State, To: to})
	}
	return nil
}

// ignoreStale drops reports of replaced attempts, which are normal after a
// failover; other errors are the caller's.
func (s *Scheduler) ignoreStale(op string, v TaskID, err error) error {
	if errors.Is(err, strategy.ErrStaleAttempt) {
		return nil
	}
	return s.wrap(op, v, err)
}

// taskEnded counts a task out of its slot and returns the slot when it
// was the last one there (of its region, and of the guests sharing it).
func (s *Scheduler) taskEnded(now time.Time, v topology.ExecutionVertexID) {
	r := s.rs.RegionOf(v)
	slot := s.slotOf(v, r)
	use := s.slots.ref(slot) // changed in place: the slot's counts are not copied out and back
	if use == nil {
		return
	}
	if run := &s.regions[r]; run.guest {
		if run.deployed {
			s.guestTaskEnded(now, r, slot)
		}
		return
	}
	if use.region != r || use.attempt != s.strategy.Attempt(use.region) || use.ownerOut || use.running == 0 {
		return // not deployed by us in this attempt: never count out another region's slot
	}
	use.running--
	s.putSlot(now, slot, use)
}

// putSlot keeps slot, whose counts use (its entry in the table) were just
// changed, or, once neither its owner nor a guest has a task left in it,
// gives it back to the pool. It is small enough to be inlined.
func (s *Scheduler) putSlot(now time.Time, slot slotpool.SlotID, use *slotUse) {
	if use.running == 0 && use.guests == 0 {
		s.returnSlot(now, *use, slot)
	}
}

// returnSlot takes a slot out of the table and gives it back to the pool:
// one its owner's attempt placed (use, its entry, copied), which counts
// it out unless it stopped already (ownerOut).
func (s *Scheduler) returnSlot(now time.Time, use slotUse, slot slotpool.SlotID) {
	s.slots.del(slot)
	if err := s.pool.Release(now, slot); err != nil {
		// The slot left the pool in this same call (a Lost event not
		// handled yet): nothing to release or report.
		if ce := s.log.Check(zap.DebugLevel, "slot release refused"); ce != nil {
			ce.Write(zap.Error(err))
		}
	} else {
		s.rd.Released = append(s.rd.Released, Release{Slot: slot, Region: use.region, Attempt: s.ext(use.region, use.attempt)})
	}
	if !use.ownerOut {
		s.slotGone(use.region)
	}
}

// slotGone counts a placed slot of region r out; after the last one (a
// region of one member has one) the region holds no slot (the pool
// retired its bulk).
func (s *Scheduler) slotGone(r region.ID) {
	run := &s.regions[r]
	if live := run.live(); live != 0 {
		if lr := &s.lives[live-1]; lr.inUse > 0 {
			if lr.inUse--; lr.inUse > 0 {
				return
			}
		}
	}
	if run.deployed {
		run.deployed = false
		s.dropSlots(run)
	}
}

// newLive gives run an entry in s.lives for a new attempt and returns it.
func (s *Scheduler) newLive(run *regionRun) *liveRun {
	if n := len(s.freeLives); n > 0 {
		run.ref = s.freeLives[n-1] + 1
		s.freeLives = s.freeLives[:n-1]
	} else {
		s.lives = append(s.lives, liveRun{})
		run.ref = int32(len(s.lives))
	}
	return &s.lives[run.ref-1]
}

// liveSlots returns the slots of region r's attempt while it is
// scheduled or deployed, and once deployed the slot of each (nil, nil if
// neither). For a region of one member, which has no live entry (see
// request), they are built in scratch storage of the scheduler (the slot
// with its Members only): valid until the next call.
func (s *Scheduler) liveSlots(r region.ID, run *regionRun) ([]region.Slot, []slotpool.SlotID) {
	if live := run.live(); live != 0 {
		lr := &s.lives[live-1]
		return lr.slots, lr.placed
	}
	if !run.waiting && !run.deployed {
		return nil, nil
	}
	s.oneSlot[0] = region.Slot{Members: s.rs.Members(r)}
	if !run.deployed {
		return s.oneSlot[:], nil
	}
	s.onePlaced[0] = s.slotOfOne(r, run)
	return s.oneSlot[:], s.onePlaced[:]
}

// dropSlots forgets the slots of a region's attempt.
func (s *Scheduler) dropSlots(run *regionRun) {
	live := run.live()
	if live == 0 {
		return
	}
	s.lives[live-1] = liveRun{}
	s.freeLives = append(s.freeLives, live-1)
	run.ref = 0
}
