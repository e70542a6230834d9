package admission

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A gang larger than the cluster is rejected at once; placeholders the
// job does not use go back once nothing of it waits.
func TestGangRejectedAndPlaceholdersReleased(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2)})
	require.NoError(t, err)
	p, err := q.submit(t0, JobSpec{Name: "big", Gang: &Gang{MinSlots: 3}})
	require.NoError(t, err)
	assert.Equal(t, JobRejected, p.State())
	assert.Contains(t, p.Err().Error(), "gang of 3 slots can never be reserved")

	s := newSim(t, Config{Slots: clusterSlots(4)}, simConfig{checks: true, record: true})
	g := s.add(JobSpec{Name: "gang", Gang: &Gang{MinSlots: 4}}, 0, []int{2}, []time.Duration{100 * ms}, 1, 0)
	other := s.add(JobSpec{Name: "other"}, 1*ms, []int{2}, []time.Duration{10 * ms}, 1, 0)
	require.True(t, s.run(0), s.tail(30))
	assert.Equal(t, time.Duration(0), g.firstDeploy.Sub(t0))
	assert.Equal(t, 1*ms, other.firstDeploy.Sub(t0), "the gang's two unused placeholders went back")
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	b := Backoff{Base: time.Second, Cap: 5 * time.Second}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second},
		[]time.Duration{b.delay(1), b.delay(2), b.delay(3), b.delay(4), b.delay(10)})
}

// A claim never takes a job below its gang minimum: a gang job of 3 on
// 4 slots, holding all of them for its regions, yields only the one slot
// above its gang to a higher-priority job that needs one; one that needs
// two waits for the gang job's regions to end.
func TestClaimNeverBreaksAGang(t *testing.T) {
	for _, c := range []struct {
		need   int
		deploy time.Duration
	}{{1, 10 * ms}, {2, 100 * ms}} {
		s := newSim(t, Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.default", Policy: Priority, Preempt: true}}},
			simConfig{checks: true, record: true})
		s.add(JobSpec{Name: "gang", Priority: 1000, Gang: &Gang{MinSlots: 3, Timeout: time.Hour}}, 0, []int{4}, []time.Duration{100 * ms}, 1, 0)
		high := s.add(JobSpec{Name: "high", Priority: 9000}, 10*ms, []int{c.need}, []time.Duration{10 * ms}, 1, 0)
		require.True(t, s.run(0), s.tail(30))
		assert.Equal(t, c.deploy, high.firstDeploy.Sub(t0), "need %d\n%s", c.need, s.tail(30))
	}
}

// Placeholders that nothing of the job uses go back, and say why; a
// request larger than the placeholders is reported as such (and served
// from free slots).
func TestPlaceholderReleaseReasonsAndMismatch(t *testing.T) {
	small, big := resource.New(500, 512), resource.New(2000, 2048)
	q, err := New(Config{Slots: []slotpool.Slot{{ID: 1, Profile: big}, {ID: 2, Profile: big}, {ID: 3, Profile: big}}})
	require.NoError(t, err)
	p, err := q.submit(t0, JobSpec{Name: "g", Gang: &Gang{MinSlots: 2, Profile: small}})
	require.NoError(t, err)
	q.Events()
	require.NoError(t, p.Handle(t0, slotpool.Ask{ID: 1, Bulk: 1, Head: true,
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.New(3000, 1024), MinMembers: 1}}, AllOrNothing: true}}))
	q.Decide(t0)
	var kinds []EventKind
	var reasons []string
	for _, ev := range q.Events() {
		kinds, reasons = append(kinds, ev.Kind), append(reasons, ev.Reason)
	}
	require.Contains(t, kinds, PlaceholderMismatch, reasons)
	assert.Contains(t, reasons[slices.Index(kinds, PlaceholderMismatch)], "larger than its placeholders")

	s := newSim(t, Config{Slots: clusterSlots(4)}, simConfig{checks: true, record: true})
	s.add(JobSpec{Name: "gang", Gang: &Gang{MinSlots: 4}}, 0, []int{2}, []time.Duration{100 * ms}, 1, 0)
	require.True(t, s.run(0))
	var released []string
	for _, l := range s.log {
		if strings.Contains(l, "placeholders") {
			released = append(released, l)
		}
	}
	require.NotEmpty(t, released, s.tail(20))
	assert.Contains(t, released[0], "placeholders: 2 placeholders: placeholder replaced")
}

// failedAt returns when the log says job name failed, or -1.
func failedAt(s *sim, name string) time.Duration {
	for _, l := range s.log {
		if strings.Contains(l, name+" ") && strings.Contains(l, "-> failed") {
			var n int64
			if _, err := fmt.Sscanf(l, "%dms", &n); err == nil {
				return time.Duration(n) * ms
			}
		}
	}
	return -1
}

// A hard gang with NoGangWait is reserved at its arrival or fails then:
// with every slot busy until 100 ms, the job arriving at 10 ms fails at
// 10 ms (not 15 minutes later), and its error says it was not reserved at
// arrival; with a slot free at 10 ms it is reserved and finishes.
func TestGangNoWaitHard(t *testing.T) {
	for _, c := range []struct {
		busy   int
		failed bool
	}{{busy: 2, failed: true}, {busy: 1, failed: false}} {
		s := newSim(t, Config{Slots: clusterSlots(2)}, simConfig{checks: true, record: true})
		busy := s.add(JobSpec{Name: "busy"}, 0, []int{c.busy}, []time.Duration{100 * ms}, 1, 0)
		g := s.add(JobSpec{Name: "gang", Gang: &Gang{MinSlots: 1, Hard: true, Timeout: NoGangWait}}, 10*ms, []int{1}, []time.Duration{10 * ms}, 1, 0)
		ok := s.run(0)
		assert.Equal(t, JobCompleted, busy.port.State(), s.tail(30))
		if !c.failed {
			require.True(t, ok, s.tail(30))
			assert.Equal(t, JobCompleted, g.port.State())
			assert.Equal(t, 10*ms, g.firstDeploy.Sub(t0), "reserved at its arrival")
			continue
		}
		assert.Equal(t, JobFailed, g.port.State(), s.tail(30))
		assert.Equal(t, 10*ms, failedAt(s, "gang"), "failed at its arrival\n%s", s.tail(30))
		var ge *GangTimeoutError
		require.ErrorAs(t, g.port.Err(), &ge)
		assert.ErrorIs(t, g.port.Err(), ErrGangTimeout)
		assert.Equal(t, time.Duration(0), ge.Timeout)
		assert.Contains(t, ge.Error(), `job "gang": its gang of 1 slot could not be reserved at its arrival`)
	}
}

// What the instant of a NoGangWait job's arrival frees counts: slots a
// job releases at that instant reserve the gang before its timer fires.
func TestGangNoWaitSeesTheSlotsFreedAtArrival(t *testing.T) {
	s := newSim(t, Config{Slots: clusterSlots(2)}, simConfig{checks: true, record: true})
	s.add(JobSpec{Name: "busy"}, 0, []int{2}, []time.Duration{10 * ms}, 1, 0)
	g := s.add(JobSpec{Name: "gang", Gang: &Gang{MinSlots: 2, Hard: true, Timeout: NoGangWait}}, 10*ms, []int{2}, []time.Duration{10 * ms}, 1, 0)
	require.True(t, s.run(0), s.tail(30))
	assert.Equal(t, JobCompleted, g.port.State())
	assert.Equal(t, 10*ms, g.firstDeploy.Sub(t0))
}

// A soft gang with NoGangWait that cannot be reserved at its arrival
// falls back to normal admission at once, without the requeue backoff:
// with 3 of 4 slots busy, its one-slot region runs at its arrival on the
// free slot; a 0 Timeout keeps meaning the 15-minute default (the job
// waits for its gang until the busy job ends).
func TestGangNoWaitSoft(t *testing.T) {
	for _, c := range []struct {
		timeout time.Duration
		deploy  time.Duration
	}{{NoGangWait, 10 * ms}, {0, 100 * ms}} {
		s := newSim(t, Config{Slots: clusterSlots(4), Backoff: Backoff{Base: 20 * ms, Cap: time.Second}}, simConfig{checks: true, record: true})
		s.add(JobSpec{Name: "busy"}, 0, []int{3}, []time.Duration{100 * ms}, 1, 0)
		g := s.add(JobSpec{Name: "gang", Gang: &Gang{MinSlots: 4, Timeout: c.timeout}}, 10*ms, []int{1}, []time.Duration{10 * ms}, 1, 0)
		require.True(t, s.run(0), s.tail(30))
		assert.Equal(t, JobCompleted, g.port.State())
		assert.Equal(t, c.deploy, g.firstDeploy.Sub(t0), "timeout %v\n%s", c.timeout, s.tail(30))
	}
}

// A gang timeout below 0 other than NoGangWait is refused, naming the job.
func TestGangBadTimeout(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2)})
	require.NoError(t, err)
	_, err = q.submit(t0, JobSpec{Name: "g", Gang: &Gang{MinSlots: 1, Timeout: -2}})
	require.ErrorIs(t, err, ErrBadLimit)
	assert.Contains(t, err.Error(), `job "g"`)
	assert.Contains(t, err.Error(), "NoGangWait")
}

// With Config.Cluster the jobs are judged against the cluster as
// configured, not the slots listed: on 4 listed slots of a 10-slot
// cluster, a gang of 6 is accepted, one of 11 is rejected for the one
// slot the cluster lacks, and so is a region of 11 slots.
func TestGangJudgedAgainstTheConfiguredCluster(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(4), Cluster: []resource.Count{{Profile: small, N: 6}, {Profile: small, N: 4}}})
	require.NoError(t, err)
	p, err := q.submit(t0, JobSpec{Name: "six", Gang: &Gang{MinSlots: 6}})
	require.NoError(t, err)
	assert.Equal(t, JobAccepted, p.State(), "%v", p.Err())
	assert.Equal(t, []resource.Count{{Profile: small, N: 4}}, q.Capacity(), "it hands out the listed slots only")

	p, err = q.submit(t0, JobSpec{Name: "eleven", Gang: &Gang{MinSlots: 11}})
	require.NoError(t, err)
	assert.Equal(t, JobRejected, p.State())
	var re *RejectedError
	require.ErrorAs(t, p.Err(), &re)
	assert.Equal(t, "eleven", re.Job)
	assert.Equal(t, "its gang of 11 slots can never be reserved: the queue's cluster has 10 slots; missing 1 slot", re.Reason)

	p, err = q.submit(t0, JobSpec{Name: "wide", Largest: []resource.Count{{Profile: resource.Unknown, N: 11}}, LargestName: "region 0"})
	require.NoError(t, err)
	assert.Equal(t, JobRejected, p.State())
	assert.Contains(t, p.Err().Error(), "region 0 needs 11 slots at once; the queue's cluster can never give them: missing 1 slot")

	// Without Cluster the listed slots are the cluster.
	q, err = New(Config{Slots: clusterSlots(1)})
	require.NoError(t, err)
	p, err = q.submit(t0, JobSpec{Name: "two", Gang: &Gang{MinSlots: 2}})
	require.NoError(t, err)
	assert.Contains(t, p.Err().Error(), "its gang of 2 slots can never be reserved: the queue's cluster has 1 slot; missing 1 slot")
}
