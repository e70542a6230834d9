package admission

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	b := Backoff{Base: time.Second, Cap: 5 * time.Second}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second},
		[]time.Duration{b.delay(1), b.delay(2), b.delay(3), b.delay(4), b.delay(10)})
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
