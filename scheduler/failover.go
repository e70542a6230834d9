package scheduler

import (
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// SlotLost reports that a slot vanished (its machine is gone): the tasks
// in it fail. Every task still deploying or running in the slot is
// canceled (in Ready.Cancel: the runtime forgets it; a late report of it
// is stale), the first one counts as the failed task, and its region
// fails over like on TaskFailed; the blocking partitions of the tasks that
// had finished in the slot while others ran on in it are lost too. A slot
// whose tasks all ended went back to the pool: the scheduler no longer
// knows which partitions were written there, so a runtime that loses a
// machine reports those partitions in TaskFailed's lost list when a
// consumer fails to read them. Slots that are free or held by a waiting
// region just leave the pool.
//
// Errors: a *TimeError if now is before an earlier call's time; an
// unknown slot id returns the pool's *slotpool.SlotError (errors.Is
// slotpool.ErrUnknownSlot) in an *OpError. Nothing changes then.
func (s *Scheduler) SlotLost(now time.Time, slot SlotID) error {
	if err := s.checkTime(now); err != nil {
		return err
	}
	if err := s.pool.Lose(now, slot); err != nil {
		return s.wrap("slot-lost", -1, err)
	}
	s.drain(now)
	return nil
}

// slotLost handles the pool's Lost event (Pool.Lose, or an admission's
// Revoke): the tasks of the region that had the slot fail over, with the
// partitions written in it lost; so do those of every guest region that
// ran in it (see share), each as a failure of its own unless a failover
// before restarted it.
func (s *Scheduler) slotLost(now time.Time, ev pool.Lost) {
	use, ok := s.slots.get(ev.Slot)
	if !ok {
		if sp := s.spec; sp != nil {
			sp.slotLost(now, ev)
		}
		return
	}
	s.slots.del(ev.Slot)
	guests := slices.Clone(s.guestsOf[ev.Slot])
	delete(s.guestsOf, ev.Slot)
	if s.state != JobRunning {
		return
	}
	var failed topology.ExecutionVertexID = -1
	var lost []topology.ResultPartitionID
	if !use.ownerOut && use.attempt == s.strategy.Attempt(use.region) {
		slots, placed := s.liveSlots(use.region, &s.regions[use.region])
		s.slotGone(use.region) // the pool already took the slot away
		for i, sl := range slots {
			if placed[i] == ev.Slot {
				failed, lost = s.failInSlot(sl.Members, use.attempt, failed, lost)
			}
		}
	}
	// Every task in the slot is stopped before any failover: a failover
	// that restarts a guest finds its tasks there gone already.
	type guestFailure struct {
		v       topology.ExecutionVertexID
		attempt strategy.Attempt
	}
	var failures []guestFailure
	for _, g := range guests {
		run := &s.regions[g]
		if !run.guest || !run.deployed {
			continue
		}
		in, ok := s.binIn(g, ev.Slot)
		if !ok {
			continue
		}
		a := s.strategy.Attempt(g)
		f, _ := s.failInSlot(in.Members, a, -1, nil)
		s.guestSlotGone(g, ev.Slot)
		if f >= 0 {
			failures = append(failures, guestFailure{f, a})
		}
	}
	if failed >= 0 {
		s.failover(now, failed, lost)
		lost = nil
	}
	for _, f := range failures {
		if s.strategy.Attempt(s.rs.RegionOf(f.v)) != f.attempt || s.state != JobRunning {
			continue // restarted by a failover above
		}
		s.failover(now, f.v, lost)
		lost = nil
	}
}

// failInSlot cancels the deploying and running members (of attempt) of a
// lost slot, the first one found (if failed is still -1) as the failed
// task, and adds the blocking partitions of those that had finished to
// lost.
func (s *Scheduler) failInSlot(members []topology.ExecutionVertexID, attempt strategy.Attempt,
	failed topology.ExecutionVertexID, lost []topology.ResultPartitionID) (topology.ExecutionVertexID, []topology.ResultPartitionID) {
	for _, v := range members {
		st, err := s.strategy.Vertex(v)
		if err != nil || st.Attempt != attempt || s.leftSlot(v, attempt) {
			continue
		}
		switch st.State {
		case strategy.TaskDeploying, strategy.TaskRunning:
			s.emitCancel(v, attempt)
			to := strategy.TaskCanceled
			if failed < 0 {
				failed, to = v, strategy.TaskFailed
			}
			if _, err := s.strategy.UpdateState(v, attempt, to); err != nil {
				s.log.Debug("state of a task in a lost slot refused", zap.Error(err))
			}
		case strategy.TaskFinished:
			ps, _ := s.strategy.BlockingPartitionsOf(v)
			lost = append(lost, ps...)
		}
	}
	return failed, lost
}

// leftSlot reports whether task v's run in region attempt attempt ended
// while speculative attempts of it ran on (it failed and was dropped, or
// a speculative attempt won): its slot, kept by guests, no longer holds
// it, and its results, if any, are the winner's, elsewhere.
func (s *Scheduler) leftSlot(v topology.ExecutionVertexID, attempt strategy.Attempt) bool {
	return s.spec != nil && s.spec.firstLost[v] == attempt+1
}

// guestSlotGone counts guest region g out of a slot the pool took away.
func (s *Scheduler) guestSlotGone(g region.ID, slot slotpool.SlotID) {
	run := &s.regions[g]
	if live := run.live(); live != 0 {
		lr := &s.lives[live-1]
		if i := slices.Index(lr.placed, slot); i >= 0 && lr.left[i] > 0 {
			lr.left[i] = 0
			if lr.inUse--; lr.inUse > 0 {
				return
			}
		} else {
			return
		}
	}
	run.deployed, run.guest = false, false
	s.dropSlots(run)
}

// failover restarts the regions the strategy chooses for a failure of v.
func (s *Scheduler) failover(now time.Time, v topology.ExecutionVertexID, lost []topology.ResultPartitionID) {
	regions, err := s.strategy.RegionsToRestart(v, lost...)
	if err != nil {
		s.log.Debug("regions to restart refused", zap.Error(err))
		return
	}
	s.stats.Failovers++
	s.stats.RegionRestarts += len(regions)
	s.rd.Restarted = append(s.rd.Restarted, Restart{Failed: v, Regions: regions})
	s.stopRegions(now, regions)
	if sp := s.spec; sp != nil {
		sp.restarting(regions)
	}
	d, err := s.strategy.Restart(regions)
	if err != nil {
		s.log.Debug("restart refused", zap.Error(err))
		return
	}
	s.apply(now, &d)
}

// stopRegions stops the given regions: first every waiting bulk among
// them is withdrawn, then their tasks are canceled and their slots
// returned. In that order a returned slot goes to a region that still
// wants it, never to the bulk of a region being stopped (which would be
// fulfilled and withdrawn again within the same call, churning slots
// through the pool; see dropStale).
func (s *Scheduler) stopRegions(now time.Time, regions []region.ID) {
	if sp := s.spec; sp != nil {
		sp.stop(now, regions)
	}
	for _, r := range regions {
		s.withdraw(now, r)
	}
	for _, r := range regions {
		s.stopRegion(now, r)
	}
}

// withdraw cancels region r's waiting bulk, if any. A bulk the pool has
// fulfilled but whose event the scheduler has not drained yet is canceled
// too (the pool takes its slots back; dropStale ignores the event).
func (s *Scheduler) withdraw(now time.Time, r region.ID) {
	run := &s.regions[r]
	if !run.waiting {
		return
	}
	_ = s.pool.Cancel(now, bulkID(r, s.strategy.Attempt(r)))
	run.waiting = false
	if !run.deployed {
		s.dropSlots(run)
	}
}

// stopRegion cancels region r's running tasks and returns its slots (its
// waiting bulk was withdrawn by stopRegions). A region that waits for its
// inputs or finished has nothing to stop. A slot that guests (see share)
// still run in stays until they end; a guest leaves the slots it shares.
func (s *Scheduler) stopRegion(now time.Time, r region.ID) {
	run := &s.regions[r]
	attempt := s.strategy.Attempt(r)
	guest := run.guest && run.deployed
	slots, placed := s.liveSlots(r, run) // kept while returnSlot drops them
	var left []int32
	if live := run.live(); guest && live != 0 {
		left = s.lives[live-1].left
	}
	for i, sl := range slots {
		if i >= len(placed) {
			break
		}
		slot := placed[i]
		use, ok := s.slots.get(slot)
		switch {
		case !ok:
			continue
		case guest:
			if left != nil && left[i] == 0 {
				continue // its tasks there ended: it left the slot
			}
		case use.region != r || use.attempt != attempt || use.ownerOut:
			continue
		}
		for _, v := range sl.Members {
			st, err := s.strategy.Vertex(v)
			if err != nil || st.Attempt != attempt || s.leftSlot(v, attempt) {
				continue
			}
			if st.State == strategy.TaskDeploying || st.State == strategy.TaskRunning {
				s.emitCancel(v, attempt)
				_, _ = s.strategy.UpdateState(v, attempt, strategy.TaskCanceled)
			}
		}
		switch {
		case guest:
			s.leaveShared(now, r, slot)
		case use.guests > 0: // guests run on in it: they return it
			use.running, use.ownerOut = 0, true
			s.slots.set(slot, use)
			s.slotGone(r)
		default:
			s.returnSlot(now, use, slot)
		}
	}
	if guest {
		run.deployed, run.guest = false, false
	}
	s.dropSlots(run)
}
