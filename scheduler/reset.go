package scheduler

import (
	"github.com/regionsched/regionsched/internal/reuse"
	"github.com/regionsched/regionsched/region"
)

// Reset makes s the scheduler New(rs, cfg) returns, reusing the storage
// of s, its strategy and its pool: a caller that runs one job after
// another (the simulator, run after run) allocates their tables once,
// not once per job, and gives the garbage collector less to do. With
// Config.ReuseReady, the Ready values s handed out share its storage and
// must not be read after Reset; without it, they are the caller's, as
// always. Reset takes time in proportion to the storage s keeps, which
// has room for the largest job s ran: for a job much smaller than that,
// New is cheaper, and frees the large tables.
func (s *Scheduler) Reset(rs *region.Regions, cfg Config) {
	old := *s
	s.init(&old, rs, cfg)
	s.rd = &s.bufs[0]
}

// keepSlotLists makes every slot list of old's regions of several members
// free for s, cleared.
func (s *Scheduler) keepSlotLists(old *Scheduler) {
	free := freedLists(old.slotsFree, old.slotsReleased, old.slotsOlder)
	for _, lr := range old.lives {
		if cap(lr.slots) > 0 {
			free = append(free, reuse.Emptied(lr.slots))
		}
	}
	s.slotsFree = free
	s.slotsReleased, s.slotsOlder = reuse.Emptied(old.slotsReleased), reuse.Emptied(old.slotsOlder)
}

// reset returns the arena with every chunk free and cleared, for a
// scheduler reset: the lists handed out are invalid after.
func (a *slotArena) reset() slotArena {
	free := a.free
	if a.cur != nil {
		free = append(free, a.cur)
	}
	free = freedLists(free, a.filled, a.handed)
	return slotArena{free: free, filled: reuse.Emptied(a.filled), handed: reuse.Emptied(a.handed)}
}

// freedLists empties (clears) every list of free and appends those of
// lists, emptied too: the storage of slot lists for the next job.
func freedLists(free [][]region.Slot, lists ...[][]region.Slot) [][]region.Slot {
	for i, l := range free {
		free[i] = reuse.Emptied(l)
	}
	for _, ls := range lists {
		for _, l := range ls {
			free = append(free, reuse.Emptied(l))
		}
	}
	return free
}
