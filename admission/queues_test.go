package admission

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// defaultQueue configures root.default as a fifo queue without limits.
var defaultQueue = []QueueConfig{{Name: "root.default"}}

var allJobStates = []JobState{JobNew, JobAccepted, JobStarting, JobRunning, JobCompleting, JobCompleted, JobFailing, JobFailed, JobRejected}

func TestCanMoveTable(t *testing.T) {
	legal := map[[2]JobState]bool{
		{JobNew, JobAccepted}:         true,
		{JobNew, JobRejected}:         true,
		{JobAccepted, JobStarting}:    true,
		{JobAccepted, JobFailing}:     true,
		{JobAccepted, JobCompleting}:  true,
		{JobStarting, JobRunning}:     true,
		{JobStarting, JobFailing}:     true,
		{JobStarting, JobCompleting}:  true,
		{JobRunning, JobCompleting}:   true,
		{JobRunning, JobFailing}:      true,
		{JobCompleting, JobCompleted}: true,
		{JobFailing, JobFailed}:       true,
	}
	for _, from := range allJobStates {
		for _, to := range allJobStates {
			assert.Equal(t, legal[[2]JobState{from, to}], CanMove(from, to), "%v -> %v", from, to)
		}
		assert.False(t, CanMove(from, JobState(9)), "%v -> out of range", from)
		assert.False(t, CanMove(from, JobState(200)), "%v -> out of range", from)
		assert.False(t, CanMove(JobState(9), from), "out of range -> %v", from)
	}
	for _, s := range allJobStates {
		assert.Equal(t, s == JobCompleted || s == JobFailed || s == JobRejected, s.Terminal(), "%v", s)
		assert.NotContains(t, s.String(), "JobState(")
	}
	assert.Equal(t, "starting", JobStarting.String())
	assert.Equal(t, "JobState(42)", JobState(42).String())
}

func TestPortRefusesIllegalMoves(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue})
	require.NoError(t, err)
	a, err := q.submit(t0, JobSpec{Name: "a"})
	require.NoError(t, err)
	b, err := q.submit(t0, JobSpec{Name: "b"})
	require.NoError(t, err)
	ask(t, a, t0, 1, 1)
	require.Equal(t, JobStarting, a.State())

	require.NoError(t, a.Finished(t0.Add(ms)))
	assert.Equal(t, JobCompleted, a.State())
	var te *TransitionError
	err = a.Finished(t0.Add(2 * ms))
	require.ErrorAs(t, err, &te, "finished twice")
	assert.Equal(t, TransitionError{Job: "a", From: JobCompleted, To: JobCompleting}, *te)
	assert.ErrorIs(t, err, ErrInvalidTransition)
	err = a.Failed(t0.Add(2*ms), errors.New("boom"))
	require.ErrorAs(t, err, &te, "failed after finished")
	assert.Equal(t, JobFailing, te.To)
	assert.Equal(t, JobCompleted, a.State(), "nothing changed")

	require.NoError(t, b.Failed(t0.Add(3*ms), nil))
	assert.Equal(t, JobFailed, b.State())
	assert.ErrorContains(t, b.Err(), `job "b" failed`)
	err = b.Finished(t0.Add(4 * ms))
	require.ErrorAs(t, err, &te)
	assert.Equal(t, JobFailed, te.From)
	assert.Error(t, b.Handle(t0.Add(4*ms), slotpool.AskRelease{ID: 1}), "a failed job takes no message")

	// Deployed on a job that is not starting changes nothing.
	c, err := q.submit(t0.Add(5*ms), JobSpec{Name: "c"})
	require.NoError(t, err)
	c.Deployed(t0.Add(5 * ms))
	assert.Equal(t, JobAccepted, c.State())

	var moves []string
	for _, ev := range q.Events() {
		moves = append(moves, fmt.Sprintf("%s %v->%v", ev.Job, ev.From, ev.To))
	}
	assert.Equal(t, []string{
		"a new->accepted", "b new->accepted", "a accepted->starting", "a starting->completing", "a completing->completed",
		"b accepted->failing", "b failing->failed", "c new->accepted",
	}, moves)
}

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]Policy{
		"fifo": FIFO, "FIFO": FIFO, " Priority ": Priority, "fairshare": FairShare, "fair": FairShare,
		"FairShare": FairShare, "stateaware": StateAware, "StateAware": StateAware, "STATEAWARE": StateAware,
	} {
		got, err := ParsePolicy(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		back, err := ParsePolicy(got.String())
		require.NoError(t, err)
		assert.Equal(t, got, back)
	}
	for _, bad := range []string{"", "lifo", "fast", "fair share"} {
		_, err := ParsePolicy(bad)
		require.ErrorIs(t, err, ErrUnknownPolicy, bad)
		assert.ErrorContains(t, err, "valid: fifo, priority, fairshare, stateaware")
	}
	assert.Equal(t, "Policy(9)", Policy(9).String())
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		queue string
		field string
		err   error
	}{
		{"negative maxRunningJobs", Config{Queues: []QueueConfig{{Name: "root.etl", MaxRunningJobs: -1}}}, "root.etl", "maxRunningJobs", ErrBadLimit},
		{"negative starting timeout", Config{Queues: []QueueConfig{{Name: "root.etl", StartingTimeout: -time.Second}}}, "root.etl", "startingTimeoutMs", ErrBadLimit},
		{"unknown policy", Config{Queues: []QueueConfig{{Name: "root.x", Policy: Policy(7)}}}, "root.x", "policy", ErrUnknownPolicy},
		{"name not under root", Config{Queues: []QueueConfig{{Name: "etl"}}}, "etl", "name", ErrBadQueueName},
		{"queue twice", Config{Queues: []QueueConfig{{Name: "root.a"}, {Name: "root.a"}}}, "root.a", "name", ErrBadQueueName},
		{"bad default policy", Config{DefaultPolicy: Policy(7), CreateQueues: true}, "", "", ErrUnknownPolicy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := New(tc.cfg)
			if tc.field == "" { // the default policy is checked when a queue is created
				require.NoError(t, err)
				_, err = q.submit(t0, JobSpec{Name: "j", Queue: "root.new"})
				tc.queue, tc.field = "root.new", "policy"
			}
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.queue, ce.Queue)
			assert.Equal(t, tc.field, ce.Field)
			assert.ErrorIs(t, err, tc.err)
			assert.Contains(t, err.Error(), tc.queue)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
	_, err := New(Config{Slots: []slotpool.Slot{slot(1, small), slot(1, big)}})
	assert.ErrorIs(t, err, slotpool.ErrDuplicateSlot)
}

func TestSubmitQueuesAndDuplicates(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: []QueueConfig{{Name: "root.default"}}})
	require.NoError(t, err)
	_, err = q.submit(t0, JobSpec{Name: "x", Queue: "root.etl"})
	require.ErrorIs(t, err, ErrUnknownQueue)
	assert.ErrorContains(t, err, "root.etl")
	_, ok := q.portOf("x")
	assert.False(t, ok, "a refused job is not submitted")

	p, err := q.submit(t0, JobSpec{Name: "x"})
	require.NoError(t, err)
	assert.Equal(t, JobAccepted, p.State())
	assert.Equal(t, JobID(0), p.ID())
	_, err = q.submit(t0, JobSpec{Name: "x"})
	require.ErrorIs(t, err, ErrDuplicateJob)
	got, ok := q.portOf("x")
	require.True(t, ok)
	assert.Equal(t, p.ID(), got.ID())

	q, err = New(Config{Slots: clusterSlots(2), CreateQueues: true, DefaultPolicy: StateAware})
	require.NoError(t, err)
	p, err = q.submit(t0, JobSpec{Name: "y", Queue: "root.etl"})
	require.NoError(t, err)
	assert.Equal(t, JobAccepted, p.State())
	require.Contains(t, q.queues, "root.etl")
	assert.Equal(t, StateAware, q.queues["root.etl"].cfg.Policy)
	assert.Equal(t, DefaultStartingTimeout, q.queues["root.etl"].cfg.StartingTimeout)
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Capacity{Slots: []resource.Count{{Profile: small, N: 2}}}}, p.Ready(),
		"a job's pool first learns the cluster's capacity")
}

// A job whose driver plus largest region can never fit is rejected at
// once, with a reason naming the region and what is missing, and the jobs
// behind it run.
func TestRejectedJobDoesNotHoldBack(t *testing.T) {
	s := newSim(t, Config{Slots: clusterSlots(4), Queues: defaultQueue}, simConfig{checks: true, record: true})
	drv := small
	s.add(JobSpec{Name: "huge", Driver: &drv, LargestName: "region 3 {A#0, A#1, A#2, A#3}"}, 0, []int{4}, []time.Duration{10 * ms}, 1, 0)
	s.add(JobSpec{Name: "next"}, 0, []int{4, 2}, uniform(2, 10*ms), 1, 0)
	require.True(t, s.run(0), s.tail(20))

	huge := s.byName["huge"].port
	assert.Equal(t, JobRejected, huge.State())
	var re *RejectedError
	require.ErrorAs(t, huge.Err(), &re)
	assert.ErrorIs(t, huge.Err(), ErrRejected)
	assert.Equal(t, "root.default", re.Queue)
	assert.Contains(t, re.Reason, "region 3 {A#0, A#1, A#2, A#3} needs 5 slots at once with the driver")
	assert.Contains(t, re.Reason, "missing 1 x {cpu=1000m mem=1024MB}")
	assert.Zero(t, huge.Granted())
	_, has := huge.DriverSlot()
	assert.False(t, has)

	next := s.byName["next"]
	assert.Equal(t, JobCompleted, next.port.State())
	assert.Equal(t, t0, next.firstDeploy, "the job behind the rejected one is served at once")

	// Without a driver the same region fits.
	q, err := New(Config{Slots: clusterSlots(4), Queues: defaultQueue})
	require.NoError(t, err)
	p, err := q.submit(t0, JobSpec{Name: "fits", Largest: []resource.Count{{Profile: resource.Unknown, N: 4}}})
	require.NoError(t, err)
	assert.Equal(t, JobAccepted, p.State())
	p, err = q.submit(t0, JobSpec{Name: "gpu", Largest: []resource.Count{{Profile: gpu, N: 1}}})
	require.NoError(t, err)
	assert.Equal(t, JobRejected, p.State())
	assert.ErrorContains(t, p.Err(), "the largest region needs 1 slot at once; the queue's cluster can never give it: missing 1 x")
}

// Fair share: two long jobs of priorities 1:3 on one queue, both always
// wanting more, get slot-time close to 1:3. Each starts with what it gets
// first (the first job takes the whole cluster) and the admission moves
// slots over by reclaim, one per task end, so the slot-time is measured
// after a warm-up, on clusters whose 1:3 split is whole slots.
func TestFairShareSplitsByPriority(t *testing.T) {
	for _, slots := range []int{8, 12} {
		t.Run(fmt.Sprintf("slots%d", slots), func(t *testing.T) {
			s, a, b := fairShareSim(t, slots)
			require.False(t, s.run(300*ms), "warm-up")
			a0, b0 := a.slotTime, b.slotTime
			require.False(t, s.run(2*time.Second), "both jobs still have demand at the horizon")
			require.False(t, a.done || b.done)
			ratio := float64(b.slotTime-b0) / float64(a.slotTime-a0)
			t.Logf("slots %d: slot-time one %v, three %v after warm-up, ratio %.3f, reclaims %d",
				slots, a.slotTime-a0, b.slotTime-b0, ratio, s.reclaims)
			assert.InEpsilon(t, 3.0, ratio, 0.10, "slot-time ratio three:one")
		})
	}
}

func fairShareSim(t *testing.T, slots int) (*sim, *simJob, *simJob) {
	s := newSim(t, Config{Slots: clusterSlots(slots), Queues: []QueueConfig{{Name: "root.default", Policy: FairShare}}},
		simConfig{checks: true, record: true})
	a := s.add(JobSpec{Name: "one", Priority: 1000}, 0, repeat(2000, 1), uniform(2000, 10*ms), 2*slots, 0)
	b := s.add(JobSpec{Name: "three", Priority: 3000}, 0, repeat(2000, 1), uniform(2000, 10*ms), 2*slots, 0)
	return s, a, b
}

// Fixed bug (grant.go, reclaimFor): once the split is as fair as whole slots
// allow, fair share keeps reclaiming a slot from a job that, having given
// it back, is ahead again and gets it re-granted: one pointless reclaim per
// task end, forever (with a reclaim timeout of 0 it would cancel a task
// every round). A slot should be reclaimed only from a job that would stay
// behind the claimant after the move (Queues.overtakes).
func TestFairShareNoReclaimChurnAtEquilibrium(t *testing.T) {
	for _, slots := range []int{10, 12} {
		t.Run(fmt.Sprintf("slots%d", slots), func(t *testing.T) {
			s, a, b := fairShareSim(t, slots)
			require.False(t, s.run(500*ms), "warm-up")
			split := [2]int{a.port.Granted(), b.port.Granted()}
			r0 := s.reclaims
			require.False(t, s.run(time.Second))
			assert.Equal(t, split, [2]int{a.port.Granted(), b.port.Granted()}, "the split is stable")
			assert.Zero(t, s.reclaims-r0, "reclaims at equilibrium (split %v)", split)
		})
	}
}

// StateAware: one job of the queue starting at a time; a job leaves
// starting when its first region is deployed, or on the starting timeout.
func TestStateAware(t *testing.T) {
	drv := small
	t.Run("deployed", func(t *testing.T) {
		s := newSim(t, Config{Slots: clusterSlots(10), Queues: []QueueConfig{{Name: "root.default", Policy: StateAware}}},
			simConfig{checks: true, record: true})
		for _, n := range []string{"a", "b", "c"} {
			s.add(JobSpec{Name: n, Driver: &drv}, 0, []int{2, 2}, uniform(2, 100*ms), 1, 50*ms)
		}
		require.True(t, s.run(0), s.tail(30))
		// Each next job gets its driver when the previous one's first
		// region is deployed (its driver's startup later), not before.
		assert.Equal(t, 50*ms, s.byName["a"].firstDeploy.Sub(t0))
		assert.Equal(t, 100*ms, s.byName["b"].firstDeploy.Sub(t0))
		assert.Equal(t, 150*ms, s.byName["c"].firstDeploy.Sub(t0))
	})
	t.Run("deployed at once", func(t *testing.T) {
		s := newSim(t, Config{Slots: clusterSlots(8), Queues: []QueueConfig{{Name: "root.default", Policy: StateAware}}},
			simConfig{checks: true, record: true})
		for _, n := range []string{"a", "b", "c"} {
			s.add(JobSpec{Name: n}, 0, []int{2}, []time.Duration{100 * ms}, 1, 0)
		}
		s.onStep = func() {
			if s.now.Equal(t0) {
				for n, st := range s.states() {
					assert.Equal(t, JobRunning, st, "%s at 0 ms", n)
				}
			}
		}
		require.True(t, s.run(0), s.tail(30))
		for _, n := range []string{"a", "b", "c"} {
			assert.Equal(t, t0, s.byName[n].firstDeploy, n)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		s := newSim(t, Config{Slots: clusterSlots(10), Queues: []QueueConfig{{Name: "root.default", Policy: StateAware, StartingTimeout: 30 * ms}}},
			simConfig{checks: true, record: true})
		for _, n := range []string{"a", "b", "c"} {
			s.add(JobSpec{Name: n, Driver: &drv}, 0, []int{2}, []time.Duration{100 * ms}, 1, 50*ms)
		}
		var deadlines []time.Duration
		s.onStep = func() {
			if at, ok := s.q.NextDeadline(); ok {
				if d := at.Sub(t0); len(deadlines) == 0 || deadlines[len(deadlines)-1] != d {
					deadlines = append(deadlines, d)
				}
			}
		}
		require.True(t, s.run(0), s.tail(30))
		assert.Equal(t, []time.Duration{30 * ms, 60 * ms, 90 * ms}, deadlines)
		assert.Equal(t, 50*ms, s.byName["a"].firstDeploy.Sub(t0))
		assert.Equal(t, 80*ms, s.byName["b"].firstDeploy.Sub(t0), "b's driver came when a timed out at 30 ms")
		assert.Equal(t, 110*ms, s.byName["c"].firstDeploy.Sub(t0))
		assert.Contains(t, s.log, "   30ms a starting -> running (starting timeout)")
	})
	t.Run("tick before the deadline does nothing", func(t *testing.T) {
		q, err := New(Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.default", Policy: StateAware, StartingTimeout: time.Second}}})
		require.NoError(t, err)
		a, err := q.submit(t0, JobSpec{Name: "a", Driver: &drv})
		require.NoError(t, err)
		b, err := q.submit(t0, JobSpec{Name: "b", Driver: &drv})
		require.NoError(t, err)
		q.Decide(t0)
		require.Equal(t, JobStarting, a.State())
		id, ok := a.DriverSlot()
		require.True(t, ok)
		assert.Equal(t, slotpool.SlotID(1), id)
		assert.Equal(t, JobAccepted, b.State())
		at, ok := a.NextDeadline()
		require.True(t, ok)
		assert.Equal(t, t0.Add(time.Second), at)
		a.Tick(t0.Add(time.Second - 1))
		q.Decide(t0.Add(time.Second - 1))
		assert.Equal(t, JobStarting, a.State())
		assert.Equal(t, JobAccepted, b.State())
		a.Tick(t0.Add(time.Second))
		q.Decide(t0.Add(time.Second))
		assert.Equal(t, JobRunning, a.State())
		assert.Equal(t, JobStarting, b.State())
		var drivers []string
		for _, ev := range q.Events() {
			if ev.Kind == DriverGranted {
				drivers = append(drivers, fmt.Sprintf("%s@%v slot %d", ev.Job, ev.At.Sub(t0), ev.Slot))
			}
		}
		assert.Equal(t, []string{"a@0s slot 1", "b@1s slot 2"}, drivers)
	})
}

// Two multi-region jobs whose heads need more than is free, each with a
// younger region that would fit: a job's asks are served head first, so
// no grant for a younger region ends up held, unused, by its pool's
// waiting head (the partial holds that deadlock jobs on each other), and
// both finish.
func TestHeadsServedFirstHoldNothingFIFO(t *testing.T) {
	s := newSim(t, Config{Slots: clusterSlots(4), Queues: defaultQueue}, simConfig{checks: true, record: true})
	// c holds the four slots at first and gives them back one at a time.
	s.add(JobSpec{Name: "c"}, 0, []int{1, 1, 1, 1}, []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms}, 4, 0)
	a := s.add(JobSpec{Name: "a"}, 0, []int{4, 2}, uniform(2, 10*ms), 2, 0)
	b := s.add(JobSpec{Name: "b"}, 0, []int{3, 1}, uniform(2, 10*ms), 2, 0)
	maxHeld := 0
	s.onStep = func() {
		for _, j := range []*simJob{a, b} {
			if j.pool != nil && !j.done {
				maxHeld = max(maxHeld, j.pool.Stats().Held)
			}
		}
	}
	require.True(t, s.run(0), s.tail(40))
	assert.Zero(t, maxHeld, "no head held part of its slots")
	// b's first region (3 slots) backfills the three free slots while a
	// (4) cannot be completed; b's slots are then reclaimed for a, which
	// runs before b's second region.
	assert.True(t, a.finished.Before(b.finished), "a finished first")
	for _, j := range s.jobs {
		assert.Equal(t, JobCompleted, j.port.State(), j.name)
	}
}

// The same under priorities: b (low priority) asked before a (high
// priority) arrived; neither head holds a part while it waits, a runs
// first, and both finish.
func TestHeadsServedFirstHoldNothingPriority(t *testing.T) {
	s := newSim(t, Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.default", Policy: Priority}}},
		simConfig{checks: true, record: true})
	s.add(JobSpec{Name: "c", Priority: 5000}, 0, []int{1, 1, 1, 1}, []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms}, 4, 0)
	b := s.add(JobSpec{Name: "b", Priority: 1000}, 0, []int{3, 1}, uniform(2, 10*ms), 2, 0)
	a := s.add(JobSpec{Name: "a", Priority: 9000}, 15*ms, []int{4, 2}, uniform(2, 10*ms), 2, 0)
	maxHeld := 0
	s.onStep = func() {
		for _, j := range []*simJob{a, b} {
			if j.pool != nil && !j.done {
				maxHeld = max(maxHeld, j.pool.Stats().Held)
			}
		}
	}
	require.True(t, s.run(0), s.tail(40))
	assert.Zero(t, maxHeld, "no head held part of its slots")
	for _, j := range s.jobs {
		assert.Equal(t, JobCompleted, j.port.State(), j.name)
	}
	assert.False(t, b.firstDeploy.Before(a.finished), "a first")
}

// docs/job-file.md: reclaim victims come from the lowest-priority job
// first. Job "top" (priority 9000) waits for 1 slot; "old-low"
// (priority 1, submitted first) and "new-mid" (priority 5000, submitted
// later) each hold one in use. The victim must be old-low's slot.
func TestReclaimTakesFromLowestPriorityFirst(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: []QueueConfig{{Name: "root.default", Policy: Priority}}})
	require.NoError(t, err)
	low, err := q.submit(t0, JobSpec{Name: "old-low", Priority: 1})
	require.NoError(t, err)
	ask(t, low, t0, 1, 1)
	mid, err := q.submit(t0.Add(ms), JobSpec{Name: "new-mid", Priority: 5000})
	require.NoError(t, err)
	ask(t, mid, t0.Add(ms), 1, 1)
	require.Equal(t, []slotpool.SlotID{1}, grantedSlots(low.Ready()))
	require.Equal(t, []slotpool.SlotID{2}, grantedSlots(mid.Ready()))

	top, err := q.submit(t0.Add(2*ms), JobSpec{Name: "top", Priority: 9000})
	require.NoError(t, err)
	ask(t, top, t0.Add(2*ms), 1, 1)
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Reclaim{Slot: 1}}, low.Ready(), "the lowest-priority job's slot is reclaimed")
	assert.Empty(t, mid.Ready(), "the higher-priority of the two keeps its slot")
}

// Queue names are "root" or "root." and non-empty parts; root.default
// always exists; a starting timeout of NoStartingWait makes StateAware
// leave starting at the first grant.
func TestQueueNamesDefaultQueueAndNoStartingWait(t *testing.T) {
	for _, name := range []string{"", "rootx", "root.", "root..a", "x.root", "root. a"} {
		_, err := New(Config{Slots: clusterSlots(1), Queues: []QueueConfig{{Name: name}}})
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, "name %q", name)
		assert.Equal(t, "name", ce.Field)
		assert.ErrorIs(t, err, ErrBadQueueName)
		assert.Contains(t, err.Error(), "bad queue name", "the message says what is wrong: the name")
		assert.NotContains(t, err.Error(), "limit")
	}
	for _, name := range []string{"root", "root.etl", "root.a.b"} {
		_, err := New(Config{Slots: clusterSlots(1), Queues: []QueueConfig{{Name: name}}})
		assert.NoError(t, err, name)
	}

	q, err := New(Config{Slots: clusterSlots(2), DefaultPolicy: StateAware})
	require.NoError(t, err)
	p, err := q.submit(t0, JobSpec{Name: "a", Largest: []resource.Count{{Profile: resource.Unknown, N: 1}}})
	require.NoError(t, err, "root.default exists without configuration")
	assert.Equal(t, JobAccepted, p.State())

	s := newSim(t, Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.default", Policy: StateAware, StartingTimeout: NoStartingWait}}},
		simConfig{checks: true, record: true})
	s.add(JobSpec{Name: "one"}, 0, []int{1, 1}, uniform(2, 10*ms), 1, 0)
	s.add(JobSpec{Name: "two"}, 0, []int{1, 1}, uniform(2, 10*ms), 1, 0)
	require.True(t, s.run(0), s.tail(20))
	assert.Equal(t, time.Duration(0), s.byName["two"].firstDeploy.Sub(t0), "the second job starts at once")
	assert.Contains(t, s.log, "    0ms one starting -> running (starting timeout of 0)")
}

// A refusal says who was refused in words, and a principal without a role
// hears why it has none: it is not among the configured users.
func TestRefusalWording(t *testing.T) {
	err := authorize(Principal{}, ActionKill, "etl", "alice", 0)
	require.ErrorIs(t, err, ErrNotAuthorized)
	assert.Equal(t, `admission: kill on job "etl" by an anonymous principal refused: an anonymous principal has no role: only users given role user or admin may change jobs`, err.Error())
	assert.NotContains(t, err.Error(), "  ")
	err = authorize(Principal{Name: "mallory"}, ActionKill, "etl", "alice", 0)
	require.ErrorIs(t, err, ErrNotAuthorized)
	assert.Contains(t, err.Error(), `"mallory" has no role: only users given role user or admin may change jobs, and "mallory" is not among the configured users`)
}

// A job naming a queue the configuration lacks is refused with a message
// that names the two ways to fix it.
func TestUnknownQueueSaysHowToFixIt(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(1)})
	require.NoError(t, err)
	_, err = q.Submit(time.Unix(0, 0), JobSpec{Name: "etl", Queue: "root.etl", Largest: []resource.Count{{Profile: resource.Unknown, N: 1}}})
	require.ErrorIs(t, err, ErrUnknownQueue)
	assert.Contains(t, err.Error(), "Config.Queues")
	assert.Contains(t, err.Error(), "Config.CreateQueues")
}

// Every event kind has a name, and an unknown one says its number.
func TestEventKindString(t *testing.T) {
	for k := StateChanged; k <= PriorityChanged; k++ {
		assert.NotContains(t, k.String(), "EventKind", "kind %d has no name", k)
	}
	assert.Equal(t, "reclaimed", Reclaimed.String())
	assert.Equal(t, "EventKind(0)", EventKind(0).String())
	assert.Equal(t, "EventKind(200)", EventKind(200).String())
	assert.Equal(t, "{Kind:priority-changed}", fmt.Sprintf("%+v", struct{ Kind EventKind }{PriorityChanged}))
}

// A slot is asked back from its pool at most once while the pool holds
// it: the pool gives a slot asked back with a Reclaim back when its task
// ends, even when the claim it was asked for is gone. "low" holds slot 1
// with a task running; "top" preempts it with a reclaim timeout and is
// killed before the timeout (the preemption is withdrawn, low keeps the
// slot); "next" then preempts it again. low's pool is sent one Reclaim,
// and the Revoke of next's timeout; the slot goes to next when it comes
// back.
func TestSlotAskedBackOncePerGrant(t *testing.T) {
	root := Principal{"root", RoleAdmin}
	q, err := New(Config{Slots: clusterSlots(1), Queues: []QueueConfig{{Name: "root.default", Policy: Priority, Preempt: true, ReclaimTimeout: 100 * ms}}})
	require.NoError(t, err)
	low, err := q.submit(t0, JobSpec{Name: "low", Priority: 1})
	require.NoError(t, err)
	ask(t, low, t0, 1, 1)
	require.Equal(t, []slotpool.SlotID{1}, grantedSlots(low.Ready()))

	top, err := q.submit(t0.Add(ms), JobSpec{Name: "top", Priority: 9000})
	require.NoError(t, err)
	ask(t, top, t0.Add(ms), 1, 1)
	require.Equal(t, []slotpool.FromAdmission{slotpool.Reclaim{Slot: 1}}, low.Ready(), "preempted for top")

	require.NoError(t, q.Kill(t0.Add(2*ms), root, "top"))
	q.Decide(t0.Add(2 * ms))
	assert.Empty(t, low.Ready(), "withdrawn: nothing to tell low's pool")

	next, err := q.submit(t0.Add(3*ms), JobSpec{Name: "next", Priority: 8000})
	require.NoError(t, err)
	ask(t, next, t0.Add(3*ms), 1, 1)
	assert.Empty(t, low.Ready(), "asked back already: no second Reclaim")
	assert.Equal(t, []string{"next"}, slotsAskedBackFor(q), "asked back for next now")

	q.Tick(t0.Add(103 * ms))
	q.Decide(t0.Add(103 * ms))
	assert.Equal(t, []slotpool.FromAdmission{slotpool.Revoke{Slot: 1, Reason: slotpool.ReasonPreempted}}, low.Ready(), "next's timeout")
	require.NoError(t, low.Handle(t0.Add(103*ms), slotpool.SlotRelease{Slot: 1, Reason: slotpool.ReasonPreempted}))
	q.Decide(t0.Add(103 * ms))
	assert.Equal(t, []slotpool.SlotID{1}, grantedSlots(next.Ready()))
	require.NoError(t, q.checkInvariants())
}

// slotsAskedBackFor lists the claimants the slots asked back are for.
func slotsAskedBackFor(q *Queues) []string {
	var out []string
	for _, ab := range q.askedBack(nil) {
		out = append(out, ab.For)
	}
	return out
}

// Under fair share a victim's slots that leave it already, for any job,
// count in what it may give. On 4 slots v (priority 1000) holds all 4
// (one ask of 1 slot each); c1 and c2 (2000 each) arrive together, each
// waiting for 2 asks of 1 slot: the shares are 1 for v, 2 for c1 (the
// earlier) and 1 for c2. Whichever preempts first takes 2 of v's slots;
// the other may take only what leaves v using as much of its share as
// it will: 1 slot, and v keeps its share. Counted from all 4 of v's
// slots, it would take 2 and leave v none while it holds more than its
// own share.
func TestFairShareVictimKeepsItsShareAcrossPreemptions(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.default", Policy: FairShare, Preempt: true, ReclaimTimeout: 100 * ms}}})
	require.NoError(t, err)
	v, err := q.submit(t0, JobSpec{Name: "v", Priority: 1000})
	require.NoError(t, err)
	for id := range slotpool.AskID(4) {
		require.NoError(t, v.Handle(t0, wholeAsk(id+1, 1)))
	}
	q.Decide(t0)
	require.Len(t, grantedSlots(v.Ready()), 4)

	at := t0.Add(ms)
	var cs []*port
	for _, name := range []string{"c1", "c2"} {
		c, err := q.submit(at, JobSpec{Name: name, Priority: 2000})
		require.NoError(t, err)
		for id := range slotpool.AskID(2) {
			require.NoError(t, c.Handle(at, wholeAsk(id+1, 1)))
		}
		cs = append(cs, c)
	}
	for range 3 { // the decisions of the instant
		q.Decide(at)
		for _, p := range append([]*port{v}, cs...) {
			p.Ready()
		}
	}
	taken := map[string]int{}
	for _, ab := range q.askedBack(nil) {
		require.Equal(t, "v", ab.From)
		taken[ab.For]++
	}
	assert.Equal(t, 3, taken["c1"]+taken["c2"], "v keeps 1 slot, its share: asked back %v", taken)
	require.NoError(t, q.checkInvariants())
}
