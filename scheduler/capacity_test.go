package scheduler

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// wideJob: S(1) -blocking-> T(3) -pipelined all-to-all-> U(3), and an
// independent source X(1). Regions: {S#0}, {X#0}, {T, U} (3 slots).
func wideJob(t testing.TB) *region.Regions {
	job := build(t, topology.NewBuilder("wide").
		AddVertex(topology.JobVertex{ID: "S", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "T", Parallelism: 3}).
		AddVertex(topology.JobVertex{ID: "U", Parallelism: 3}).
		AddVertex(topology.JobVertex{ID: "X", Parallelism: 1}).
		ConnectPinned("S", "T", exchange.Hash, exchange.Blocking).
		ConnectPinned("T", "U", exchange.Hash, exchange.Pipelined))
	rs := region.FromJob(job, exchange.AllBlocking)
	require.Equal(t, 3, rs.MinimumSlots())
	return rs
}

// requireRegionError checks the error of a job that failed because of
// region r.
func requireRegionError(t *testing.T, h *harness, r region.ID, never bool) *slotpool.NoResourceAvailableError {
	t.Helper()
	require.Equal(t, JobFailed, h.s.State())
	err := h.s.Err()
	require.Error(t, err)
	var re *RegionError
	require.True(t, errors.As(err, &re), "%T %v", err, err)
	assert.Equal(t, r, re.Region)
	assert.Equal(t, h.rs.MemberNames(r, 8), re.Members)
	assert.Contains(t, err.Error(), re.Members)
	assert.ErrorIs(t, err, ErrJobFailed)
	assert.ErrorIs(t, err, slotpool.ErrNoResourceAvailable)
	var nr *slotpool.NoResourceAvailableError
	require.True(t, errors.As(err, &nr))
	assert.Equal(t, never, nr.Never)
	assert.Equal(t, bulkID(r, 0), nr.Bulk)
	return nr
}

// TestRegionTooLargeForCapacity: with a declared capacity of 2 slots the
// 3-slot region fails the job as soon as it asks; X#0, still running, is
// canceled, and every slot is back.
func TestRegionTooLargeForCapacity(t *testing.T) {
	rs := wideJob(t)
	h := newHarness(t, rs, Config{}, 1)
	h.setCapacity([]resource.Count{{Profile: resource.Profile{}, N: 2}})
	h.offer(h.unknownSlots(2)...)
	h.start()
	s0, x0, t0v := h.byName("S#0"), h.byName("X#0"), h.byName("T#0")
	require.Contains(t, h.f.running, s0)
	require.Contains(t, h.f.running, x0)
	h.finish(s0)

	requireRegionError(t, h, rs.RegionOf(t0v), true)
	assert.Equal(t, []cancelCall{{V: x0, Attempt: 0, Call: h.f.call}}, h.f.cancels)
	assert.Empty(t, h.f.running)
	h.checkClean()
	assert.Equal(t, 2, h.s.Status().Pool.Free)

	// The job is over: reports and Start are refused, Tick is harmless.
	assert.ErrorIs(t, h.s.TaskFinished(h.now, x0, 0), ErrNotRunning)
	assert.ErrorIs(t, h.s.TaskFailed(h.now, x0, 0), ErrNotRunning)
	assert.ErrorIs(t, h.s.Start(h.now), ErrAlreadyStarted)
	h.tick(h.now.Add(time.Hour))
	assert.Equal(t, JobFailed, h.s.State())
}

// TestSourceRegionTooLargeAtStart: the capacity is declared before Start
// and the first region can never fit: Start returns the job's
// *RegionError, the job failed, and the Ready of Start says so.
func TestSourceRegionTooLargeAtStart(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	h := newHarness(t, rs, Config{}, 1)
	h.setCapacity([]resource.Count{{Profile: resource.Profile{}, N: 3}})
	h.offer(h.unknownSlots(3)...)
	err := h.startErr()
	requireRegionError(t, h, 0, true)
	var re *RegionError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, region.ID(0), re.Region)
	assert.Same(t, h.s.Err(), err)
	assert.Equal(t, []JobChange{{State: JobFailed, Err: err}}, h.f.jobs)
	assert.Equal(t, []regionAttempt{{0, 0}}, h.f.requests)
	assert.Empty(t, h.f.deploys)
	assert.Empty(t, h.f.cancels)
	h.checkClean()
	assert.Equal(t, 3, h.s.Status().Pool.Free)
}

// TestCapacityShrinksWhileWaiting: the capacity drops below what a
// waiting region needs; it fails at once.
func TestCapacityShrinksWhileWaiting(t *testing.T) {
	rs := wideJob(t)
	h := newHarness(t, rs, Config{}, 1)
	h.offer(h.unknownSlots(2)...)
	h.start()
	h.finish(h.byName("S#0")) // {T, U} waits: 1 free slot, X#0 holds the other
	require.Len(t, h.s.Status().Waiting, 1)
	h.setCapacity([]resource.Count{{Profile: resource.Profile{}, N: 2}})
	requireRegionError(t, h, rs.RegionOf(h.byName("T#0")), true)
	assert.Len(t, h.f.cancels, 1)
	h.checkClean()
}

// TestFulfillabilityTimeout: without a declared capacity the 3-slot
// region waits; its timeout is NextDeadline, and Tick there fails the job
// the same way (not one nanosecond earlier).
func TestFulfillabilityTimeout(t *testing.T) {
	rs := wideJob(t)
	h := newHarness(t, rs, Config{Pool: slotpool.Config{Timeout: time.Minute}}, 1)
	h.offer(h.unknownSlots(2)...)
	_, ok := h.s.NextDeadline()
	assert.False(t, ok)
	h.start()
	h.now = h.now.Add(10 * time.Second)
	h.finish(h.byName("S#0"))
	at, ok := h.s.NextDeadline()
	require.True(t, ok)
	assert.Equal(t, h.now.Add(time.Minute), at)

	h.tick(at.Add(-time.Nanosecond))
	require.Equal(t, JobRunning, h.s.State())
	h.tick(at)
	nr := requireRegionError(t, h, rs.RegionOf(h.byName("T#0")), false)
	assert.Equal(t, time.Minute, nr.Timeout)
	assert.Equal(t, []cancelCall{{V: h.byName("X#0"), Call: h.f.call}}, h.f.cancels)
	h.checkClean()
	_, ok = h.s.NextDeadline()
	assert.False(t, ok)
}

// TestTimeoutCanceledWhenSlotsArrive: the waiting region becomes
// fulfillable when a slot is offered; the deadline goes away and the job
// finishes.
func TestTimeoutCanceledWhenSlotsArrive(t *testing.T) {
	rs := wideJob(t)
	h := newHarness(t, rs, Config{Pool: slotpool.Config{Timeout: time.Minute}}, 1)
	h.offer(h.unknownSlots(2)...)
	h.start()
	h.finish(h.byName("S#0"))
	_, ok := h.s.NextDeadline()
	require.True(t, ok)
	h.offer(h.unknownSlots(1)...)
	_, ok = h.s.NextDeadline()
	assert.False(t, ok)
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	h.checkClean()
}

// TestFailureBeforeFulfillmentIsDrained: at Start the first source region
// fails at once (too large) and the second is fulfilled at once, both
// events in one batch. The job fails on the first; the second must not
// deploy, and its slot must be free again.
func TestFailureBeforeFulfillmentIsDrained(t *testing.T) {
	job := build(t, topology.NewBuilder("two-sources").
		AddVertex(topology.JobVertex{ID: "T", Parallelism: 3}).
		AddVertex(topology.JobVertex{ID: "U", Parallelism: 3}).
		AddVertex(topology.JobVertex{ID: "X", Parallelism: 1}).
		ConnectPinned("T", "U", exchange.Hash, exchange.Pipelined))
	rs := region.FromJob(job, exchange.AllBlocking)
	require.Equal(t, []region.ID{0, 1}, sourceRegions(rs))
	require.Equal(t, 3, rs.SlotCount(0))
	h := newHarness(t, rs, Config{}, 1)
	h.setCapacity([]resource.Count{{Profile: resource.Profile{}, N: 2}})
	h.offer(h.unknownSlots(2)...)
	err := h.startErr()
	requireRegionError(t, h, 0, true)
	assert.Same(t, h.s.Err(), err)
	assert.Equal(t, []JobChange{{State: JobFailed, Err: err}}, h.f.jobs)
	assert.Equal(t, []regionAttempt{{0, 0}, {1, 0}}, h.f.requests)
	assert.Empty(t, h.f.deploys)
	h.checkClean()
	assert.Equal(t, 2, h.s.Status().Pool.Free)
}
