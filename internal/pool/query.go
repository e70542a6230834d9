package pool

import "github.com/regionsched/regionsched/slotpool"

// Bulk returns a snapshot of a live bulk (false if unknown or retired).
func (p *Pool) Bulk(id slotpool.BulkID) (BulkInfo, bool) {
	b, ok := p.liveBulk(id)
	if !ok {
		return BulkInfo{ID: id, State: BulkUnknown}, false
	}
	info := BulkInfo{ID: id, State: b.state}
	if p.head == b {
		for i := range p.profiles.recs {
			for _, idx := range p.profiles.recs[i].held {
				info.Held = append(info.Held, p.slot(idx).id)
			}
		}
	}
	for r, idx := range b.slotList() {
		if idx >= 0 {
			info.InUse = append(info.InUse, Placement{Request: r, Slot: p.slot(idx).id})
		}
	}
	return info, true
}

// State returns the state of a live bulk: BulkWaiting or BulkFulfilled
// (BulkUnknown if never submitted or retired; its Fulfilled or Failed
// event told how it ended).
func (p *Pool) State(id slotpool.BulkID) BulkState {
	info, _ := p.Bulk(id)
	return info.State
}

// Slot returns a snapshot of a slot in the pool (false if unknown).
func (p *Pool) Slot(id slotpool.SlotID) (SlotInfo, bool) {
	idx, ok := p.slotIndex(id)
	if !ok {
		return SlotInfo{}, false
	}
	s := p.slot(idx)
	info := SlotInfo{
		Slot:      slotpool.Slot{ID: s.id, Profile: p.profiles.recs[s.profile].profile, Node: p.nodes[idx]},
		State:     s.state,
		Request:   int(s.request),
		Unbounded: s.unbounded,
		Reclaimed: s.reclaimed,
	}
	if s.bulk != nil {
		info.Bulk = s.bulk.id
	}
	return info, true
}

// FreeSlots returns the free slots, grouped by profile in the order the
// profiles were first seen.
func (p *Pool) FreeSlots() []slotpool.Slot {
	out := make([]slotpool.Slot, 0, p.nFree)
	for i := range p.profiles.recs {
		for _, idx := range p.profiles.recs[i].free {
			out = append(out, slotpool.Slot{ID: p.slot(idx).id, Profile: p.profiles.recs[i].profile, Node: p.nodes[idx]})
		}
	}
	return out
}

// Waiting returns the waiting bulks, oldest first.
func (p *Pool) Waiting() []slotpool.BulkID {
	out := make([]slotpool.BulkID, 0, p.queue.Len())
	for b := p.queue.Front(); b != nil; b = p.queue.Next(b) {
		out = append(out, b.id)
	}
	return out
}

// Stats counts slots and bulks.
func (p *Pool) Stats() slotpool.Stats {
	return slotpool.Stats{
		Slots:     p.nFree + p.nHeld + p.nInUse,
		Free:      p.nFree,
		Held:      p.nHeld,
		InUse:     p.nInUse,
		Releasing: p.nRelease,
		Waiting:   p.queue.Len(),
		Shapes:    len(p.shapes.live),
	}
}
