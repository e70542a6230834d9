package scheduler

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// requireTimeError checks that err refuses an input at now after an
// input at last.
func requireTimeError(t *testing.T, err error, now, last time.Time) {
	t.Helper()
	var te *TimeError
	require.ErrorAs(t, err, &te)
	assert.ErrorIs(t, err, ErrTimeWentBackwards)
	assert.Equal(t, now, te.Now)
	assert.Equal(t, last, te.Last)
	assert.Equal(t, "scheduler: time went backwards: "+last.Sub(now).String()+" before the previous input", err.Error())
}

// TestTimeWentBackwards: every input method refuses a time before the
// latest one seen with a *TimeError and changes nothing (no state, no
// output, no deadline); the same time again is fine, and afterwards the
// job goes on as if the refused inputs never happened.
func TestTimeWentBackwards(t *testing.T) {
	rs := wideJob(t)
	h := newHarness(t, rs, Config{Pool: slotpool.Config{Timeout: time.Minute}}, 1)
	slots := h.unknownSlots(2)
	h.offer(slots...)
	h.start()
	h.now = h.now.Add(10 * time.Second)
	h.finish(h.byName("S#0")) // {T, U} waits for a third slot; the timeout runs
	x0 := h.byName("X#0")
	xSlot := h.f.running[x0].Slot
	last := h.now
	past := last.Add(-time.Nanosecond)
	spare := h.unknownSlots(1)
	h.provide(spare...)
	before := h.snapshot()
	require.False(t, before.Deadline.IsZero())

	inputs := []struct {
		name string
		call func(now time.Time) error
	}{
		{"Offer", func(now time.Time) error { return h.s.Offer(now, spare...) }},
		{"SetCapacity", func(now time.Time) error {
			return h.s.SetCapacity(now, []resource.Count{{Profile: resource.Profile{}, N: 1}})
		}},
		{"Tick", func(now time.Time) error { return h.s.Tick(now) }},
		{"Admit", func(now time.Time) error {
			return h.s.Admit(now, slotpool.Capacity{Slots: []resource.Count{{Profile: resource.Profile{}, N: 1}}})
		}},
		{"TaskRunning", func(now time.Time) error { return h.s.TaskRunning(now, x0, 0) }},
		{"TaskFinished", func(now time.Time) error { return h.s.TaskFinished(now, x0, 0) }},
		{"TaskFailed", func(now time.Time) error { return h.s.TaskFailed(now, x0, 0) }},
		{"SlotLost", func(now time.Time) error { return h.s.SlotLost(now, xSlot) }},
	}
	for _, in := range inputs {
		for _, now := range []time.Time{past, last.Add(-time.Hour), t0.Add(-time.Second)} {
			err := in.call(now)
			requireTimeError(t, err, now, last)
			assert.False(t, h.s.HasReady(), "%s at %v left output", in.name, now)
			h.check()
			assert.Equal(t, before, h.snapshot(), "%s at %v changed something", in.name, now)
		}
	}
	// The same time is not backwards; the refused inputs did not move the
	// clock, so the deadline is still where it was.
	h.tick(last)
	assert.Equal(t, before, h.snapshot())
	h.offer(spare...)
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	h.checkClean()
}

// TestTimeWentBackwardsAtStart: Start too refuses a time before an
// earlier input's, and the job stays created.
func TestTimeWentBackwardsAtStart(t *testing.T) {
	rs := wideJob(t)
	h := newHarness(t, rs, Config{}, 1)
	h.now = t0.Add(time.Second)
	h.offer(h.unknownSlots(3)...)
	before := h.snapshot()
	requireTimeError(t, h.s.Start(t0), t0, h.now)
	assert.Equal(t, JobCreated, h.s.State())
	assert.False(t, h.s.HasReady())
	h.check()
	assert.Equal(t, before, h.snapshot())
	assert.Empty(t, h.f.jobs)
	h.start()
	assert.Equal(t, []JobChange{{State: JobRunning}}, h.f.jobs)
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	assert.Equal(t, []JobChange{{State: JobRunning}, {State: JobFinished}}, h.f.jobs)
	h.checkClean()
}

// TestDeployCanceledBeforeReadySlotLost: Start deploys the one region of
// the all-pipelined FLIP-119 job, and a slot it was given is lost before
// the runtime drained the Ready. The deployments of attempt 0 were never
// handed out, so the Ready carries neither them nor their cancels: only
// the failover, the released slots of attempt 0, and attempt 1 deployed
// in the slots left.
func TestDeployCanceledBeforeReadySlotLost(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	h := newHarness(t, rs, Config{}, 1)
	h.offer(h.unknownSlots(5)...)
	a0 := h.byName("A#0")
	h.begin()
	require.NoError(t, h.s.Start(h.now))
	lost, ok := h.s.SlotOf(a0)
	require.True(t, ok, "A#0 is deployed, not handed out yet")
	require.NoError(t, h.s.SlotLost(h.now, lost))
	delete(h.inPool, lost)
	rd := h.s.Ready()

	assert.Empty(t, rd.Cancel, "no task of attempt 0 was handed out")
	require.Len(t, rd.Deploy, 12)
	for _, d := range rd.Deploy {
		assert.Equal(t, Attempt(1), d.Attempt, "%s", h.f.name(d.Task))
		assert.NotEqual(t, lost, d.Slot)
	}
	require.Len(t, rd.Restarted, 1)
	assert.Equal(t, []RegionID{0}, rd.Restarted[0].Regions)
	assert.Equal(t, []Request{{Region: 0, Attempt: 0, Slots: rs.Slots(0)}, {Region: 0, Attempt: 1, Slots: rs.Slots(0)}}, rd.Requests)
	assert.Len(t, rd.Released, 3, "the slots of attempt 0 but the lost one")
	for _, rl := range rd.Released {
		assert.Equal(t, Release{Slot: rl.Slot, Region: 0, Attempt: 0}, rl)
		assert.NotEqual(t, lost, rl.Slot)
	}
	assert.Equal(t, &JobChange{State: JobRunning}, rd.Job)
	assert.False(t, h.s.HasReady())

	h.f.apply(rd)
	h.check()
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	assert.Empty(t, h.f.cancels)
	h.checkClean()
}

// TestDeployCanceledBeforeReadyRevoke: an in-process admission grants the
// one region of the all-pipelined FLIP-119 job its four slots and revokes
// one of them in the same batch. The region was deployed and failed over
// within one Tick: the Ready has no deployment and no cancel of attempt 0,
// only the failover and attempt 1's request, which waits for a fourth
// slot; a later grant deploys it.
func TestDeployCanceledBeforeReadyRevoke(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	adm := &scriptAdmission{}
	h := newHarness(t, rs, Config{Admission: adm}, 1)
	slots := h.unknownSlots(5)
	h.provide(slots...)
	h.start()
	require.Empty(t, h.f.deploys)
	adm.out = []slotpool.FromAdmission{
		slotpool.Grant{Ask: adm.askOf(bulkID(0, 0)), Slots: slots[:4]},
		slotpool.Revoke{Slot: slots[0].ID, Reason: slotpool.ReasonPreempted},
	}
	h.begin()
	require.NoError(t, h.s.Tick(h.now))
	rd := h.s.Ready()
	assert.Empty(t, rd.Deploy, "attempt 0 was withdrawn, attempt 1 waits")
	assert.Empty(t, rd.Cancel)
	require.Len(t, rd.Restarted, 1)
	assert.Equal(t, []RegionID{0}, rd.Restarted[0].Regions)
	assert.Equal(t, []Request{{Region: 0, Attempt: 1, Slots: rs.Slots(0)}}, rd.Requests)
	assert.Len(t, rd.Released, 3)
	assert.Nil(t, rd.Job)
	h.f.apply(rd)
	h.check()
	assert.Equal(t, []RegionID{0}, h.s.Status().Waiting)

	adm.out = []slotpool.FromAdmission{slotpool.Grant{Ask: adm.askOf(bulkID(0, 1)), Slots: slots[4:]}}
	h.tick(h.now)
	require.Len(t, h.f.deploys, 12)
	for _, d := range h.f.deploys {
		assert.Equal(t, Attempt(1), d.Attempt)
		assert.NotEqual(t, slots[0].ID, d.Slot)
	}
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	assert.Empty(t, h.f.cancels)
	h.checkClean()
}

// TestOutsideAdmission: with Config.ExternalAdmission, the pool's asks come out in Ready.ToAdmission and nothing is
// deployed until the answers come in. Carrying the messages by hand to an
// admission.StaticCluster and its answers back through Admit runs the job
// to the end in every mode.
func TestOutsideAdmission(t *testing.T) {
	job := flip119(t)
	for _, mode := range modes() {
		rs := region.FromJob(job, mode)
		for seed := uint64(1); seed <= 5; seed++ {
			h := newHarness(t, rs, Config{ExternalAdmission: true}, seed)
			slots := h.unknownSlots(rs.MinimumSlots() + int(seed%2))
			h.provide(slots...)
			cluster, err := admission.NewStaticCluster(resource.FitsEveryDimension, slots...)
			require.NoError(t, err)

			h.start()
			assert.Empty(t, h.f.deploys, "%v: nothing is granted before the answers come in", mode)
			require.NotEmpty(t, h.f.toAdm)
			ask, ok := h.f.toAdm[0].(slotpool.Ask)
			require.True(t, ok, "%T", h.f.toAdm[0])
			assert.Equal(t, bulkID(sourceRegions(rs)[0], 0), ask.Bulk)

			carried := 0
			carry := func() {
				for ; carried < len(h.f.toAdm); carried++ {
					require.NoError(t, cluster.Handle(h.now, h.f.toAdm[carried]))
				}
				answers := cluster.Ready()
				h.begin()
				require.NoError(t, h.s.Admit(h.now, answers...))
				h.check()
			}
			carry()
			require.NotEmpty(t, h.f.deploys, "%v: the cluster's grants deploy", mode)
			for i := 0; h.s.State() == JobRunning; i++ {
				require.Less(t, i, 100_000)
				if carried < len(h.f.toAdm) {
					carry()
					continue
				}
				require.True(t, h.step(), "%v seed %d: job stalls, waiting %v", mode, seed, h.s.Status().Waiting)
			}
			carry()
			require.Equal(t, JobFinished, h.s.State(), "%v seed %d: %v", mode, seed, h.s.Err())
			assert.LessOrEqual(t, h.f.maxUsed, len(slots))
			h.checkClean()
			assert.Equal(t, len(slots)-h.s.Status().Pool.Slots, len(cluster.Available()))
		}
	}
}

// TestOpErrors: errors of the layers below come wrapped in an *OpError
// that names the input and the task, errors.As still reaches the lower
// layer's types through it, and every message of the package starts with
// "scheduler: ".
func TestOpErrors(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	h := newHarness(t, rs, Config{}, 1)
	slots := h.unknownSlots(1)
	h.offer(slots...)
	h.start()
	a0, a1 := h.byName("A#0"), h.byName("A#1")
	n := TaskID(rs.Topology().NumExecutionVertices())
	np := PartitionID(rs.Topology().NumPartitions())
	before := h.snapshot()

	requireOp := func(err error, op, task string) *OpError {
		t.Helper()
		var oe *OpError
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, op, oe.Op)
		assert.Equal(t, task, oe.Task)
		want := "scheduler: " + op + ": "
		if task != "" {
			want = "scheduler: " + op + " " + task + ": "
		}
		assert.True(t, strings.HasPrefix(err.Error(), want), "%q does not start with %q", err, want)
		assert.Equal(t, want+oe.Err.Error(), err.Error())
		return oe
	}
	for _, c := range []struct {
		op   string
		call func() error
		to   TaskState
	}{
		{"task-running", func() error { return h.s.TaskRunning(h.now, a1, 0) }, TaskRunning},
		{"task-finished", func() error { return h.s.TaskFinished(h.now, a1, 0) }, TaskFinished},
		{"task-failed", func() error { return h.s.TaskFailed(h.now, a1, 0) }, TaskFailed},
	} {
		err := c.call()
		requireOp(err, c.op, "A#1")
		var te *TransitionError
		require.ErrorAs(t, err, &te, c.op)
		assert.Equal(t, TransitionError{Vertex: a1, Name: "A#1", From: TaskScheduled, To: c.to}, *te)
		assert.ErrorIs(t, err, strategy.ErrInvalidTransition)
	}

	err := h.s.TaskFinished(h.now, n, 0)
	requireOp(err, "task-finished", "")
	var uv *UnknownVertexError
	assert.ErrorAs(t, err, &uv)

	err = h.s.TaskFailed(h.now, a0, 0, np)
	requireOp(err, "task-failed", "A#0")
	var up *UnknownPartitionError
	require.ErrorAs(t, err, &up)
	assert.Equal(t, np, up.Partition)

	_, err = h.s.Task(n)
	requireOp(err, "task", "")
	assert.ErrorAs(t, err, &uv)
	assert.ErrorIs(t, err, strategy.ErrUnknownVertex)

	var se *slotpool.SlotError
	err = h.s.SlotLost(h.now, 999)
	requireOp(err, "slot-lost", "")
	require.ErrorAs(t, err, &se)
	assert.Equal(t, slotpool.SlotID(999), se.Slot)
	assert.ErrorIs(t, err, slotpool.ErrUnknownSlot)

	err = h.s.Offer(h.now, slots...)
	requireOp(err, "offer", "")
	require.ErrorAs(t, err, &se)
	assert.Equal(t, slots[0].ID, se.Slot)
	assert.ErrorIs(t, err, slotpool.ErrDuplicateSlot)

	err = h.s.Admit(h.now, slotpool.Revoke{Slot: 999, Reason: slotpool.ReasonPreempted})
	requireOp(err, "admit", "")
	require.ErrorAs(t, err, &se)
	assert.Equal(t, slotpool.SlotID(999), se.Slot)

	h.check()
	assert.Equal(t, before, h.snapshot(), "a refused input changed something")

	// Admit applies the messages before the one refused, not those after.
	extra := h.unknownSlots(2)
	h.provide(extra...)
	h.begin()
	err = h.s.Admit(h.now,
		slotpool.Grant{Slots: extra[:1]},
		slotpool.Revoke{Slot: 999, Reason: slotpool.ReasonPreempted},
		slotpool.Grant{Slots: extra[1:]})
	requireOp(err, "admit", "")
	h.inPool[extra[0].ID] = true
	h.check()
	_, ok := h.s.pool.Slot(extra[0].ID)
	assert.True(t, ok, "the grant before the refused message is applied")
	_, ok = h.s.pool.Slot(extra[1].ID)
	assert.False(t, ok, "the grant after it is not")
	assert.Contains(t, h.f.running, a1, "A#1 got the granted slot")

	// The package's own errors.
	for _, err := range []error{ErrNotRunning, ErrAlreadyStarted, ErrJobFailed, ErrTimeWentBackwards, ErrStopped,
		&TimeError{Now: t0, Last: t0.Add(time.Second)},
		&RegionError{Region: 1, Members: "{A#0}", Slots: 1, Err: &slotpool.NoResourceAvailableError{Bulk: 1, Never: true}},
		&RegionError{Region: 1, Members: "{A#0}", Slots: 1, Err: errors.New("boom")},
		&OpError{Op: "offer", Err: errors.New("boom")},
	} {
		assert.True(t, strings.HasPrefix(err.Error(), "scheduler: "), "%q", err)
	}
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	h.checkClean()
}

// TestReadyValidUntilNextCall: the slices of a Ready stay as handed out
// while the inputs that follow come in, up to the next call of Ready
// (which reuses their storage); a Clone stays as it was through every
// later call. One task fails once, so that Cancel, Restarted and a second
// request of its region come out too.
func TestReadyValidUntilNextCall(t *testing.T) {
	for name, rs := range map[string]*region.Regions{
		"one-slot regions": fanJob(t, 8),
		"one region":       region.FromJob(flip119(t), exchange.AllPipelined),
	} {
		t.Run(name, func(t *testing.T) {
			s := mustNew(t, rs, Config{})
			now := t0
			require.NoError(t, s.Offer(now, slotpool.Slots(4)...))
			require.NoError(t, s.Start(now))
			var clones []Ready
			var want []string
			failed := false
			for turn := 0; ; turn++ {
				require.Less(t, turn, 1000, "no end in sight")
				rd := s.Ready()
				snap := fmt.Sprintf("%+v", rd)
				clones, want = append(clones, rd.Clone()), append(want, snap)
				for _, d := range rd.Deploy {
					if st, err := s.Task(d.Task); err != nil || st.Attempt != d.Attempt {
						continue // its region restarted
					}
					now = now.Add(time.Second)
					require.NoError(t, s.TaskRunning(now, d.Task, d.Attempt))
					if !failed {
						failed = true
						require.NoError(t, s.TaskFailed(now, d.Task, d.Attempt))
						continue
					}
					require.NoError(t, s.TaskFinished(now, d.Task, d.Attempt))
				}
				assert.Equal(t, snap, fmt.Sprintf("%+v", rd), "turn %d: an input changed the Ready handed out", turn)
				if ended, err := rd.Job.Ended(); ended {
					require.NoError(t, err)
					break
				}
			}
			require.True(t, failed)
			for i, c := range clones {
				assert.Equal(t, want[i], fmt.Sprintf("%+v", c), "the clone of turn %d changed", i)
			}
		})
	}
}

// TestRefusedInputDoesNotMoveTheClock: an input refused for another
// reason (a duplicate slot) records no time, so an earlier input after it
// is not "backwards".
func TestRefusedInputDoesNotMoveTheClock(t *testing.T) {
	rs := wideJob(t)
	s := mustNew(t, rs, Config{})
	require.NoError(t, s.Offer(t0, slotpool.Slot{ID: 1}))
	err := s.Offer(t0.Add(10*time.Second), slotpool.Slot{ID: 1})
	require.ErrorIs(t, err, slotpool.ErrDuplicateSlot)
	assert.NoError(t, s.Tick(t0.Add(5*time.Second)), "the refused offer moved nothing")
	requireTimeError(t, s.Tick(t0.Add(time.Second)), t0.Add(time.Second), t0.Add(5*time.Second))
}

// JobChange.Ended: a nil change and the live states have not ended; a
// finished job ended without error, a failed one with its error.
func TestJobChangeEnded(t *testing.T) {
	var none *JobChange
	ended, err := none.Ended()
	assert.False(t, ended)
	assert.NoError(t, err)
	for _, st := range []JobState{JobCreated, JobRunning} {
		ended, err = (&JobChange{State: st}).Ended()
		assert.False(t, ended, "%v", st)
		assert.NoError(t, err, "%v", st)
	}
	ended, err = (&JobChange{State: JobFinished}).Ended()
	assert.True(t, ended)
	assert.NoError(t, err)
	boom := errors.New("boom")
	ended, err = (&JobChange{State: JobFailed, Err: boom}).Ended()
	assert.True(t, ended)
	assert.ErrorIs(t, err, boom)
}

// TestReadyAfterBurst: the Ready of Start asks for the slots of 2,000
// source regions at once; once it is recycled, its list of requests,
// far larger than the Readies after it need, is dropped from the
// buffer and kept aside for the next burst (the sinks', once every
// source finished), and every later Ready hands out its lists as usual
// (each request, deployment and release once; an empty list nil) until
// the job finishes.
func TestReadyAfterBurst(t *testing.T) {
	const n = 2000
	s := mustNew(t, fanJob(t, n), Config{})
	now := t0
	require.NoError(t, s.Offer(now, slotpool.Slots(4)...))
	require.NoError(t, s.Start(now))
	first := s.Ready()
	require.Len(t, first.Requests, n)
	requests, deploys, releases := len(first.Requests), len(first.Deploy), len(first.Released)
	running := slices.Clone(first.Deploy)
	for turn := 0; len(running) > 0; turn++ {
		require.Less(t, turn, 10*n, "no end in sight")
		d := running[0]
		running = running[1:]
		now = now.Add(time.Second)
		require.NoError(t, s.TaskFinished(now, d.Task, d.Attempt))
		rd := s.Ready()
		// The storage of the Ready of Start collected the Ready of turn 1,
		// which it holds at most a few of: this call recycles it.
		if turn == 2 {
			assert.GreaterOrEqual(t, cap(s.burstRequests), n, "the burst's storage is kept aside")
			assert.Nil(t, s.rd.Requests, "and dropped from the buffer")
		}
		assert.True(t, rd.Requests == nil || len(rd.Requests) > 0, "an empty list is nil")
		assert.True(t, rd.Deploy == nil || len(rd.Deploy) > 0, "an empty list is nil")
		assert.Nil(t, rd.Cancel)
		assert.Nil(t, rd.Restarted)
		requests, deploys, releases = requests+len(rd.Requests), deploys+len(rd.Deploy), releases+len(rd.Released)
		running = append(running, rd.Deploy...)
	}
	assert.Equal(t, JobFinished, s.State())
	assert.Equal(t, 2*n, requests, "every region asked once")
	assert.Equal(t, 2*n, deploys, "every task deployed once")
	assert.Equal(t, 2*n, releases, "every slot released once per task")
}
