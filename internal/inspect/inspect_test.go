package inspect_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/inspect"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/slotpool"
)

// The hooks reach an admission.Queues, and refuse anything else.
func TestHooks(t *testing.T) {
	q, err := admission.New(admission.Config{Slots: slotpool.Slots(2)})
	require.NoError(t, err)
	_, err = q.Submit(time.Unix(0, 0), admission.JobSpec{Name: "a"})
	require.NoError(t, err)
	q.Decide(time.Unix(0, 0))
	assert.NoError(t, inspect.CheckInvariants(q))
	assert.Empty(t, inspect.AskedBackSlots(q, nil))
	n, ok := inspect.SpeculativeAsks(q)
	assert.True(t, ok)
	assert.Zero(t, n)

	assert.ErrorIs(t, inspect.CheckInvariants("not an admission"), inspect.ErrNotQueues)
	var none *admission.Queues
	assert.ErrorIs(t, inspect.CheckInvariants(none), inspect.ErrNotQueues)
	_, ok = inspect.SpeculativeAsks(42)
	assert.False(t, ok)
	assert.Nil(t, inspect.AskedBackSlots(42, nil))
}

// AdmissionOf finds the in-process admission of a multijob.Scheduler, and
// nothing in anything else.
func TestAdmissionOf(t *testing.T) {
	m, err := multijob.New(multijob.Config{Admission: admission.Config{Slots: slotpool.Slots(2)}})
	require.NoError(t, err)
	q, ok := inspect.AdmissionOf(m)
	require.True(t, ok)
	assert.NoError(t, inspect.CheckInvariants(q))

	_, ok = inspect.AdmissionOf("not a scheduler")
	assert.False(t, ok)
	var none *multijob.Scheduler
	_, ok = inspect.AdmissionOf(none)
	assert.False(t, ok)
}
