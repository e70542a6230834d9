package pool

import (
	"github.com/regionsched/regionsched/slotpool"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNodeLabelsAreKeptAndReported(t *testing.T) {
	h := newHarness(t, Config{})
	h.offer(slotpool.Slot{ID: 1, Profile: small, Node: "n1"}, slotpool.Slot{ID: 2, Profile: small})
	s1, _ := h.p.Slot(1)
	s2, _ := h.p.Slot(2)
	assert.Equal(t, "n1", s1.Node)
	assert.Equal(t, "", s2.Node)
	assert.ElementsMatch(t, []slotpool.Slot{{ID: 1, Profile: small, Node: "n1"}, {ID: 2, Profile: small}}, h.p.FreeSlots())
	h.lose(1)
	h.offer(slotpool.Slot{ID: 3, Profile: small}) // may reuse slot 1's table entry: no node
	s3, _ := h.p.Slot(3)
	assert.Equal(t, "", s3.Node)
}

func TestTakePutsABulkIntoAChosenFreeSlot(t *testing.T) {
	h := newHarness(t, Config{})
	h.offer(slot(1, small), slotpool.Slot{ID: 2, Profile: big, Node: "n2"})
	sl, ok := h.p.FreeSlotFor(Request{Profile: medium}, nil)
	require.True(t, ok)
	assert.Equal(t, slotpool.SlotID(2), sl.ID, "only the big slot serves a medium request")
	assert.Equal(t, "n2", sl.Node)
	_, ok = h.p.FreeSlotFor(Request{Profile: small}, func(s slotpool.Slot) bool { return s.ID == 7 })
	assert.False(t, ok)

	require.NoError(t, h.p.Take(h.now, Bulk{ID: -1, Requests: reqs(small)}, 2))
	h.check()
	assert.Empty(t, h.events(), "Take emits no Fulfilled")
	info, _ := h.p.Slot(2)
	assert.Equal(t, SlotInUse, info.State)
	assert.Equal(t, slotpool.BulkID(-1), info.Bulk)
	assert.Equal(t, BulkFulfilled, h.p.State(-1))

	// A bulk submitted now waits for slot 2 like for any slot in use.
	h.submit(5, big)
	h.release(2)
	assert.Equal(t, []Event{Fulfilled{Bulk: 5, Slots: []slotpool.SlotID{2}}}, h.events())
	h.assertRetired(-1)
}

func TestTakeRefusals(t *testing.T) {
	h := newHarness(t, Config{})
	h.offer(slot(1, small), slot(2, small))
	h.submit(9, small) // takes one of them
	evs := h.events()
	require.Len(t, evs, 1)
	inUse := evs[0].(Fulfilled).Slots[0]
	free := slotpool.SlotID(3) - inUse

	assert.ErrorIs(t, h.p.Take(h.now, Bulk{ID: -1}, free), ErrNotOneRequest)
	assert.ErrorIs(t, h.p.Take(h.now, Bulk{ID: 9, Requests: reqs(small)}, free), ErrDuplicateBulk)
	assert.ErrorIs(t, h.p.Take(h.now, Bulk{ID: -1, Requests: reqs(small)}, 42), slotpool.ErrUnknownSlot)
	assert.ErrorIs(t, h.p.Take(h.now, Bulk{ID: -1, Requests: reqs(small)}, inUse), ErrSlotNotFree)
	var se *slotpool.SlotError
	err := h.p.Take(h.now, Bulk{ID: -1, Requests: reqs(big)}, free)
	require.ErrorAs(t, err, &se)
	assert.Equal(t, free, se.Slot)
	assert.ErrorIs(t, err, ErrSlotTooSmall)
	h.check()
	info, _ := h.p.Slot(free)
	assert.Equal(t, SlotFree, info.State, "a refused Take changes nothing")
}

func TestTakenSlotLostOrCanceled(t *testing.T) {
	h := newHarness(t, Config{})
	h.offer(slot(1, small), slot(2, small))
	require.NoError(t, h.p.Take(h.now, Bulk{ID: -1, Requests: reqs(small)}, 1))
	require.NoError(t, h.p.Take(h.now, Bulk{ID: -2, Requests: reqs(small)}, 2))
	h.check()
	h.lose(1)
	assert.Equal(t, []Event{Lost{Slot: 1, Bulk: -1, Request: 0, Reason: slotpool.ReasonLost}}, h.events())
	h.assertRetired(-1)
	h.cancel(-2)
	info, _ := h.p.Slot(2)
	assert.Equal(t, SlotFree, info.State)
	h.assertRetired(-2)
}
