package scheduler

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// TestFailoverRestartsStrategyRegions fails one running task in the middle
// of FLIP-119's job, in every mode and at several points: the regions
// restarted are what the strategy says before the failure, their running
// tasks are canceled, their slots go back, they deploy again with
// attempt+1, and the job finishes.
func TestFailoverRestartsStrategyRegions(t *testing.T) {
	job := flip119(t)
	for _, mode := range modes() {
		t.Run(mode.String(), func(t *testing.T) {
			rs := region.FromJob(job, mode)
			for seed := uint64(1); seed <= 15; seed++ {
				h := newHarness(t, rs, Config{}, seed)
				h.offer(h.unknownSlots(rs.MinimumSlots())...)
				h.start()
				for range int(seed) % 5 {
					h.step()
				}
				require.Equal(t, JobRunning, h.s.State())
				ids := h.f.runningIDs()
				require.NotEmpty(t, ids)
				v := ids[h.rng.IntN(len(ids))]
				att := h.f.running[v].Attempt

				want, err := h.s.strategy.RegionsToRestart(v)
				require.NoError(t, err)
				// Who runs in those regions, and in which slots, now.
				var victims []cancelCall
				slotsOf := map[region.ID]map[int64]bool{}
				for _, u := range ids {
					r := rs.RegionOf(u)
					if !slices.Contains(want, r) {
						continue
					}
					if u != v {
						victims = append(victims, cancelCall{V: u, Attempt: h.f.running[u].Attempt})
					}
					if slotsOf[r] == nil {
						slotsOf[r] = map[int64]bool{}
					}
					slotsOf[r][int64(h.f.running[u].Slot)] = true
				}
				attemptBefore := map[region.ID]strategy.Attempt{}
				for _, r := range want {
					st, err := h.s.strategy.Region(r)
					require.NoError(t, err)
					attemptBefore[r] = st.Attempt
				}
				nReleases := len(h.f.releases)
				owners := maps.Clone(h.f.slotOwner)

				h.fail(v)
				c := h.f.call
				require.Len(t, h.f.restarts, 1)
				assert.Equal(t, restartCall{Failed: v, Regions: want}, h.f.restarts[0])
				var canceled []cancelCall
				for _, cc := range h.f.cancels {
					canceled = append(canceled, cancelCall{V: cc.V, Attempt: cc.Attempt})
					assert.Equal(t, c, cc.Call)
				}
				assert.ElementsMatch(t, victims, canceled, "cancels")
				// Each slot where only restarted regions ran came back once,
				// as its owner's (the region whose bulk got it; another
				// region's tasks may have gone into it, see share).
				wantBack := map[int64]bool{}
				for _, slots := range slotsOf {
					for slot := range slots {
						wantBack[slot] = true
					}
				}
				for _, u := range ids {
					if !slices.Contains(want, rs.RegionOf(u)) {
						delete(wantBack, int64(h.f.running[u].Slot))
					}
				}
				back := map[int64]bool{}
				for _, rc := range h.f.releases[nReleases:] {
					assert.False(t, back[int64(rc.Slot)], "slot %d released twice", rc.Slot)
					back[int64(rc.Slot)] = true
					assert.Equal(t, owners[rc.Slot], regionAttempt{rc.Region, rc.Attempt}, "release of slot %d", rc.Slot)
				}
				assert.Equal(t, wantBack, back, "slots returned by the restarted regions")
				for _, r := range want {
					st, err := h.s.strategy.Region(r)
					require.NoError(t, err)
					assert.Equal(t, attemptBefore[r]+1, st.Attempt, "region %d", r)
				}
				assert.Equal(t, Stats{RegionsDeployed: h.stats().RegionsDeployed, Failovers: 1, RegionRestarts: len(want), RegionsShared: h.stats().RegionsShared}, h.stats())

				// A late report of the failed attempt changes nothing.
				before := h.snapshot()
				h.begin()
				assert.NoError(t, h.s.TaskFinished(h.now, v, att))
				assert.NoError(t, h.s.TaskRunning(h.now, v, att))
				assert.NoError(t, h.s.TaskFailed(h.now, v, att))
				h.check()
				assert.Equal(t, before, h.snapshot(), "stale reports changed something")

				h.drive()
				require.Equal(t, JobFinished, h.s.State())
				for _, r := range want {
					_, ok := h.deployedIn[regionAttempt{r, Attempt(attemptBefore[r] + 1)}]
					assert.True(t, ok, "region %d redeployed with attempt %d", r, attemptBefore[r]+1)
				}
				assert.Equal(t, rs.NumRegions()+len(want)-h.finishedUndeployed(want, attemptBefore), h.stats().RegionsDeployed)
				h.checkClean()
			}
		})
	}
}

// finishedUndeployed counts regions in want that had never been deployed
// in attemptBefore (they were waiting when restarted), so that the total of
// deployments is NumRegions + restarted regions that had deployed.
func (h *harness) finishedUndeployed(want []region.ID, before map[region.ID]strategy.Attempt) int {
	n := 0
	for _, r := range want {
		if _, ok := h.deployedIn[regionAttempt{r, Attempt(before[r])}]; !ok {
			n++
		}
	}
	return n
}

// snap is what a stale report (or any refused input) must not change.
type snap struct {
	Stats    Stats
	Pool     any
	Waiting  []RegionID
	Deployed []RegionID
	Deadline time.Time
	Deploys  int
	Cancels  int
	Releases int
	Restarts int
	Requests int
	Jobs     int
	Vertices []TaskStatus
	State    JobState
}

// snapshot takes a snap of the harness's scheduler and runtime.
func (h *harness) snapshot() snap {
	var vs []TaskStatus
	for v := range h.rs.Topology().NumExecutionVertices() {
		st, err := h.s.Task(topology.ExecutionVertexID(v))
		require.NoError(h.t, err)
		vs = append(vs, st)
	}
	st := h.s.Status()
	at, _ := h.s.NextDeadline()
	return snap{
		Stats: st.Stats, Pool: st.Pool, Waiting: st.Waiting, Deployed: st.Deployed, Deadline: at,
		Deploys: len(h.f.deploys), Cancels: len(h.f.cancels), Releases: len(h.f.releases), Restarts: len(h.f.restarts),
		Requests: len(h.f.requests), Jobs: len(h.f.jobs),
		Vertices: vs, State: h.s.State(),
	}
}

// TestLateFinishOfCanceledTaskIgnored: a task canceled by a failover of
// another region reports "finished" late, with its old attempt.
func TestLateFinishOfCanceledTaskIgnored(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	h := newHarness(t, rs, Config{}, 1)
	h.offer(h.unknownSlots(4)...)
	h.start()
	a0, d3 := h.byName("A#0"), h.byName("D#3")
	h.fail(a0)
	require.Len(t, h.f.cancels, 11)
	assert.Contains(t, h.f.cancels, cancelCall{V: d3, Attempt: 0, Call: h.f.call})
	before := h.snapshot()
	h.begin()
	require.NoError(t, h.s.TaskFinished(h.now, d3, 0))
	h.check()
	assert.Equal(t, before, h.snapshot())
	// Redeployed at once with attempt 1 (no blocking inputs).
	d, ok := h.f.running[d3]
	require.True(t, ok)
	assert.Equal(t, Attempt(1), d.Attempt)
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	h.checkClean()
}

// TestFailoverWithLostPartitions: a consumer fails and says its input
// partition is gone; the producer region is restarted too, runs again,
// and the job finishes.
func TestFailoverWithLostPartitions(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	h := newHarness(t, rs, Config{}, 1)
	h.offer(h.unknownSlots(1)...)
	h.start()
	a0, b0 := h.byName("A#0"), h.byName("B#0")
	h.finish(a0)
	h.finish(h.byName("A#1"))
	require.Contains(t, h.f.running, b0)
	lost, err := h.s.strategy.BlockingPartitionsOf(a0)
	require.NoError(t, err)
	require.NotEmpty(t, lost)
	want, err := h.s.strategy.RegionsToRestart(b0, lost...)
	require.NoError(t, err)
	require.Contains(t, want, rs.RegionOf(a0), "the producer of a lost partition restarts")
	without, err := h.s.strategy.RegionsToRestart(b0)
	require.NoError(t, err)
	require.NotContains(t, without, rs.RegionOf(a0))

	h.fail(b0, lost...)
	require.Len(t, h.f.restarts, 1)
	assert.Equal(t, want, h.f.restarts[0].Regions)
	// A#0 asks again at once (attempt 1); B#0 waits for it.
	assert.Contains(t, h.f.requests, regionAttempt{rs.RegionOf(a0), 1})
	assert.NotContains(t, h.f.requests, regionAttempt{rs.RegionOf(b0), 1})
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	_, ok := h.deployedIn[regionAttempt{rs.RegionOf(a0), 1}]
	assert.True(t, ok, "A#0 ran again")
	assert.Less(t, h.deployedIn[regionAttempt{rs.RegionOf(a0), 1}], h.deployedIn[regionAttempt{rs.RegionOf(b0), 1}])
	h.checkClean()
}

// TestFailoverWhileConsumerWaitsForSlots is the stale-bulk case: a
// consumer region waits for slots and is the pool's head, holding one; the
// failure of a producer region (still running) restarts both. Returning
// the producer's slot completes the consumer's bulk inside the failover,
// and withdrawing that bulk hands its slots to another waiting region
// before the scheduler sees the (now stale) fulfillment. The stale
// fulfillment must not give back slots the pool has already handed on.
func TestFailoverWhileConsumerWaitsForSlots(t *testing.T) {
	rs := region.FromJob(staleJob(t), exchange.AllBlocking)
	h := newHarness(t, rs, Config{}, 1)
	h.offer(h.unknownSlots(2)...)
	h.start()
	a, b, x := h.byName("A#0"), h.byName("B#0"), h.byName("X#0")
	require.Contains(t, h.f.running, a)
	require.Contains(t, h.f.running, x)
	h.finish(a) // {C, D} asks for 2 slots and waits
	h.finish(x) // X's slot goes to {C, D}, the head; {Y} waits behind it
	require.Len(t, h.s.Status().Waiting, 2)
	h.fail(b) // restarts {A, B} and {C, D}; Y must get a slot, once
	h.drive()
	assert.Equal(t, JobFinished, h.s.State())
	h.checkClean()
}

// staleJob: {A, B} (A -forward pipelined-> B) produces blocking for
// {C, D} (2 slots); X -blocking-> Y on the side.
func staleJob(t testing.TB) *topology.JobGraph {
	return build(t, topology.NewBuilder("stale").
		AddVertex(topology.JobVertex{ID: "A", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "C", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "D", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "X", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "Y", Parallelism: 1}).
		ConnectPinned("A", "B", exchange.Forward, exchange.Pipelined).
		ConnectPinned("A", "C", exchange.Hash, exchange.Blocking).
		ConnectPinned("C", "D", exchange.Hash, exchange.Pipelined).
		ConnectPinned("X", "Y", exchange.Hash, exchange.Blocking))
}
