package admission

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// capacities returns the Capacity messages among msgs.
func capacities(msgs []slotpool.FromAdmission) [][]resource.Count {
	var out [][]resource.Count
	for _, m := range msgs {
		if c, ok := m.(slotpool.Capacity); ok {
			out = append(out, c.Slots)
		}
	}
	return out
}

func TestAddSlotsServesAWaitingJob(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue})
	require.NoError(t, err)
	a, err := q.submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	ask(t, a, t0, 1, 3)
	assert.Empty(t, grantedSlots(a.Ready()), "2 slots cannot serve a bulk of 3")
	require.NoError(t, q.checkInvariants())

	require.NoError(t, q.AddSlots(t0.Add(ms), slotpool.Slot{ID: 7, Profile: small}))
	assert.Equal(t, []resource.Count{{Profile: small, N: 3}}, q.Capacity())
	q.Decide(t0.Add(ms))
	msgs := a.Ready()
	assert.ElementsMatch(t, []slotpool.SlotID{1, 2, 7}, grantedSlots(msgs))
	assert.Equal(t, [][]resource.Count{{{Profile: small, N: 3}}}, capacities(msgs), "the job is told the new capacity")
	require.NoError(t, q.checkInvariants())
}

func TestAddSlotsOfANewProfile(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(1), Queues: defaultQueue, Matching: resource.ExactMatch})
	require.NoError(t, err)
	a, err := q.submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	require.NoError(t, a.Handle(t0, slotpool.Ask{ID: 1, Bulk: 1, Gang: slotpool.Gang{
		Groups: []slotpool.TaskGroup{{Profile: big, MinMembers: 1}}, AllOrNothing: true}}))
	q.Decide(t0)
	assert.Empty(t, grantedSlots(a.Ready()), "no slot of that profile yet")

	require.NoError(t, q.AddSlots(t0.Add(ms), slotpool.Slot{ID: 9, Profile: big, Node: "n9"}))
	assert.ElementsMatch(t, []resource.Count{{Profile: small, N: 1}, {Profile: big, N: 1}}, q.Capacity())
	q.Decide(t0.Add(ms))
	assert.Equal(t, []slotpool.SlotID{9}, grantedSlots(a.Ready()))
	require.NoError(t, q.checkInvariants())
}

func TestAddSlotsRefusesDuplicates(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue})
	require.NoError(t, err)
	for name, slots := range map[string][]slotpool.Slot{
		"an id the cluster has": {{ID: 5, Profile: small}, {ID: 2, Profile: small}},
		"an id given twice":     {{ID: 5, Profile: small}, {ID: 5, Profile: small}},
	} {
		err := q.AddSlots(t0, slots...)
		var se *slotpool.SlotError
		require.ErrorAs(t, err, &se, name)
		assert.Equal(t, "add", se.Op, name)
		assert.ErrorIs(t, err, slotpool.ErrDuplicateSlot, name)
		assert.Equal(t, []resource.Count{{Profile: small, N: 2}}, q.Capacity(), "%s: nothing changed", name)
		require.NoError(t, q.checkInvariants(), name)
	}
	require.NoError(t, q.AddSlots(t0), "no slot: nothing to do")
	assert.Equal(t, []resource.Count{{Profile: small, N: 2}}, q.Capacity())
}

func TestAddSlotsLeavesRejectedJobsRejected(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue, Cluster: []resource.Count{{Profile: small, N: 2}}})
	require.NoError(t, err)
	r, err := q.submit(t0, JobSpec{Name: "r", Largest: []resource.Count{{Profile: small, N: 3}}})
	require.NoError(t, err)
	require.Equal(t, JobRejected, r.State())
	r.Ready()

	require.NoError(t, q.AddSlots(t0.Add(ms), slotpool.Slot{ID: 3, Profile: small}))
	assert.Equal(t, JobRejected, r.State())
	assert.Empty(t, r.Ready(), "a rejected job is told nothing")
	assert.Equal(t, []resource.Count{{Profile: small, N: 2}, {Profile: small, N: 1}}, q.cfg.Cluster, "the configured cluster counts the slot too")

	// A job submitted now fits the grown cluster.
	b, err := q.submit(t0.Add(2*ms), JobSpec{Name: "b", Largest: []resource.Count{{Profile: small, N: 3}}})
	require.NoError(t, err)
	assert.Equal(t, JobAccepted, b.State())
	ask(t, b, t0.Add(2*ms), 1, 3)
	assert.Len(t, grantedSlots(b.Ready()), 3)
	require.NoError(t, q.checkInvariants())
}
