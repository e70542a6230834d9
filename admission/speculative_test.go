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

// sendSpecAsk sends a speculative ask for one slot of any size, and the
// admission decides.
func sendSpecAsk(t *testing.T, p *port, now time.Time, id slotpool.AskID, avoid ...string) {
	t.Helper()
	require.NoError(t, p.Handle(now, slotpool.Ask{ID: id, Bulk: -slotpool.BulkID(id), Speculative: true, Avoid: avoid,
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.Unknown, MinMembers: 1}}, AllOrNothing: true}}))
	p.q.Decide(now)
}

// A speculative ask is granted only once no regular ask of any job that
// the slot could serve waits, and never a slot on a node it avoids.
func TestSpeculativeAskWaitsForRegularAsks(t *testing.T) {
	slots := []slotpool.Slot{{ID: 1, Node: "n1"}, {ID: 2, Node: "n1"}, {ID: 3, Node: "n2"}, {ID: 4, Node: "n2"}}
	q, err := New(Config{Slots: slots, Queues: defaultQueue})
	require.NoError(t, err)
	t0 := time.Unix(0, 0)
	a, err := q.submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	b, err := q.submit(t0, JobSpec{Name: "b"})
	require.NoError(t, err)
	ask(t, a, t0, 1, 2) // a runs on two slots
	require.Len(t, grantedSlots(a.Ready()), 2)
	ask(t, b, t0, 1, 1) // b runs on one
	require.Len(t, grantedSlots(b.Ready()), 1)
	ask(t, b, t0, 2, 3) // and waits for three at once: the free slot cannot serve it alone

	sendSpecAsk(t, a, t0, 2, "n2")
	assert.Empty(t, a.Ready(), "b's region waits for the free slot (with others): no speculative grant")
	assert.Equal(t, 1, q.speculativeAsks())
	require.NoError(t, q.checkInvariants())

	// b gives up its waiting region: the free slot 4 is on n2, which a
	// avoids. When a gives slot 1 (on n1) back, that one is granted.
	require.NoError(t, b.Handle(t0, slotpool.AskRelease{ID: 2, Reason: slotpool.ReasonStopped}))
	q.Decide(t0)
	assert.Empty(t, a.Ready(), "the slot free is on n2, which a avoids")
	require.NoError(t, q.checkInvariants())
	require.NoError(t, a.Handle(t0, slotpool.SlotRelease{Slot: 1, Reason: slotpool.ReasonStopped}))
	q.Decide(t0)
	assert.Equal(t, []slotpool.SlotID{1}, grantedSlots(a.Ready()))
	assert.Zero(t, q.speculativeAsks())
	require.NoError(t, q.checkInvariants())
}

// A speculative ask is granted no slot its queue, or a parent of it,
// has no room for under its maxSlots: a speculative attempt's slot counts
// as any other.
func TestSpeculativeAskWithinMaxSlots(t *testing.T) {
	slots := []slotpool.Slot{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}}
	q, err := New(Config{Slots: slots, Queues: []QueueConfig{{Name: "root.p", MaxSlots: 2}, {Name: "root.p.a"}}})
	require.NoError(t, err)
	t0 := time.Unix(0, 0)
	a, err := q.submit(t0, JobSpec{Name: "a", Queue: "root.p.a"})
	require.NoError(t, err)
	ask(t, a, t0, 1, 1)
	first := grantedSlots(a.Ready())
	require.Len(t, first, 1)

	sendSpecAsk(t, a, t0, 2)
	require.Len(t, grantedSlots(a.Ready()), 1, "root.p has room for one more")
	sendSpecAsk(t, a, t0, 3)
	assert.Empty(t, a.Ready(), "root.p holds its maxSlots 2, with two slots free")
	assert.Equal(t, 1, q.speculativeAsks())
	require.NoError(t, q.checkInvariants())

	require.NoError(t, a.Handle(t0, slotpool.SlotRelease{Slot: first[0], Reason: slotpool.ReasonStopped}))
	q.Decide(t0)
	assert.Len(t, grantedSlots(a.Ready()), 1, "a slot of root.p came back: room for the ask")
	assert.Zero(t, q.speculativeAsks())
	require.NoError(t, q.checkInvariants())
}

// The slot granted to a speculative ask is the job's like any other: it
// counts in what the job holds, and comes back with the pool's release.
func TestSpeculativeGrantAndRelease(t *testing.T) {
	slots := []slotpool.Slot{{ID: 1, Node: "n1"}, {ID: 2, Node: "n2"}, {ID: 3, Node: "n3"}}
	q, err := New(Config{Slots: slots, Queues: defaultQueue})
	require.NoError(t, err)
	t0 := time.Unix(0, 0)
	a, err := q.submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	ask(t, a, t0, 1, 1)
	require.Equal(t, []slotpool.SlotID{1}, grantedSlots(a.Ready()))
	q.Events()

	sendSpecAsk(t, a, t0, 2, "n2")
	msgs := a.Ready()
	require.Equal(t, []slotpool.SlotID{3}, grantedSlots(msgs), "n2 avoided; slot 3 is free and nobody waits")
	assert.Equal(t, slotpool.AskID(2), msgs[0].(slotpool.Grant).Ask)
	assert.Equal(t, 2, a.Granted())
	assert.Zero(t, q.speculativeAsks())
	var kinds []EventKind
	for _, ev := range q.Events() {
		kinds = append(kinds, ev.Kind)
	}
	assert.Equal(t, []EventKind{SpeculativeGranted}, kinds)
	require.NoError(t, q.checkInvariants())

	require.NoError(t, a.Handle(t0, slotpool.SlotRelease{Slot: 3, Reason: slotpool.ReasonStopped}))
	assert.Equal(t, []slotpool.FromAdmission{slotpool.ReleaseConfirmed{Slot: 3, Reason: slotpool.ReasonStopped}}, a.Ready())
	assert.Equal(t, 1, a.Granted())
	require.NoError(t, q.checkInvariants())
}

// A speculative ask withdrawn, or of a job that ended, is forgotten; a
// speculative ask for more than one slot is refused and changes nothing.
func TestSpeculativeAskForgottenAndRefused(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue})
	require.NoError(t, err)
	t0 := time.Unix(0, 0)
	a, err := q.submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	b, err := q.submit(t0, JobSpec{Name: "b"})
	require.NoError(t, err)
	ask(t, a, t0, 1, 1)
	ask(t, b, t0, 1, 1)
	a.Ready()
	b.Ready()
	sendSpecAsk(t, a, t0, 2)
	sendSpecAsk(t, b, t0, 2)
	assert.Equal(t, 2, q.speculativeAsks(), "no slot free")

	require.NoError(t, a.Handle(t0, slotpool.AskRelease{ID: 2, Reason: slotpool.ReasonStopped}))
	assert.Equal(t, 1, q.speculativeAsks())
	require.NoError(t, b.Failed(t0, errors.New("boom")))
	q.Decide(t0)
	assert.Zero(t, q.speculativeAsks(), "b's ask went with b")
	assert.Empty(t, grantedSlots(a.Ready()), "a withdrew its ask before b's slot came back")
	require.NoError(t, q.checkInvariants())

	err = a.Handle(t0, slotpool.Ask{ID: 3, Speculative: true,
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.Unknown, MinMembers: 2}}, AllOrNothing: true}})
	require.ErrorIs(t, err, slotpool.ErrSpeculativeAsk)
	assert.Zero(t, q.speculativeAsks())
}

// StaticCluster grants no speculative ask: it refuses one with
// ErrSpeculativeAsk.
func TestStaticClusterRefusesSpeculativeAsks(t *testing.T) {
	c, err := NewStaticCluster(resource.FitsEveryDimension, slotpool.Slots(2)...)
	require.NoError(t, err)
	err = c.Handle(time.Unix(0, 0), slotpool.Ask{ID: 1, Speculative: true,
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.Unknown, MinMembers: 1}}}})
	require.ErrorIs(t, err, slotpool.ErrSpeculativeAsk)
	assert.True(t, GrantsSpeculative(mustQueues(t)))
}

func mustQueues(t *testing.T) *Queues {
	q, err := New(Config{Slots: clusterSlots(1)})
	require.NoError(t, err)
	return q
}
