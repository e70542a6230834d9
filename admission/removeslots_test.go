package admission

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// revoked returns the slots of the Revokes among msgs, with their reasons.
func revoked(msgs []slotpool.FromAdmission) map[slotpool.SlotID]slotpool.Reason {
	out := map[slotpool.SlotID]slotpool.Reason{}
	for _, m := range msgs {
		if r, ok := m.(slotpool.Revoke); ok {
			out[r.Slot] = r.Reason
		}
	}
	return out
}

// A free slot removed: the capacity shrinks, the jobs are told, and the
// slot is never granted again.
func TestRemoveSlotsFree(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(3), Queues: defaultQueue})
	require.NoError(t, err)
	a, err := q.submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	a.Ready()
	require.NoError(t, q.RemoveSlots(t0.Add(ms), 2))
	assert.Equal(t, []resource.Count{{Profile: small, N: 2}}, q.Capacity())
	assert.Equal(t, [][]resource.Count{{{Profile: small, N: 2}}}, capacities(a.Ready()), "the job is told the new capacity")
	require.NoError(t, q.checkInvariants())
	ask(t, a, t0.Add(2*ms), 1, 2)
	assert.ElementsMatch(t, []slotpool.SlotID{1, 3}, grantedSlots(a.Ready()))
	ask(t, a, t0.Add(2*ms), 2, 1)
	assert.Empty(t, grantedSlots(a.Ready()), "slot 2 is gone")
	require.NoError(t, q.checkInvariants())
}

// A slot removed while a job holds it: the job's pool is sent a Revoke
// with ReasonLost (its task fails over), the pool's answer is taken
// without a confirmation, and the job's count of slots drops.
func TestRemoveSlotsHeldIsLostForItsJob(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(3), Queues: defaultQueue})
	require.NoError(t, err)
	a, err := q.submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	ask(t, a, t0, 1, 2)
	held := grantedSlots(a.Ready())
	require.Len(t, held, 2)
	require.NoError(t, q.RemoveSlots(t0.Add(ms), held[0]))
	msgs := a.Ready()
	assert.Equal(t, map[slotpool.SlotID]slotpool.Reason{held[0]: slotpool.ReasonLost}, revoked(msgs))
	assert.Equal(t, 1, a.Granted())
	require.NoError(t, a.Handle(t0.Add(ms), slotpool.SlotRelease{Slot: held[0], Reason: slotpool.ReasonLost}), "the pool's answer to the Revoke")
	q.Decide(t0.Add(ms))
	assert.Empty(t, a.Ready(), "no confirmation of the answer to a Revoke")
	require.NoError(t, q.checkInvariants())
	err = a.Handle(t0.Add(ms), slotpool.SlotRelease{Slot: held[0]})
	assert.ErrorIs(t, err, slotpool.ErrUnknownSlot, "a second release of the removed slot")
}

// Unknown ids, removed ones and ids given twice: a typed error naming
// the slot, and nothing changes.
func TestRemoveSlotsRefusesUnknown(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(3), Queues: defaultQueue})
	require.NoError(t, err)
	require.NoError(t, q.RemoveSlots(t0, 3))
	for name, ids := range map[string][]slotpool.SlotID{
		"an id never added": {1, 9},
		"an id removed":     {1, 3},
		"an id given twice": {1, 1},
	} {
		err := q.RemoveSlots(t0, ids...)
		var se *slotpool.SlotError
		require.ErrorAs(t, err, &se, name)
		assert.Equal(t, "remove", se.Op, name)
		assert.Equal(t, ids[1], se.Slot, name)
		assert.ErrorIs(t, err, slotpool.ErrUnknownSlot, name)
		assert.Equal(t, []resource.Count{{Profile: small, N: 2}}, q.Capacity(), "%s: nothing changed", name)
		require.NoError(t, q.checkInvariants(), name)
	}
	require.NoError(t, q.RemoveSlots(t0), "no slot: nothing to do")
}

// A removed slot added again (the node came back) is granted again.
func TestRemoveSlotsThenAddAgain(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue})
	require.NoError(t, err)
	a, err := q.submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	require.NoError(t, q.RemoveSlots(t0, 2))
	ask(t, a, t0, 1, 1)
	ask(t, a, t0, 2, 1)
	assert.Equal(t, []slotpool.SlotID{1}, grantedSlots(a.Ready()))
	require.NoError(t, q.AddSlots(t0.Add(ms), slotpool.Slot{ID: 2, Profile: small}))
	q.Decide(t0.Add(ms))
	assert.Equal(t, []slotpool.SlotID{2}, grantedSlots(a.Ready()))
	assert.Equal(t, []resource.Count{{Profile: small, N: 2}}, q.Capacity())
	require.NoError(t, q.checkInvariants())
}

// The slot of a job's driver removed: the job fails with a
// *DriverLostError naming it, and its other slots go back.
func TestRemoveSlotsOfADriverFailsItsJob(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(3), Queues: defaultQueue})
	require.NoError(t, err)
	d := resource.Unknown
	a, err := q.submit(t0, JobSpec{Name: "a", Driver: &d})
	require.NoError(t, err)
	q.Decide(t0)
	slot, ok := a.DriverSlot()
	require.True(t, ok)
	ask(t, a, t0, 1, 1)
	require.Len(t, grantedSlots(a.Ready()), 1)
	require.NoError(t, q.RemoveSlots(t0.Add(ms), slot))
	assert.Equal(t, JobFailed, a.State())
	var dl *DriverLostError
	require.ErrorAs(t, a.Err(), &dl)
	assert.Equal(t, DriverLostError{Job: "a", Slot: slot, Why: "its slot was removed"}, *dl)
	assert.ErrorIs(t, a.Err(), ErrDriverLost)
	assert.Zero(t, a.Granted())
	assert.Equal(t, 2, q.nFree, "its task's slot is free again, its driver's gone")
	require.NoError(t, q.checkInvariants())
}

// A job whose largest region no longer fits once slots are removed fails
// at once with a *CapacityLostError saying what it lacks; one that still
// fits waits on.
func TestRemoveSlotsFailsAJobThatNoLongerFits(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(3), Queues: defaultQueue})
	require.NoError(t, err)
	big3, err := q.submit(t0, JobSpec{Name: "big3", Largest: []resource.Count{{Profile: small, N: 3}}, LargestName: "region 0"})
	require.NoError(t, err)
	two, err := q.submit(t0, JobSpec{Name: "two", Largest: []resource.Count{{Profile: small, N: 2}}})
	require.NoError(t, err)
	require.NoError(t, q.RemoveSlots(t0.Add(ms), 3))
	assert.Equal(t, JobFailed, big3.State())
	var cl *CapacityLostError
	require.ErrorAs(t, big3.Err(), &cl)
	assert.Equal(t, "big3", cl.Job)
	assert.Equal(t, "root.default", cl.Queue)
	assert.Contains(t, cl.Reason, "region 0 needs 3 slots at once")
	assert.Contains(t, cl.Reason, "missing 1 x")
	assert.ErrorIs(t, big3.Err(), ErrCapacityLost)
	assert.Equal(t, JobAccepted, two.State())
	require.NoError(t, q.checkInvariants())
}

// A gang placeholder removed: the gang holds one less, and its job is
// told the smaller cluster.
func TestRemoveSlotsPlaceholder(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(4), Queues: defaultQueue})
	require.NoError(t, err)
	g, err := q.submit(t0, JobSpec{Name: "g", Gang: &Gang{MinSlots: 3, Timeout: time.Minute}})
	require.NoError(t, err)
	q.Decide(t0)
	require.Len(t, g.j.placeholders, 3)
	require.NoError(t, q.RemoveSlots(t0.Add(ms), q.slots[g.j.placeholders[0]].slot.ID))
	assert.Len(t, g.j.placeholders, 2)
	assert.Equal(t, 2, g.Granted())
	assert.Equal(t, [][]resource.Count{{{Profile: small, N: 3}}}, capacities(g.Ready())[1:])
	q.Decide(t0.Add(ms))
	require.NoError(t, q.checkInvariants())
}

// The configured cluster (Config.Cluster) counts a removed slot no more.
func TestRemoveSlotsShrinksTheConfiguredCluster(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue, Cluster: []resource.Count{{Profile: small, N: 2}, {Profile: big, N: 1}}})
	require.NoError(t, err)
	require.NoError(t, q.RemoveSlots(t0, 1, 2))
	assert.Equal(t, []resource.Count{{Profile: big, N: 1}}, q.cfg.Cluster)
	assert.Empty(t, q.Capacity())
	require.NoError(t, q.checkInvariants())
}

// DriverLost: the job fails naming its driver; its driver's slot goes
// back; unknown jobs, ended ones and drivers without a slot are refused.
func TestDriverLost(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue})
	require.NoError(t, err)
	d := resource.Unknown
	a, err := q.submit(t0, JobSpec{Name: "a", Driver: &d})
	require.NoError(t, err)
	plain, err := q.submit(t0, JobSpec{Name: "plain"})
	require.NoError(t, err)
	q.Decide(t0)
	slot, ok := a.DriverSlot()
	require.True(t, ok)
	assert.ErrorIs(t, q.DriverLost(t0, "nobody", "gone"), ErrUnknownJob)
	assert.ErrorIs(t, q.DriverLost(t0, "plain", "gone"), ErrNoDriver)
	require.NoError(t, q.DriverLost(t0.Add(ms), "a", "its pod was deleted"))
	assert.Equal(t, JobFailed, a.State())
	assert.EqualError(t, a.Err(), `admission: driver lost: the driver of job "a" (slot `+fmt.Sprint(slot)+`): its pod was deleted`)
	assert.Equal(t, 2, q.nFree, "the driver's slot is back")
	var te *TransitionError
	assert.ErrorAs(t, q.DriverLost(t0.Add(ms), "a", "again"), &te)
	assert.Equal(t, JobAccepted, plain.State())
	require.NoError(t, q.checkInvariants())
}

// A slot being preempted, its Revoke sent and not answered yet, removed:
// no second Revoke is sent, and the pool's answer to the first is taken
// without a confirmation.
func TestRemoveSlotsRevokedAlready(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: []QueueConfig{{Name: "root.default", Policy: Priority, Preempt: true}}})
	require.NoError(t, err)
	low, err := q.submit(t0, JobSpec{Name: "low", Priority: 1})
	require.NoError(t, err)
	ask(t, low, t0, 1, 2)
	require.Len(t, grantedSlots(low.Ready()), 2)
	high, err := q.submit(t0.Add(ms), JobSpec{Name: "high", Priority: 9000})
	require.NoError(t, err)
	high.Ready()
	ask(t, high, t0.Add(ms), 1, 1)
	preempted := revoked(low.Ready())
	require.Len(t, preempted, 1, "one of low's slots is preempted at once")
	var slot slotpool.SlotID
	for s, why := range preempted {
		slot = s
		require.Equal(t, slotpool.ReasonPreempted, why)
	}
	require.NoError(t, q.RemoveSlots(t0.Add(2*ms), slot))
	assert.Empty(t, revoked(low.Ready()), "no second Revoke")
	require.NoError(t, low.Handle(t0.Add(2*ms), slotpool.SlotRelease{Slot: slot, Reason: slotpool.ReasonPreempted}))
	q.Decide(t0.Add(2 * ms))
	for _, m := range low.Ready() {
		_, confirm := m.(slotpool.ReleaseConfirmed)
		assert.False(t, confirm, "no confirmation of the answer to a Revoke")
	}
	assert.Equal(t, []resource.Count{{Profile: small, N: 1}}, q.Capacity())
	assert.Equal(t, 1, low.Granted()+high.Granted(), "one slot left between them")
	require.NoError(t, q.checkInvariants())
}
