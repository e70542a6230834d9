package admission

import (
	"errors"
	"testing"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specAsk sends a speculative ask for one slot of any size.
func sendSpecAsk(t *testing.T, p *Port, now time.Time, id slotpool.AskID, avoid ...string) {
	t.Helper()
	require.NoError(t, p.Handle(now, slotpool.Ask{ID: id, Bulk: -slotpool.BulkID(id), Speculative: true, Avoid: avoid,
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.Unknown, MinMembers: 1}}, AllOrNothing: true}}))
}

// A speculative ask is granted only once no regular ask of any job that
// the slot could serve waits, and never a slot on a node it avoids.
func TestSpeculativeAskWaitsForRegularAsks(t *testing.T) {
	slots := []slotpool.Slot{{ID: 1, Node: "n1"}, {ID: 2, Node: "n1"}, {ID: 3, Node: "n2"}, {ID: 4, Node: "n2"}}
	q, err := New(Config{Slots: slots, Queues: defaultQueue})
	require.NoError(t, err)
	t0 := time.Unix(0, 0)
	a, err := q.Submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	b, err := q.Submit(t0, JobSpec{Name: "b"})
	require.NoError(t, err)
	ask(t, a, t0, 1, 2) // a runs on two slots
	require.Len(t, grantedSlots(a.Ready()), 2)
	ask(t, b, t0, 1, 1) // b runs on one
	require.Len(t, grantedSlots(b.Ready()), 1)
	ask(t, b, t0, 2, 3) // and waits for three at once: the free slot cannot serve it alone

	sendSpecAsk(t, a, t0, 2, "n2")
	assert.Empty(t, a.Ready(), "b's region waits for the free slot (with others): no speculative grant")
	assert.Equal(t, 1, q.SpeculativeAsks())
	require.NoError(t, q.CheckInvariants())

	// b gives up its waiting region: the free slot 4 is on n2, which a
	// avoids. When a gives slot 1 (on n1) back, that one is granted.
	require.NoError(t, b.Handle(t0, slotpool.AskRelease{ID: 2, Reason: slotpool.ReasonStopped}))
	assert.Empty(t, a.Ready(), "the slot free is on n2, which a avoids")
	require.NoError(t, q.CheckInvariants())
	require.NoError(t, a.Handle(t0, slotpool.SlotRelease{Slot: 1, Reason: slotpool.ReasonStopped}))
	assert.Equal(t, []slotpool.SlotID{1}, grantedSlots(a.Ready()))
	assert.Zero(t, q.SpeculativeAsks())
	require.NoError(t, q.CheckInvariants())
}

// The slot granted to a speculative ask is the job's like any other: it
// counts in what the job holds, and comes back with the pool's release.
func TestSpeculativeGrantAndRelease(t *testing.T) {
	slots := []slotpool.Slot{{ID: 1, Node: "n1"}, {ID: 2, Node: "n2"}, {ID: 3, Node: "n3"}}
	q, err := New(Config{Slots: slots, Queues: defaultQueue})
	require.NoError(t, err)
	t0 := time.Unix(0, 0)
	a, err := q.Submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	ask(t, a, t0, 1, 1)
	require.Equal(t, []slotpool.SlotID{1}, grantedSlots(a.Ready()))
	q.Events()

	sendSpecAsk(t, a, t0, 2, "n2")
	msgs := a.Ready()
	require.Equal(t, []slotpool.SlotID{3}, grantedSlots(msgs), "n2 avoided; slot 3 is free and nobody waits")
	assert.Equal(t, slotpool.AskID(2), msgs[0].(slotpool.Grant).Ask)
	assert.Equal(t, 2, a.Granted())
	assert.Zero(t, q.SpeculativeAsks())
	var kinds []EventKind
	for _, ev := range q.Events() {
		kinds = append(kinds, ev.Kind)
	}
	assert.Equal(t, []EventKind{SpeculativeGranted}, kinds)
	require.NoError(t, q.CheckInvariants())

	require.NoError(t, a.Handle(t0, slotpool.SlotRelease{Slot: 3, Reason: slotpool.ReasonStopped}))
	assert.Equal(t, []slotpool.FromAdmission{slotpool.ReleaseConfirmed{Slot: 3, Reason: slotpool.ReasonStopped}}, a.Ready())
	assert.Equal(t, 1, a.Granted())
	require.NoError(t, q.CheckInvariants())
}

// A speculative ask withdrawn, or of a job that ended, is forgotten; a
// speculative ask for more than one slot is refused and changes nothing.
func TestSpeculativeAskForgottenAndRefused(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue})
	require.NoError(t, err)
	t0 := time.Unix(0, 0)
	a, err := q.Submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	b, err := q.Submit(t0, JobSpec{Name: "b"})
	require.NoError(t, err)
	ask(t, a, t0, 1, 1)
	ask(t, b, t0, 1, 1)
	a.Ready()
	b.Ready()
	sendSpecAsk(t, a, t0, 2)
	sendSpecAsk(t, b, t0, 2)
	assert.Equal(t, 2, q.SpeculativeAsks(), "no slot free")

	require.NoError(t, a.Handle(t0, slotpool.AskRelease{ID: 2, Reason: slotpool.ReasonStopped}))
	assert.Equal(t, 1, q.SpeculativeAsks())
	require.NoError(t, b.Failed(t0, errors.New("boom")))
	assert.Zero(t, q.SpeculativeAsks(), "b's ask went with b")
	assert.Empty(t, grantedSlots(a.Ready()), "a withdrew its ask before b's slot came back")
	require.NoError(t, q.CheckInvariants())

	err = a.Handle(t0, slotpool.Ask{ID: 3, Speculative: true,
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.Unknown, MinMembers: 2}}, AllOrNothing: true}})
	require.ErrorIs(t, err, slotpool.ErrSpeculativeAsk)
	assert.Zero(t, q.SpeculativeAsks())
}

// StaticCluster grants no speculative ask: it refuses one with
// ErrSpeculativeAsk.
func TestStaticClusterRefusesSpeculativeAsks(t *testing.T) {
	c, err := NewStaticCluster(resource.FitsEveryDimension, slotpool.Slots(2)...)
	require.NoError(t, err)
	err = c.Handle(time.Unix(0, 0), slotpool.Ask{ID: 1, Speculative: true,
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.Unknown, MinMembers: 1}}}})
	require.ErrorIs(t, err, slotpool.ErrSpeculativeAsk)
	assert.True(t, GrantsSpeculative(mustQueues(t).Cluster()))
}

func mustQueues(t *testing.T) *Queues {
	q, err := New(Config{Slots: clusterSlots(1)})
	require.NoError(t, err)
	return q
}
