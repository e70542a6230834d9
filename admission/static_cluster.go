package admission

import (
	"container/list"
	"fmt"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// StaticCluster is an Admission over a fixed list of slots for one pool.
// It grants asks in the order they arrive (FIFO by ask): an all-or-nothing
// gang only when every group can be served at once, others slot by slot;
// an ask that cannot be served yet is passed over, not waited for. Among
// the available slots it picks the smallest that serve the ask
// (resource.Assign). Released slots become available again and are
// confirmed. Revoke and Reclaim let a test (or an operator) take slots
// back. On creation it declares its capacity: every slot it has. It
// grants no speculative ask (slotpool.Ask.Speculative): Handle refuses
// one with slotpool.ErrSpeculativeAsk.
type StaticCluster struct {
	matching resource.Matching
	slots    []slotpool.Slot
	state    []clusterSlot
	index    map[slotpool.SlotID]int
	asks     list.List // of *clusterAsk, oldest first
	askIdx   map[slotpool.AskID]*list.Element
	out      []slotpool.FromAdmission
}

type clusterSlot uint8

const (
	clusterAvailable clusterSlot = iota
	clusterGranted
	clusterRevoked // revoked, waiting for the pool's slotpool.SlotRelease echo
)

type clusterAsk struct {
	id           slotpool.AskID
	left         []resource.Count // what is still to grant
	allOrNothing bool
}

// NewStaticCluster returns a cluster of the given slots, matched to asks
// with m. Duplicate slot ids are rejected with a *slotpool.SlotError.
func NewStaticCluster(m resource.Matching, slots ...slotpool.Slot) (*StaticCluster, error) {
	c := &StaticCluster{
		matching: m,
		slots:    append([]slotpool.Slot(nil), slots...),
		state:    make([]clusterSlot, len(slots)),
		index:    make(map[slotpool.SlotID]int, len(slots)),
		askIdx:   make(map[slotpool.AskID]*list.Element),
	}
	profiles := make([]resource.Profile, len(slots))
	for i, s := range slots {
		if _, dup := c.index[s.ID]; dup {
			return nil, &slotpool.SlotError{Op: "cluster", Slot: s.ID, Err: slotpool.ErrDuplicateSlot}
		}
		c.index[s.ID] = i
		profiles[i] = s.Profile
	}
	c.out = append(c.out, slotpool.Capacity{Slots: resource.Tally(profiles)})
	return c, nil
}

// Handle takes a message from the pool.
func (c *StaticCluster) Handle(_ time.Time, msg slotpool.ToAdmission) error {
	switch m := msg.(type) {
	case slotpool.Ask:
		if m.Speculative {
			return fmt.Errorf("static cluster: ask %d: %w", m.ID, slotpool.ErrSpeculativeAsk)
		}
		if _, dup := c.askIdx[m.ID]; dup {
			return fmt.Errorf("static cluster: ask %d asked twice", m.ID)
		}
		c.askIdx[m.ID] = c.asks.PushBack(&clusterAsk{id: m.ID, left: m.Gang.Counts(), allOrNothing: m.Gang.AllOrNothing})
	case slotpool.AskRelease:
		if e, ok := c.askIdx[m.ID]; ok {
			c.asks.Remove(e)
			delete(c.askIdx, m.ID)
		}
	case slotpool.SlotRelease:
		i, ok := c.index[m.Slot]
		if !ok || c.state[i] == clusterAvailable {
			return &slotpool.SlotError{Op: "release", Slot: m.Slot, Err: slotpool.ErrUnknownSlot}
		}
		if c.state[i] == clusterGranted {
			c.out = append(c.out, slotpool.ReleaseConfirmed{Slot: m.Slot, Reason: m.Reason})
		}
		c.state[i] = clusterAvailable
	default:
		return fmt.Errorf("static cluster: %T: %w", msg, slotpool.ErrUnknownMessage)
	}
	c.grant()
	return nil
}

// grant walks the asks oldest first and grants each what it can: an
// all-or-nothing gang only if it can be served entirely, other asks as
// many slots as fit. An ask that cannot be served yet does not block the
// ones behind it (YuniKorn allocates the same way); the pool's own FIFO
// protects its oldest bulk, which takes every granted slot it can use.
func (c *StaticCluster) grant() {
	avail, byProfile := c.available() // tallied once, kept current below
	for e := c.asks.Front(); e != nil; {
		next := e.Next()
		a := e.Value.(*clusterAsk)
		if !anyAvailable(avail) {
			return
		}
		asg := resource.Assign(a.left, avail, c.matching)
		if asg.Matched == 0 || (a.allOrNothing && !asg.Complete()) {
			e = next
			continue
		}
		var granted []slotpool.Slot
		for _, pair := range asg.Pairs {
			idxs := byProfile[avail[pair.Slot].Profile]
			for _, i := range idxs[:pair.N] {
				c.state[i] = clusterGranted
				granted = append(granted, c.slots[i])
			}
			byProfile[avail[pair.Slot].Profile] = idxs[pair.N:]
			avail[pair.Slot].N -= pair.N
			a.left[pair.Request].N -= pair.N
		}
		c.out = append(c.out, slotpool.Grant{Ask: a.id, Slots: granted})
		if asg.Complete() {
			c.asks.Remove(e)
			delete(c.askIdx, a.id)
		}
		e = next
	}
}

// anyAvailable reports whether cs counts at least one slot (a test, not a
// sum, so no count can overflow it).
func anyAvailable(cs []resource.Count) bool {
	for _, c := range cs {
		if c.N > 0 {
			return true
		}
	}
	return false
}

// available tallies the available slots by profile, in slot order.
func (c *StaticCluster) available() ([]resource.Count, map[resource.Profile][]int) {
	byProfile := make(map[resource.Profile][]int)
	var counts []resource.Count
	for i, s := range c.slots {
		if c.state[i] != clusterAvailable {
			continue
		}
		if _, seen := byProfile[s.Profile]; !seen {
			counts = append(counts, resource.Count{Profile: s.Profile})
		}
		byProfile[s.Profile] = append(byProfile[s.Profile], i)
	}
	for k := range counts {
		counts[k].N = len(byProfile[counts[k].Profile])
	}
	return counts, byProfile
}

// Revoke takes a granted slot back at once (preemption); the pool answers
// with a slotpool.SlotRelease echo, after which the slot is available
// again.
func (c *StaticCluster) Revoke(id slotpool.SlotID, reason slotpool.Reason) error {
	i, ok := c.index[id]
	if !ok || c.state[i] != clusterGranted {
		return &slotpool.SlotError{Op: "revoke", Slot: id, Err: slotpool.ErrUnknownSlot}
	}
	c.state[i] = clusterRevoked
	c.out = append(c.out, slotpool.Revoke{Slot: id, Reason: reason})
	return nil
}

// Reclaim asks the pool to give a granted slot back once its task ends.
func (c *StaticCluster) Reclaim(id slotpool.SlotID) error {
	i, ok := c.index[id]
	if !ok || c.state[i] != clusterGranted {
		return &slotpool.SlotError{Op: "reclaim", Slot: id, Err: slotpool.ErrUnknownSlot}
	}
	c.out = append(c.out, slotpool.Reclaim{Slot: id})
	return nil
}

// Available returns the slots not granted to the pool.
func (c *StaticCluster) Available() []slotpool.Slot {
	var out []slotpool.Slot
	for i, s := range c.slots {
		if c.state[i] == clusterAvailable {
			out = append(out, s)
		}
	}
	return out
}

// Ready returns the messages for the pool and forgets them.
func (c *StaticCluster) Ready() []slotpool.FromAdmission {
	out := c.out
	c.out = nil
	return out
}

// Tick does nothing: a static cluster has no timers.
func (c *StaticCluster) Tick(time.Time) {}

// NextDeadline reports no deadline: a static cluster has no timers.
func (c *StaticCluster) NextDeadline() (time.Time, bool) { return time.Time{}, false }
