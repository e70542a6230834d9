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
	cmds := c.commands()
	require.Len(t, cmds, 1)
	require.Equal(t, cmdSubmit, cmds[0].Kind)
	c.submitted(t0, cmds[0].Name, job, nil)
	return cmds[0]
}

// granted is a jobCore whose ask 1, of as many slots as on has CPUs, was
// submitted as job ("rs-a1"), is running on on's node, and was granted;
// and the Grant.
func granted(t *testing.T, job JobID, on nodeCPUs) (*jobCore, slotpool.Grant) {
	t.Helper()
	c := newCore(t)
	require.NoError(t, c.handle(t0, unknownAsk(1, on.CPUs)))
	submitted(t, c, job)
	c.observe(t0, c.watched(), []jobStatus{running(job, "rs-a1", on)})
	msgs := c.ready()
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
	require.NoError(t, c.handle(t0, unknownAsk(1, 3)))
	cmd := submitted(t, c, 41)
	assert.Equal(t, "rs-a1", cmd.Name)
	assert.Equal(t, []component{{Profile: resource.Unknown, Tasks: 3, CPUsPerTask: 1}}, cmd.Request.Components)
	assert.Equal(t, []string{"rs-a1"}, c.watched())
	assert.True(t, c.busy())

	c.observe(t0, c.watched(), []jobStatus{{ID: 41, Name: "rs-a1", State: "PENDING", Reason: "Resources"}})
	assert.Empty(t, c.ready(), "pending: nothing granted")
	assert.Empty(t, c.commands())

	c.observe(t0, c.watched(), []jobStatus{running(41, "rs-a1", nodeCPUs{"n1", 2}, nodeCPUs{"n3", 1})})
	out := c.ready()
	require.Len(t, out, 1)
	g := out[0].(slotpool.Grant)
	assert.Equal(t, slotpool.AskID(1), g.Ask)
	require.Len(t, g.Slots, 3)
	var nodes []string
	for i, s := range g.Slots {
		assert.Equal(t, slotpool.SlotID(i+1), s.ID)
		p, ok := c.placement(s.ID)
		require.True(t, ok)
		assert.Equal(t, JobID(41), p.Job)
		assert.Equal(t, -1, p.HetGroup)
		assert.Equal(t, 1, p.CPUs)
		nodes = append(nodes, p.Node)
	}
	assert.Equal(t, []string{"n1", "n1", "n3"}, nodes, "each slot knows its node")
	assert.False(t, c.busy())

	// Observed running again: no second grant.
	c.observe(t0, c.watched(), []jobStatus{running(41, "rs-a1", nodeCPUs{"n1", 2}, nodeCPUs{"n3", 1})})
	assert.Empty(t, c.ready())
}

func TestReleasedSlotsCancelTheAllocation(t *testing.T) {
	c, g := granted(t, 7, nodeCPUs{"n2", 2})

	require.NoError(t, c.handle(t0, slotpool.SlotRelease{Slot: g.Slots[0].ID, Reason: slotpool.ReasonStopped}))
	assert.Equal(t, []slotpool.FromAdmission{slotpool.ReleaseConfirmed{Slot: g.Slots[0].ID, Reason: slotpool.ReasonStopped}}, c.ready())
	assert.Empty(t, c.commands(), "one slot is still in use")

	require.NoError(t, c.handle(t0, slotpool.SlotRelease{Slot: g.Slots[1].ID, Reason: slotpool.ReasonStopped}))
	assert.Len(t, c.ready(), 1)
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 7}}, c.commands())
	_, ok := c.placement(g.Slots[1].ID)
	assert.False(t, ok)

	c.cancelled(t0, "rs-a1", 7, nil)
	c.observe(t0, c.watched(), []jobStatus{{ID: 7, Name: "rs-a1", State: "CANCELLED"}})
	assert.Empty(t, c.watched(), "over")

	err := c.handle(t0, slotpool.SlotRelease{Slot: g.Slots[1].ID})
	var se *slotpool.SlotError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, slotpool.ErrUnknownSlot)
}

// A released slot, revoked or not, keeps its placement for the
// deployments decided before its release until the second settle after
// it.
func TestReleasedSlotsPlaceLateDeployments(t *testing.T) {
	c, g := granted(t, 7, nodeCPUs{"n2", 2})
	want := slotPlacement{Job: 7, HetGroup: -1, Node: "n2", CPUs: 1}
	require.NoError(t, c.handle(t0, slotpool.SlotRelease{Slot: g.Slots[0].ID, Reason: slotpool.ReasonStopped}))
	c.observe(t0, c.watched(), []jobStatus{{ID: 7, Name: "rs-a1", State: "CANCELLED"}}) // Slurm ended it: the other one is revoked
	assert.Equal(t, []slotpool.FromAdmission{slotpool.ReleaseConfirmed{Slot: g.Slots[0].ID, Reason: slotpool.ReasonStopped},
		slotpool.Revoke{Slot: g.Slots[1].ID, Reason: slotpool.ReasonPreempted}}, c.ready())
	c.settle()
	require.NoError(t, c.handle(t0, slotpool.SlotRelease{Slot: g.Slots[1].ID, Reason: slotpool.ReasonPreempted}))
	for _, s := range g.Slots {
		_, ok := c.placement(s.ID)
		assert.False(t, ok, "slot %d released", s.ID)
		p, ok := c.deployPlacement(s.ID)
		assert.True(t, ok)
		assert.Equal(t, want, p, "slot %d", s.ID)
	}

	c.settle()
	_, ok := c.deployPlacement(g.Slots[0].ID)
	assert.False(t, ok, "released before the previous settle")
	p, ok := c.deployPlacement(g.Slots[1].ID)
	assert.True(t, ok, "released since")
	assert.Equal(t, want, p)
	c.settle()
	_, ok = c.deployPlacement(g.Slots[1].ID)
	assert.False(t, ok)
	_, ok = c.deployPlacement(g.Slots[1].ID + 1)
	assert.False(t, ok, "never granted")
}

func TestAskReleaseCancelsThePendingJob(t *testing.T) {
	c := newCore(t)
	require.NoError(t, c.handle(t0, unknownAsk(1, 2)))
	submitted(t, c, 9)
	require.NoError(t, c.handle(t0, slotpool.AskRelease{ID: 1, Reason: slotpool.ReasonStopped}))
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 9}}, c.commands())
	// Slurm started it meanwhile: still not granted.
	c.observe(t0, c.watched(), []jobStatus{running(9, "rs-a1", nodeCPUs{"n1", 2})})
	assert.Empty(t, c.ready())
	c.observe(t0, c.watched(), nil) // gone from squeue
	assert.Empty(t, c.watched())
}

func TestAskReleaseBeforeTheSubmitAnswer(t *testing.T) {
	c := newCore(t)
	require.NoError(t, c.handle(t0, unknownAsk(1, 1)))
	cmds := c.commands()
	require.NoError(t, c.handle(t0, slotpool.AskRelease{ID: 1, Reason: slotpool.ReasonTimeout}))
	assert.Empty(t, c.commands())
	c.submitted(t0, cmds[0].Name, 5, nil)
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 5}}, c.commands())
}

func TestPreemptionRevokes(t *testing.T) {
	c := newCore(t)
	require.NoError(t, c.handle(t0, slotpool.Ask{ID: 1, Gang: slotpool.Gang{AllOrNothing: true,
		Groups: []slotpool.TaskGroup{{Profile: resource.New(2000, 0), MinMembers: 3}}}}))
	submitted(t, c, 1)
	// The recorded job 1: 3 tasks of 2 CPUs on n1 (4) and n2 (2), running,
	// then preempted by a job of the high partition.
	recorded := recordedJobs(t, "squeue-mixed.json")
	run := jobByID(t, recorded, 1, "rs-a1")
	run.State, run.Preempted = "RUNNING", false
	c.observe(t0, c.watched(), []jobStatus{run})
	g := c.ready()[0].(slotpool.Grant)
	var nodes []string
	for _, s := range g.Slots {
		p, _ := c.placement(s.ID)
		nodes = append(nodes, p.Node)
		assert.Equal(t, resource.New(2000, 0), s.Profile)
	}
	assert.Equal(t, []string{"n1", "n1", "n2"}, nodes)

	c.observe(t0, c.watched(), []jobStatus{jobByID(t, recorded, 1, "rs-a1")})
	var revoked []slotpool.SlotID
	for _, m := range c.ready() {
		r := m.(slotpool.Revoke)
		assert.Equal(t, slotpool.ReasonPreempted, r.Reason)
		revoked = append(revoked, r.Slot)
	}
	assert.Equal(t, []slotpool.SlotID{1, 2, 3}, revoked)
	assert.Empty(t, c.commands(), "Slurm ended it: nothing to cancel")
	for _, id := range revoked {
		require.NoError(t, c.handle(t0, slotpool.SlotRelease{Slot: id, Reason: slotpool.ReasonPreempted}))
	}
	assert.Empty(t, c.ready(), "the echo of a revoke is not confirmed")
	assert.Empty(t, c.watched())
}

func TestPreemptTimeReclaimsBeforeTheStateChanges(t *testing.T) {
	c := grantedOnN1(t, 1)
	st := running(3, "rs-a1", nodeCPUs{"n1", 1}, nodeCPUs{"n2", 1})
	st.Preempted = true
	c.observe(t0, c.watched(), []jobStatus{st})
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Reclaim{Slot: 1}}, c.ready(), "the grace time: reclaimed")
	c.observe(t0, c.watched(), []jobStatus{st})
	assert.Empty(t, c.ready(), "once")
	assert.Empty(t, c.commands())
	// The pool gives the slot back when its task is done: confirmed, and
	// the job cancelled.
	require.NoError(t, c.handle(t0, slotpool.SlotRelease{Slot: 1, Reason: slotpool.ReasonPreempted}))
	assert.Equal(t, []slotpool.FromAdmission{slotpool.ReleaseConfirmed{Slot: 1, Reason: slotpool.ReasonPreempted}}, c.ready())
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 3}}, c.commands())
}

func TestGraceTimeEndsWithARevoke(t *testing.T) {
	c := grantedOnN1(t, 2)
	st := running(3, "rs-a1", nodeCPUs{"n1", 2})
	st.Preempted = true
	c.observe(t0, c.watched(), []jobStatus{st})
	assert.Len(t, c.ready(), 2)
	require.NoError(t, c.handle(t0, slotpool.SlotRelease{Slot: 1, Reason: slotpool.ReasonPreempted}))
	c.ready()
	st.State = "PREEMPTED" // the grace time is over
	c.observe(t0, c.watched(), []jobStatus{st})
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Revoke{Slot: 2, Reason: slotpool.ReasonPreempted}}, c.ready(), "only what was still held")
	require.NoError(t, c.handle(t0, slotpool.SlotRelease{Slot: 2, Reason: slotpool.ReasonPreempted}))
	assert.Empty(t, c.ready())
	assert.Empty(t, c.watched())
}

func TestRequeuedAllocationIsRevoked(t *testing.T) {
	c := grantedOnN1(t, 1)
	c.observe(t0, c.watched(), []jobStatus{{ID: 3, Name: "rs-a1", State: "PENDING", Reason: "BeginTime"}}) // PreemptMode=REQUEUE
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Revoke{Slot: 1, Reason: slotpool.ReasonPreempted}}, c.ready())
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 3}}, c.commands())
}

func TestHeterogeneousGang(t *testing.T) {
	c := newCore(t)
	small, big := resource.New(1000, 100), resource.New(2000, 0)
	require.NoError(t, c.handle(t0, slotpool.Ask{ID: 1, Gang: slotpool.Gang{AllOrNothing: true,
		Groups: []slotpool.TaskGroup{{Profile: small, MinMembers: 2}, {Profile: big, MinMembers: 1}}}}))
	cmd := submitted(t, c, 6)
	require.Len(t, cmd.Request.Components, 2)
	// The recorded heterogeneous job 6+0 (2 x 1 CPU on n1), 6+1 (1 x 2
	// CPUs on n2).
	recorded := recordedJobs(t, "squeue-mixed.json")
	c.observe(t0, c.watched(), []jobStatus{jobByID(t, recorded, 7, "rs-a1"), jobByID(t, recorded, 6, "rs-a1")})
	g := c.ready()[0].(slotpool.Grant)
	require.Len(t, g.Slots, 3)
	want := []slotPlacement{{Job: 6, HetGroup: 0, Node: "n1", CPUs: 1}, {Job: 6, HetGroup: 0, Node: "n1", CPUs: 1}, {Job: 6, HetGroup: 1, Node: "n2", CPUs: 2}}
	for i, s := range g.Slots {
		p, _ := c.placement(s.ID)
		assert.Equal(t, want[i], p)
	}
	assert.Equal(t, []resource.Profile{small, small, big}, []resource.Profile{g.Slots[0].Profile, g.Slots[1].Profile, g.Slots[2].Profile})
}

func TestTooLargeRefusedAtOnce(t *testing.T) {
	c := newCore(t)
	err := c.handle(t0, unknownAsk(1, 17))
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.Equal(t, "low", tl.Partition)
	assert.Contains(t, err.Error(), "17 slots")
	assert.Empty(t, c.commands(), "nothing submitted")
	assert.Equal(t, []error{err}, c.takeRefused())

	err = c.handle(t0, slotpool.Ask{ID: 2, Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.New(5000, 0), MinMembers: 1}}}})
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, "nodes of at most 4 CPUs", tl.Have)

	err = c.handle(t0, slotpool.Ask{ID: 3, Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.New(1000, 0).WithExtended("gpu", 1), MinMembers: 1}}}})
	assert.ErrorIs(t, err, ErrTooLarge, "no node has a gpu")

	require.NoError(t, c.handle(t0, unknownAsk(4, 16)), "exactly the partition")
}

func TestTightPartition(t *testing.T) {
	c, err := newJobCore(jobConfig{Name: "rs", Queue: "q", Partitions: map[string]string{"q": "cpus2"}}, recordedPartition(t, "cpus2"))
	require.NoError(t, err)
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Capacity{Slots: []resource.Count{{Profile: resource.Unknown, N: 2}}}}, c.ready())
	require.NoError(t, c.handle(t0, unknownAsk(1, 2)))
	assert.Equal(t, "cpus2", c.commands()[0].Request.Partition)
	assert.ErrorIs(t, c.handle(t0, unknownAsk(2, 3)), ErrTooLarge)
}

func TestOutageDuringSubmit(t *testing.T) {
	unreachable := &CommandError{Command: "sbatch", Err: ErrUnreachable}

	t.Run("the job never reached Slurm: submitted again", func(t *testing.T) {
		c := newCore(t)
		require.NoError(t, c.handle(t0, unknownAsk(1, 1)))
		cmd := c.commands()[0]
		c.submitted(t0, cmd.Name, 0, unreachable)
		assert.Empty(t, c.takeRefused())
		c.observe(t0, c.watched(), nil)
		assert.Equal(t, []slurmCommand{cmd}, c.commands())
	})

	t.Run("it did: adopted, not submitted twice", func(t *testing.T) {
		c := newCore(t)
		require.NoError(t, c.handle(t0, unknownAsk(1, 1)))
		cmd := c.commands()[0]
		c.submitted(t0, cmd.Name, 0, unreachable)
		c.observe(t0, c.watched(), []jobStatus{running(12, "rs-a1", nodeCPUs{"n4", 1})})
		assert.Empty(t, c.commands())
		c.observe(t0, c.watched(), []jobStatus{running(12, "rs-a1", nodeCPUs{"n4", 1})})
		out := c.ready()
		require.Len(t, out, 1, "granted once")
		p, _ := c.placement(out[0].(slotpool.Grant).Slots[0].ID)
		assert.Equal(t, JobID(12), p.Job)
	})

	t.Run("a duplicate is cancelled", func(t *testing.T) {
		c := newCore(t)
		require.NoError(t, c.handle(t0, unknownAsk(1, 1)))
		submitted(t, c, 20)
		c.observe(t0, c.watched(), []jobStatus{running(20, "rs-a1", nodeCPUs{"n1", 1}), {ID: 21, Name: "rs-a1", State: "PENDING"}})
		assert.Len(t, c.ready(), 1)
		assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 21}}, c.commands())
		c.cancelled(t0, "rs-a1", 21, nil)
	})

	t.Run("a rejected submit is refused", func(t *testing.T) {
		c := newCore(t)
		require.NoError(t, c.handle(t0, unknownAsk(1, 1)))
		cmd := c.commands()[0]
		c.submitted(t0, cmd.Name, 0, &CommandError{Command: "sbatch", Stderr: "Invalid partition name specified", Err: ErrRejected})
		refused := c.takeRefused()
		require.Len(t, refused, 1)
		assert.ErrorIs(t, refused[0], ErrRejected)
		assert.Empty(t, c.watched())
	})
}

func TestJobEndedBeforeItRanIsSubmittedAgain(t *testing.T) {
	c := newCore(t)
	require.NoError(t, c.handle(t0, unknownAsk(1, 1)))
	cmd := submitted(t, c, 30)
	c.observe(t0, c.watched(), []jobStatus{{ID: 30, Name: "rs-a1", State: "CANCELLED"}}) // an operator's scancel
	assert.Equal(t, []slurmCommand{cmd}, c.commands())
	c.submitted(t0, cmd.Name, 31, nil)
	c.observe(t0, c.watched(), []jobStatus{{ID: 30, Name: "rs-a1", State: "CANCELLED"}, running(31, "rs-a1", nodeCPUs{"n1", 1})})
	assert.Len(t, c.ready(), 1)
}

func TestCancelRetriedAfterAnOutage(t *testing.T) {
	c, g := granted(t, 8, nodeCPUs{"n1", 1})
	require.NoError(t, c.handle(t0, slotpool.SlotRelease{Slot: g.Slots[0].ID, Reason: slotpool.ReasonStopped}))
	cmd := c.commands()[0]
	c.cancelled(t0, cmd.Name, cmd.Job, &CommandError{Command: "scancel", Err: ErrUnreachable})
	c.observe(t0, c.watched(), []jobStatus{running(8, "rs-a1", nodeCPUs{"n1", 1})})
	assert.Equal(t, []slurmCommand{cmd}, c.commands(), "cancelled again")
}

func TestShutdownCancelsEverything(t *testing.T) {
	c := newCore(t)
	require.NoError(t, c.handle(t0, unknownAsk(1, 1)))
	require.NoError(t, c.handle(t0, unknownAsk(2, 1)))
	cmds := c.commands()
	c.submitted(t0, cmds[0].Name, 50, nil)
	c.shutdown(false)
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-a1", Job: 50}, {Kind: cmdCancel, Name: "rs-a2"}}, c.commands(), "an unknown id goes by name")
}

func TestCoreRejectsBadInput(t *testing.T) {
	_, err := newJobCore(jobConfig{Name: "a b"}, partition{})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Name", ce.Field)
	c := newCore(t)
	assert.ErrorIs(t, c.handle(t0, slotpool.Ask{ID: 1}), ErrRejected, "no group")
	require.NoError(t, c.handle(t0, unknownAsk(2, 1)))
	assert.ErrorIs(t, c.handle(t0, unknownAsk(2, 1)), ErrRejected, "twice")
	assert.ErrorIs(t, c.handle(t0, nil), slotpool.ErrUnknownMessage)
	c.submitted(t0, "unknown", 1, nil)
	c.observe(t0, []string{"unknown"}, nil)
	assert.Equal(t, []string{c.cfg.Name + "-a2"}, c.watched(), "unknown names change nothing")
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
		require.NoError(t, c.handle(t0, unknownAsk(1, 1)))
		submitted(t, c, 20)
		c.observe(t0, c.watched(), []jobStatus{running(20, "rs-a1", nodeCPUs{"n1", 1}), {ID: 21, Name: "rs-a1", State: "PENDING"}})
		require.Len(t, c.ready(), 1)
		require.Equal(t, []slurmCommand{dupCancel}, c.commands())
		c.cancelled(t0, "rs-a1", 21, unreachable)
		return c
	}
	own := slurmCommand{Kind: cmdCancel, Name: "rs-a1", Job: 20}

	t.Run("Shutdown issues it again", func(t *testing.T) {
		c := dupFailed(t)
		c.shutdown(false)
		assert.Equal(t, []slurmCommand{dupCancel, own}, c.commands())
	})
	t.Run("an observation that finds it alive issues it again, once", func(t *testing.T) {
		c := dupFailed(t)
		c.observe(t0, c.watched(), []jobStatus{running(20, "rs-a1", nodeCPUs{"n1", 1}), {ID: 21, Name: "rs-a1", State: "PENDING"}})
		assert.Equal(t, []slurmCommand{dupCancel}, c.commands())
		c.cancelled(t0, "rs-a1", 21, nil)
		c.shutdown(false)
		assert.Equal(t, []slurmCommand{own}, c.commands(), "cancelled: not again")
	})
	t.Run("one that finds it ended drops it", func(t *testing.T) {
		c := dupFailed(t)
		c.observe(t0, c.watched(), []jobStatus{running(20, "rs-a1", nodeCPUs{"n1", 1}), {ID: 21, Name: "rs-a1", State: "CANCELLED"}})
		assert.Empty(t, c.commands())
		c.shutdown(false)
		assert.Equal(t, []slurmCommand{own}, c.commands())
	})
}

// Slurm decides who gets a slot: the jobCore refuses a speculative ask, as
// it cannot tell whether a regular ask of another job waits for it.
func TestCoreRefusesSpeculativeAsk(t *testing.T) {
	c, err := newJobCore(jobConfig{Name: "rs", Queue: "q", Partitions: map[string]string{"q": "cpus2"}}, recordedPartition(t, "cpus2"))
	require.NoError(t, err)
	err = c.handle(t0, slotpool.Ask{ID: 1, Speculative: true,
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.Unknown, MinMembers: 1}}, AllOrNothing: true}})
	require.ErrorIs(t, err, slotpool.ErrSpeculativeAsk)
}
