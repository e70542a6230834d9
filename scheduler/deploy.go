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

// apply carries out the strategy's decisions: one bulk per region to
// deploy (in the strategy's topological order, so FIFO serves producers
// first), and partition releases for the runtime.
//
// A region that goes into its hybrid producers' slots (share) calls the
// strategy, whose next call reuses the storage of d: with sharing on, the
// regions to deploy go through a queue that the outermost apply drains,
// so consumers that may start once a shared region is deployed come after
// the regions already decided, in order.
func (s *Scheduler) apply(now time.Time, d *strategy.Decisions) {
	s.rd.PartitionsReleased = append(s.rd.PartitionsReleased, d.Release...) // valid until the strategy's next call
	if n := len(d.Deploy); n > 64 {                                         // a burst (Start): the lists grow once, not by doubling
		s.rd.Requests = growBurst(s.rd.Requests, &s.burstRequests, n)
		s.oneSlots = growBurst(s.oneSlots, &s.burstSlots, n)
	}
	if !s.sharing {
		for _, dep := range d.Deploy {
			s.request(now, dep.Region, dep.Attempt)
		}
		return
	}
	s.toDeploy = append(s.toDeploy, d.Deploy...)
	if s.applying {
		return // the outer apply deploys them
	}
	s.applying = true
	for i := 0; i < len(s.toDeploy); i++ {
		dep := s.toDeploy[i]
		s.request(now, dep.Region, dep.Attempt)
	}
	s.toDeploy, s.applying = s.toDeploy[:0], false
}

// request submits region r's bulk: one request per slot it needs.
//
// A region of one member (one slot; every region of an all-blocking job)
// keeps no slot list: its member is read back from the Regions when it is
// deployed or stopped. In a long queue of waiting regions a cached list
// would cost a cache miss per region when its turn comes.
func (s *Scheduler) request(now time.Time, r region.ID, attempt strategy.Attempt) {
	if s.sharing && s.share(now, r, attempt) {
		return
	}
	run := &s.regions[r]
	s.dropSlots(run)        // what an earlier attempt left
	var slots []region.Slot // in the Ready: valid until the next call
	if v, one := s.rs.OnlyMember(r); one {
		run.ref = int32(v) // for deploy (see regionRun.ref)
		// Its member list is the Regions': read-only, like the Ready.
		i := len(s.oneSlots)
		s.oneSlots = s.rs.AppendSlots(s.oneSlots, r)
		slots = s.oneSlots[i:len(s.oneSlots):len(s.oneSlots)]
	} else {
		run.several = true
		lr := s.newLive(run)
		lr.slots = s.rs.AppendSlots(nil, r)
		slots = lr.slots
	}
	reqs := slices.Grow(s.requestBuf[:0], len(slots)) // the pool copies the requests
	// By index: a Slot is large.
	for i := range slots {
		reqs = append(reqs, pool.Request{Profile: slots[i].Profile, Unbounded: slots[i].Unbounded})
	}
	s.requestBuf = reqs
	run.waiting = true
	s.rd.Requests = append(s.rd.Requests, Request{Region: r, Attempt: s.ext(r, attempt), Slots: slots})
	if err := s.pool.Submit(now, pool.Bulk{ID: bulkID(r, attempt), Requests: reqs}); err != nil {
		// Only a programming error can get here: ids are fresh, bulks non-empty.
		panic("scheduler: submit region bulk: " + err.Error())
	}
}

// drain handles the pool's events (the link carries the messages of an
// in-process admission) until the pool is quiet; without an in-process
// admission, the pool's messages for one go out in the next Ready.
//
// Every input that changed something ends here, which records its time.
func (s *Scheduler) drain(now time.Time) {
	s.last, s.started = now, true
	for {
		notes := s.link.Notes(now)
		if len(notes) == 0 {
			break
		}
		// quiet: nothing below called the pool, so it has no new event
		// and the link (which returns only once the pool and an in-process
		// admission are quiet) would return none: the usual case, a
		// region deployed, costs one call of Notes, not two.
		quiet := true
		for _, n := range notes {
			if n.Other == nil { // a Fulfilled, stored inline
				quiet = s.deploy(now, n.Fulfilled) && quiet
				continue
			}
			switch ev := n.Other.(type) {
			case pool.Failed:
				s.bulkFailed(now, ev)
				quiet = false
			case pool.Lost:
				s.slotLost(now, ev)
				quiet = false
			case slotpool.ToAdmission:
				s.rd.ToAdmission = append(s.rd.ToAdmission, ev)
			}
		}
		if quiet {
			break
		}
	}
	if sp := s.spec; sp != nil {
		sp.place(now)
	}
}

// deploy starts every subtask of a region whose bulk was fulfilled. It
// reports whether it left the pool alone (it releases the slots of a
// stale bulk, and the consumers of the region's hybrid results that may
// now start ask for slots).
func (s *Scheduler) deploy(now time.Time, ev pool.Fulfilled) bool {
	r := regionOfBulk(ev.Bulk)
	run := &s.regions[r]
	attempt := s.strategy.Attempt(r)
	if !run.waiting || bulkID(r, attempt) != ev.Bulk || s.state != JobRunning {
		s.dropStale(now, ev)
		return false
	}
	run.waiting, run.deployed = false, true
	s.stats.RegionsDeployed++
	// Every member is scheduled in this attempt (a restart makes a new
	// attempt, whose bulk is another): all of them become deploying.
	members := 1
	if run.several {
		members = s.rs.Size(r)
	}
	var d strategy.Decisions
	n, err := s.strategy.MarkDeployingInto(&d, r)
	if err != nil || n != members {
		s.log.Debug("deploying state refused", zap.Int32("region", int32(r)), zap.Int("deploying", n), zap.Error(err))
	}
	if live := run.live(); live != 0 {
		lr := &s.lives[live-1]
		lr.placed, lr.inUse = ev.Slots, int32(len(ev.Slots))
		if s.taskSlot == nil {
			s.taskSlot = make([]slotpool.SlotID, s.rs.Topology().NumExecutionVertices())
		}
		for i, sl := range lr.slots {
			slot := ev.Slots[i]
			s.slots.set(slot, slotUse{region: r, attempt: attempt, running: int32(len(sl.Members))})
			for _, v := range sl.Members {
				s.taskSlot[v] = slot
				s.emitDeploy(v, attempt, slot, r)
			}
		}
	} else { // one member in one slot: no slot list to build
		v := topology.ExecutionVertexID(run.ref) // set by request
		slot := ev.Slots[0]
		s.setSlotOfOne(r, run, slot)
		s.slots.set(slot, slotUse{region: r, attempt: attempt, running: 1})
		s.emitDeploy(v, attempt, slot, r)
	}
	quiet := true
	if len(d.Deploy) > 0 { // consumers of r's hybrid results may start: they ask the pool
		s.apply(now, &d)
		quiet = false
	}
	if !s.debug {
		return quiet
	}
	if ce := s.log.Check(zap.DebugLevel, "region deployed"); ce != nil {
		ce.Write(zap.Int32("region", int32(r)), zap.Int("slots", len(ev.Slots)))
	}
	return quiet
}

// dropStale handles the fulfillment of a bulk the scheduler no longer
// wants (its region was stopped, or the job ended, between the pool
// fulfilling it and the scheduler draining the event). withdraw has
// normally canceled the bulk already, which took its slots back, and the
// pool may have handed them to another bulk since: only slots the pool
// still counts as this bulk's are released, never by id alone.
func (s *Scheduler) dropStale(now time.Time, ev pool.Fulfilled) {
	for _, id := range ev.Slots {
		if info, ok := s.pool.Slot(id); ok && info.State == pool.SlotInUse && info.Bulk == ev.Bulk {
			_ = s.pool.Release(now, id)
		}
	}
}

// bulkFailed ends the job: a region can never get its slots.
func (s *Scheduler) bulkFailed(now time.Time, ev pool.Failed) {
	r := regionOfBulk(ev.Bulk)
	if run := &s.regions[r]; !run.waiting || bulkID(r, s.strategy.Attempt(r)) != ev.Bulk || s.state != JobRunning {
		return
	}
	s.regions[r].waiting = false
	s.fail(now, &RegionError{Region: r, Members: s.rs.MemberNames(r, 8), Slots: s.rs.SlotCount(r), Err: ev.Err})
}

// fail marks the job failed and stops everything: running tasks are
// canceled, waiting bulks withdrawn, slots returned.
func (s *Scheduler) fail(now time.Time, err error) {
	s.setState(JobFailed, err)
	all := make([]region.ID, len(s.regions))
	for r := range all {
		all[r] = region.ID(r)
	}
	s.stopRegions(now, all)
	s.log.Info("job failed", zap.Error(err))
}
