package pool

import (
	"errors"
	"testing"
	"time"

	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// fakeAdmission grants every ask in full with new small slots numbered
// from 100. It hands its messages out newest first and one per Ready, so
// that the link needs several rounds to carry them. It records what it
// handled and when it was ticked, reports deadline (zero: none), and
// rejects every message while reject is set.
type fakeAdmission struct {
	next     slotpool.SlotID
	queue    []slotpool.FromAdmission
	handled  []slotpool.ToAdmission
	ticks    []time.Time
	deadline time.Time
	reject   bool
}

var errFake = errors.New("fake admission says no")

func newFakeAdmission() *fakeAdmission { return &fakeAdmission{next: 100} }

func (a *fakeAdmission) Handle(_ time.Time, msg slotpool.ToAdmission) error {
	if a.reject {
		return errFake
	}
	a.handled = append(a.handled, msg)
	if ask, ok := msg.(slotpool.Ask); ok {
		g := slotpool.Grant{Ask: ask.ID}
		for range ask.Gang.Counts()[0].N {
			g.Slots = append(g.Slots, slot(a.next, small))
			a.next++
		}
		a.queue = append(a.queue, g)
	}
	return nil
}

func (a *fakeAdmission) Ready() []slotpool.FromAdmission {
	if len(a.queue) == 0 {
		return nil
	}
	last := a.queue[len(a.queue)-1]
	a.queue = a.queue[:len(a.queue)-1]
	return []slotpool.FromAdmission{last}
}

func (a *fakeAdmission) Tick(now time.Time) { a.ticks = append(a.ticks, now) }

func (a *fakeAdmission) NextDeadline() (time.Time, bool) {
	return a.deadline, !a.deadline.IsZero()
}

func smallGang(n int) slotpool.Gang {
	return slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: small, MinMembers: n}}, AllOrNothing: true}
}

func TestLinkPumpsUntilQuietAndReturnsOnlyTheOtherEvents(t *testing.T) {
	h := newHarness(t, Config{Admission: true})
	a := newFakeAdmission()
	l := NewLink(h.p, a, nil)
	assert.Same(t, h.p, l.Pool())
	assert.Same(t, a, l.Admission())
	h.submit(1, small, small)
	h.submit(2, small)

	// The grant of bulk 2's ask comes first and goes to bulk 1 (FIFO),
	// which asks again for what it lacks; that grant fulfills bulk 1,
	// bulk 2 becomes the head and asks again; the late grant of bulk 1's
	// first ask leaves two surplus free slots.
	assert.Equal(t, []Event{
		Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{103, 102}},
		Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{104}},
	}, l.Ready(h.now))
	h.check()
	assert.Equal(t, []slotpool.ToAdmission{
		slotpool.Ask{ID: 1, Bulk: 1, Gang: smallGang(2), Head: true},
		slotpool.Ask{ID: 2, Bulk: 2, Gang: smallGang(1)},
		slotpool.AskRelease{ID: 1, Reason: slotpool.ReasonStopped},
		slotpool.Ask{ID: 3, Bulk: 1, Gang: smallGang(1), Head: true, Holding: []slotpool.SlotID{102}},
		slotpool.Ask{ID: 4, Bulk: 2, Gang: smallGang(1), Head: true},
	}, a.handled)
	assert.Equal(t, []slotpool.Slot{slot(100, small), slot(101, small)}, h.p.FreeSlots())
	assert.Empty(t, h.p.Ready(), "the pool is quiet")
	assert.Empty(t, a.Ready(), "the admission is quiet")
	assert.Empty(t, l.Ready(h.now))
}

func TestLinkWithoutAdmissionReturnsEveryEvent(t *testing.T) {
	h := newHarness(t, Config{Admission: true, Timeout: time.Minute})
	l := NewLink(h.p, nil, nil)
	assert.Nil(t, l.Admission())
	h.submit(1, small)
	assert.Equal(t, []Event{slotpool.Ask{ID: 1, Bulk: 1, Gang: smallGang(1), Head: true}}, l.Ready(h.now),
		"the caller carries the ask to an admission elsewhere")
	h.admit(slotpool.Grant{Ask: 1, Slots: []slotpool.Slot{slot(10, small)}})
	assert.Equal(t, []Event{Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{10}}}, l.Ready(h.now))

	h.submit(2, small, small)
	assert.Equal(t, []Event{slotpool.Ask{ID: 2, Bulk: 2, Gang: smallGang(2), Head: true}}, l.Ready(h.now))
	deadline, ok := l.NextDeadline()
	require.True(t, ok, "bulk 2 is not fulfillable: one reusable slot for two requests")
	l.Tick(deadline) // no admission to tick: only the pool
	h.check()
	ev := l.Ready(deadline)
	require.Len(t, ev, 2)
	assert.Equal(t, slotpool.AskRelease{ID: 2, Reason: slotpool.ReasonTimeout}, ev[0])
	assert.Equal(t, slotpool.BulkID(2), ev[1].(Failed).Bulk)
}

func TestLinkNextDeadlineIsTheEarlierOfBothSides(t *testing.T) {
	const poolTimeout = time.Minute
	for _, tc := range []struct {
		name      string
		poolDue   bool          // the pool has a bulk timing out at t0+poolTimeout
		admDue    time.Duration // the admission's deadline after t0 (0: none)
		want      time.Duration // 0: none
		wantFound bool
	}{
		{name: "neither"},
		{name: "pool only", poolDue: true, want: poolTimeout, wantFound: true},
		{name: "admission only", admDue: 2 * time.Minute, want: 2 * time.Minute, wantFound: true},
		{name: "pool earlier", poolDue: true, admDue: 2 * time.Minute, want: poolTimeout, wantFound: true},
		{name: "admission earlier", poolDue: true, admDue: 30 * time.Second, want: 30 * time.Second, wantFound: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{Timeout: poolTimeout})
			if tc.poolDue {
				h.offer(slot(1, small))
				h.submit(1, small, small)
			}
			a := newFakeAdmission()
			if tc.admDue > 0 {
				a.deadline = t0.Add(tc.admDue)
			}
			got, ok := NewLink(h.p, a, nil).NextDeadline()
			require.Equal(t, tc.wantFound, ok)
			if ok {
				assert.Equal(t, t0.Add(tc.want), got)
			}
		})
	}
}

func TestLinkTickReachesBothSides(t *testing.T) {
	h := newHarness(t, Config{Timeout: time.Minute})
	a := newFakeAdmission()
	a.deadline = t0.Add(time.Minute)
	l := NewLink(h.p, a, nil)
	h.offer(slot(1, small))
	h.submit(1, small, small)
	deadline, ok := l.NextDeadline()
	require.True(t, ok)
	l.Tick(deadline)
	h.check()
	assert.Equal(t, []time.Time{deadline}, a.ticks)
	ev := l.Ready(deadline)
	require.Len(t, ev, 1)
	assert.Equal(t, slotpool.BulkID(1), ev[0].(Failed).Bulk, "the pool's timer fired")
}

func TestLinkLogsAndDropsRejectedMessages(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	h := newHarness(t, Config{Admission: true})
	a := newFakeAdmission()
	l := NewLink(h.p, a, zap.New(core))

	// The admission rejects the pool's ask: logged, not returned.
	a.reject = true
	h.submit(1, small)
	assert.Empty(t, l.Ready(h.now))
	h.check()
	assertWarned(t, logs, "admission rejected a message of the pool", errFake.Error())
	assert.Empty(t, a.handled)
	assert.Equal(t, BulkWaiting, h.p.State(1))

	// The pool rejects a revoke of a slot it does not have: logged, and
	// the admission's next message still arrives.
	a.reject = false
	a.queue = []slotpool.FromAdmission{slotpool.Grant{Ask: 1, Slots: []slotpool.Slot{slot(10, small)}}, slotpool.Revoke{Slot: 99, Reason: slotpool.ReasonPreempted}}
	assert.Equal(t, []Event{Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{10}}}, l.Ready(h.now))
	h.check()
	assertWarned(t, logs, "pool rejected a message of the admission", "slotpool: revoke slot 99: unknown slot")
	assert.Equal(t, slotpool.Stats{Slots: 1, InUse: 1}, h.p.Stats())
}

// assertWarned asserts that exactly one entry was logged since the last
// call, a warning with message msg and error err.
func assertWarned(t *testing.T, logs *observer.ObservedLogs, msg, err string) {
	t.Helper()
	entries := logs.TakeAll()
	require.Len(t, entries, 1)
	assert.Equal(t, zap.WarnLevel, entries[0].Level)
	assert.Equal(t, msg, entries[0].Message)
	assert.Equal(t, err, entries[0].ContextMap()["error"])
}
