package scheduler

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/jobgen"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// randomJobs are DAGs of 2-7 vertices, parallelism 1-5, each vertex
// after the first reading from one to three earlier ones over random ship
// strategies (forward only between equal parallelisms), now and then a
// pinned exchange; half of the jobs with resources from a small set, half
// with a second slot sharing group.
var randomJobs = jobgen.Options{
	Name:            "random",
	IDPrefix:        "V",
	Vertices:        jobgen.IntRange{Min: 2, Max: 7},
	Parallelism:     jobgen.IntRange{Min: 1, Max: 5},
	Inputs:          3,
	ForwardRate:     0.2,
	PinRates:        []float64{0.2},
	Groups:          []string{topology.DefaultSlotSharingGroup, "second"},
	GroupRate:       0.5,
	Profiles:        []resource.Profile{resource.Unknown, small, medium, large},
	ResourceJobRate: 0.5,
	ResourceRate:    1,
}

// randomJob draws a job of randomJobs.
func randomJob(rng *rand.Rand) (*topology.JobGraph, error) { return jobgen.Generate(rng, randomJobs) }

// maxProfile is a profile at least as large as every given one in every
// dimension (Unknown if all are Unknown).
func maxProfile(ps []resource.Profile) resource.Profile {
	var cpu, mem int64
	known := false
	for _, p := range ps {
		if p.IsUnknown() {
			continue
		}
		known = true
		cpu, mem = max(cpu, p.CPUMillis()), max(mem, p.MemoryMB())
	}
	if !known {
		return resource.Profile{}
	}
	return resource.New(cpu, mem)
}

// randomCluster picks slots on which rs is runnable: MinimumSlots slots of
// the largest profile; or per profile as many slots as the region needing
// most of them; or that with some slots dropped when Check still says
// runnable (which also tests that Check is sound).
func randomCluster(rng *rand.Rand, rs *region.Regions) []resource.Profile {
	var all []resource.Profile
	need := map[resource.Profile]int{}
	var order []resource.Profile
	for r := range rs.NumRegions() {
		here := map[resource.Profile]int{}
		for _, sl := range rs.Slots(region.ID(r)) {
			all = append(all, sl.Profile)
			here[sl.Profile]++
		}
		for p, k := range here {
			if _, ok := need[p]; !ok {
				order = append(order, p)
			}
			need[p] = max(need[p], k)
		}
	}
	slices.SortFunc(order, func(a, b resource.Profile) int { return cmpProfile(a, b) })
	switch rng.IntN(3) {
	case 0:
		return slices.Repeat([]resource.Profile{maxProfile(all)}, rs.MinimumSlots())
	default:
		var cluster []resource.Profile
		for _, p := range order {
			cluster = append(cluster, slices.Repeat([]resource.Profile{p}, need[p])...)
		}
		if rng.IntN(2) == 0 {
			return cluster
		}
		for range 3 {
			if len(cluster) <= 1 {
				break
			}
			i := rng.IntN(len(cluster))
			smaller := slices.Delete(slices.Clone(cluster), i, i+1)
			if rs.Check(resource.Tally(smaller), resource.FitsEveryDimension).Runnable {
				cluster = smaller
			}
		}
		return cluster
	}
}

// cmpProfile orders profiles: known before unknown, then by CPU, then by
// memory.
func cmpProfile(a, b resource.Profile) int {
	if a.IsUnknown() != b.IsUnknown() {
		if a.IsUnknown() {
			return 1
		}
		return -1
	}
	if c := a.CPUMillis() - b.CPUMillis(); c != 0 {
		return int(c)
	}
	return int(a.MemoryMB() - b.MemoryMB())
}

// TestRandomJobsFinish is the property test: on random jobs, random modes
// and clusters on which Check says the job runs, finishing tasks in random
// order and injecting up to three failures (task failures, with or without
// lost partitions, and lost slots replaced by new ones), the job always
// finishes; the harness checks on every call that no slot runs tasks of
// two region slots, that regions deploy whole within one call after their
// blocking inputs, that attempts only grow, and that the scheduler, the
// pool and the runtime agree on the slots in use. Every third seed runs
// without hybrid slot sharing; the others check every shared deployment
// (a slot of a running hybrid producer of the same slot sharing group, no
// two subtasks of a job vertex in a slot, profiles that fit together).
func TestRandomJobsFinish(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	shared := 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			h := runRandomJob(t, seed, Config{DisableHybridSlotSharing: seed%3 == 0}, false)
			h.checkClean()
			if seed%3 == 0 {
				assert.Zero(t, h.stats().RegionsShared)
			}
			shared += h.stats().RegionsShared
		})
	}
	assert.Positive(t, shared, "some random jobs share slots across hybrid edges")
}

// TestRandomJobsBehindAnAdmission runs the random jobs of
// TestRandomJobsFinish with the cluster's slots held by an in-process
// admission (its asks, grants and idle returns), under the harness's
// checks.
func TestRandomJobsBehindAnAdmission(t *testing.T) {
	seeds := 80
	if testing.Short() {
		seeds = 20
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			runRandomJob(t, seed, Config{}, true)
		})
	}
}

// runRandomJob runs the random job of a seed on a random cluster that
// fits it, finishing tasks in a random order and injecting up to three
// failures, on a new scheduler of cfg, and requires the job to finish.
// With admitted, the cluster's slots come from an in-process
// admission (admission.StaticCluster) and go back to it when idle, and
// a run may end early where nothing is left to step.
func runRandomJob(t *testing.T, seed uint64, cfg Config, admitted bool) *harness {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	job, err := randomJob(rng)
	require.NoError(t, err)
	mode := exchange.Modes()[rng.IntN(len(exchange.Modes()))]
	defer func() {
		if t.Failed() {
			var buf bytes.Buffer
			_ = topology.Encode(&buf, job)
			t.Logf("seed %d, mode %v, job:\n%s", seed, mode, buf.String())
		}
	}()
	rs := region.FromJob(job, mode)
	cluster := randomCluster(rng, rs)
	counts := resource.Tally(cluster)
	v := rs.Check(counts, resource.FitsEveryDimension)
	require.True(t, v.Runnable, "cluster %v: %s", counts, v.Reason)

	var slots []slotpool.Slot
	if admitted {
		ids := newHarness(t, rs, Config{}, seed)
		slots = ids.sized(cluster...)
		adm, err := admission.NewStaticCluster(resource.FitsEveryDimension, slots...)
		require.NoError(t, err)
		cfg.Admission, cfg.Pool.IdleTimeout = adm, time.Nanosecond
	}
	h := newHarness(t, rs, cfg, seed)
	if admitted {
		h.provide(slots...)
		h.nextSlot += slotpool.SlotID(len(slots))
	} else {
		h.setCapacity(counts)
		h.offer(h.sized(cluster...)...)
	}
	h.start()
	failures := rng.IntN(4)
	injected := 0
	for i := 0; h.s.State() == JobRunning; i++ {
		require.Less(t, i, 100_000, "no end in sight")
		if injected < failures && rng.IntN(4) == 0 && len(h.f.running) > 0 {
			if admitted { // the admission's slots are not lost
				ids := h.f.runningIDs()
				h.fail(ids[rng.IntN(len(ids))])
			} else {
				h.inject(rng)
			}
			injected++
			continue
		}
		if !h.step() {
			if admitted {
				return h
			}
			require.Fail(t, "job stalls", "nothing runs, waiting bulks %v, err %v", h.s.Status().Waiting, h.s.Err())
		}
	}
	if admitted {
		return h
	}
	require.Equal(t, JobFinished, h.s.State(), "job failed: %v", h.s.Err())
	assert.Equal(t, injected, h.stats().Failovers)
	assert.LessOrEqual(t, h.f.maxUsed, len(cluster))
	return h
}

// inject makes one random failure happen, then checks that a late report
// of a task it canceled is ignored.
func (h *harness) inject(rng *rand.Rand) {
	h.t.Helper()
	ids := h.f.runningIDs()
	v := ids[rng.IntN(len(ids))]
	d := h.f.running[v]
	nCancels := len(h.f.cancels)
	switch rng.IntN(3) {
	case 0:
		h.fail(v)
	case 1:
		var done []topology.ExecutionVertexID
		for u := range h.f.finished {
			done = append(done, u)
		}
		slices.Sort(done)
		var lost []topology.ResultPartitionID
		if len(done) > 0 {
			ps, err := h.s.strategy.BlockingPartitionsOf(done[rng.IntN(len(done))])
			require.NoError(h.t, err)
			lost = ps
		}
		want, err := h.s.strategy.RegionsToRestart(v, lost...)
		require.NoError(h.t, err)
		h.fail(v, lost...)
		require.Equal(h.t, want, h.f.restarts[len(h.f.restarts)-1].Regions)
	case 2:
		prof := h.f.slotProfile[d.Slot]
		h.lose(d.Slot)
		h.offer(h.sized(prof)...)
	}
	// A canceled task reports "finished" late: ignored.
	if len(h.f.cancels) > nCancels {
		c := h.f.cancels[nCancels]
		before := h.snapshot()
		h.begin()
		require.NoError(h.t, h.s.TaskFinished(h.now, c.V, c.Attempt))
		h.check()
		require.Equal(h.t, before, h.snapshot(), "a stale report changed something")
	}
}
