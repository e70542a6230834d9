package scheduler

import (
	"slices"
	"time"

	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// shareProbes bounds the producers of one hybrid input that share looks
// at for a slot: it starts at the producer of the consumer's own subtask
// index (Flink's local-input preference) and tries the next ones, so a
// consumer of an all-to-all edge costs O(1), not O(producers).
const shareProbes = 4

// share deploys region r's attempt into slots its running hybrid
// producers hold, when each slot r needs finds one: a slot of the same
// slot sharing group, holding no subtask of the same job vertex, whose
// size fits what its tasks need together; a slot of tasks that never
// finish (region.Slot.Unbounded) is never shared. It reports whether it did;
// when it did not, nothing changed and r asks the pool as usual. All or
// nothing, like a bulk: a region never holds a shared slot while it waits
// for others, so sharing adds no wait to any region and no deadlock.
//
// The guests' tasks keep the slot: it goes back once the owner's and every
// guest's tasks in it ended. A guest always reads its owner's results,
// directly or through other guests, so a failover that restarts the owner
// restarts the guests too (see strategy.RegionsToRestart).
func (s *Scheduler) share(now time.Time, r region.ID, attempt strategy.Attempt) bool {
	_, one := s.rs.OnlyMember(r)
	var bins []region.Slot
	if one {
		s.shareBins = s.rs.AppendSlots(s.shareBins[:0], r)
		bins = s.shareBins
	} else {
		bins = s.rs.AppendSlots(nil, r) // kept by the live entry if shared
	}
	hosts := s.shareHosts[:0]
	for i := range bins {
		if bins[i].Unbounded {
			// A task that never finishes keeps a slot of its own, as
			// region.Check counts it: its slot is held for good either way.
			s.shareHosts = hosts
			return false
		}
		h, ok := s.hostFor(r, &bins[i], hosts)
		if !ok {
			s.shareHosts = hosts
			return false
		}
		hosts = append(hosts, h)
	}
	s.shareHosts = hosts

	run := &s.regions[r]
	s.dropSlots(run) // what an earlier attempt left
	run.deployed, run.guest = true, true
	if !one {
		run.several = true
		lr := s.newLive(run)
		lr.slots, lr.placed, lr.inUse = bins, slices.Clone(hosts), int32(len(hosts))
		lr.left = make([]int32, len(hosts))
		if s.taskSlot == nil {
			s.taskSlot = make([]slotpool.SlotID, s.rs.Topology().NumExecutionVertices())
		}
	} else {
		s.setSlotOfOne(r, run, hosts[0])
	}
	s.stats.RegionsDeployed++
	s.stats.RegionsShared++
	var d strategy.Decisions
	_, _ = s.strategy.MarkDeployingInto(&d, r) // r is scheduled in this attempt: it cannot refuse
	if s.guestsOf == nil {
		s.guestsOf = map[slotpool.SlotID][]region.ID{}
	}
	for i, h := range hosts {
		use, _ := s.slots.get(h)
		use.guests++
		s.slots.set(h, use)
		s.guestsOf[h] = append(s.guestsOf[h], r)
		for _, v := range bins[i].Members {
			if !one {
				s.taskSlot[v] = h
				s.lives[run.live()-1].left[i]++
			}
			s.emitDeploy(v, attempt, h, r)
			s.rd.Deploy[len(s.rd.Deploy)-1].Shared = true
		}
	}
	if len(d.Deploy) > 0 { // consumers of r's hybrid results may start too
		s.apply(now, &d)
	}
	return true
}

// hostFor finds a slot for bin, a slot of region r, among those of the
// running producers of its members' hybrid inputs, other than taken.
func (s *Scheduler) hostFor(r region.ID, bin *region.Slot, taken []slotpool.SlotID) (slotpool.SlotID, bool) {
	topo := s.rs.Topology()
	job := topo.Job()
	for _, v := range bin.Members {
		jv, sub := topo.JobVertexOf(v), topo.SubtaskIndex(v)
		for _, e := range job.InEdges(jv) {
			if !topo.PartitionType(e).IsHybrid() {
				continue
			}
			producers := topo.Group(topo.ConsumedGroup(e, sub)).Producers
			n := producers.Len()
			for k := range min(n, shareProbes) {
				p := topology.ExecutionVertexID(producers.Start + int32((sub+k)%n))
				if slot, ok := s.hostSlot(r, p, bin, taken); ok {
					return slot, true
				}
			}
		}
	}
	return 0, false
}

// hostSlot returns producer p's slot if bin may go into it.
func (s *Scheduler) hostSlot(r region.ID, p topology.ExecutionVertexID, bin *region.Slot, taken []slotpool.SlotID) (slotpool.SlotID, bool) {
	rp := s.rs.RegionOf(p)
	if rp == r || !s.regions[rp].deployed {
		return 0, false
	}
	if st, err := s.strategy.Vertex(p); err != nil || (st.State != strategy.TaskDeploying && st.State != strategy.TaskRunning) {
		return 0, false // co-scheduled: the producer runs
	}
	topo := s.rs.Topology()
	if topo.Job().Vertex(topo.JobVertexOf(p)).SlotSharingGroup != bin.SlotSharingGroup {
		return 0, false
	}
	slot := s.slotOf(p, rp)
	if slices.Contains(taken, slot) {
		return 0, false
	}
	use, ok := s.slots.get(slot)
	if !ok {
		return 0, false
	}
	info, ok := s.pool.Slot(slot)
	if !ok || info.State != pool.SlotInUse {
		return 0, false
	}
	// One subtask of a job vertex per slot (as in Flink), and room for
	// what every bin in the slot needs together.
	total := bin.Profile
	fits := func(in region.Slot) bool {
		for _, m := range in.Members {
			for _, b := range bin.Members {
				if topo.JobVertexOf(m) == topo.JobVertexOf(b) {
					return false
				}
			}
		}
		total = total.Add(in.Profile)
		return true
	}
	if !use.ownerOut {
		if in, ok := s.binIn(use.region, slot); ok && !fits(in) {
			return 0, false
		}
	}
	for _, g := range s.guestsOf[slot] {
		if in, ok := s.binIn(g, slot); ok && !fits(in) {
			return 0, false
		}
	}
	return slot, total.FitsIn(info.Slot.Profile)
}

// binIn returns the slot of deployed region r (owner or guest) that was
// placed in slot: its members and profile.
func (s *Scheduler) binIn(r region.ID, slot slotpool.SlotID) (region.Slot, bool) {
	run := &s.regions[r]
	if !run.deployed {
		return region.Slot{}, false
	}
	if live := run.live(); live != 0 {
		lr := &s.lives[live-1]
		if i := slices.Index(lr.placed, slot); i >= 0 {
			return lr.slots[i], true
		}
		return region.Slot{}, false
	}
	if s.slotOfOne(r, run) != slot {
		return region.Slot{}, false
	}
	var one [1]region.Slot
	return s.rs.AppendSlots(one[:0], r)[0], true
}

// guestTaskEnded counts task v of guest region r out of its slot.
func (s *Scheduler) guestTaskEnded(now time.Time, r region.ID, slot slotpool.SlotID) {
	run := &s.regions[r]
	if live := run.live(); live != 0 {
		lr := &s.lives[live-1]
		i := slices.Index(lr.placed, slot)
		if i < 0 || lr.left[i] == 0 {
			return
		}
		if lr.left[i]--; lr.left[i] > 0 {
			return
		}
		s.leaveShared(now, r, slot)
		if lr.inUse--; lr.inUse > 0 {
			return
		}
	} else {
		s.leaveShared(now, r, slot)
	}
	run.deployed, run.guest = false, false
	s.dropSlots(run)
}

// leaveShared counts guest region r out of slot; the slot goes back when
// nobody is left in it.
func (s *Scheduler) leaveShared(now time.Time, r region.ID, slot slotpool.SlotID) {
	gs := s.guestsOf[slot]
	if i := slices.Index(gs, r); i >= 0 {
		gs = slices.Delete(gs, i, i+1)
	}
	if len(gs) == 0 {
		delete(s.guestsOf, slot)
	} else {
		s.guestsOf[slot] = gs
	}
	use := s.slots.ref(slot)
	if use == nil {
		return // lost
	}
	use.guests--
	s.putSlot(now, slot, use)
}
