package scheduler

import (
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/strategy"
	"github.com/regionsched/regionsched/topology"
)

// SlotLost reports that a slot vanished (its machine is gone): the tasks
// in it fail, and so do the blocking partitions its finished tasks wrote.
// Slots that are free or held by a waiting region just leave the pool.
func (s *Scheduler) SlotLost(now time.Time, slot slotpool.SlotID) error {
	if err := s.pool.Lose(now, slot); err != nil {
		return err
	}
	s.drain(now)
	return nil
}

// slotLost handles the pool's Lost event: the tasks of the region that
// had the slot fail over, with the partitions written in it lost.
func (s *Scheduler) slotLost(now time.Time, ev slotpool.Lost) {
	use, ok := s.slots[ev.Slot]
	if !ok || s.state != Running {
		return
	}
	run := &s.regions[use.region]
	if use.attempt != run.attempt {
		return
	}
	delete(s.slots, ev.Slot)
	slots, placed := run.slots, run.placed
	s.slotGone(use.region) // the pool already took the slot away
	var failed topology.ExecutionVertexID = -1
	var lost []topology.ResultPartitionID
	for i, sl := range slots {
		if placed[i] != ev.Slot {
			continue
		}
		for _, v := range sl.Members {
			st, err := s.strategy.Vertex(v)
			if err != nil || st.Attempt != run.attempt {
				continue
			}
			switch st.State {
			case strategy.Deploying, strategy.Running, strategy.Scheduled:
				if failed < 0 {
					failed = v
				}
			case strategy.Finished:
				ps, _ := s.strategy.BlockingPartitionsOf(v)
				lost = append(lost, ps...)
			}
		}
	}
	if failed < 0 {
		return // every task in the slot had finished; nothing runs there
	}
	s.dep.Cancel(failed, run.attempt)
	if _, err := s.strategy.UpdateState(failed, run.attempt, strategy.Failed); err != nil {
		s.log.Debug("failed state refused", zap.Error(err))
		return
	}
	s.failover(now, failed, lost)
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
	if s.obs != nil {
		s.obs.Restarting(v, regions)
	}
	for _, r := range regions {
		s.stopRegion(now, r)
	}
	d, err := s.strategy.Restart(regions)
	if err != nil {
		s.log.Debug("restart refused", zap.Error(err))
		return
	}
	s.apply(now, d)
}

// stopRegion withdraws region r's waiting bulk, cancels its running tasks
// and returns its slots.
func (s *Scheduler) stopRegion(now time.Time, r region.ID) {
	run := &s.regions[r]
	if run.bulk != 0 {
		_ = s.pool.Cancel(now, run.bulk)
		_ = s.pool.Forget(run.bulk)
		run.bulk = 0
	}
	slots, placed := run.slots, run.placed
	for i, sl := range slots {
		if i >= len(placed) {
			break
		}
		slot := placed[i]
		use, ok := s.slots[slot]
		if !ok || use.region != r || use.attempt != run.attempt {
			continue
		}
		for _, v := range sl.Members {
			st, err := s.strategy.Vertex(v)
			if err != nil || st.Attempt != run.attempt {
				continue
			}
			if st.State == strategy.Deploying || st.State == strategy.Running {
				s.dep.Cancel(v, run.attempt)
				_, _ = s.strategy.UpdateState(v, run.attempt, strategy.Canceled)
			}
		}
		delete(s.slots, slot)
		s.returnSlot(now, r, slot)
	}
	run.slots, run.placed = nil, nil
}
