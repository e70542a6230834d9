package scheduler

import (
	"github.com/regionsched/regionsched/internal/reuse"
	"github.com/regionsched/regionsched/region"
)

// Reset makes s the scheduler New(rs, cfg) returns, reusing the storage
// of s, its strategy and its pool: a caller that runs one job after
// another (the simulator, run after run) allocates their tables once,
// not once per job, and gives the garbage collector less to do. Every
// value s handed out before (a Ready, its slot lists) must not be used
// after Reset; the slot ids of the pool's Fulfilled events stay valid.
func (s *Scheduler) Reset(rs *region.Regions, cfg Config) {
	old := *s
	s.init(&old, rs, cfg)
	s.rd = &s.bufs[0]
}

// keepSlotLists makes every slot list of old's regions of several members
// free for s, cleared.
func (s *Scheduler) keepSlotLists(old *Scheduler) {
	free := old.slotsFree
	for _, lr := range old.lives {
		if cap(lr.slots) > 0 {
			free = append(free, lr.slots)
		}
	}
	free = append(free, old.slotsReleased...)
	free = append(free, old.slotsOlder...)
	for i, l := range free {
		free[i] = reuse.Emptied(l)
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
	free = append(free, a.filled...)
	free = append(free, a.handed...)
	for i, c := range free {
		free[i] = reuse.Emptied(c)
	}
	return slotArena{free: free, filled: reuse.Emptied(a.filled), handed: reuse.Emptied(a.handed)}
}
