package multijob

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// A slot removed under a running task: its region restarts in another
// slot, the removed one is never granted again, and the job finishes.
func TestRemoveSlotsFailsOverTheTaskInIt(t *testing.T) {
	s := fairShare(t, 2)
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "a"}, Regions: blockingJob(t, 1)}))
	rd := s.Ready()
	require.Equal(t, []scheduler.SlotID{0}, slotsOf(rd, "a"))
	require.NoError(t, s.RemoveSlots(ms(1), 0))
	rd = s.Ready()
	assert.Equal(t, []scheduler.SlotID{1}, slotsOf(rd, "a"), "the region runs again in the slot left")
	assert.Equal(t, scheduler.Attempt(1), jobReady(rd, "a").Deploy[0].Attempt, "a second attempt")
	var se *slotpool.SlotError
	require.ErrorAs(t, s.RemoveSlots(ms(1), 0), &se, "removed already")
	assert.ErrorIs(t, se, slotpool.ErrUnknownSlot)
	require.NoError(t, s.AddSlots(ms(2), slotpool.Slot{ID: 0}))
	for i := 3; i < 10 && len(rd.Ended) == 0; i++ {
		finishAll(t, s, ms(i), rd, "a")
		rd = s.Ready()
	}
	require.Len(t, rd.Ended, 1)
	assert.Equal(t, Finished, rd.Ended[0].Outcome)
}

// A slot removed restarts the region that ran in it, which gives back
// its other slots in the same instant: they are decided together with
// the removal and the jobs that arrive at it. On 3 slots of a preempting
// priority queue, v (1000) runs a region of 2 slots and w (2000) a
// region of 1; at 5 ms slot 1, one of v's, goes while c (9000) arrives
// for a region of 1: c runs in the slot v gives back, and preempts
// nobody (it would have taken v's slot before v gave it back, and w's
// slot, had v held none, only to withdraw the preemption at once).
func TestRemoveSlotsRestartDecidedWithTheRemoval(t *testing.T) {
	s, err := New(Config{Admission: admission.Config{Slots: cluster(3), Queues: []admission.QueueConfig{
		{Name: "root.default", Policy: admission.Priority, Preempt: true, ReclaimTimeout: 10 * time.Millisecond},
	}}})
	require.NoError(t, err)
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "v", Priority: 1000}, Regions: pipelinedJob(t, 2)}))
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "w", Priority: 2000}, Regions: blockingJob(t, 1)}))
	rd := s.Ready()
	require.Equal(t, []scheduler.SlotID{1, 2}, slotsOf(rd, "v"))
	require.Equal(t, []scheduler.SlotID{0}, slotsOf(rd, "w"))
	require.NoError(t, s.Submit(ms(5), JobSpec{JobSpec: admission.JobSpec{Name: "c", Priority: 9000}, Regions: blockingJob(t, 1)}))
	require.NoError(t, s.RemoveSlots(ms(5), 1))
	rd = s.Ready()
	for _, ev := range rd.Events {
		assert.NotEqual(t, admission.Reclaimed, ev.Kind, "%s reclaims from %s", ev.Job, ev.Victim)
	}
	assert.Equal(t, []scheduler.SlotID{2}, slotsOf(rd, "c"), "c runs in the slot v gave back")
	assert.Empty(t, slotsOf(rd, "v"), "v's region waits for 2 slots")
	assert.Len(t, jobReady(rd, "v").Cancel, 4, "every task of v's region is cancelled")
}

// DriverLost fails the job, naming its driver; its slots go back.
func TestDriverLostFailsTheJob(t *testing.T) {
	s := fairShare(t, 3)
	driver := resource.Unknown
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "spark", Driver: &driver}, Regions: pipelinedJob(t, 2)}))
	s.Ready()
	require.NoError(t, s.StartJob(ms(10), "spark"))
	rd := s.Ready()
	require.Equal(t, map[string]int{"spark": 4}, deploys(rd))
	var je *JobError
	require.ErrorAs(t, s.DriverLost(ms(20), "nobody", "gone"), &je)
	assert.ErrorIs(t, je, ErrUnknownJob)
	require.NoError(t, s.DriverLost(ms(20), "spark", "its pod was deleted"))
	rd = s.Ready()
	require.Len(t, rd.Ended, 1)
	assert.Equal(t, Failed, rd.Ended[0].Outcome)
	var dl *admission.DriverLostError
	require.ErrorAs(t, rd.Ended[0].Err, &dl)
	assert.Equal(t, "its pod was deleted", dl.Why)
	assert.Len(t, jobReady(rd, "spark").Cancel, 4, "its tasks are cancelled")
	st, err := s.Status("spark")
	require.NoError(t, err)
	assert.Zero(t, st.Granted)
	require.ErrorAs(t, s.DriverLost(ms(30), "spark", "again"), &je)
	assert.ErrorIs(t, je, ErrJobEnded)
}
