package admission

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/slotpool"
)

// AskedBack lists a slot a preemption takes, while its task runs.
func TestAskedBackByAPreemption(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(1), Queues: []QueueConfig{{Name: "root.default", Policy: Priority, Preempt: true, ReclaimTimeout: 100 * ms}}})
	require.NoError(t, err)
	low, err := q.Submit(t0, JobSpec{Name: "low", Priority: 1000})
	require.NoError(t, err)
	ask(t, low, t0, 1, 1)
	require.Equal(t, []slotpool.SlotID{1}, grantedSlots(low.Ready()))
	assert.Empty(t, q.AskedBack(nil))

	high, err := q.Submit(t0.Add(10*ms), JobSpec{Name: "high", Priority: 9000})
	require.NoError(t, err)
	ask(t, high, t0.Add(10*ms), 1, 1)
	assert.Equal(t, []AskedBack{{Slot: 1, From: "low", For: "high", Preempted: true}}, q.AskedBack(nil))
	require.NoError(t, q.CheckInvariants())
}
