package scheduler

import (
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/strategy"
	"github.com/regionsched/regionsched/topology"
)

// TaskRunning reports that a deployed task runs. A report of an attempt
// that was replaced by a restart is ignored.
func (s *Scheduler) TaskRunning(now time.Time, v topology.ExecutionVertexID, attempt strategy.Attempt) error {
	return s.report(now, v, attempt, strategy.Running)
}

// TaskFinished reports that a task finished: its slot is returned once
// every task sharing it finished, and regions whose blocking inputs are
// now complete ask for slots. A stale report is ignored.
func (s *Scheduler) TaskFinished(now time.Time, v topology.ExecutionVertexID, attempt strategy.Attempt) error {
	return s.report(now, v, attempt, strategy.Finished)
}

// TaskFailed reports that a task failed. Its region, the producers of
// unavailable inputs (lost: partitions the runtime knows are gone, e.g.
// on a lost machine) and every consumer region downstream are restarted:
// their tasks are canceled, their slots returned, and they are scheduled
// again when their inputs are complete. A stale report is ignored. An
// unknown lost partition returns a *strategy.UnknownPartitionError and
// changes nothing.
func (s *Scheduler) TaskFailed(now time.Time, v topology.ExecutionVertexID, attempt strategy.Attempt, lost ...topology.ResultPartitionID) error {
	if err := s.checkReport(v, attempt, strategy.Failed); err != nil {
		return ignoreStale(err)
	}
	n := topology.ResultPartitionID(s.rs.Topology().NumPartitions())
	for _, p := range lost {
		if p < 0 || p >= n {
			return &strategy.UnknownPartitionError{Partition: p}
		}
	}
	if _, err := s.strategy.UpdateState(v, attempt, strategy.Failed); err != nil {
		return ignoreStale(err)
	}
	s.failover(now, v, lost)
	s.drain(now)
	return nil
}

func (s *Scheduler) report(now time.Time, v topology.ExecutionVertexID, attempt strategy.Attempt, to strategy.ExecutionState) error {
	if err := s.checkReport(v, attempt, to); err != nil {
		return ignoreStale(err)
	}
	d, err := s.strategy.UpdateState(v, attempt, to)
	if err != nil {
		return ignoreStale(err)
	}
	if to == strategy.Finished {
		s.taskEnded(now, v)
		if s.strategy.Finished() {
			s.state = Finished
		}
	}
	s.apply(now, d)
	s.drain(now)
	return nil
}

// checkReport refuses what the strategy alone would accept but the
// scheduler knows is wrong: any report while the job is not running, and
// a report of a task of the current attempt that was never deployed
// (Scheduled: its region still waits for slots, so no slot of it may be
// counted out, and no partition of it can exist).
func (s *Scheduler) checkReport(v topology.ExecutionVertexID, attempt strategy.Attempt, to strategy.ExecutionState) error {
	if s.state != Running {
		return ErrNotRunning
	}
	st, err := s.strategy.Vertex(v)
	if err != nil {
		return err
	}
	if st.State == strategy.Scheduled && attempt == st.Attempt {
		return &strategy.TransitionError{Vertex: v, Name: s.rs.Topology().VertexName(v), From: st.State, To: to}
	}
	return nil
}

// ignoreStale drops reports of replaced attempts, which are normal after a
// failover; other errors are the caller's.
func ignoreStale(err error) error {
	if errors.Is(err, strategy.ErrStaleAttempt) {
		return nil
	}
	return err
}

// taskEnded counts a task out of its slot and returns the slot when it
// was the last one.
func (s *Scheduler) taskEnded(now time.Time, v topology.ExecutionVertexID) {
	slot := s.taskSlot[v]
	use, ok := s.slots[slot]
	if !ok || use.region != s.rs.RegionOf(v) || use.attempt != s.regions[use.region].attempt {
		return // not deployed by us in this attempt: never count out another region's slot
	}
	if use.running--; use.running > 0 {
		s.slots[slot] = use
		return
	}
	delete(s.slots, slot)
	s.returnSlot(now, use.region, slot)
}

// returnSlot gives a slot of region r's deployed attempt back to the pool.
func (s *Scheduler) returnSlot(now time.Time, r region.ID, slot slotpool.SlotID) {
	if err := s.pool.Release(now, slot); err != nil {
		// The slot left the pool in this same call (a Lost event not
		// handled yet): nothing to release or report.
		s.log.Debug("slot release refused", zap.Error(err))
	} else if s.obs != nil {
		s.obs.SlotReleased(slot, r, s.regions[r].attempt)
	}
	s.slotGone(r)
}

// slotGone counts a placed slot of region r out; after the last one the
// pool may forget the region's bulk.
func (s *Scheduler) slotGone(r region.ID) {
	run := &s.regions[r]
	if run.inUse--; run.inUse == 0 && run.deployed != 0 {
		_ = s.pool.Forget(run.deployed)
		run.deployed = 0
		run.slots, run.placed = nil, nil
	}
}
