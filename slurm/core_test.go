package slurm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// submitted runs the jobCore's one cmdSubmit command and answers it with job.
func submitted(t *testing.T, c *jobCore, job JobID) slurmCommand {
	t.Helper()
	cmds := c.Commands()
	require.Len(t, cmds, 1)
	require.Equal(t, cmdSubmit, cmds[0].Kind)
	c.Submitted(t0, cmds[0].Name, job, nil)
	return cmds[0]
}

// granted is a jobCore whose ask 1, of as many slots as on has CPUs, was
// submitted as job ("rs-a1"), is running on on's node, and was granted;
// and the Grant.
func granted(t *testing.T, job JobID, on nodeCPUs) (*jobCore, slotpool.Grant) {
	t.Helper()
	c := newCore(t)
	require.NoError(t, c.Handle(t0, unknownAsk(1, on.CPUs)))
	submitted(t, c, job)
	c.Observe(t0, c.Watched(), []jobStatus{running(job, "rs-a1", on)})
	msgs := c.Ready()
	require.Len(t, msgs, 1)
	return c, msgs[0].(slotpool.Grant)
}

// grantedOnN1 is granted as job 3 with n CPUs on n1.
func grantedOnN1(t *testing.T, n int) *jobCore {
	t.Helper()
	c, _ := granted(t, 3, nodeCPUs{"n1", n})
	return c
}

func TestAskGrantedWhenRunning(t *testing.T) {
	c := newCore(t)
	require.NoError(t, c.Handle(t0, unknownAsk(1, 3)))
	cmd := submitted(t, c, 41)
	assert.Equal(t, "rs-a1", cmd.Name)
	assert.Equal(t, []component{{Profile: resource.Unknown, Tasks: 3, CPUsPerTask: 1}}, cmd.Request.Components)
	assert.Equal(t, []string{"rs-a1"}, c.Watched())
	assert.True(t, c.Busy())

	c.Observe(t0, c.Watched(), []jobStatus{{ID: 41, Name: "rs-a1", State: "PENDING", Reason: "Resources"}})
	assert.Empty(t, c.Ready(), "pending: nothing granted")
	assert.Empty(t, c.Commands())

	c.Observe(t0, c.Watched(), []jobStatus{running(41, "rs-a1", nodeCPUs{"n1", 2}, nodeCPUs{"n3", 1})})
	out := c.Ready()
	require.Len(t, out, 1)
	g := out[0].(slotpool.Grant)
	assert.Equal(t, slotpool.AskID(1), g.Ask)
	require.Len(t, g.Slots, 3)
	var nodes []string
	for i, s := range g.Slots {
		assert.Equal(t, slotpool.SlotID(i+1), s.ID)
		p, ok := c.Placement(s.ID)
		require.True(t, ok)
		assert.Equal(t, JobID(41), p.Job)
		assert.Equal(t, -1, p.HetGroup)
		assert.Equal(t, 1, p.CPUs)
		nodes = append(nodes, p.Node)
	}
	assert.Equal(t, []string{"n1", "n1", "n3"}, nodes, "each slot knows its node")
	assert.False(t, c.Busy())

	// Observed running again: no second grant.
	c.Observe(t0, c.Watched(), []jobStatus{running(41, "rs-a1", nodeCPUs{"n1", 2}, nodeCPUs{"n3", 1})})
	assert.Empty(t, c.Ready())
}

func TestReleasedSlotsCancelTheAllocation(t *testing.T) {
	c, g := granted(t, 7, nodeCPUs{"n2", 2})

	require.NoError(t, c.Handle(t0, slotpool.SlotRelease{Slot: g.Slots[0].ID, Reason: slotpool.ReasonStopped}))
	assert.Equal(t, []slotpool.FromAdmission{slotpool.ReleaseConfirmed{Slot: g.Slots[0].ID, Reason: slotpool.ReasonStopped}}, c.Ready())
	assert.Empty(t, c.Commands(), "one slot is still in use")

	require.NoError(t, c.Handle(t0, slotpool.SlotRelease{Slot: g.Slots[1].ID, Reason: slotpool.ReasonStopped}))
	assert.Len(t, c.Ready(), 1)
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 7}}, c.Commands())
	_, ok := c.Placement(g.Slots[1].ID)
	assert.False(t, ok)

	c.Cancelled(t0, "rs-a1", 7, nil)
	c.Observe(t0, c.Watched(), []jobStatus{{ID: 7, Name: "rs-a1", State: "CANCELLED"}})
	assert.Empty(t, c.Watched(), "over")

	err := c.Handle(t0, slotpool.SlotRelease{Slot: g.Slots[1].ID})
	var se *slotpool.SlotError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, slotpool.ErrUnknownSlot)
}

func TestAskReleaseCancelsThePendingJob(t *testing.T) {
	c := newCore(t)
	require.NoError(t, c.Handle(t0, unknownAsk(1, 2)))
	submitted(t, c, 9)
	require.NoError(t, c.Handle(t0, slotpool.AskRelease{ID: 1, Reason: slotpool.ReasonStopped}))
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 9}}, c.Commands())
	// Slurm started it meanwhile: still not granted.
	c.Observe(t0, c.Watched(), []jobStatus{running(9, "rs-a1", nodeCPUs{"n1", 2})})
	assert.Empty(t, c.Ready())
	c.Observe(t0, c.Watched(), nil) // gone from squeue
	assert.Empty(t, c.Watched())
}

func TestAskReleaseBeforeTheSubmitAnswer(t *testing.T) {
	c := newCore(t)
	require.NoError(t, c.Handle(t0, unknownAsk(1, 1)))
	cmds := c.Commands()
	require.NoError(t, c.Handle(t0, slotpool.AskRelease{ID: 1, Reason: slotpool.ReasonTimeout}))
	assert.Empty(t, c.Commands())
	c.Submitted(t0, cmds[0].Name, 5, nil)
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 5}}, c.Commands())
}

func TestPreemptionRevokes(t *testing.T) {
	c := newCore(t)
	require.NoError(t, c.Handle(t0, slotpool.Ask{ID: 1, Gang: slotpool.Gang{AllOrNothing: true,
		Groups: []slotpool.TaskGroup{{Profile: resource.New(2000, 0), MinMembers: 3}}}}))
	submitted(t, c, 1)
	// The recorded job 1: 3 tasks of 2 CPUs on n1 (4) and n2 (2), running,
	// then preempted by a job of the high partition.
	recorded := recordedJobs(t, "squeue-mixed.json")
	run := jobByID(t, recorded, 1, "rs-a1")
	run.State, run.Preempted = "RUNNING", false
	c.Observe(t0, c.Watched(), []jobStatus{run})
	g := c.Ready()[0].(slotpool.Grant)
	var nodes []string
	for _, s := range g.Slots {
		p, _ := c.Placement(s.ID)
		nodes = append(nodes, p.Node)
		assert.Equal(t, resource.New(2000, 0), s.Profile)
	}
	assert.Equal(t, []string{"n1", "n1", "n2"}, nodes)

	c.Observe(t0, c.Watched(), []jobStatus{jobByID(t, recorded, 1, "rs-a1")})
	var revoked []slotpool.SlotID
	for _, m := range c.Ready() {
		r := m.(slotpool.Revoke)
		assert.Equal(t, slotpool.ReasonPreempted, r.Reason)
		revoked = append(revoked, r.Slot)
	}
	assert.Equal(t, []slotpool.SlotID{1, 2, 3}, revoked)
	assert.Empty(t, c.Commands(), "Slurm ended it: nothing to cancel")
	for _, id := range revoked {
		require.NoError(t, c.Handle(t0, slotpool.SlotRelease{Slot: id, Reason: slotpool.ReasonPreempted}))
	}
	assert.Empty(t, c.Ready(), "the echo of a revoke is not confirmed")
	assert.Empty(t, c.Watched())
}

func TestPreemptTimeReclaimsBeforeTheStateChanges(t *testing.T) {
	c := grantedOnN1(t, 1)
	st := running(3, "rs-a1", nodeCPUs{"n1", 1}, nodeCPUs{"n2", 1})
	st.Preempted = true
	c.Observe(t0, c.Watched(), []jobStatus{st})
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Reclaim{Slot: 1}}, c.Ready(), "the grace time: reclaimed")
	c.Observe(t0, c.Watched(), []jobStatus{st})
	assert.Empty(t, c.Ready(), "once")
	assert.Empty(t, c.Commands())
	// The pool gives the slot back when its task is done: confirmed, and
	// the job cancelled.
	require.NoError(t, c.Handle(t0, slotpool.SlotRelease{Slot: 1, Reason: slotpool.ReasonPreempted}))
	assert.Equal(t, []slotpool.FromAdmission{slotpool.ReleaseConfirmed{Slot: 1, Reason: slotpool.ReasonPreempted}}, c.Ready())
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 3}}, c.Commands())
}

func TestGraceTimeEndsWithARevoke(t *testing.T) {
	c := grantedOnN1(t, 2)
	st := running(3, "rs-a1", nodeCPUs{"n1", 2})
	st.Preempted = true
	c.Observe(t0, c.Watched(), []jobStatus{st})
	assert.Len(t, c.Ready(), 2)
	require.NoError(t, c.Handle(t0, slotpool.SlotRelease{Slot: 1, Reason: slotpool.ReasonPreempted}))
	c.Ready()
	st.State = "PREEMPTED" // the grace time is over
	c.Observe(t0, c.Watched(), []jobStatus{st})
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Revoke{Slot: 2, Reason: slotpool.ReasonPreempted}}, c.Ready(), "only what was still held")
	require.NoError(t, c.Handle(t0, slotpool.SlotRelease{Slot: 2, Reason: slotpool.ReasonPreempted}))
	assert.Empty(t, c.Ready())
	assert.Empty(t, c.Watched())
}

func TestRequeuedAllocationIsRevoked(t *testing.T) {
	c := grantedOnN1(t, 1)
	c.Observe(t0, c.Watched(), []jobStatus{{ID: 3, Name: "rs-a1", State: "PENDING", Reason: "BeginTime"}}) // PreemptMode=REQUEUE
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Revoke{Slot: 1, Reason: slotpool.ReasonPreempted}}, c.Ready())
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 3}}, c.Commands())
}

func TestHeterogeneousGang(t *testing.T) {
	c := newCore(t)
	small, big := resource.New(1000, 100), resource.New(2000, 0)
	require.NoError(t, c.Handle(t0, slotpool.Ask{ID: 1, Gang: slotpool.Gang{AllOrNothing: true,
		Groups: []slotpool.TaskGroup{{Profile: small, MinMembers: 2}, {Profile: big, MinMembers: 1}}}}))
	cmd := submitted(t, c, 6)
	require.Len(t, cmd.Request.Components, 2)
	// The recorded heterogeneous job 6+0 (2 x 1 CPU on n1), 6+1 (1 x 2
	// CPUs on n2).
	recorded := recordedJobs(t, "squeue-mixed.json")
	c.Observe(t0, c.Watched(), []jobStatus{jobByID(t, recorded, 7, "rs-a1"), jobByID(t, recorded, 6, "rs-a1")})
	g := c.Ready()[0].(slotpool.Grant)
	require.Len(t, g.Slots, 3)
	want := []Placement{{Job: 6, HetGroup: 0, Node: "n1", CPUs: 1}, {Job: 6, HetGroup: 0, Node: "n1", CPUs: 1}, {Job: 6, HetGroup: 1, Node: "n2", CPUs: 2}}
	for i, s := range g.Slots {
		p, _ := c.Placement(s.ID)
		assert.Equal(t, want[i], p)
	}
	assert.Equal(t, []resource.Profile{small, small, big}, []resource.Profile{g.Slots[0].Profile, g.Slots[1].Profile, g.Slots[2].Profile})
}

func TestTooLargeRefusedAtOnce(t *testing.T) {
	c := newCore(t)
	err := c.Handle(t0, unknownAsk(1, 17))
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.Equal(t, "low", tl.Partition)
	assert.Contains(t, err.Error(), "17 slots")
	assert.Empty(t, c.Commands(), "nothing submitted")
	assert.Equal(t, []error{err}, c.Refused())

	err = c.Handle(t0, slotpool.Ask{ID: 2, Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.New(5000, 0), MinMembers: 1}}}})
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, "nodes of at most 4 CPUs", tl.Have)

	err = c.Handle(t0, slotpool.Ask{ID: 3, Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.New(1000, 0).WithExtended("gpu", 1), MinMembers: 1}}}})
	assert.ErrorIs(t, err, ErrTooLarge, "no node has a gpu")

	require.NoError(t, c.Handle(t0, unknownAsk(4, 16)), "exactly the partition")
}

func TestTightPartition(t *testing.T) {
	c, err := newJobCore(jobConfig{Name: "rs", Queue: "q", Partitions: map[string]string{"q": "cpus2"}}, recordedPartition(t, "cpus2"))
	require.NoError(t, err)
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Capacity{Slots: []resource.Count{{Profile: resource.Unknown, N: 2}}}}, c.Ready())
	require.NoError(t, c.Handle(t0, unknownAsk(1, 2)))
	assert.Equal(t, "cpus2", c.Commands()[0].Request.Partition)
	assert.ErrorIs(t, c.Handle(t0, unknownAsk(2, 3)), ErrTooLarge)
}

func TestOutageDuringSubmit(t *testing.T) {
	unreachable := &CommandError{Command: "sbatch", Err: ErrUnreachable}

	t.Run("the job never reached Slurm: submitted again", func(t *testing.T) {
		c := newCore(t)
		require.NoError(t, c.Handle(t0, unknownAsk(1, 1)))
		cmd := c.Commands()[0]
		c.Submitted(t0, cmd.Name, 0, unreachable)
		assert.Empty(t, c.Refused())
		c.Observe(t0, c.Watched(), nil)
		assert.Equal(t, []slurmCommand{cmd}, c.Commands())
	})

	t.Run("it did: adopted, not submitted twice", func(t *testing.T) {
		c := newCore(t)
		require.NoError(t, c.Handle(t0, unknownAsk(1, 1)))
		cmd := c.Commands()[0]
		c.Submitted(t0, cmd.Name, 0, unreachable)
		c.Observe(t0, c.Watched(), []jobStatus{running(12, "rs-a1", nodeCPUs{"n4", 1})})
		assert.Empty(t, c.Commands())
		c.Observe(t0, c.Watched(), []jobStatus{running(12, "rs-a1", nodeCPUs{"n4", 1})})
		out := c.Ready()
		require.Len(t, out, 1, "granted once")
		p, _ := c.Placement(out[0].(slotpool.Grant).Slots[0].ID)
		assert.Equal(t, JobID(12), p.Job)
	})

	t.Run("a duplicate is cancelled", func(t *testing.T) {
		c := newCore(t)
		require.NoError(t, c.Handle(t0, unknownAsk(1, 1)))
		submitted(t, c, 20)
		c.Observe(t0, c.Watched(), []jobStatus{running(20, "rs-a1", nodeCPUs{"n1", 1}), {ID: 21, Name: "rs-a1", State: "PENDING"}})
		assert.Len(t, c.Ready(), 1)
		assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 21}}, c.Commands())
		c.Cancelled(t0, "rs-a1", 21, nil)
	})

	t.Run("a rejected submit is refused", func(t *testing.T) {
		c := newCore(t)
		require.NoError(t, c.Handle(t0, unknownAsk(1, 1)))
		cmd := c.Commands()[0]
		c.Submitted(t0, cmd.Name, 0, &CommandError{Command: "sbatch", Stderr: "Invalid partition name specified", Err: ErrRejected})
		refused := c.Refused()
		require.Len(t, refused, 1)
		assert.ErrorIs(t, refused[0], ErrRejected)
		assert.Empty(t, c.Watched())
	})
}

func TestJobEndedBeforeItRanIsSubmittedAgain(t *testing.T) {
	c := newCore(t)
	require.NoError(t, c.Handle(t0, unknownAsk(1, 1)))
	cmd := submitted(t, c, 30)
	c.Observe(t0, c.Watched(), []jobStatus{{ID: 30, Name: "rs-a1", State: "CANCELLED"}}) // an operator's scancel
	assert.Equal(t, []slurmCommand{cmd}, c.Commands())
	c.Submitted(t0, cmd.Name, 31, nil)
	c.Observe(t0, c.Watched(), []jobStatus{{ID: 30, Name: "rs-a1", State: "CANCELLED"}, running(31, "rs-a1", nodeCPUs{"n1", 1})})
	assert.Len(t, c.Ready(), 1)
}

func TestCancelRetriedAfterAnOutage(t *testing.T) {
	c, g := granted(t, 8, nodeCPUs{"n1", 1})
	require.NoError(t, c.Handle(t0, slotpool.SlotRelease{Slot: g.Slots[0].ID, Reason: slotpool.ReasonStopped}))
	cmd := c.Commands()[0]
	c.Cancelled(t0, cmd.Name, cmd.Job, &CommandError{Command: "scancel", Err: ErrUnreachable})
	c.Observe(t0, c.Watched(), []jobStatus{running(8, "rs-a1", nodeCPUs{"n1", 1})})
	assert.Equal(t, []slurmCommand{cmd}, c.Commands(), "cancelled again")
}

func TestShutdownCancelsEverything(t *testing.T) {
	c := newCore(t)
	require.NoError(t, c.Handle(t0, unknownAsk(1, 1)))
	require.NoError(t, c.Handle(t0, unknownAsk(2, 1)))
	cmds := c.Commands()
	c.Submitted(t0, cmds[0].Name, 50, nil)
	c.Shutdown()
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 50}, {Kind: cmdCancel, Name: "rs-a2"}}, c.Commands(), "an unknown id goes by name")
}

func TestCoreRejectsBadInput(t *testing.T) {
	_, err := newJobCore(jobConfig{Name: "a b"}, partition{})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Name", ce.Field)
	c := newCore(t)
	assert.ErrorIs(t, c.Handle(t0, slotpool.Ask{ID: 1}), ErrRejected, "no group")
	require.NoError(t, c.Handle(t0, unknownAsk(2, 1)))
	assert.ErrorIs(t, c.Handle(t0, unknownAsk(2, 1)), ErrRejected, "twice")
	assert.ErrorIs(t, c.Handle(t0, nil), slotpool.ErrUnknownMessage)
	c.Submitted(t0, "unknown", 1, nil)
	c.Observe(t0, []string{"unknown"}, nil)
	c.Tick(t0)
	_, ok := c.NextDeadline()
	assert.False(t, ok)
}

// A duplicate job whose cancel failed is cancelled again by the next
// observation that finds it alive, or by Shutdown, and only then.
func TestFailedCancelOfADuplicate(t *testing.T) {
	unreachable := &CommandError{Command: "scancel", Err: ErrUnreachable}
	dupCancel := slurmCommand{Kind: cmdCancel, Name: "rs-a1", Job: 21}
	// dupFailed is a jobCore granted job 20 whose name also found job 21, a
	// duplicate whose cancel failed.
	dupFailed := func(t *testing.T) *jobCore {
		c := newCore(t)
		require.NoError(t, c.Handle(t0, unknownAsk(1, 1)))
		submitted(t, c, 20)
		c.Observe(t0, c.Watched(), []jobStatus{running(20, "rs-a1", nodeCPUs{"n1", 1}), {ID: 21, Name: "rs-a1", State: "PENDING"}})
		require.Len(t, c.Ready(), 1)
		require.Equal(t, []slurmCommand{dupCancel}, c.Commands())
		c.Cancelled(t0, "rs-a1", 21, unreachable)
		return c
	}
	own := slurmCommand{Kind: cmdCancel, Name: "rs-a1", Job: 20}

	t.Run("Shutdown issues it again", func(t *testing.T) {
		c := dupFailed(t)
		c.Shutdown()
		assert.Equal(t, []slurmCommand{dupCancel, own}, c.Commands())
	})
	t.Run("an observation that finds it alive issues it again, once", func(t *testing.T) {
		c := dupFailed(t)
		c.Observe(t0, c.Watched(), []jobStatus{running(20, "rs-a1", nodeCPUs{"n1", 1}), {ID: 21, Name: "rs-a1", State: "PENDING"}})
		assert.Equal(t, []slurmCommand{dupCancel}, c.Commands())
		c.Cancelled(t0, "rs-a1", 21, nil)
		c.Shutdown()
		assert.Equal(t, []slurmCommand{own}, c.Commands(), "cancelled: not again")
	})
	t.Run("one that finds it ended drops it", func(t *testing.T) {
		c := dupFailed(t)
		c.Observe(t0, c.Watched(), []jobStatus{running(20, "rs-a1", nodeCPUs{"n1", 1}), {ID: 21, Name: "rs-a1", State: "CANCELLED"}})
		assert.Empty(t, c.Commands())
		c.Shutdown()
		assert.Equal(t, []slurmCommand{own}, c.Commands())
	})
}

// Slurm decides who gets a slot: the jobCore refuses a speculative ask, as
// it cannot tell whether a regular ask of another job waits for it.
func TestCoreRefusesSpeculativeAsk(t *testing.T) {
	c, err := newJobCore(jobConfig{Name: "rs", Queue: "q", Partitions: map[string]string{"q": "cpus2"}}, recordedPartition(t, "cpus2"))
	require.NoError(t, err)
	err = c.Handle(t0, slotpool.Ask{ID: 1, Speculative: true,
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.Unknown, MinMembers: 1}}, AllOrNothing: true}})
	require.ErrorIs(t, err, slotpool.ErrSpeculativeAsk)
}
