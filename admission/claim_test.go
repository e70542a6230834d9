package admission

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/inspect"
	"github.com/regionsched/regionsched/slotpool"
)

// Under fair share a claim goes when its job holds its share and a job
// below its share waits. On 2 slots v (5000) holds both; c (5000)
// arrives and, below its share of 1, claims one of v's slots. b (9000)
// arrives: the shares become v 1, b 1, c 0, so c holds its share and b,
// below its share, comes first. The slot asked back is b's now, and b
// is granted it when v gives it back; c gets nothing.
func TestFairShareClaimGoesToTheJobBelowItsShare(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: []QueueConfig{{Name: "root.default", Policy: FairShare}}})
	require.NoError(t, err)
	v, err := q.submit(t0, JobSpec{Name: "v"})
	require.NoError(t, err)
	ask(t, v, t0, 1, 1)
	ask(t, v, t0, 2, 1)
	require.ElementsMatch(t, []slotpool.SlotID{1, 2}, grantedSlots(v.Ready()))

	c, err := q.submit(t0.Add(100*ms), JobSpec{Name: "c"})
	require.NoError(t, err)
	ask(t, c, t0.Add(100*ms), 1, 1)
	back := q.askedBack(nil)
	require.Len(t, back, 1, "c claims one of v's slots")
	slot := back[0].Slot
	assert.Equal(t, inspect.AskedBack{Slot: slot, From: "v", For: "c"}, back[0])
	assert.Contains(t, v.Ready(), slotpool.FromAdmission(slotpool.Reclaim{Slot: slot}))
	require.NoError(t, q.checkInvariants())

	b, err := q.submit(t0.Add(200*ms), JobSpec{Name: "b", Priority: 9000})
	require.NoError(t, err)
	ask(t, b, t0.Add(200*ms), 1, 1)
	assert.Equal(t, []inspect.AskedBack{{Slot: slot, From: "v", For: "b"}}, q.askedBack(nil), "c's claim went; b claims the slot")
	require.NoError(t, q.checkInvariants())

	require.NoError(t, v.Handle(t0.Add(1000*ms), slotpool.SlotRelease{Slot: slot}))
	q.Decide(t0.Add(1000 * ms))
	assert.Equal(t, []slotpool.SlotID{slot}, grantedSlots(b.Ready()))
	assert.Empty(t, grantedSlots(c.Ready()))
	assert.Equal(t, 0, c.Granted())
	assert.Empty(t, q.askedBack(nil))
	require.NoError(t, q.checkInvariants())
}

// AskedBack lists a slot a preemption takes, while its task runs.
func TestAskedBackByAPreemption(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(1), Queues: []QueueConfig{{Name: "root.default", Policy: Priority, Preempt: true, ReclaimTimeout: 100 * ms}}})
	require.NoError(t, err)
	low, err := q.submit(t0, JobSpec{Name: "low", Priority: 1000})
	require.NoError(t, err)
	ask(t, low, t0, 1, 1)
	require.Equal(t, []slotpool.SlotID{1}, grantedSlots(low.Ready()))
	assert.Empty(t, q.askedBack(nil))

	high, err := q.submit(t0.Add(10*ms), JobSpec{Name: "high", Priority: 9000})
	require.NoError(t, err)
	ask(t, high, t0.Add(10*ms), 1, 1)
	assert.Equal(t, []inspect.AskedBack{{Slot: 1, From: "low", For: "high", Preempted: true}}, q.askedBack(nil))
	require.NoError(t, q.checkInvariants())
}
