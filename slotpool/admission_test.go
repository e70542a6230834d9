package slotpool

import (
	"testing"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// link carries messages between a pool and a static cluster, as a driver
// or simulator would, and records them.
type link struct {
	h       *harness
	c       *StaticCluster
	sent    []ToAdmission
	got     []FromAdmission
	outside []Event
}

func newLink(t *testing.T, cfg Config, slots ...Slot) *link {
	cfg.Admission = true
	c, err := NewStaticCluster(cfg.Matching, slots...)
	require.NoError(t, err)
	l := &link{h: newHarness(t, cfg), c: c}
	l.pump()
	return l
}

// pump carries messages until both sides are quiet and returns the
// events that are not admission messages.
func (l *link) pump() []Event {
	l.outside = nil
	for {
		events := l.h.p.Ready()
		for _, ev := range events {
			if m, ok := ev.(ToAdmission); ok {
				l.sent = append(l.sent, m)
				require.NoError(l.h.t, l.c.Handle(l.h.now, m))
			} else {
				l.outside = append(l.outside, ev)
			}
		}
		msgs := l.c.Ready()
		if len(events) == 0 && len(msgs) == 0 {
			return l.outside
		}
		for _, m := range msgs {
			l.got = append(l.got, m)
			l.h.admit(m)
		}
	}
}

func (l *link) reset() { l.sent, l.got = nil, nil }

func TestPoolWithStaticCluster(t *testing.T) {
	l := newLink(t, Config{IdleTimeout: time.Minute}, slot(1, small), slot(2, small), slot(3, big))
	assert.Equal(t, []FromAdmission{Capacity{Slots: []resource.Count{{Profile: small, N: 2}, {Profile: big, N: 1}}}}, l.got)
	l.reset()

	// Demand is declared as a gang; the grant arrives; the bulk runs.
	l.h.submit(1, small, big)
	assert.Equal(t, []Event{Fulfilled{Bulk: 1, Slots: []SlotID{1, 3}}}, l.pump())
	assert.Equal(t, []ToAdmission{Ask{ID: 1, Bulk: 1, Gang: Gang{
		Groups:       []TaskGroup{{Profile: small, MinMembers: 1}, {Profile: big, MinMembers: 1}},
		AllOrNothing: true,
	}}}, l.sent)
	assert.Equal(t, []FromAdmission{Grant{Ask: 1, Slots: []Slot{slot(1, small), slot(3, big)}}}, l.got)
	l.reset()

	// The admission preempts a slot in use: the task is reported lost so
	// it fails over, and the pool confirms with an echo.
	require.NoError(t, l.c.Revoke(3, ReasonPreempted))
	assert.Equal(t, []Event{Lost{Slot: 3, Bulk: 1, Request: 1, Reason: ReasonPreempted}}, l.pump())
	assert.Equal(t, []ToAdmission{SlotRelease{Slot: 3, Reason: ReasonPreempted}}, l.sent)
	assert.Contains(t, l.c.Available(), slot(3, big))
	l.reset()

	// A bulk larger than the cluster fails at once.
	l.h.submit(2, big, big)
	ev := l.pump()
	require.Len(t, ev, 1)
	assert.ErrorIs(t, ev[0].(Failed).Err, ErrNoResourceAvailable)
	assert.Empty(t, l.sent, "no ask for a bulk that can never fit")

	// The task ends; the slot idles and goes back after the idle timeout,
	// and the release is confirmed.
	l.h.release(1)
	l.pump()
	l.h.advance(time.Minute)
	l.pump()
	assert.Equal(t, []ToAdmission{SlotRelease{Slot: 1, Reason: ReasonStopped}}, l.sent)
	assert.Equal(t, []FromAdmission{ReleaseConfirmed{Slot: 1, Reason: ReasonStopped}}, l.got)
	_, inPool := l.h.p.Slot(1)
	assert.False(t, inPool)
	assert.Len(t, l.c.Available(), 3)
}

func TestIdleSlotKeptWhileAWaitingBulkCouldUseIt(t *testing.T) {
	l := newLink(t, Config{IdleTimeout: time.Minute}, slot(1, small), slot(2, big))
	l.h.submit(1, small)
	l.pump()
	l.h.release(1) // slot 1 is free from now on
	l.h.submit(2, big)
	l.h.submit(3, big) // the head: waits for slot 2, cannot use slot 1
	l.h.submit(4, small, big)
	l.pump()
	l.reset()
	l.h.advance(time.Minute)
	l.pump()
	assert.Empty(t, l.sent, "bulk 4 has a request slot 1 serves: kept")
	s, ok := l.h.p.Slot(1)
	require.True(t, ok)
	assert.Equal(t, SlotFree, s.State)
	l.h.cancel(4)
	l.pump()
	l.reset()
	l.h.advance(time.Minute)
	l.pump()
	assert.Equal(t, []ToAdmission{SlotRelease{Slot: 1, Reason: ReasonStopped}}, l.sent)
}

func TestReclaimWaitsForTheTask(t *testing.T) {
	l := newLink(t, Config{}, slot(1, small), slot(2, small))
	l.h.submit(1, small)
	l.h.submit(2, small)
	l.pump()
	l.h.submit(3, small, small) // fulfillable: both slots come back
	l.pump()
	_, armed := l.h.p.NextDeadline()
	require.False(t, armed)
	require.NoError(t, l.c.Reclaim(1))
	assert.Empty(t, l.pump())
	s, _ := l.h.p.Slot(1)
	assert.True(t, s.Reclaimed)
	assert.Equal(t, SlotInUse, s.State)
	_, armed = l.h.p.NextDeadline()
	assert.True(t, armed, "a reclaimed slot is not reusable")
	l.reset()
	l.h.release(1) // the task ends: the slot goes back, not to bulk 3
	l.pump()
	assert.Equal(t, []ToAdmission{SlotRelease{Slot: 1, Reason: ReasonPreempted}}, l.sent)
	assert.Equal(t, []FromAdmission{ReleaseConfirmed{Slot: 1, Reason: ReasonPreempted}}, l.got)
	assert.Equal(t, BulkWaiting, l.h.p.State(3))
	_, inPool := l.h.p.Slot(1)
	assert.False(t, inPool)
}

func TestAskWithdrawnWhenBulkNoLongerNeedsIt(t *testing.T) {
	l := newLink(t, Config{Timeout: time.Minute}, slot(1, small), slot(2, small))
	l.h.submit(1, small, small)
	l.pump()
	l.h.submit(2, small, small) // waits; its ask waits at the cluster
	l.h.submit(3, small)
	l.pump()
	l.reset()
	l.h.release(1)
	l.h.release(2)
	ev := l.pump()
	assert.Equal(t, []Event{Fulfilled{Bulk: 2, Slots: []SlotID{2, 1}}}, ev)
	assert.Equal(t, []ToAdmission{
		AskRelease{ID: 2, Reason: ReasonStopped}, // holds one slot, lacks one
		Ask{ID: 4, Bulk: 2, Gang: Gang{Groups: []TaskGroup{{Profile: small, MinMembers: 1}}, AllOrNothing: true}},
		AskRelease{ID: 4, Reason: ReasonStopped}, // fulfilled
	}, l.sent)
	assert.Equal(t, BulkWaiting, l.h.p.State(3))
}

// A slot granted for a younger bulk's ask goes to the oldest waiting bulk
// (FIFO); the head's ask always says what it still lacks, and the younger
// bulk asks again when it becomes the head. The static cluster serves asks
// in order, so the grants are delivered by hand, as a policy that favors
// bulk 2 would.
func TestGrantsGoFIFOAndTheHeadAsksForWhatItLacks(t *testing.T) {
	h := newHarness(t, Config{Admission: true})
	gang := func(n int) Gang {
		return Gang{Groups: []TaskGroup{{Profile: small, MinMembers: n}}, AllOrNothing: true}
	}
	h.submit(1, small, small)
	h.submit(2, small)
	assert.Equal(t, []Event{Ask{ID: 1, Bulk: 1, Gang: gang(2)}, Ask{ID: 2, Bulk: 2, Gang: gang(1)}}, h.events())
	h.admit(Grant{Ask: 2, Slots: []Slot{slot(10, small)}})
	assert.Equal(t, []Event{AskRelease{ID: 1, Reason: ReasonStopped}, Ask{ID: 3, Bulk: 1, Gang: gang(1)}}, h.events(),
		"bulk 1 holds the slot and now lacks one")
	h.admit(Grant{Ask: 1, Slots: []Slot{slot(11, small)}}) // late grant of a withdrawn ask: still offered
	assert.Equal(t, []Event{
		Fulfilled{Bulk: 1, Slots: []SlotID{11, 10}},
		AskRelease{ID: 3, Reason: ReasonStopped},
		Ask{ID: 4, Bulk: 2, Gang: gang(1)},
	}, h.events())
	h.admit(Grant{Ask: 4, Slots: []Slot{slot(12, small)}})
	assert.Equal(t, []Event{Fulfilled{Bulk: 2, Slots: []SlotID{12}}}, h.events())
}

func TestHeadAsksAgainWhenItLosesAHeldSlot(t *testing.T) {
	h := newHarness(t, Config{Admission: true})
	h.offer(slot(1, small))
	h.submit(1, small, big)
	assert.Equal(t, []Event{Ask{ID: 1, Bulk: 1, Gang: Gang{Groups: []TaskGroup{{Profile: big, MinMembers: 1}}, AllOrNothing: true}}}, h.events())
	h.lose(1)
	assert.Equal(t, []Event{
		AskRelease{ID: 1, Reason: ReasonStopped},
		Ask{ID: 2, Bulk: 1, Gang: Gang{Groups: []TaskGroup{{Profile: small, MinMembers: 1}, {Profile: big, MinMembers: 1}}, AllOrNothing: true}},
	}, h.events())
}

func TestStaticClusterGrantsInAskOrder(t *testing.T) {
	c, err := NewStaticCluster(resource.FitsEveryDimension, slot(1, small), slot(2, small), slot(3, big))
	require.NoError(t, err)
	c.Ready()
	gang := func(n int, pr resource.Profile, all bool) Gang {
		return Gang{Groups: []TaskGroup{{Profile: pr, MinMembers: n}}, AllOrNothing: all}
	}
	require.NoError(t, c.Handle(t0, Ask{ID: 1, Gang: gang(4, small, true)}))
	assert.Empty(t, c.Ready(), "a gang of 4 does not fit: nothing or all")
	require.NoError(t, c.Handle(t0, Ask{ID: 2, Gang: gang(1, small, true)}))
	assert.Equal(t, []FromAdmission{Grant{Ask: 2, Slots: []Slot{slot(1, small)}}}, c.Ready(),
		"ask 1 cannot be served yet and does not block ask 2")
	require.NoError(t, c.Handle(t0, AskRelease{ID: 1, Reason: ReasonStopped}))
	assert.Empty(t, c.Ready())

	// Not all-or-nothing: granted slot by slot, smallest first.
	require.NoError(t, c.Handle(t0, Ask{ID: 3, Gang: gang(3, small, false)}))
	assert.Equal(t, []FromAdmission{Grant{Ask: 3, Slots: []Slot{slot(2, small), slot(3, big)}}}, c.Ready())
	require.NoError(t, c.Handle(t0, SlotRelease{Slot: 1, Reason: ReasonStopped}))
	assert.Equal(t, []FromAdmission{
		ReleaseConfirmed{Slot: 1, Reason: ReasonStopped},
		Grant{Ask: 3, Slots: []Slot{slot(1, small)}},
	}, c.Ready())

	assert.ErrorIs(t, c.Handle(t0, SlotRelease{Slot: 9}), ErrUnknownSlot)
	require.NoError(t, c.Handle(t0, Ask{ID: 4, Gang: gang(5, small, true)}))
	assert.Error(t, c.Handle(t0, Ask{ID: 4, Gang: gang(1, small, true)}), "ask ids are unique")
	assert.ErrorIs(t, c.Revoke(9, ReasonPreempted), ErrUnknownSlot)
	_, err = NewStaticCluster(resource.FitsEveryDimension, slot(1, small), slot(1, big))
	assert.ErrorIs(t, err, ErrDuplicateSlot)
	_, due := c.NextDeadline()
	assert.False(t, due)
}
