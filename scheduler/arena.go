package scheduler

import "github.com/regionsched/regionsched/region"

// arenaChunk is the number of slots in one chunk of a slotArena.
const arenaChunk = 1024

// slotArena holds the one-slot lists of the requests of one-member
// regions (see Scheduler.request) for the Ready that hands them out. The
// lists are carved from fixed chunks, so a list handed out never moves
// and a burst of requests (Start) costs its size once, not a doubling
// slice's. Carving goes on in the same chunk from one Ready to the next
// (it never writes over a list carved before); a chunk is reused once it
// is full and the last Ready that holds a list of it was followed by
// another Ready call.
type slotArena struct {
	cur    []region.Slot   // the chunk being carved, as far as carved
	filled [][]region.Slot // chunks that became full since the last Ready call
	handed [][]region.Slot // chunks that became full before it: free at the next call
	free   [][]region.Slot
}

// one returns the slot list of region r, which has one member (and so
// one slot), carved from the arena.
func (a *slotArena) one(rs *region.Regions, r region.ID) []region.Slot {
	if len(a.cur) == cap(a.cur) {
		if a.cur != nil {
			a.filled = append(a.filled, a.cur)
		}
		if n := len(a.free); n > 0 {
			a.cur = a.free[n-1]
			a.free = a.free[:n-1]
		} else {
			a.cur = make([]region.Slot, 0, arenaChunk)
		}
	}
	i := len(a.cur)
	a.cur = rs.AppendSlots(a.cur, r) // one slot: stays in the chunk
	return a.cur[i:len(a.cur):len(a.cur)]
}

// handOut is called when a Ready is handed out: the chunks that were full
// before the previous call hold lists of no Ready any more and are freed.
//
// The lists are not cleared: what they point to (names, profiles,
// member lists) is the Regions', which the scheduler keeps anyway.
func (a *slotArena) handOut() {
	if len(a.handed) == 0 && len(a.filled) == 0 {
		return
	}
	for _, c := range a.handed {
		a.free = append(a.free, c[:0])
	}
	a.handed, a.filled = a.filled, a.handed[:0]
}
