package kubernetes

import (
	"cmp"
	"math"
	"slices"

	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// Inventory turns what the nodes offer (NodeCapacity) into slots and
// keeps their ids stable from one observation to the next: the slots of a
// node keep their ids while the node keeps offering them, a node that
// offers fewer loses its last ones, and a node cordoned, not Ready or
// deleted loses all of its. It is a pure state machine: the runtime
// lists the nodes and pods, computes the capacities (CapacityOf) and
// feeds them to Observe.
type Inventory struct {
	shape rsresource.Profile
	next  slotpool.SlotID
	nodes map[string][]slotpool.SlotID
	slots map[slotpool.SlotID]slotpool.Slot
}

// LostSlot is a slot an observation took away, and why (the node's
// NodeCapacity.Why, "deleted", or "capacity shrank").
type LostSlot struct {
	Slot slotpool.Slot
	Why  string
}

// Change is what one observation changed.
type Change struct {
	Added []slotpool.Slot
	Lost  []LostSlot
}

// NewInventory returns an empty inventory whose nodes are divided into
// slots of profile shape: a node offers as many as fit in what is free on
// it (and in the pods it still takes). With shape resource.Unknown a
// node is one slot of all that is free on it. A known shape must ask for
// something (cpu, memory or an extended resource), else a *ShapeError.
func NewInventory(shape rsresource.Profile) (*Inventory, error) {
	if !shape.IsUnknown() && shape.CPUMillis() == 0 && shape.MemoryMB() == 0 && len(shape.Extended()) == 0 {
		return nil, &ShapeError{Shape: shape.String(), Why: "it asks for nothing: give cpu, memory or an extended resource"}
	}
	return &Inventory{shape: shape, next: 1, nodes: map[string][]slotpool.SlotID{}, slots: map[slotpool.SlotID]slotpool.Slot{}}, nil
}

// SlotsOn returns how many slots of profile shape node c offers, and
// their profile: none if it is not usable; with shape Unknown one slot of
// all that is free (none if nothing is).
func SlotsOn(c NodeCapacity, shape rsresource.Profile) (int, rsresource.Profile) {
	if !c.Usable || c.PodsFree == 0 {
		return 0, shape
	}
	if shape.IsUnknown() {
		if c.Free.CPUMillis() == 0 && c.Free.MemoryMB() == 0 {
			return 0, c.Free
		}
		return 1, c.Free
	}
	n := int64(math.MaxInt64)
	fit := func(free, want int64) {
		if want > 0 {
			n = min(n, free/want)
		}
	}
	fit(c.Free.CPUMillis(), shape.CPUMillis())
	fit(c.Free.MemoryMB(), shape.MemoryMB())
	for name, v := range shape.Extended() {
		fit(c.Free.ExtendedValue(name), v)
	}
	if c.PodsFree > 0 {
		n = min(n, c.PodsFree)
	}
	return int(min(n, math.MaxInt32)), shape
}

// Observe takes the capacities of every node of the cluster (a node
// missing from caps was deleted) and returns the slots added and lost
// since the last observation, in node order then slot order.
func (inv *Inventory) Observe(caps []NodeCapacity) Change {
	var ch Change
	seen := make(map[string]bool, len(caps))
	sorted := slices.SortedFunc(slices.Values(caps), func(a, b NodeCapacity) int { return cmp.Compare(a.Node, b.Node) })
	for _, c := range sorted {
		seen[c.Node] = true
		n, profile := SlotsOn(c, inv.shape)
		ids := inv.nodes[c.Node]
		why := c.Why
		if why == "" {
			why = "capacity shrank"
		}
		// A node that is one slot keeps it only while its profile stays.
		if inv.shape.IsUnknown() && len(ids) == 1 && n == 1 && inv.slots[ids[0]].Profile != profile {
			ids = inv.lose(&ch, c.Node, ids, 0, "capacity changed")
		}
		if n < len(ids) {
			ids = inv.lose(&ch, c.Node, ids, n, why)
		}
		for len(ids) < n {
			s := slotpool.Slot{ID: inv.next, Profile: profile, Node: c.Node}
			inv.next++
			inv.slots[s.ID] = s
			ids = append(ids, s.ID)
			ch.Added = append(ch.Added, s)
		}
		inv.nodes[c.Node] = ids
	}
	gone := make([]string, 0)
	for node := range inv.nodes {
		if !seen[node] {
			gone = append(gone, node)
		}
	}
	slices.Sort(gone)
	for _, node := range gone {
		inv.lose(&ch, node, inv.nodes[node], 0, "deleted")
	}
	return ch
}

// lose takes the slots ids[keep:] of node away and returns ids[:keep].
func (inv *Inventory) lose(ch *Change, node string, ids []slotpool.SlotID, keep int, why string) []slotpool.SlotID {
	for _, id := range ids[keep:] {
		ch.Lost = append(ch.Lost, LostSlot{Slot: inv.slots[id], Why: why})
		delete(inv.slots, id)
	}
	if keep == 0 {
		delete(inv.nodes, node)
		return nil
	}
	inv.nodes[node] = ids[:keep]
	return ids[:keep]
}

// Slots returns every slot the inventory has, by id.
func (inv *Inventory) Slots() []slotpool.Slot {
	out := make([]slotpool.Slot, 0, len(inv.slots))
	for _, s := range inv.slots {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b slotpool.Slot) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Slot returns a slot the inventory has.
func (inv *Inventory) Slot(id slotpool.SlotID) (slotpool.Slot, bool) {
	s, ok := inv.slots[id]
	return s, ok
}
