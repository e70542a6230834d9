package admission

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A queue that may start no job now (a StateAware queue with a job
// starting, a maxRunningJobs reached) holds back every job of it not
// started yet: a decision passes over them, so that its work is bounded
// by the jobs started, not the jobs waiting. 600 jobs wait on 64 slots,
// most of them free (the walks step through the queue); the passes visit
// 1 to 3 jobs per decision, where visiting the held-back ones took 60 to
// 300.
func TestHeldBackJobsCostNoVisits(t *testing.T) {
	for _, qc := range []QueueConfig{
		{Name: "root.default", Policy: StateAware},
		{Name: "root.default", MaxRunningJobs: 2},
		{Name: "root.default", Policy: FairShare, MaxRunningJobs: 2},
	} {
		t.Run(fmt.Sprintf("%v-max%d", qc.Policy, qc.MaxRunningJobs), func(t *testing.T) {
			q := run600(t, qc, []int{1, 2, 1}, func(int) JobSpec { return JobSpec{} })
			perDecision := float64(q.visits) / float64(q.decision)
			assert.Less(t, perDecision, 6.0, "visits per decision (%d visits, %d decisions)", q.visits, q.decision)
		})
	}
}

// fitCount.stopStarting leaves the count a walk of a queue that starts
// no job would have made: the started jobs not visited yet within the
// limit, and the reservers not visited.
func TestFitCountStopStartingCountsStartedOnly(t *testing.T) {
	jobs := []*job{
		{bucket: 1, bucketStarted: true}, {bucket: 1}, {bucket: 2}, {bucket: 3, bucketStarted: true},
		{bucket: 1, bucketStarted: true}, {bucket: 5}, {bucket: 2, bucketStarted: true, reserved: []int32{7}},
	}
	count := func(starts bool) *fitCount {
		f := &fitCount{starts: starts, lim: -1}
		for _, j := range jobs {
			if j.bucketStarted || starts {
				f.cnt[j.bucket]++
				if !j.bucketStarted {
					f.cnt0[j.bucket]++
				}
			}
			if len(j.reserved) > 0 {
				f.remaining++
			}
		}
		f.relimit(3)
		return f
	}
	for visited := range len(jobs) + 1 {
		got, want := count(true), count(false)
		for _, j := range jobs[:visited] {
			got.visit(j)
			want.visit(j)
		}
		got.stopStarting()
		assert.Equal(t, want.remaining, got.remaining, "after %d visited", visited)
		assert.Equal(t, want.cnt, got.cnt, "after %d visited", visited)
		assert.Equal(t, want.visited, got.visited, "after %d visited", visited)
		for _, free := range []int{0, 1, 2, 6} {
			assert.Equal(t, want.done(free), got.done(free), "after %d visited, %d free", visited, free)
		}
	}
}

// A job accepted before its queue was found holding back its jobs not
// started is held back from then on in that instant, also after it
// starts; one accepted after, or started before, is not; and a job whose
// start is taken back (retract.go) stays held back if it was.
func TestHeldBackNowByTheQueueMark(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2), Queues: []QueueConfig{{Name: "root.default", Policy: StateAware}}})
	require.NoError(t, err)
	now := t0
	q.now = now
	before, err := q.submit(now, JobSpec{Name: "before"})
	require.NoError(t, err)
	started, err := q.submit(now, JobSpec{Name: "started"})
	require.NoError(t, err)
	q.move(started.j, JobStarting, "test")
	qu := started.j.queue
	q.holdUnstarted(qu, cursor{})
	after, err := q.submit(now, JobSpec{Name: "after"})
	require.NoError(t, err)

	_, held := q.heldBackNow(before.j)
	assert.True(t, held, "accepted before the mark, not started")
	_, held = q.heldBackNow(started.j)
	assert.False(t, held, "started before the mark")
	_, held = q.heldBackNow(after.j)
	assert.False(t, held, "accepted after the mark")

	q.move(before.j, JobStarting, "test")
	mark, held := q.heldBackNow(before.j)
	assert.True(t, held, "started after the mark: held back before it")
	q.unstart(before.j)
	again, held := q.heldBackNow(before.j)
	assert.True(t, held, "its start taken back: still held back in this instant")
	assert.Equal(t, mark, again, "since the queue's mark")

	q.now = now.Add(time.Millisecond)
	_, held = q.heldBackNow(before.j)
	assert.False(t, held, "the next instant")
}

// A driver whose first regions could not follow takes a free slot only
// after the waiting requests the free slots serve (driverYields). It looks
// for them among the jobs that wait for a request, not among those that
// wait for their drivers: 600 jobs, each with a driver, on 64 slots cost
// each such look at most a few jobs (0 to 3.5 on average), bounded by the
// jobs started, not by the 600 waiting (a walk of every waiting job took
// 280 to 290 on average).
func TestJobsWaitingForDriversCostDriverYieldsNoVisits(t *testing.T) {
	for _, qc := range []QueueConfig{
		{Name: "root.default"},
		{Name: "root.default", Policy: StateAware},
		{Name: "root.default", Policy: StateAware, Preempt: true},
		{Name: "root.default", MaxRunningJobs: 40},
	} {
		t.Run(fmt.Sprintf("%v-max%d-preempt%v", qc.Policy, qc.MaxRunningJobs, qc.Preempt), func(t *testing.T) {
			q := run600(t, qc, []int{3, 2, 3}, func(int) JobSpec { return JobSpec{Driver: &small} })
			require.NotZero(t, q.yields, "drivers looked for requests to yield to")
			perLook := float64(q.yieldVisits) / float64(q.yields)
			assert.Less(t, perLook, 16.0, "jobs looked at per driverYields (%d in %d)", q.yieldVisits, q.yields)
		})
	}
}

// run600 runs 600 jobs, all submitted at 0 ms, each of the given regions
// (10 ms each) and the spec job(i) gives it, on 64 slots and the one queue
// qc, with the invariants checked after every step; every job finishes.
func run600(t *testing.T, qc QueueConfig, regions []int, job func(i int) JobSpec) *Queues {
	s := emptySim(t, simConfig{checks: true, returnFreed: true})
	for i := range 600 {
		spec := job(i)
		spec.Name = fmt.Sprintf("j%03d", i)
		s.add(spec, 0, regions, uniform(len(regions), 10*ms), 1, 0)
	}
	s.start(Config{Slots: clusterSlots(64), Queues: []QueueConfig{qc}})
	require.True(t, s.run(0), "all jobs finish")
	return s.q
}
