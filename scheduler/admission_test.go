package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// admitted builds a harness whose slots come from a static cluster.
func admitted(t *testing.T, rs *region.Regions, seed uint64, profiles ...resource.Profile) (*harness, *admission.StaticCluster) {
	t.Helper()
	// The harness numbers slots; make them first, then the cluster.
	tmp := newHarness(t, rs, Config{}, seed)
	slots := tmp.sized(profiles...)
	cluster, err := admission.NewStaticCluster(resource.FitsEveryDimension, slots...)
	require.NoError(t, err)
	h := newHarness(t, rs, Config{Admission: cluster}, seed)
	h.provide(slots...)
	return h, cluster
}

// TestAdmissionPath: no Offer at all; the static cluster grants slots to
// the pool's asks, the job finishes in every mode, and only the cluster's
// slots are used.
func TestAdmissionPath(t *testing.T) {
	job := flip119(t)
	for _, mode := range modes() {
		rs := region.FromJob(job, mode)
		for seed := uint64(1); seed <= 10; seed++ {
			n := rs.MinimumSlots() + int(seed%2)
			h, cluster := admitted(t, rs, seed, make([]resource.Profile, n)...)
			h.start()
			require.NotEmpty(t, h.f.deploys, "%v: the cluster grants at Start", mode)
			h.drive()
			require.Equal(t, JobFinished, h.s.State(), "%v seed %d: %v", mode, seed, h.s.Err())
			assert.LessOrEqual(t, h.f.maxUsed, n)
			assert.Empty(t, h.f.toAdm, "the in-process admission gets the messages, not the Ready")
			h.checkClean()
			// Granted slots stay with the pool (no idle timeout): the
			// cluster has none left or the surplus.
			assert.Equal(t, n-h.s.Status().Pool.Slots, len(cluster.Available()))
		}
	}
}

// TestAdmissionRevoke: the cluster revokes a slot a task runs in
// (preemption); after Tick carries the message, the tasks in that slot
// are canceled, the region fails over, and the job still finishes (the
// revoked slot comes back to the cluster and may be granted again).
func TestAdmissionRevoke(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.PointwisePipelinedOnly)
	for seed := uint64(1); seed <= 10; seed++ {
		h, cluster := admitted(t, rs, seed, make([]resource.Profile, rs.MinimumSlots())...)
		h.start()
		for range int(seed) % 3 {
			h.step()
		}
		ids := h.f.runningIDs()
		require.NotEmpty(t, ids)
		victim := h.f.running[ids[h.rng.IntN(len(ids))]]
		inSlot := h.f.runningIn(victim.Slot)
		want, err := h.s.strategy.RegionsToRestart(inSlot[0])
		require.NoError(t, err)

		require.NoError(t, cluster.Revoke(victim.Slot, slotpool.ReasonPreempted))
		assert.Empty(t, h.f.cancels, "nothing happens before the loop carries the message")
		h.tick(h.now)
		require.Len(t, h.f.restarts, 1)
		assert.Equal(t, restartCall{Failed: inSlot[0], Regions: want}, h.f.restarts[0])
		for _, v := range inSlot {
			assert.Contains(t, h.f.cancels, cancelCall{V: v, Attempt: victim.Attempt, Call: h.f.call})
		}
		assert.Equal(t, 1, h.stats().Failovers)
		h.drive()
		require.Equal(t, JobFinished, h.s.State(), "seed %d: %v", seed, h.s.Err())
		h.checkClean()
	}
}

// scriptAdmission is an Admission whose answers the test writes by hand.
type scriptAdmission struct {
	asks []slotpool.Ask           // every ask the pool made, in order
	out  []slotpool.FromAdmission // the answers the next Ready hands out
}

// Handle records the pool's asks and ignores its other messages.
func (a *scriptAdmission) Handle(_ time.Time, msg slotpool.ToAdmission) error {
	if ask, ok := msg.(slotpool.Ask); ok {
		a.asks = append(a.asks, ask)
	}
	return nil
}

// Ready hands out the answers the test wrote, once.
func (a *scriptAdmission) Ready() []slotpool.FromAdmission {
	out := a.out
	a.out = nil
	return out
}

// Tick does nothing: no timers.
func (a *scriptAdmission) Tick(time.Time) {}

// NextDeadline reports no deadline.
func (a *scriptAdmission) NextDeadline() (time.Time, bool) { return time.Time{}, false }

// askOf returns the latest ask of bulk b, or 0.
func (a *scriptAdmission) askOf(b slotpool.BulkID) slotpool.AskID {
	for i := len(a.asks) - 1; i >= 0; i-- {
		if a.asks[i].Bulk == b {
			return a.asks[i].ID
		}
	}
	return 0
}

// TestStaleFulfillmentAfterRevoke: in one batch of admission messages, a
// Revoke of the slot of producer region {A, B} comes before the Grant that
// completes its waiting consumer {C, D}. The failover of {A, B} withdraws
// {C, D}'s bulk, already fulfilled in the pool but not yet seen by the
// scheduler; the pool hands its slots to {Y} and to {A, B}'s new attempt.
// The stale fulfillment of {C, D} must then change nothing: releasing its
// slots by id would free the slots {Y} and {A, B}@1 run in.
func TestStaleFulfillmentAfterRevoke(t *testing.T) {
	rs := region.FromJob(staleJob(t), exchange.AllBlocking)
	adm := &scriptAdmission{}
	h := newHarness(t, rs, Config{Admission: adm}, 1)
	slots := h.unknownSlots(3)
	h.provide(slots...)
	sAB, sX, s2 := slots[0], slots[1], slots[2]
	a, b, x := h.byName("A#0"), h.byName("B#0"), h.byName("X#0")
	h.start()
	rAB, rX := rs.RegionOf(a), rs.RegionOf(x)
	adm.out = []slotpool.FromAdmission{
		slotpool.Grant{Ask: adm.askOf(bulkID(rAB, 0)), Slots: []slotpool.Slot{sAB}},
		slotpool.Grant{Ask: adm.askOf(bulkID(rX, 0)), Slots: []slotpool.Slot{sX}},
	}
	h.tick(h.now)
	require.Equal(t, sAB.ID, h.f.running[a].Slot)
	require.Equal(t, sX.ID, h.f.running[x].Slot)
	h.finish(a) // {C, D} asks for 2 slots
	h.finish(x) // its slot goes to {C, D}, the head; {Y} asks and waits
	rCD := rs.RegionOf(h.byName("C#0"))
	require.Len(t, h.s.Status().Waiting, 2)
	adm.out = []slotpool.FromAdmission{
		slotpool.Revoke{Slot: sAB.ID, Reason: slotpool.ReasonPreempted},
		slotpool.Grant{Ask: adm.askOf(bulkID(rCD, 0)), Slots: []slotpool.Slot{s2}},
	}
	h.tick(h.now)
	require.Len(t, h.f.restarts, 1)
	assert.Equal(t, b, h.f.restarts[0].Failed)
	_, ok := h.deployedIn[regionAttempt{rCD, 0}]
	assert.False(t, ok, "the withdrawn bulk of {C, D} must not deploy")
	assert.Contains(t, h.f.running, h.byName("Y#0"), "{Y} got a slot back from {C, D}")
	assert.Contains(t, h.f.running, a, "{A, B}@1 got the other one")
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	h.checkClean()
}
