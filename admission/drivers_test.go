package admission

import (
	"testing"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A reclaim for a driver is made only if its first regions can follow
// it (as a gang would count them): low (100) runs its driver and a
// region of 1 slot for 3 s; high (9000, a driver and a region of 1 slot)
// arrives at 500 ms on a queue with a reclaim timeout of 0. On 2 slots
// high's driver would take low's region's slot and then wait forever
// beside low's driver: nothing is reclaimed, high runs when low ends. On
// 3 slots (low running two regions) its region can follow: it reclaims
// at once.
func TestDriverReclaimNeedsItsFirstRegions(t *testing.T) {
	drv := small
	for _, c := range []struct {
		name    string
		slots   int
		low     []int
		lost    int
		deploys time.Duration // high's first region
	}{
		{"no room beside the drivers", 2, []int{1}, 0, 4000 * ms},
		{"room for its region", 3, []int{1, 1}, 2, 1500 * ms},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSim(t, Config{Slots: clusterSlots(c.slots), Queues: []QueueConfig{{Name: "root.default", Policy: Priority, Preempt: true}}},
				simConfig{checks: true, record: true})
			low := s.add(JobSpec{Name: "low", Priority: 100, Driver: &drv}, 0, c.low, uniform(len(c.low), 3000*ms), len(c.low), 0)
			high := s.add(JobSpec{Name: "high", Priority: 9000, Driver: &drv}, 500*ms, []int{1}, []time.Duration{10 * ms}, 1, 1000*ms)
			require.True(t, s.run(0), s.tail(30))
			assert.Equal(t, c.lost, low.lost, s.tail(30))
			assert.Equal(t, c.deploys, high.firstDeploy.Sub(t0), s.tail(30))
		})
	}
}

// A job StateAware holds back reclaims nothing in the instant it is let
// go: j4 (100, with a driver up after 1 s) is starting on a stateaware
// queue of 2 slots with a reclaim timeout of 0 when j1 (5000) arrives at
// 496 ms. At 1000 ms j4's first region is granted and deploys (j4 leaves
// starting); j1 does not take that slot in that instant, and runs when
// j4's region ends.
func TestNoReclaimInTheInstantAJobIsLetGo(t *testing.T) {
	drv := small
	s := newSim(t, Config{Slots: clusterSlots(2), Queues: []QueueConfig{{Name: "root.default", Policy: StateAware, Preempt: true}}},
		simConfig{checks: true, record: true})
	j4 := s.add(JobSpec{Name: "j4", Priority: 100, Driver: &drv}, 0, []int{1}, []time.Duration{1000 * ms}, 1, 1000*ms)
	j1 := s.add(JobSpec{Name: "j1", Priority: 5000}, 496*ms, []int{1}, []time.Duration{1000 * ms}, 1, 0)
	require.True(t, s.run(0), s.tail(30))
	assert.Zero(t, j4.lost, s.tail(30))
	assert.Equal(t, 1000*ms, j4.firstDeploy.Sub(t0))
	assert.Equal(t, 2000*ms, j1.firstDeploy.Sub(t0), s.tail(30))
}

// A slot a claim of another queue asks back still runs its job's task: a
// preemption counts it as that job's, lowest priority first. root.a
// (priority, reclaim timeout 0) runs v (2000) and w (3000) for 5 s each
// on 2 of 3 slots; x of root.0 (served first, by name) runs a short
// region and then needs 2 slots: at 100 ms it asks v's slot back (a
// claim). high (9000, root.a) arrives at 150 ms and needs one slot: the
// victim is v, not w; x's claim asks w's slot back instead.
func TestPreemptionTakesASlotClaimedForAnotherJob(t *testing.T) {
	s := newSim(t, Config{Slots: clusterSlots(3), Queues: []QueueConfig{
		{Name: "root.0", Policy: FIFO},
		{Name: "root.a", Policy: Priority, Preempt: true},
	}}, simConfig{checks: true, record: true})
	x := s.add(JobSpec{Name: "x", Queue: "root.0"}, 0, []int{1, 2}, []time.Duration{100 * ms, 1000 * ms}, 1, 0)
	v := s.add(JobSpec{Name: "v", Queue: "root.a", Priority: 2000}, 10*ms, []int{1}, []time.Duration{5000 * ms}, 1, 0)
	w := s.add(JobSpec{Name: "w", Queue: "root.a", Priority: 3000}, 20*ms, []int{1}, []time.Duration{5000 * ms}, 1, 0)
	high := s.add(JobSpec{Name: "high", Queue: "root.a", Priority: 9000}, 150*ms, []int{1}, []time.Duration{5000 * ms}, 1, 0)
	require.True(t, s.run(0), s.tail(30))
	assert.Equal(t, 1, v.lost, s.tail(40))
	assert.Zero(t, w.lost, s.tail(40))
	assert.Zero(t, x.lost, s.tail(40))
	assert.Equal(t, 150*ms, high.firstDeploy.Sub(t0))
}

// Slots that come back at one instant are decided together: a driver
// whose first regions could not follow leaves them to a waiting
// request. On 2 slots, a asks for both as d (a driver and a region of 2
// slots) arrives: a gets both, d's driver waits; once a ends, d's driver
// gets a slot (nothing else waits).
func TestDriverYieldsToAWaitingRequest(t *testing.T) {
	drv := small
	q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue})
	require.NoError(t, err)
	a, err := q.submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	d, err := q.submit(t0, JobSpec{Name: "d", Driver: &drv, Start: []resource.Count{{Profile: resource.Unknown, N: 2}}})
	require.NoError(t, err)
	ask(t, a, t0, 1, 2)
	q.Decide(t0)
	require.NoError(t, q.checkInvariants())
	assert.Len(t, grantedSlots(a.Ready()), 2, "a's request gets both slots")
	_, has := d.DriverSlot()
	assert.False(t, has, "d's driver waits")
	require.NoError(t, a.Finished(t0.Add(time.Second)))
	q.Decide(t0.Add(time.Second))
	require.NoError(t, q.checkInvariants())
	_, has = d.DriverSlot()
	assert.True(t, has, "nothing waits: d's driver takes a slot")
}

// A job wedged beside drivers leaves its idle slots to the jobs behind
// it (wedged.go): on 5 fifo slots w (a driver, regions of 2 and 4 asked
// together) runs its region of 2; x's driver takes a slot at 150 ms.
// When w's region ends, its pool holds its 2 slots idle for the region of
// 4, which can never fit beside two drivers (5 - 2 < 4). x, behind w,
// needs 2 for its region: the claim passes to it, and takes the free
// slot and one of w's idle ones at 250 ms. x ends at 550 ms, its driver
// with it, and w's region fits.
func TestWedgedJobLeavesItsIdleSlots(t *testing.T) {
	drv := small
	s := newSim(t, Config{Slots: clusterSlots(5), Queues: []QueueConfig{{Name: "root.default", Policy: FIFO}}},
		simConfig{checks: true, record: true})
	w := s.add(JobSpec{Name: "w", Driver: &drv}, 0, []int{2, 4}, []time.Duration{100 * ms, 100 * ms}, 2, 100*ms)
	x := s.add(JobSpec{Name: "x", Driver: &drv}, 150*ms, []int{2}, []time.Duration{300 * ms}, 1, 100*ms)
	require.True(t, s.run(0), s.tail(30))
	assert.Equal(t, 250*ms, x.firstDeploy.Sub(t0), s.tail(30))
	assert.Contains(t, s.tail(len(s.log)), "250ms w reclaim 3", s.tail(30))
	assert.Equal(t, 650*ms, w.finished.Sub(t0), s.tail(30)) // its region of 4 from 550 ms
}

// A job's regions ask once its driver runs: an ask of a job whose driver
// has no slot yet is refused with ErrNoDriver and changes nothing, and the
// same ask is taken once the driver has its slot.
func TestAskBeforeTheDriverIsRefused(t *testing.T) {
	q, err := New(Config{Slots: []slotpool.Slot{{ID: 1}}, Queues: defaultQueue})
	require.NoError(t, err)
	holder, err := q.submit(t0, JobSpec{Name: "holder"})
	require.NoError(t, err)
	ask(t, holder, t0, 1, 1)
	require.Equal(t, []slotpool.SlotID{1}, grantedSlots(holder.Ready()))
	d := resource.Unknown
	j, err := q.submit(t0, JobSpec{Name: "j", Driver: &d})
	require.NoError(t, err)

	for _, speculative := range []bool{false, true} {
		err = j.Handle(t0, slotpool.Ask{ID: 1, Bulk: 1, Speculative: speculative, Gang: slotpool.Gang{
			Groups: []slotpool.TaskGroup{{Profile: resource.Unknown, MinMembers: 1}}, AllOrNothing: true}})
		require.ErrorIs(t, err, ErrNoDriver, "speculative %v", speculative)
		assert.Contains(t, err.Error(), `job "j": ask 1`)
	}
	assert.Zero(t, q.speculativeAsks())
	require.NoError(t, q.checkInvariants())

	require.NoError(t, holder.Handle(t0, slotpool.SlotRelease{Slot: 1, Reason: slotpool.ReasonStopped}))
	q.Decide(t0)
	slot, ok := j.DriverSlot()
	require.True(t, ok, "the driver has the slot")
	assert.Equal(t, slotpool.SlotID(1), slot)
	require.NoError(t, j.Handle(t0, slotpool.Ask{ID: 1, Bulk: 1, Gang: slotpool.Gang{
		Groups: []slotpool.TaskGroup{{Profile: resource.Unknown, MinMembers: 1}}, AllOrNothing: true}}))
	require.NoError(t, q.checkInvariants())
}
