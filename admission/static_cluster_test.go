package admission

import (
	"testing"
	"time"

	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoolWithStaticCluster walks a pool through the protocol with a
// static cluster: capacity, ask and grant, revoke, a bulk too large, and
// an idle slot given back.
func TestPoolWithStaticCluster(t *testing.T) {
	h := newHarness(t, pool.Config{IdleTimeout: time.Minute}, slot(1, small), slot(2, small), slot(3, big))
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Capacity{Slots: []resource.Count{{Profile: small, N: 2}, {Profile: big, N: 1}}}}, h.rec.got)
	h.reset()

	// Demand is declared as a gang; the grant arrives; the bulk runs.
	h.submit(1, small, big)
	assert.Equal(t, []pool.Event{pool.Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{1, 3}}}, h.pump())
	assert.Equal(t, []slotpool.ToAdmission{slotpool.Ask{ID: 1, Bulk: 1, Gang: slotpool.Gang{
		Groups:       []slotpool.TaskGroup{{Profile: small, MinMembers: 1}, {Profile: big, MinMembers: 1}},
		AllOrNothing: true,
	}, Head: true}}, h.rec.sent)
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Grant{Ask: 1, Slots: []slotpool.Slot{slot(1, small), slot(3, big)}}}, h.rec.got)
	h.reset()

	// The admission preempts a slot in use: the task is reported lost so
	// it fails over, and the pool confirms with an echo.
	require.NoError(t, h.c.Revoke(3, slotpool.ReasonPreempted))
	assert.Equal(t, []pool.Event{pool.Lost{Slot: 3, Bulk: 1, Request: 1, Reason: slotpool.ReasonPreempted}}, h.pump())
	assert.Equal(t, []slotpool.ToAdmission{slotpool.SlotRelease{Slot: 3, Reason: slotpool.ReasonPreempted}}, h.rec.sent)
	assert.Contains(t, h.c.Available(), slot(3, big))
	h.reset()

	// A bulk larger than the cluster fails at once.
	h.submit(2, big, big)
	ev := h.pump()
	require.Len(t, ev, 1)
	assert.ErrorIs(t, ev[0].(pool.Failed).Err, slotpool.ErrNoResourceAvailable)
	assert.Empty(t, h.rec.sent, "no ask for a bulk that can never fit")
	assert.Equal(t, pool.BulkUnknown, h.p.State(2), "a failed bulk is retired at once")

	// The task ends; the slot idles and goes back after the idle timeout,
	// and the release is confirmed.
	h.release(1)
	h.pump()
	h.advance(time.Minute)
	assert.Equal(t, []slotpool.ToAdmission{slotpool.SlotRelease{Slot: 1, Reason: slotpool.ReasonStopped}}, h.rec.sent)
	assert.Equal(t, []slotpool.FromAdmission{slotpool.ReleaseConfirmed{Slot: 1, Reason: slotpool.ReasonStopped}}, h.rec.got)
	_, inPool := h.p.Slot(1)
	assert.False(t, inPool)
	assert.Len(t, h.c.Available(), 3)
}

func TestIdleSlotKeptWhileAWaitingBulkCouldUseIt(t *testing.T) {
	h := newHarness(t, pool.Config{IdleTimeout: time.Minute}, slot(1, small), slot(2, big))
	h.submit(1, small)
	h.pump()
	h.release(1) // slot 1 is free from now on
	h.submit(2, big)
	h.submit(3, big) // the head: waits for slot 2, cannot use slot 1
	h.submit(4, small, big)
	h.pump()
	h.reset()
	h.advance(time.Minute)
	assert.Empty(t, h.rec.sent, "bulk 4 has a request slot 1 serves: kept")
	s, ok := h.p.Slot(1)
	require.True(t, ok)
	assert.Equal(t, pool.SlotFree, s.State)
	h.cancel(4)
	h.pump()
	h.reset()
	h.advance(time.Minute)
	assert.Equal(t, []slotpool.ToAdmission{slotpool.SlotRelease{Slot: 1, Reason: slotpool.ReasonStopped}}, h.rec.sent)
}

func TestReclaimWaitsForTheTask(t *testing.T) {
	h := newHarness(t, pool.Config{}, slot(1, small), slot(2, small))
	h.submit(1, small)
	h.submit(2, small)
	h.pump()
	h.submit(3, small, small) // fulfillable: both slots come back
	h.pump()
	_, armed := h.p.NextDeadline()
	require.False(t, armed)
	require.NoError(t, h.c.Reclaim(1))
	assert.Empty(t, h.pump())
	s, _ := h.p.Slot(1)
	assert.True(t, s.Reclaimed)
	assert.Equal(t, pool.SlotInUse, s.State)
	_, armed = h.p.NextDeadline()
	assert.True(t, armed, "a reclaimed slot is not reusable")
	h.reset()
	h.release(1) // the task ends: the slot goes back, not to bulk 3
	h.pump()
	assert.Equal(t, []slotpool.ToAdmission{slotpool.SlotRelease{Slot: 1, Reason: slotpool.ReasonPreempted}}, h.rec.sent)
	assert.Equal(t, []slotpool.FromAdmission{slotpool.ReleaseConfirmed{Slot: 1, Reason: slotpool.ReasonPreempted}}, h.rec.got)
	assert.Equal(t, pool.BulkWaiting, h.p.State(3))
	_, inPool := h.p.Slot(1)
	assert.False(t, inPool)
}

func TestAskWithdrawnWhenBulkNoLongerNeedsIt(t *testing.T) {
	h := newHarness(t, pool.Config{Timeout: time.Minute}, slot(1, small), slot(2, small))
	h.submit(1, small, small)
	h.pump()
	h.submit(2, small, small) // waits; its ask waits at the cluster
	h.submit(3, small)
	h.pump()
	h.reset()
	h.release(1)
	h.release(2)
	ev := h.pump()
	assert.Equal(t, []pool.Event{pool.Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{2, 1}}}, ev)
	assert.Equal(t, []slotpool.ToAdmission{
		slotpool.AskRelease{ID: 2, Reason: slotpool.ReasonStopped}, // holds one slot, lacks one
		slotpool.Ask{ID: 4, Bulk: 2, Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: small, MinMembers: 1}}, AllOrNothing: true}, Head: true, Holding: []slotpool.SlotID{1}},
		slotpool.AskRelease{ID: 4, Reason: slotpool.ReasonStopped}, // fulfilled
	}, h.rec.sent)
	assert.Equal(t, pool.BulkWaiting, h.p.State(3))
}

func TestStaticClusterGrantsInAskOrder(t *testing.T) {
	c, err := NewStaticCluster(resource.FitsEveryDimension, slot(1, small), slot(2, small), slot(3, big))
	require.NoError(t, err)
	c.Ready()
	gang := func(n int, pr resource.Profile, all bool) slotpool.Gang {
		return slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: pr, MinMembers: n}}, AllOrNothing: all}
	}
	require.NoError(t, c.Handle(t0, slotpool.Ask{ID: 1, Gang: gang(4, small, true)}))
	assert.Empty(t, c.Ready(), "a gang of 4 does not fit: nothing or all")
	require.NoError(t, c.Handle(t0, slotpool.Ask{ID: 2, Gang: gang(1, small, true)}))
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Grant{Ask: 2, Slots: []slotpool.Slot{slot(1, small)}}}, c.Ready(),
		"ask 1 cannot be served yet and does not block ask 2")
	require.NoError(t, c.Handle(t0, slotpool.AskRelease{ID: 1, Reason: slotpool.ReasonStopped}))
	assert.Empty(t, c.Ready())

	// Not all-or-nothing: granted slot by slot, smallest first.
	require.NoError(t, c.Handle(t0, slotpool.Ask{ID: 3, Gang: gang(3, small, false)}))
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Grant{Ask: 3, Slots: []slotpool.Slot{slot(2, small), slot(3, big)}}}, c.Ready())
	require.NoError(t, c.Handle(t0, slotpool.SlotRelease{Slot: 1, Reason: slotpool.ReasonStopped}))
	assert.Equal(t, []slotpool.FromAdmission{
		slotpool.ReleaseConfirmed{Slot: 1, Reason: slotpool.ReasonStopped},
		slotpool.Grant{Ask: 3, Slots: []slotpool.Slot{slot(1, small)}},
	}, c.Ready())

	assert.ErrorIs(t, c.Handle(t0, slotpool.SlotRelease{Slot: 9}), slotpool.ErrUnknownSlot)
	require.NoError(t, c.Handle(t0, slotpool.Ask{ID: 4, Gang: gang(5, small, true)}))
	assert.Error(t, c.Handle(t0, slotpool.Ask{ID: 4, Gang: gang(1, small, true)}), "ask ids are unique")
	assert.ErrorIs(t, c.Revoke(9, slotpool.ReasonPreempted), slotpool.ErrUnknownSlot)
	_, err = NewStaticCluster(resource.FitsEveryDimension, slot(1, small), slot(1, big))
	assert.ErrorIs(t, err, slotpool.ErrDuplicateSlot)
	_, due := c.NextDeadline()
	assert.False(t, due)
}
