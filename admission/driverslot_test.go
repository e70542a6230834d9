package admission

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

var (
	driverSmall = resource.New(1000, 2048)
	driverBig   = resource.New(2000, 4096)
	smallTask   = resource.New(1000, 1024)
	bigTask     = resource.New(1500, 1024)
)

// twoSizes is a cluster of two small slots (1, 3) and a big one (2).
func twoSizes(t *testing.T, policy Policy) *Queues {
	t.Helper()
	q, err := New(Config{
		Slots:  []slotpool.Slot{{ID: 1, Profile: driverSmall}, {ID: 2, Profile: driverBig}, {ID: 3, Profile: driverSmall}},
		Queues: []QueueConfig{{Name: "root.default", Policy: policy}},
	})
	require.NoError(t, err)
	return q
}

// driverJob is a job whose driver fits a small slot, and whose regions
// are two small tasks, then one task that only the big slot serves.
func driverJob(name string, driver resource.Profile, prio int) JobSpec {
	return JobSpec{
		Name: name, Priority: prio, Driver: &driver,
		Largest: []resource.Count{{Profile: smallTask, N: 2}},
		Regions: []RegionNeed{
			{Name: "region 0 {a#0, a#1}", Slots: []resource.Count{{Profile: smallTask, N: 2}}},
			{Name: "region 1 {b#0}", Slots: []resource.Count{{Profile: bigTask, N: 1}}},
		},
		Start: []resource.Count{{Profile: smallTask, N: 2}},
	}
}

// askSmall has job p ask for n small tasks at once.
func askSmall(t *testing.T, p *port, n int) {
	t.Helper()
	require.NoError(t, p.Handle(t0, slotpool.Ask{ID: 1, Bulk: 1, Head: true,
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: smallTask, MinMembers: n}}, AllOrNothing: true}}))
}

// A driver keeps its slot until its job ends, so it takes none that a
// region of its own job needs: with only the big slot free, x's driver
// waits for a small one (y's, when its task ends) rather than take the
// big slot that x's region b alone fits, and the big slot is kept for
// nobody meanwhile.
func TestDriverTakesNoSlotItsRegionsNeed(t *testing.T) {
	q := twoSizes(t, FIFO)
	y, err := q.submit(t0, JobSpec{Name: "y"})
	require.NoError(t, err)
	askSmall(t, y, 2)
	q.Decide(t0)
	held := grantedSlots(y.Ready())
	require.ElementsMatch(t, []slotpool.SlotID{1, 3}, held, "y's tasks take the small slots")

	x, err := q.submit(t0.Add(ms), driverJob("x", driverSmall, 0))
	require.NoError(t, err)
	q.Decide(t0.Add(ms))
	_, ok := x.DriverSlot()
	assert.False(t, ok, "x's driver waits: the big slot is x's region b's")
	assert.Equal(t, 1, q.nFree, "the big slot stays free, reserved for nobody")
	require.NoError(t, q.checkInvariants())

	require.NoError(t, y.Handle(t0.Add(2*ms), slotpool.SlotRelease{Slot: held[0]}))
	q.Decide(t0.Add(2 * ms))
	slot, ok := x.DriverSlot()
	require.True(t, ok)
	assert.Equal(t, held[0], slot, "x's driver takes the small slot y gave back")
	require.NoError(t, q.checkInvariants())
}

// A claim for a waiting driver counts only the slots it may take: x,
// of a higher priority than y, claims one of y's small slots back for
// its driver, and neither takes nor reserves the free big slot.
func TestDriverClaimsASlotItMayTake(t *testing.T) {
	q := twoSizes(t, Priority)
	y, err := q.submit(t0, JobSpec{Name: "y", Priority: 1000})
	require.NoError(t, err)
	askSmall(t, y, 2)
	q.Decide(t0)
	require.ElementsMatch(t, []slotpool.SlotID{1, 3}, grantedSlots(y.Ready()))

	x, err := q.submit(t0.Add(ms), driverJob("x", driverSmall, 9000))
	require.NoError(t, err)
	q.Decide(t0.Add(ms))
	_, ok := x.DriverSlot()
	assert.False(t, ok)
	var back []slotpool.SlotID
	for _, m := range y.Ready() {
		if r, ok := m.(slotpool.Reclaim); ok {
			back = append(back, r.Slot)
		}
	}
	require.Len(t, back, 1, "one small slot is asked back for x's driver")
	assert.Contains(t, []slotpool.SlotID{1, 3}, back[0])
	assert.Equal(t, 1, q.nFree, "the big slot is neither taken nor reserved")
	require.NoError(t, q.checkInvariants())

	require.NoError(t, y.Handle(t0.Add(2*ms), slotpool.SlotRelease{Slot: back[0]}))
	q.Decide(t0.Add(2 * ms))
	slot, ok := x.DriverSlot()
	require.True(t, ok)
	assert.Equal(t, back[0], slot)
	require.NoError(t, q.checkInvariants())
}

// A job whose driver fits only the big slot, which its region b needs
// too, can never run: it is rejected at once, naming the region.
func TestDriverThatLeavesItsRegionsNoRoomIsRejected(t *testing.T) {
	q := twoSizes(t, FIFO)
	x, err := q.submit(t0, driverJob("x", bigTask, 0))
	require.NoError(t, err)
	assert.Equal(t, JobRejected, x.State())
	var rej *RejectedError
	require.True(t, errors.As(x.Err(), &rej), "%v", x.Err())
	assert.Equal(t, "its driver leaves too little for its regions in any slot it fits: in a slot of {cpu=2000m mem=4096MB}, "+
		"region 1 {b#0} needs 1 slot at once, and the rest of the queue's cluster can never give it: missing 1 x {cpu=1500m mem=1024MB}", rej.Reason)
}

// With slots of two shapes free, neither larger than the other, a
// driver takes one its regions leave it: a cpu-heavy slot, though the
// memory-heavy one is the smaller (which a driver takes otherwise), as
// the job's region needs the only memory-heavy slot.
func TestDriverTakesTheSlotItsRegionsLeave(t *testing.T) {
	memSlot, cpuSlot := resource.New(1000, 8192), resource.New(4000, 2048)
	q, err := New(Config{
		Slots:  []slotpool.Slot{{ID: 1, Profile: cpuSlot}, {ID: 2, Profile: memSlot}, {ID: 3, Profile: cpuSlot}},
		Queues: defaultQueue,
	})
	require.NoError(t, err)
	driver, memTask := resource.New(500, 512), resource.New(1000, 4096)
	x, err := q.submit(t0, JobSpec{
		Name: "x", Driver: &driver,
		Largest: []resource.Count{{Profile: memTask, N: 1}},
		Regions: []RegionNeed{{Name: "region 0 {m#0}", Slots: []resource.Count{{Profile: memTask, N: 1}}}},
	})
	require.NoError(t, err)
	q.Decide(t0)
	slot, ok := x.DriverSlot()
	require.True(t, ok)
	assert.NotEqual(t, slotpool.SlotID(2), slot, "the memory-heavy slot is the region's")
	require.NoError(t, q.checkInvariants())
}
