package scheduler

import (
	"slices"
	"strings"
	"time"

	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/slotpool"
)

// Speculative attempts in a pool that returns freed slots
// (slotpool.Config.ReturnFreed: many jobs on one admission, which decides
// who gets each freed slot). Such a pool never holds a free slot for a
// speculative attempt, so a waiting attempt asks the admission for one
// slot of its task's profile (a slotpool.Ask with Speculative set),
// avoiding the nodes blocked when it asks: the admission grants it only
// while no regular ask of any job waits that the slot could serve. The
// rules of Speculation hold as in one job: an attempt asks only while no
// region of its job waits for slots (its ask is withdrawn when one
// starts to wait, and made again once none does), and when it is no
// longer wanted (its task won, failed, or its region stopped) its ask is
// withdrawn; a slot granted after that, or on a node blocked since it
// asked, goes straight back to the admission (and the attempt asks
// again, avoiding that node too). The slot of an attempt that ends goes
// back to the admission like any freed slot.

// specAsking is a speculative attempt whose slot is asked for.
type specAsking struct {
	bulk slotpool.BulkID // the pool bulk it asked by
	ask  slotpool.AskID
	v    TaskID
	id   Attempt
}

// ask asks the admission for a slot serving req for attempt c (ref)
// and reports whether it did.
func (sp *speculator) ask(ref specRef, c *specCopy, req pool.Request) bool {
	s := sp.s
	var nodes []string
	var slots []slotpool.SlotID
	for k := range sp.blocked { // the expired ones are gone (placeFree)
		if k.node != "" {
			nodes = append(nodes, k.node)
		} else {
			slots = append(slots, k.slot)
		}
	}
	slices.SortFunc(nodes, strings.Compare)
	slices.Sort(slots)
	bulk := sp.bulks - 1
	id, err := s.pool.AskSpeculative(pool.Bulk{ID: bulk, Requests: []pool.Request{req}}, nodes, slots)
	if err != nil {
		return false // only a programming error gets here: the bulk id is fresh, the pool has an admission
	}
	sp.bulks = bulk
	c.asked = bulk
	sp.asking = append(sp.asking, specAsking{bulk: bulk, ask: id, v: ref.v, id: ref.id})
	return true
}

// asker returns the attempt of a in t, if it still waits for a's slot.
func (sp *speculator) asker(a specAsking) (*specTask, *specCopy) {
	t := sp.tasks[a.v]
	c := t.copy(a.id)
	if c == nil || c.placed || c.asked != a.bulk {
		return nil, nil
	}
	return t, c
}

// withdraw withdraws the asks of attempts no longer wanted, and all
// of them while the job does not run or a region of it waits. It reports
// whether it withdrew any.
func (sp *speculator) withdraw(now time.Time) bool {
	s := sp.s
	if len(sp.asking) == 0 {
		return false
	}
	all := s.state != JobRunning || s.pool.Stats().Waiting > 0
	did := false
	kept := sp.asking[:0]
	for _, a := range sp.asking {
		_, c := sp.asker(a)
		if c != nil && !all {
			kept = append(kept, a)
			continue
		}
		if c != nil {
			c.asked = 0 // it asks again once it may
		}
		did = s.pool.WithdrawSpeculative(a.ask) || did
	}
	clear(sp.asking[len(kept):])
	sp.asking = kept
	return did
}

// granted deploys the attempts whose asks the admission granted. A
// slot no attempt wants any more, on a node blocked since the ask, or
// granted while a region of the job waits, goes back at once; it reports
// whether one did.
func (sp *speculator) granted(now time.Time) (released bool) {
	s := sp.s
	for _, g := range s.pool.SpeculativeGrants() {
		i := slices.IndexFunc(sp.asking, func(a specAsking) bool { return a.bulk == g.Bulk })
		if i < 0 {
			continue // not an ask of ours: cannot happen
		}
		a := sp.asking[i]
		sp.asking = slices.Delete(sp.asking, i, i+1)
		t, c := sp.asker(a)
		if c != nil {
			c.asked = 0
		}
		if info, ok := s.pool.Slot(g.Slot.ID); !ok || info.State != pool.SlotInUse || info.Bulk != g.Bulk {
			continue // revoked or lost before it was deployed: the attempt asks again
		}
		until, blocked := sp.blocked[keyOf(g.Slot)]
		// A region of the job that began to wait after the admission
		// decided comes first: the slot goes back, the attempt asks again
		// once no region waits.
		if c == nil || s.state != JobRunning || (blocked && until.After(now)) || s.pool.Stats().Waiting > 0 {
			if err := s.pool.Release(now, g.Slot.ID); err == nil {
				released = true
			}
			continue
		}
		if j := slices.Index(sp.pending, specRef{v: a.v, id: a.id}); j >= 0 {
			sp.pending = slices.Delete(sp.pending, j, j+1)
		}
		sp.deploy(now, t, c, specRef{v: a.v, id: a.id}, g.Slot.ID)
	}
	return released
}
