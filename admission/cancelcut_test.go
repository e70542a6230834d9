package admission

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/slotpool"
)

// A preemption that takes every slot of its victim cancels a region that
// gives nothing else back: the decision is not cut.
func TestCancelCutNotForAVictimLeftWithNothing(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(3), Queues: []QueueConfig{{Name: "root.p", Policy: Priority, Preempt: true}}})
	require.NoError(t, err)
	v, err := q.submit(t0, JobSpec{Name: "v", Queue: "root.p", Priority: 1})
	require.NoError(t, err)
	ask(t, v, t0, 1, 3) // v's region runs in all 3 slots
	v.j.out = nil
	q.Pending()
	c, err := q.submit(t0, JobSpec{Name: "c", Queue: "root.p", Priority: 10})
	require.NoError(t, err)
	require.NoError(t, c.Handle(t0, wholeAsk(1, 1)))
	require.NoError(t, c.Handle(t0, wholeAsk(2, 2)))
	q.Decide(t0)
	require.False(t, q.cancelCut, "v holds nothing more")
	revokes := 0
	for _, m := range v.j.out {
		if _, ok := m.(slotpool.Revoke); ok {
			revokes++
		}
	}
	require.Equal(t, 3, revokes, "all of v's slots are taken for c")
	require.NoError(t, q.checkInvariants())
}

// blocked, asked within a walk over a stateaware queue's claims (as
// dropBlockedIn walks them), leaves the list it walks as it is.
func TestBlockedLeavesTheClaimsWalked(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.sa", Policy: StateAware, MaxRunningJobs: 1, StartingTimeout: NoStartingWait, Preempt: true}}})
	require.NoError(t, err)
	r, err := q.submit(t0, JobSpec{Name: "r", Queue: "root.sa"})
	require.NoError(t, err)
	ask(t, r, t0, 1, 1)
	var xs []*job
	for _, n := range []string{"x1", "x2", "x3"} {
		p, err := q.submit(t0, JobSpec{Name: n, Queue: "root.sa"})
		require.NoError(t, err)
		ask(t, p, t0, 1, 3)
		xs = append(xs, p.j)
	}
	qu := q.queues["root.sa"]
	for _, x := range xs {
		q.reserveFor(x, q.take(q.slots[q.free[0][0]].profile, 1)[0])
	}
	require.Len(t, qu.claims(), 3)
	require.NotPanics(t, func() { q.dropBlockedIn(qu) })
	for _, x := range xs {
		require.Empty(t, x.reserved, "%s is held back by maxRunningJobs: its claim is given up", x.spec.Name)
	}
}
