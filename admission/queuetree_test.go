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
	// A parent implied by its child has no guarantee to exceed.
	_, err := New(Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.p.x", GuaranteedSlots: 3}}})
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
		var got []slotpool.SlotID
		for _, m := range p.Ready() {
			if g, ok := m.(slotpool.Grant); ok {
				for _, s := range g.Slots {
					got = append(got, s.ID)
				}
			}
		}
		assert.ElementsMatch(t, c.want, got, "max %d, %d tasks", c.max, c.tasks)
		require.NoError(t, q.checkInvariants())
	}
}
