package pool

import (
	"errors"
	"testing"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFIFOSlotGoesToOldestBulkThatCanUseIt(t *testing.T) {
	h := newHarness(t, Config{})
	h.submit(1, small, small) // oldest
	h.submit(2, small)        // could be completed by one slot at once
	h.offer(slot(10, small))
	assert.Empty(t, h.events(), "the slot goes to bulk 1, which holds it")
	info, _ := h.p.Bulk(1)
	assert.Equal(t, []slotpool.SlotID{10}, info.Held)
	assert.Equal(t, BulkWaiting, h.p.State(2))

	h.offer(slot(11, small))
	assert.Equal(t, []Event{Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{11, 10}}}, h.events())
	h.offer(slot(12, small))
	assert.Equal(t, []Event{Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{12}}}, h.events())

	// A released slot goes to the oldest waiting bulk too.
	h.submit(3, small, small)
	h.submit(4, small)
	h.release(12)
	assert.Empty(t, h.events())
	info, _ = h.p.Bulk(3)
	assert.Equal(t, []slotpool.SlotID{12}, info.Held)
	h.release(10)
	assert.Equal(t, []Event{Fulfilled{Bulk: 3, Slots: []slotpool.SlotID{10, 12}}}, h.events())
}

func TestSlotTheOldestCannotUseGoesToAYoungerBulk(t *testing.T) {
	h := newHarness(t, Config{})
	h.submit(1, gpu)
	h.submit(2, small, small)
	h.submit(3, small)
	h.offer(slot(10, small))
	// Bulk 1 cannot use it; bulk 2 cannot be completed with it, bulk 3 can.
	assert.Equal(t, []Event{Fulfilled{Bulk: 3, Slots: []slotpool.SlotID{10}}}, h.events())
	h.offer(slot(11, small))
	assert.Empty(t, h.events(), "bulk 2 must not hold a slot while it waits")
	s, _ := h.p.Slot(11)
	assert.Equal(t, SlotFree, s.State)
	h.offer(slot(12, small))
	assert.Equal(t, []Event{Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{12, 11}}}, h.events())
}

// FLIP-119 "Resource deadlocks when allocated slots are too small to
// fulfill the oldest request": in Flink, small slots go to the requests of
// younger bulks, which hold them while they wait, and the oldest bulk
// (needing a big slot) never gets going. Here a younger bulk takes slots
// only when they complete it, so nothing is trapped.
func TestAllocatedSlotsTooSmallForTheOldestRequest(t *testing.T) {
	h := newHarness(t, Config{})
	h.submit(1, big, small) // oldest: needs a big slot
	h.submit(2, small, small, small)
	h.submit(3, small, small, small)
	h.offer(slot(10, small), slot(11, small), slot(12, small))
	// Bulk 1 holds one small slot; two small slots stay free: neither bulk
	// 2 nor bulk 3 holds part of its slots.
	info, _ := h.p.Bulk(1)
	assert.Equal(t, []slotpool.SlotID{10}, info.Held)
	assert.Equal(t, 2, h.p.Stats().Free)
	assert.Empty(t, h.events())
	// The big slot completes the oldest bulk; its small slot goes on FIFO.
	h.offer(slot(20, big))
	assert.Equal(t, []Event{Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{20, 10}}}, h.events())
	h.offer(slot(13, small))
	assert.Equal(t, []Event{Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{13, 11, 12}}}, h.events())
	h.release(20)
	h.release(10)
	assert.Empty(t, h.events(), "bulk 3 needs three slots that serve small requests")
	h.release(13)
	ev := h.events()
	require.Len(t, ev, 1)
	assert.Equal(t, slotpool.BulkID(3), ev[0].(Fulfilled).Bulk)
}

// FLIP-119 "Resource deadlocks when slots of different sizes are
// improperly assigned to slot requests": in Flink the big slot, offered
// first, goes to the small request, and the big request waits forever.
// Here held slots are matched to requests only at commit.
func TestSlotsOfDifferentSizesAreNotImproperlyAssigned(t *testing.T) {
	h := newHarness(t, Config{})
	h.submit(1, small, big, small)
	h.offer(slot(20, big))
	h.offer(slot(10, small))
	h.offer(slot(11, small))
	assert.Equal(t, []Event{Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{11, 20, 10}}}, h.events())

	// Offered the other way round, the result is the same matching.
	h = newHarness(t, Config{})
	h.submit(1, small, big, small)
	h.offer(slot(10, small))
	h.offer(slot(11, small))
	h.offer(slot(20, big))
	ev := h.events()
	require.Len(t, ev, 1)
	assert.Equal(t, slotpool.SlotID(20), ev[0].(Fulfilled).Slots[1])
}

func TestBigSlotNotWastedOnSmallRequest(t *testing.T) {
	// At submit: the smallest serving slot is chosen.
	h := newHarness(t, Config{})
	h.offer(slot(20, big), slot(10, small))
	h.submit(1, small)
	assert.Equal(t, []Event{Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{10}}}, h.events())
	h.submit(2, big)
	assert.Equal(t, []Event{Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{20}}}, h.events())

	// At commit: the head held a big slot for its small request, a small
	// slot arrived meanwhile; the commit uses the small one and gives the
	// big one back, to a younger bulk that needs it.
	h = newHarness(t, Config{})
	h.submit(1, small, gpu)
	h.submit(2, big)
	h.offer(slot(20, big))
	info, _ := h.p.Bulk(1)
	assert.Equal(t, []slotpool.SlotID{20}, info.Held)
	h.offer(slot(10, small))
	assert.Empty(t, h.events())
	h.offer(slot(30, gpu))
	assert.Equal(t, []Event{
		Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{10, 30}},
		Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{20}},
	}, h.events())
}

func TestTimeoutFailsBulkAndReturnsItsSlots(t *testing.T) {
	h := newHarness(t, Config{Timeout: time.Minute})
	h.submit(1, small, small, small)
	h.offer(slot(10, small), slot(11, small))
	deadline, ok := h.p.NextDeadline()
	require.True(t, ok)
	assert.Equal(t, t0.Add(time.Minute), deadline)
	h.submit(2, small, small) // fulfillable, but waits behind bulk 1
	assert.Empty(t, h.events())

	h.advance(59 * time.Second)
	assert.Empty(t, h.events())
	h.advance(time.Second)
	ev := h.events()
	require.Len(t, ev, 2)
	failed := ev[0].(Failed)
	assert.Equal(t, slotpool.BulkID(1), failed.Bulk)
	var nra *slotpool.NoResourceAvailableError
	require.ErrorAs(t, failed.Err, &nra)
	assert.ErrorIs(t, failed.Err, slotpool.ErrNoResourceAvailable)
	assert.Equal(t, []resource.Count{{Profile: small, N: 1}}, nra.Missing)
	assert.Equal(t, "slotpool: bulk 1: 1 x {cpu=1000m mem=1024MB} cannot be served: no resource available (unfulfillable for 1m0s)", failed.Err.Error())
	h.assertRetired(1)
	assert.Equal(t, Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{10, 11}}, ev[1])
	_, ok = h.p.NextDeadline()
	assert.False(t, ok)
	h.submit(1, small) // the id of a failed bulk may be submitted again
	assert.Equal(t, []slotpool.BulkID{1}, h.p.Waiting())
}

func TestNewSlotsCancelTheTimeout(t *testing.T) {
	h := newHarness(t, Config{Timeout: time.Minute})
	h.offer(slot(1, small))
	h.submit(1, small) // bounded task on slot 1: reusable
	h.events()
	h.submit(2, small, small, small)
	h.offer(slot(2, small))
	_, ok := h.p.NextDeadline()
	require.True(t, ok, "2 reusable slots for 3 requests: unfulfillable")

	h.advance(30 * time.Second)
	h.offer(slot(3, small))
	_, ok = h.p.NextDeadline()
	assert.False(t, ok, "fulfillable: slot 1 will come back")
	h.advance(2 * time.Minute)
	assert.Empty(t, h.events())
	assert.Equal(t, BulkWaiting, h.p.State(2))
	h.release(1)
	ev := h.events()
	require.Len(t, ev, 1)
	assert.Equal(t, slotpool.BulkID(2), ev[0].(Fulfilled).Bulk)
}

func TestSlotLossRestartsTheTimeout(t *testing.T) {
	h := newHarness(t, Config{Timeout: time.Minute})
	h.offer(slot(1, small))
	h.submit(1, small)
	h.submit(2, small, small, small)
	h.offer(slot(2, small))
	h.advance(30 * time.Second)
	h.offer(slot(3, small)) // fulfillable: timer canceled
	h.events()

	h.advance(5 * time.Minute)
	h.lose(3)
	deadline, ok := h.p.NextDeadline()
	require.True(t, ok)
	assert.Equal(t, h.now.Add(time.Minute), deadline, "a new full timeout from the loss")
	h.advance(59 * time.Second)
	assert.Empty(t, h.events())
	h.advance(time.Second)
	ev := h.events()
	require.Len(t, ev, 1)
	assert.ErrorIs(t, ev[0].(Failed).Err, slotpool.ErrNoResourceAvailable)
	assert.Equal(t, 1, h.p.Stats().Free, "slot 2, held by bulk 2, is free again")
}

func TestUnboundedTasksDoNotMakeSlotsReusable(t *testing.T) {
	for _, unbounded := range []bool{false, true} {
		h := newHarness(t, Config{Timeout: time.Minute})
		h.offer(slot(1, small))
		require.NoError(t, h.p.Submit(h.now, Bulk{ID: 1, Requests: []Request{{Profile: small, Unbounded: unbounded}}}))
		h.check()
		h.submit(2, small)
		_, armed := h.p.NextDeadline()
		assert.Equal(t, unbounded, armed, "unbounded=%v", unbounded)
		// The task ends after all: the slot is reusable again.
		h.release(1)
		_, armed = h.p.NextDeadline()
		assert.False(t, armed)
	}
}

func TestBulkTooLargeForTheClusterFailsAtOnce(t *testing.T) {
	h := newHarness(t, Config{})
	h.p.SetCapacity(h.now, []resource.Count{{Profile: small, N: 3}, {Profile: big, N: 1}})
	h.submit(1, big, big, small)
	ev := h.events()
	require.Len(t, ev, 1)
	f := ev[0].(Failed)
	var nra *slotpool.NoResourceAvailableError
	require.ErrorAs(t, f.Err, &nra)
	assert.True(t, nra.Never)
	assert.Equal(t, "slotpool: bulk 1: 1 x {cpu=4000m mem=4096MB} cannot be served: no resource available (larger than the cluster)", f.Err.Error())
	h.assertRetired(1)

	h.submit(2, big, small, small, small) // fits
	assert.Equal(t, BulkWaiting, h.p.State(2))
	assert.Empty(t, h.events())
	// The cluster shrinks: the waiting bulk can never fit any more.
	h.p.SetCapacity(h.now, []resource.Count{{Profile: big, N: 3}})
	h.check()
	ev = h.events()
	require.Len(t, ev, 1)
	assert.Equal(t, slotpool.BulkID(2), ev[0].(Failed).Bulk)
	h.assertRetired(2)

	// Without a declared capacity nothing fails at once.
	h.p.SetCapacity(h.now, nil)
	h.submit(3, big, big, big, big)
	assert.Equal(t, BulkWaiting, h.p.State(3))
	h.submit(1, big, big, big, big) // a failed bulk's id is free again
	assert.Equal(t, []slotpool.BulkID{3, 1}, h.p.Waiting())
}

func TestExactMatching(t *testing.T) {
	h := newHarness(t, Config{Matching: resource.ExactMatch})
	h.submit(1, small)
	h.offer(slot(20, big))
	assert.Empty(t, h.events(), "a big slot does not serve a small request")
	h.offer(slot(10, small))
	assert.Equal(t, []Event{Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{10}}}, h.events())
	h.submit(2, resource.Unknown) // unknown still matches anything
	assert.Equal(t, []Event{Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{20}}}, h.events())

	h = newHarness(t, Config{})
	h.submit(1, small)
	h.offer(slot(20, big))
	assert.Equal(t, []Event{Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{20}}}, h.events())
}

func TestCancelWaitingBulkReturnsHeldSlots(t *testing.T) {
	h := newHarness(t, Config{})
	h.submit(1, small, small)
	h.submit(2, small)
	h.submit(3, small, small, small)
	h.offer(slot(10, small))
	h.cancel(3) // a younger waiting bulk: just leaves
	h.assertRetired(3)
	h.cancel(1)
	assert.Equal(t, []Event{Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{10}}}, h.events())
	h.assertRetired(1)
	assert.Empty(t, h.p.Waiting())
	h.submit(1, small) // a canceled bulk's id is free again
	assert.Equal(t, []slotpool.BulkID{1}, h.p.Waiting())
}

func TestCancelFulfilledBulkReturnsSlotsToOlderBulksFirst(t *testing.T) {
	h := newHarness(t, Config{})
	h.offer(slot(10, small), slot(11, small))
	h.submit(1, small, small)
	h.events()
	h.submit(2, small, small)
	h.submit(3, small)
	h.cancel(1)
	assert.Equal(t, []Event{Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{10, 11}}}, h.events())
	h.assertRetired(1)
	assert.Equal(t, BulkWaiting, h.p.State(3))
	// A fulfilled bulk whose tasks all ended is retired by the pool: there
	// is nothing left to cancel, and its id is free again.
	h.release(10)
	assert.Equal(t, []Event{Fulfilled{Bulk: 3, Slots: []slotpool.SlotID{10}}}, h.events())
	assert.Equal(t, BulkFulfilled, h.p.State(2), "a task of bulk 2 still runs")
	h.release(11)
	assert.Empty(t, h.events())
	h.assertRetired(2)
	h.submit(2, small)
	assert.Equal(t, []Event{Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{11}}}, h.events())
}

func TestLosingASlotInUseReportsTheTask(t *testing.T) {
	h := newHarness(t, Config{})
	h.offer(slot(10, small), slot(20, big))
	h.submit(7, big, small)
	h.events()
	h.lose(10)
	assert.Equal(t, []Event{Lost{Slot: 10, Bulk: 7, Request: 1, Reason: slotpool.ReasonLost}}, h.events())
	info, _ := h.p.Bulk(7)
	assert.Equal(t, []Placement{{Request: 0, Slot: 20}}, info.InUse)
	h.lose(20)
	assert.Equal(t, []Event{Lost{Slot: 20, Bulk: 7, Request: 0, Reason: slotpool.ReasonLost}}, h.events())
	h.assertRetired(7) // its last slot is gone
	assert.Equal(t, slotpool.Stats{}, h.p.Stats())
}

func TestBadInputReturnsTypedErrors(t *testing.T) {
	h := newHarness(t, Config{})
	h.offer(slot(1, small))
	h.submit(1, big)

	var se *slotpool.SlotError
	err := h.p.Offer(h.now, slot(2, small), slot(1, small))
	require.ErrorAs(t, err, &se)
	assert.Equal(t, slotpool.SlotError{Op: "offer", Slot: 1, Err: slotpool.ErrDuplicateSlot}, *se)
	assert.ErrorIs(t, h.p.Offer(h.now, slot(3, small), slot(3, big)), slotpool.ErrDuplicateSlot)
	// The error names the first offending slot in the offer's order: a
	// repeat before a slot the pool has, and the other way round.
	require.ErrorAs(t, h.p.Offer(h.now, slot(5, small), slot(6, small), slot(6, small), slot(1, small)), &se)
	assert.Equal(t, slotpool.SlotID(6), se.Slot)
	require.ErrorAs(t, h.p.Offer(h.now, slot(1, small), slot(7, small), slot(7, small)), &se)
	assert.Equal(t, slotpool.SlotID(1), se.Slot)
	assert.Equal(t, 1, h.p.Stats().Slots, "a rejected offer adds nothing")
	_, known := h.p.Slot(2)
	assert.False(t, known)

	assert.ErrorIs(t, h.p.Release(h.now, 99), slotpool.ErrUnknownSlot)
	assert.EqualError(t, h.p.Release(h.now, 1), "slotpool: release slot 1: slot not in use")
	assert.ErrorIs(t, h.p.Lose(h.now, 99), slotpool.ErrUnknownSlot)

	var be *BulkError
	err = h.p.Submit(h.now, Bulk{ID: 1, Requests: reqs(small)})
	require.ErrorAs(t, err, &be)
	assert.Equal(t, BulkError{Op: "submit", Bulk: 1, Err: ErrDuplicateBulk}, *be)
	assert.EqualError(t, h.p.Submit(h.now, Bulk{ID: 5}), "slotpool: submit bulk 5: empty bulk")
	err = h.p.Cancel(h.now, 42)
	require.ErrorAs(t, err, &be)
	assert.Equal(t, BulkError{Op: "cancel", Bulk: 42, Err: ErrUnknownBulk}, *be)
	h.cancel(1)
	assert.ErrorIs(t, h.p.Cancel(h.now, 1), ErrUnknownBulk, "a canceled bulk is retired at once")
	h.submit(1, small) // and its id may be used again
	assert.Equal(t, []Event{Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{1}}}, h.events())
	assert.ErrorIs(t, h.p.Submit(h.now, Bulk{ID: 1, Requests: reqs(small)}), ErrDuplicateBulk, "while it is live")

	assert.ErrorIs(t, h.p.Admit(h.now, slotpool.ReleaseConfirmed{Slot: 1}), slotpool.ErrSlotNotReleasing)
	assert.ErrorIs(t, h.p.Admit(h.now, slotpool.Revoke{Slot: 9}), slotpool.ErrUnknownSlot)
	assert.ErrorIs(t, h.p.Admit(h.now, nil), slotpool.ErrUnknownMessage)
	h.check()
	assert.True(t, errors.Is(&slotpool.NoResourceAvailableError{}, slotpool.ErrNoResourceAvailable))
}
