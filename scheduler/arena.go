package scheduler

import "github.com/regionsched/regionsched/region"

// arenaChunk is the number of slots in one chunk of a slotArena.
const arenaChunk = 1024

// slotArena holds the one-slot lists of the requests of one-member
// regions (see Scheduler.request) for the Ready that hands them out. The
// lists are carved from fixed chunks, so a list handed out never moves
// and a burst of requests (Start) costs its size once, not a doubling
// slice's. A Ready's chunks are reused once the next Ready is handed out.
type slotArena struct {
	cur    []region.Slot   // the chunk being filled
	filled [][]region.Slot // chunks carved from since the last Ready (as far as carved), cur last
	handed [][]region.Slot // chunks of the Ready handed out last
	free   [][]region.Slot
}

// one returns the slot list of region r, which has one member (and so
// one slot), carved from the arena.
func (a *slotArena) one(rs *region.Regions, r region.ID) []region.Slot {
	if len(a.cur) == cap(a.cur) {
		if n := len(a.free); n > 0 {
			a.cur = a.free[n-1]
			a.free = a.free[:n-1]
		} else {
			a.cur = make([]region.Slot, 0, arenaChunk)
		}
		a.filled = append(a.filled, a.cur)
	}
	i := len(a.cur)
	a.cur = rs.AppendSlots(a.cur, r) // one slot: stays in the chunk
	a.filled[len(a.filled)-1] = a.cur
	return a.cur[i:len(a.cur):len(a.cur)]
}

// handOut marks the lists carved so far as handed out with a Ready and
// frees those of the Ready before.
func (a *slotArena) handOut() {
	// The lists are not cleared: what they point to (names, profiles,
	// member lists) is the Regions', which the scheduler keeps anyway.
	for _, c := range a.handed {
		a.free = append(a.free, c[:0])
	}
	a.handed, a.filled = a.filled, a.handed[:0]
	a.cur = nil
}
