package admission

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// The paths that count slots toward a waiting driver each count only
// those it may take (driverslot.go). Slots of two shapes neither larger
// than the other: a memory-heavy one, the smaller, which a driver takes
// when it may, and cpu-heavy ones.
var (
	memSlot, cpuSlot = resource.New(1000, 8192), resource.New(4000, 2048)
	memTask, cpuTask = resource.New(1000, 4096), resource.New(3000, 1024)
	tinyDriver       = resource.New(500, 512)
)

// memDriverJob is a job whose driver fits every slot and whose region
// needs the only memory-heavy slot.
func memDriverJob(name string, prio int) JobSpec {
	d := tinyDriver
	return JobSpec{
		Name: name, Priority: prio, Driver: &d,
		Largest: []resource.Count{{Profile: memTask, N: 1}},
		Regions: []RegionNeed{{Name: "region 0 {m#0}", Slots: []resource.Count{{Profile: memTask, N: 1}}}},
		Start:   []resource.Count{{Profile: memTask, N: 1}},
	}
}

// revokedOrReclaimed lists the slots msgs ask back.
func revokedOrReclaimed(msgs []slotpool.FromAdmission) (out []slotpool.SlotID) {
	for _, m := range msgs {
		switch r := m.(type) {
		case slotpool.Reclaim:
			out = append(out, r.Slot)
		case slotpool.Revoke:
			out = append(out, r.Slot)
		}
	}
	return out
}

// runningY submits job y of priority prio at t0 with one all-or-nothing
// bulk of the task groups, decides, and returns its port and the slots
// it was granted.
func runningY(t *testing.T, q *Queues, prio int, groups ...slotpool.TaskGroup) (*port, []slotpool.SlotID) {
	t.Helper()
	y, err := q.submit(t0, JobSpec{Name: "y", Priority: prio})
	require.NoError(t, err)
	require.NoError(t, y.Handle(t0, slotpool.Ask{ID: 1, Bulk: 1, Head: true,
		Gang: slotpool.Gang{Groups: groups, AllOrNothing: true}}))
	q.Decide(t0)
	return y, grantedSlots(y.Ready())
}

// Under a maxSlots that leaves room for fewer slots than are free, the
// free slots counted toward a driver are those it may take: x's driver
// takes a cpu-heavy slot at once.
func TestDriverUnderAMaxTakesASlotItMay(t *testing.T) {
	q, err := New(Config{
		Slots:  []slotpool.Slot{{ID: 1, Profile: cpuSlot}, {ID: 2, Profile: memSlot}, {ID: 3, Profile: cpuSlot}},
		Queues: []QueueConfig{{Name: "root.default", MaxSlots: 2}},
	})
	require.NoError(t, err)
	x, err := q.submit(t0, memDriverJob("x", 0))
	require.NoError(t, err)
	q.Decide(t0)
	slot, ok := x.DriverSlot()
	require.True(t, ok)
	assert.NotEqual(t, slotpool.SlotID(2), slot)
	require.NoError(t, q.checkInvariants())
}

// So too when it could preempt: with cpu-heavy slots free within its
// queue's room, x's driver takes one and preempts nothing.
func TestDriverUnderAMaxPreemptsNothingBesideASlotItMay(t *testing.T) {
	q, err := New(Config{
		Slots:  []slotpool.Slot{{ID: 1, Profile: cpuSlot}, {ID: 2, Profile: memSlot}, {ID: 3, Profile: cpuSlot}, {ID: 4, Profile: cpuSlot}},
		Queues: []QueueConfig{{Name: "root.default", Policy: Priority, Preempt: true, MaxSlots: 3}},
	})
	require.NoError(t, err)
	y, granted := runningY(t, q, 1, slotpool.TaskGroup{Profile: cpuTask, MinMembers: 1})
	require.Len(t, granted, 1)
	x, err := q.submit(t0.Add(ms), memDriverJob("x", 100))
	require.NoError(t, err)
	q.Decide(t0.Add(ms))
	_, ok := x.DriverSlot()
	assert.True(t, ok)
	assert.Empty(t, revokedOrReclaimed(y.Ready()))
	require.NoError(t, q.checkInvariants())
}

// A driver whose first regions (two cpu-heavy tasks) can follow it only
// with it on the memory-heavy slot, which its other region needs, is
// still preempted for as a driver alone would be: its first regions
// follow as far as the cluster less a slot it may take holds them.
func TestDriverPreemptsAsFarAsItsSlotLeavesRoom(t *testing.T) {
	for _, regions := range []bool{false, true} {
		q, err := New(Config{
			Slots:  []slotpool.Slot{{ID: 1, Profile: cpuSlot}, {ID: 2, Profile: memSlot}, {ID: 3, Profile: cpuSlot}},
			Queues: []QueueConfig{{Name: "root.default", Policy: Priority, Preempt: true}},
		})
		require.NoError(t, err)
		y, granted := runningY(t, q, 1, slotpool.TaskGroup{Profile: resource.New(900, 1000), MinMembers: 3})
		require.Len(t, granted, 3)
		d := tinyDriver
		spec := JobSpec{Name: "x", Priority: 100, Driver: &d,
			Largest: []resource.Count{{Profile: cpuTask, N: 1}}, Start: []resource.Count{{Profile: cpuTask, N: 2}}}
		if regions {
			spec.Regions = []RegionNeed{
				{Name: "region 0 {c#0}", Slots: []resource.Count{{Profile: cpuTask, N: 1}}},
				{Name: "region 2 {m#0}", Slots: []resource.Count{{Profile: memTask, N: 1}}},
			}
		}
		_, err = q.submit(t0.Add(ms), spec)
		require.NoError(t, err)
		q.Decide(t0.Add(ms))
		assert.Equal(t, []slotpool.SlotID{3, 3}, revokedOrReclaimed(y.Ready()), "regions %v: y's cpu-heavy slot 3 is reclaimed and revoked", regions)
		require.NoError(t, q.checkInvariants())
	}
}

// A job whose waiting driver may take only slots other drivers hold is
// wedged: on a small and two big slots, with w's driver in the small
// one, x's driver (its region needs both big slots) waits for w to end,
// and the pass's claim goes on to the jobs behind it: z1 claims z2's
// idle big slot (each holds one for a bulk of two).
func TestDriverWaitingOnlyForDriversIsWedged(t *testing.T) {
	q, err := New(Config{
		Slots:  []slotpool.Slot{{ID: 1, Profile: driverSmall}, {ID: 2, Profile: driverBig}, {ID: 3, Profile: driverBig}},
		Queues: defaultQueue,
	})
	require.NoError(t, err)
	d := driverSmall
	w, err := q.submit(t0, JobSpec{Name: "w", Driver: &d})
	require.NoError(t, err)
	q.Decide(t0)
	ws, ok := w.DriverSlot()
	require.True(t, ok)
	require.Equal(t, slotpool.SlotID(1), ws)
	_, err = q.submit(t0.Add(ms), JobSpec{
		Name: "x", Driver: &d,
		Largest: []resource.Count{{Profile: bigTask, N: 2}},
		Regions: []RegionNeed{{Name: "region 0 {b#0, b#1}", Slots: []resource.Count{{Profile: bigTask, N: 2}}}},
		Start:   []resource.Count{{Profile: bigTask, N: 2}},
	})
	require.NoError(t, err)
	var zs []*port
	for _, name := range []string{"z1", "z2"} {
		z, err := q.submit(t0.Add(ms), JobSpec{Name: name})
		require.NoError(t, err)
		require.NoError(t, z.Handle(t0.Add(ms), slotpool.Ask{ID: 1, Bulk: 1, Head: true,
			Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: bigTask, MinMembers: 1}}, AllOrNothing: true}}))
		zs = append(zs, z)
	}
	q.Decide(t0.Add(ms))
	for _, z := range zs {
		g := grantedSlots(z.Ready())
		require.Len(t, g, 1)
		require.NoError(t, z.Handle(t0.Add(ms), slotpool.Ask{ID: 2, Bulk: 1, Head: true, Holding: g,
			Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: bigTask, MinMembers: 1}}, AllOrNothing: true}}))
	}
	q.Decide(t0.Add(2 * ms))
	require.NoError(t, q.checkInvariants())
	assert.Empty(t, revokedOrReclaimed(zs[0].Ready()))
	assert.Len(t, revokedOrReclaimed(zs[1].Ready()), 1, "z1 claims z2's idle slot")
}

// A slot asked back for a driver that, once slots are removed, may not
// take it any more is kept for nobody: x's claim of a big slot of y's
// goes when a big slot is removed (two slots left, the big one its
// region's), the big slot y gives back goes to y's waiting bulk, and x
// claims the small slot y holds idle.
func TestDriverClaimGoesWhenRemovedSlotsRuleItsSlotsOut(t *testing.T) {
	q, err := New(Config{
		Slots:  []slotpool.Slot{{ID: 1, Profile: driverSmall}, {ID: 2, Profile: driverBig}, {ID: 3, Profile: driverBig}},
		Queues: []QueueConfig{{Name: "root.default", Policy: Priority}},
	})
	require.NoError(t, err)
	y, granted := runningY(t, q, 1000, slotpool.TaskGroup{Profile: smallTask, MinMembers: 1}, slotpool.TaskGroup{Profile: bigTask, MinMembers: 2})
	require.ElementsMatch(t, []slotpool.SlotID{1, 2, 3}, granted)
	spec := bigRegionDriverJob()
	spec.Start = []resource.Count{{Profile: bigTask, N: 1}}
	x, err := q.submit(t0.Add(ms), spec)
	require.NoError(t, err)
	q.Decide(t0.Add(ms))
	back := revokedOrReclaimed(y.Ready())
	require.Equal(t, []slotpool.SlotID{3}, back, "three slots: any leaves x's region room")
	require.NoError(t, q.RemoveSlots(t0.Add(2*ms), 2))
	y.Ready()
	require.NoError(t, y.Handle(t0.Add(2*ms), slotpool.SlotRelease{Slot: 2}))
	q.Decide(t0.Add(2 * ms))
	require.NoError(t, q.checkInvariants())
	// y's task in slot 3 ends; its region restarts, holding the small
	// slot idle and asking for a big one.
	require.NoError(t, y.Handle(t0.Add(3*ms), slotpool.SlotRelease{Slot: 3}))
	require.NoError(t, y.Handle(t0.Add(3*ms), slotpool.Ask{ID: 2, Bulk: 2, Head: true, Holding: []slotpool.SlotID{1},
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: bigTask, MinMembers: 1}}, AllOrNothing: true}}))
	q.Decide(t0.Add(3 * ms))
	require.NoError(t, q.checkInvariants())
	msgs := y.Ready()
	assert.Equal(t, []slotpool.SlotID{3}, grantedSlots(msgs), "the big slot goes to y")
	assert.Equal(t, []slotpool.SlotID{1}, revokedOrReclaimed(msgs), "x claims y's idle small slot")
	assert.Empty(t, x.j.reserved)
}

// A job whose driver holds the only slot its region needs once slots are
// removed can never run: it fails, at the instant of its grant or
// later.
func TestDriverSlotLeftNoRoomByRemovedSlots(t *testing.T) {
	for _, later := range []time.Duration{0, ms} {
		q := twoSizes(t, FIFO)
		require.NoError(t, q.AddSlots(t0, slotpool.Slot{ID: 4, Profile: driverBig}))
		y, err := q.submit(t0, JobSpec{Name: "y"})
		require.NoError(t, err)
		askSmall(t, y, 2)
		q.Decide(t0)
		require.Len(t, grantedSlots(y.Ready()), 2)
		x, err := q.submit(t0.Add(ms), driverJob("x", driverSmall, 0))
		require.NoError(t, err)
		q.Decide(t0.Add(ms))
		ds, ok := x.DriverSlot()
		require.True(t, ok, "two big slots: either leaves region b room")
		require.NoError(t, q.RemoveSlots(t0.Add(ms+later), 6-ds))
		assert.Equal(t, JobFailed, x.State(), "later %v", later)
		var lost *CapacityLostError
		assert.True(t, errors.As(x.Err(), &lost), "%v", x.Err())
		require.NoError(t, q.checkInvariants())
	}
}

// A claim for a waiting driver asks back only slots it may take: y, of a
// lower priority, runs tasks in both slots, and x's driver, whose region
// needs the big one, claims the small one.
func TestDriverClaimsOnlyASlotItMayTake(t *testing.T) {
	q, err := New(Config{
		Slots:  []slotpool.Slot{{ID: 1, Profile: driverSmall}, {ID: 2, Profile: driverBig}},
		Queues: []QueueConfig{{Name: "root.default", Policy: Priority}},
	})
	require.NoError(t, err)
	y, granted := runningY(t, q, 1000, slotpool.TaskGroup{Profile: smallTask, MinMembers: 2})
	require.ElementsMatch(t, []slotpool.SlotID{1, 2}, granted)
	_, err = q.submit(t0.Add(ms), bigRegionDriverJob())
	require.NoError(t, err)
	q.Decide(t0.Add(ms))
	assert.Equal(t, []slotpool.SlotID{1}, revokedOrReclaimed(y.Ready()))
	require.NoError(t, q.checkInvariants())
}

// A preemption for a waiting driver counts, and takes, only slots it
// may take: with the big slot free (its region's) and y, of a lower
// priority, running a task in the small one, x's driver preempts y's
// small slot at once (reclaimTimeoutMs 0) rather than wait beside the
// big one; with y running tasks in both, it preempts only the small one.
func TestDriverPreemptsOnlyASlotItMayTake(t *testing.T) {
	for _, both := range []bool{false, true} {
		q, err := New(Config{
			Slots:  []slotpool.Slot{{ID: 1, Profile: driverSmall}, {ID: 2, Profile: driverBig}},
			Queues: []QueueConfig{{Name: "root.default", Policy: Priority, Preempt: true}},
		})
		require.NoError(t, err)
		n := 1
		if both {
			n = 2
		}
		y, granted := runningY(t, q, 1000, slotpool.TaskGroup{Profile: smallTask, MinMembers: n})
		require.Len(t, granted, n)
		_, err = q.submit(t0.Add(ms), bigRegionDriverJob())
		require.NoError(t, err)
		q.Decide(t0.Add(ms))
		var revoked []slotpool.SlotID
		for _, m := range y.Ready() {
			if r, ok := m.(slotpool.Revoke); ok {
				revoked = append(revoked, r.Slot)
			}
		}
		assert.Equal(t, []slotpool.SlotID{1}, revoked, "y runs in both slots: %v", both)
		require.NoError(t, q.checkInvariants())
	}
}

// bigRegionDriverJob is job x of priority 9000: a small driver and one
// region, of one big task.
func bigRegionDriverJob() JobSpec {
	d := driverSmall
	return JobSpec{
		Name: "x", Priority: 9000, Driver: &d,
		Largest: []resource.Count{{Profile: bigTask, N: 1}},
		Regions: []RegionNeed{{Name: "region 0 {b#0}", Slots: []resource.Count{{Profile: bigTask, N: 1}}}},
	}
}
