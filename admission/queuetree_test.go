package admission

import (
	"testing"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCapacityErrors: capacities that do not add up are refused with a
// *CapacityError naming the queues and the values.
func TestCapacityErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		queues   []QueueConfig
		queue    string
		field    string
		children []string
		msg      string
	}{
		{"guarantee over its max", []QueueConfig{{Name: "root.a", GuaranteedSlots: 3, MaxSlots: 2}}, "root.a", "maxSlots", nil,
			"queue root.a: guaranteedSlots 3 is over its maxSlots 2 (valid: 0 ... 2)"},
		{"children over the parent's guarantee", []QueueConfig{{Name: "root.p", GuaranteedSlots: 4}, {Name: "root.p.a", GuaranteedSlots: 3}, {Name: "root.p.b", GuaranteedSlots: 2}},
			"root.p", "guaranteedSlots", []string{"root.p.a (3)", "root.p.b (2)"}, "the guaranteedSlots of its children root.p.a (3), root.p.b (2) add up to 5, over its guaranteedSlots 4"},
		// A child without a guarantee counts its own children's: a
		// guarantee deeper down is part of every ancestor's.
		{"grandchildren over the guarantee", []QueueConfig{{Name: "root.p", GuaranteedSlots: 4}, {Name: "root.p.m"}, {Name: "root.p.m.a", GuaranteedSlots: 3}, {Name: "root.p.m.b", GuaranteedSlots: 2}},
			"root.p", "guaranteedSlots", []string{"root.p.m (5, its children's)"}, "the guaranteedSlots of its children root.p.m (5, its children's) add up to 5, over its guaranteedSlots 4"},
		{"a grandchild over the max, its parent implied", []QueueConfig{{Name: "root.p", MaxSlots: 2}, {Name: "root.p.m.a", GuaranteedSlots: 3}, {Name: "root.p.x", GuaranteedSlots: 1}},
			"root.p", "maxSlots", []string{"root.p.m (3, its children's)", "root.p.x (1)"}, "the guaranteedSlots of its children root.p.m (3, its children's), root.p.x (1) add up to 4, over its maxSlots 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Config{Slots: clusterSlots(4), Queues: tc.queues})
			var ce *CapacityError
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, ErrBadCapacity)
			assert.Equal(t, tc.queue, ce.Queue)
			assert.Equal(t, tc.field, ce.Field)
			assert.Equal(t, tc.children, ce.Children)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Equal(t, err, CheckCapacities(tc.queues), "CheckCapacities says the same")
		})
	}
	// A parent implied by its child has no guarantee to exceed, and a
	// middle queue's own guarantee, when it has one, is what its parent
	// counts.
	_, err := New(Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.p.x", GuaranteedSlots: 3}}})
	require.NoError(t, err)
	_, err = New(Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.p", GuaranteedSlots: 4}, {Name: "root.p.m", GuaranteedSlots: 4}, {Name: "root.p.m.a", GuaranteedSlots: 3}}})
	require.NoError(t, err)
	// A maximum over a parent's, or a further ancestor's, is refused
	// with a *MaxOverParentError naming the least one above it.
	for _, tc := range []struct {
		queues []QueueConfig
		want   MaxOverParentError
		msg    string
	}{
		{[]QueueConfig{{Name: "root.p", MaxSlots: 4}, {Name: "root.p.a", MaxSlots: 5}}, MaxOverParentError{Queue: "root.p.a", Max: 5, Parent: "root.p", ParentMax: 4},
			"queue root.p.a: maxSlots 5 is over the maxSlots 4 of root.p (valid: 1 ... 4, or none)"},
		{[]QueueConfig{{Name: "root.p", MaxSlots: 3}, {Name: "root.p.m", MaxSlots: 3}, {Name: "root.p.m.a", MaxSlots: 8}, {Name: "root", MaxSlots: 6}}, MaxOverParentError{Queue: "root.p.m.a", Max: 8, Parent: "root.p.m", ParentMax: 3},
			"queue root.p.m.a: maxSlots 8 is over the maxSlots 3 of root.p.m"},
		{[]QueueConfig{{Name: "root", MaxSlots: 2}, {Name: "root.p.m.a", MaxSlots: 3}}, MaxOverParentError{Queue: "root.p.m.a", Max: 3, Parent: "root", ParentMax: 2},
			"queue root.p.m.a: maxSlots 3 is over the maxSlots 2 of root"},
	} {
		_, err := New(Config{Slots: clusterSlots(4), Queues: tc.queues})
		var me *MaxOverParentError
		require.ErrorAs(t, err, &me)
		assert.ErrorIs(t, err, ErrBadCapacity)
		assert.Equal(t, tc.want, *me)
		assert.Contains(t, err.Error(), tc.msg)
		assert.Equal(t, err, CheckCapacities(tc.queues), "CheckCapacities says the same")
	}
	// Equal to a parent's, or under a parent without one, it is not.
	_, err = New(Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.p", MaxSlots: 4}, {Name: "root.p.a", MaxSlots: 4}, {Name: "root.q.a", MaxSlots: 9}}})
	require.NoError(t, err)
	for _, bad := range []QueueConfig{{Name: "root.a", GuaranteedSlots: -1}, {Name: "root.a", MaxSlots: -1}} {
		_, err := New(Config{Slots: clusterSlots(1), Queues: []QueueConfig{bad}})
		var ce *ConfigError
		require.ErrorAs(t, err, &ce)
		assert.ErrorIs(t, err, ErrBadLimit)
	}
}

// TestJobsRunInQueuesWithoutChildren: a job naming a queue with children
// is refused, and so is a queue created under one that has jobs; nothing
// changes.
func TestJobsRunInQueuesWithoutChildren(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: []QueueConfig{{Name: "root.prod.etl"}}, CreateQueues: true})
	require.NoError(t, err)
	_, err = q.Submit(t0, JobSpec{Name: "a", Queue: "root.prod"})
	var pe *ParentQueueError
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, ErrParentQueue)
	assert.Equal(t, "root.prod", pe.Queue)
	assert.Equal(t, "root.prod.etl", pe.Child)
	assert.Equal(t, "a", pe.Job)
	_, err = q.Submit(t0, JobSpec{Name: "a", Queue: "root"})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "root", pe.Queue)

	_, err = q.Submit(t0, JobSpec{Name: "b", Queue: "root.adhoc"})
	require.NoError(t, err)
	_, err = q.Submit(t0, JobSpec{Name: "c", Queue: "root.adhoc.x"})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, ParentQueueError{Queue: "root.adhoc", Child: "root.adhoc.x", Job: "b"}, *pe)
	_, ok := q.queues["root.adhoc.x"]
	assert.False(t, ok, "nothing was created")
	_, err = q.Submit(t0, JobSpec{Name: "c", Queue: "root.prod.etl"})
	require.NoError(t, err)

	err = CheckJobQueues([]QueueConfig{{Name: "root.prod.etl"}}, []string{"x", "y", "z"}, []string{"", "root.prod.etl", "root.prod"})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, ParentQueueError{Queue: "root.prod", Child: "root.prod.etl", Job: "z"}, *pe)
	err = CheckJobQueues(nil, []string{"x", "y"}, []string{"root.a.b", "root.a"})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, ParentQueueError{Queue: "root.a", Child: "root.a.b", Job: "y"}, *pe)
	assert.NoError(t, CheckJobQueues(nil, []string{"x", "y"}, []string{"root.a.b", "root.a.c"}))
}

// Every queue of the hierarchy has its own place in the per-queue counts
// of the guarantees (qnode.idx), however the queues are named: a queue
// configured before its parents (root.a.y creates root.a and root) does
// not share its place with them, and a queue a job creates gets the next.
func TestQueueNodesHaveTheirOwnPlaces(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), CreateQueues: true,
		Queues: []QueueConfig{{Name: "root.a.y", GuaranteedSlots: 1}, {Name: "root.a.x"}, {Name: "root.b"}}})
	require.NoError(t, err)
	_, err = q.Submit(t0, JobSpec{Name: "j", Queue: "root.c.z"})
	require.NoError(t, err)
	var names []string
	for i, n := range q.nodeList {
		assert.Equal(t, i, n.idx, "queue %s", n.name)
		names = append(names, n.name)
	}
	assert.ElementsMatch(t, []string{"root", "root.a", "root.a.y", "root.a.x", "root.b", "root.default", "root.c", "root.c.z"}, names)
	require.NoError(t, q.checkInvariants())
}

// A queue's maxSlots caps how many slots it holds, not which: on a
// cluster whose small slot is listed first, a queue capped at 1 (or 2)
// is granted the big slots its tasks need, not left waiting for the
// small one beside idle big slots.
func TestMaxSlotsTakesTheSlotsThatFit(t *testing.T) {
	small, big, task := resource.New(1000, 2048), resource.New(2000, 4096), resource.New(1500, 512)
	for _, c := range []struct {
		max, tasks int
		want       []slotpool.SlotID
	}{{1, 1, []slotpool.SlotID{2}}, {2, 2, []slotpool.SlotID{2, 3}}, {2, 1, []slotpool.SlotID{2}}} {
		q, err := New(Config{
			Slots:  []slotpool.Slot{{ID: 1, Profile: small}, {ID: 2, Profile: big}, {ID: 3, Profile: big}},
			Queues: []QueueConfig{{Name: "root.a", MaxSlots: c.max}},
		})
		require.NoError(t, err)
		p, err := q.submit(t0, JobSpec{Name: "j", Queue: "root.a"})
		require.NoError(t, err)
		require.NoError(t, p.Handle(t0, slotpool.Ask{ID: 1, Bulk: 1, Head: true,
			Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: task, MinMembers: c.tasks}}, AllOrNothing: true}}))
		q.Decide(t0)
		assert.ElementsMatch(t, c.want, grantedSlots(p.Ready()), "max %d, %d tasks", c.max, c.tasks)
		require.NoError(t, q.checkInvariants())
	}
}

// Within a queue's maxSlots, a task that fits any slot takes a small one
// (as resource.Assign prefers), whatever the order the cluster lists
// them in: the large slot stays for the task only it fits.
func TestMaxSlotsKeepsTheLargeSlotsForWhatOnlyTheyFit(t *testing.T) {
	small, big := resource.New(1000, 2048), resource.New(2000, 4096)
	q, err := New(Config{
		Slots:  []slotpool.Slot{{ID: 1, Profile: big}, {ID: 2, Profile: small}, {ID: 3, Profile: small}},
		Queues: []QueueConfig{{Name: "root.a", MaxSlots: 2}},
	})
	require.NoError(t, err)
	grants := map[string][]slotpool.SlotID{}
	ports := map[string]*port{}
	for _, c := range []struct {
		name string
		task resource.Profile
	}{{"a", resource.New(500, 512)}, {"b", resource.New(1500, 512)}} {
		p, err := q.submit(t0, JobSpec{Name: c.name, Queue: "root.a"})
		require.NoError(t, err)
		require.NoError(t, p.Handle(t0, slotpool.Ask{ID: 1, Bulk: 1, Head: true,
			Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: c.task, MinMembers: 1}}, AllOrNothing: true}}))
		ports[c.name] = p
	}
	q.Decide(t0)
	for name, p := range ports {
		grants[name] = grantedSlots(p.Ready())
	}
	assert.Len(t, grants["a"], 1)
	assert.NotContains(t, grants["a"], slotpool.SlotID(1), "a's task fits a small slot")
	assert.Equal(t, []slotpool.SlotID{1}, grants["b"], "b's task fits only the large slot")
	require.NoError(t, q.checkInvariants())
}

// A driver whose first regions could not follow it leaves a free slot to
// a waiting request that slot serves, also when the request's queue has
// room, under its maxSlots, for fewer slots than are free: root.z, capped
// at 1, is served the large slot its task needs although a small slot,
// listed first, is free too.
func TestDriverYieldsToARequestUnderAMax(t *testing.T) {
	small, big := resource.New(1000, 2048), resource.New(2000, 4096)
	bigTask := resource.New(1500, 512)
	q, err := New(Config{
		Slots:  []slotpool.Slot{{ID: 1, Profile: small}, {ID: 2, Profile: big}, {ID: 3, Profile: big}},
		Queues: []QueueConfig{{Name: "root.d"}, {Name: "root.r"}, {Name: "root.z", MaxSlots: 1}},
	})
	require.NoError(t, err)
	ask := slotpool.Ask{ID: 1, Bulk: 1, Head: true,
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: bigTask, MinMembers: 1}}, AllOrNothing: true}}
	r, err := q.submit(t0, JobSpec{Name: "r", Queue: "root.r"})
	require.NoError(t, err)
	require.NoError(t, r.Handle(t0, ask))
	q.Decide(t0)
	require.Len(t, grantedSlots(r.Ready()), 1, "r holds a large slot")

	drv := big
	j, err := q.submit(t0, JobSpec{Name: "j", Queue: "root.d", Driver: &drv, Start: []resource.Count{{Profile: bigTask, N: 1}}})
	require.NoError(t, err)
	x, err := q.submit(t0, JobSpec{Name: "x", Queue: "root.z"})
	require.NoError(t, err)
	require.NoError(t, x.Handle(t0, ask))
	q.Decide(t0)
	assert.Len(t, grantedSlots(x.Ready()), 1, "x is served the other large slot")
	assert.False(t, j.j.hasSlot, "j's driver waits: its first region could not follow it")
	require.NoError(t, q.checkInvariants())
}
