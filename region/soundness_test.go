package region_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/jobgen"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// streamReaderJob is a first case: B (bounded) reads the
// unbounded U through a pipelined edge, so B never finishes either; X is
// an unrelated bounded task. With res, every subtask asks for res.
func streamReaderJob(t *testing.T, res resource.Profile) *topology.JobGraph {
	return build(t, topology.NewBuilder("stream-reader").
		AddVertex(topology.JobVertex{ID: "U", Parallelism: 1, Unbounded: true, Resources: res}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 2, Resources: res}).
		AddVertex(topology.JobVertex{ID: "X", Parallelism: 1, Resources: res}).
		ConnectPinned("U", "B", exchange.Hash, exchange.Pipelined))
}

// TestCheckStreamReaderHoldsSlotsForever: both slots of region {U#0, B#0,
// B#1} are held forever (B#1 shares no slot with U#0 but reads it), so X
// needs a third slot: 2 slots are definitely not enough, and the reason
// names the tasks that never finish; 3 are. The slot requests the
// scheduler builds (Slots) say so too. The simulation agrees.
func TestCheckStreamReaderHoldsSlotsForever(t *testing.T) {
	for _, res := range []resource.Profile{resource.Unknown, resource.New(500, 512)} {
		t.Run(res.String(), func(t *testing.T) {
			rs := region.FromJob(streamReaderJob(t, res), exchange.AllBlocking)
			require.Equal(t, 2, rs.NumRegions())
			require.Equal(t, 2, rs.MinimumSlots())
			slots := rs.Slots(0)
			require.Len(t, slots, 2)
			for _, s := range slots {
				assert.True(t, s.Unbounded, "slot %v is held forever", s.Members)
			}
			assert.False(t, rs.Slots(1)[0].Unbounded)

			for _, n := range []int{2, 3} {
				cluster := unknownSlots(n)
				if !res.IsUnknown() {
					cluster = []resource.Count{{Profile: resource.New(1000, 1024), N: n}}
				}
				v := rs.Check(cluster, resource.FitsEveryDimension)
				assert.Equal(t, 2, v.Indefinite)
				assert.Equal(t, []topology.ExecutionVertexID{0, 1, 2}, v.NeverFinish)
				assert.Contains(t, v.Reason, "{U#0, B#0, B#1}, which never finish")
				assert.Contains(t, v.Reason, "region 1 {X#0}")
				assert.Equal(t, 3, totalN(v.Needed), v.Reason)
				if n == 2 {
					assert.False(t, v.Runnable, v.Reason)
					assert.True(t, v.Definite, "X asks after U's region, which takes both slots first: %s", v.Reason)
					assert.Equal(t, region.ID(1), v.Region)
					assert.Equal(t, 1, totalN(v.Missing))
				} else {
					assert.True(t, v.Runnable, v.Reason)
				}
				for seed := uint64(1); seed <= 3; seed++ {
					r, err := simulator.Run(simulator.Config{Regions: rs, Cluster: cluster, Seed: seed})
					require.NoError(t, err)
					assert.Equal(t, v.Runnable, r.Verdict.OK(), "%d slots, seed %d: %s", n, seed, r.Reason)
				}
			}
		})
	}
}

// TestCheckDescendantsDoNotHoldSlots: regions that never finish but read
// the blocking result of a bounded region can only take their slots after
// that region ran: the bounded region does not need room beside them.
func TestCheckDescendantsDoNotHoldSlots(t *testing.T) {
	g := build(t, topology.NewBuilder("batch-then-stream").
		AddVertex(topology.JobVertex{ID: "load", Parallelism: 3}).
		AddVertex(topology.JobVertex{ID: "agg", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "serve", Parallelism: 2, Unbounded: true}).
		Connect("load", "agg", exchange.Rebalance).
		ConnectPinned("load", "serve", exchange.Hash, exchange.Blocking))
	rs := region.FromJob(g, exchange.AllPipelined)
	require.Equal(t, 3, rs.NumRegions()) // {load, agg}, {serve#0}, {serve#1}
	v := rs.Check(unknownSlots(3), resource.FitsEveryDimension)
	assert.True(t, v.Runnable, v.Reason)
	assert.Equal(t, 2, v.Indefinite)
	short := rs.Check(unknownSlots(2), resource.FitsEveryDimension)
	assert.False(t, short.Runnable, short.Reason)
	assert.True(t, short.Definite, short.Reason)
	for _, n := range []int{2, 3} {
		r, err := simulator.Run(simulator.Config{Regions: rs, Cluster: unknownSlots(n), Seed: 1})
		require.NoError(t, err)
		assert.Equal(t, n == 3, r.Verdict.OK(), r.Reason)
	}
}

// TestCheckTimingDependentVerdict: when a region that never finishes and
// an unrelated bounded region both ask for slots after some producer
// finished, which asks first depends on the durations: Check says not
// runnable, not Definite, and says why; the simulation deadlocks (here:
// fails on the slot timeout) when the stream asks first and reaches a
// steady state when the bounded region does.
func TestCheckTimingDependentVerdict(t *testing.T) {
	// W -blocking-> S (unbounded, 2 regions of 1 slot);
	// X -blocking-> Y -pipelined-> Z (one region of 2 slots); 3 slots.
	job := func(w, x time.Duration) *topology.JobGraph {
		return build(t, topology.NewBuilder("race").
			AddVertex(topology.JobVertex{ID: "W", Parallelism: 1, Duration: w}).
			AddVertex(topology.JobVertex{ID: "S", Parallelism: 2, Unbounded: true}).
			AddVertex(topology.JobVertex{ID: "X", Parallelism: 1, Duration: x}).
			AddVertex(topology.JobVertex{ID: "Y", Parallelism: 2, Duration: time.Second}).
			AddVertex(topology.JobVertex{ID: "Z", Parallelism: 1, Duration: time.Second}).
			ConnectPinned("W", "S", exchange.Hash, exchange.Blocking).
			ConnectPinned("X", "Y", exchange.Hash, exchange.Blocking).
			ConnectPinned("Y", "Z", exchange.Hash, exchange.Pipelined))
	}
	for _, tc := range []struct {
		name   string
		w, x   time.Duration
		steady bool
	}{
		{"the stream asks first", 100 * time.Millisecond, time.Second, false},
		{"the batch region asks first", 2 * time.Second, 100 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := region.FromJob(job(tc.w, tc.x), exchange.AllBlocking)
			cluster := unknownSlots(3)
			v := rs.Check(cluster, resource.FitsEveryDimension)
			require.False(t, v.Runnable, v.Reason)
			assert.False(t, v.Definite, v.Reason)
			assert.Contains(t, v.Reason, "{Y#0, Y#1, Z#0} needs 4 slots")
			assert.Contains(t, v.Reason, "depends on timing")
			res, err := simulator.Run(simulator.Config{Regions: rs, Cluster: cluster, Seed: 1})
			require.NoError(t, err)
			assert.Equal(t, tc.steady, res.Verdict.OK(), res.Reason)
			// One slot more and it is deadlock-free whatever the timing.
			assert.True(t, rs.Check(unknownSlots(4), resource.FitsEveryDimension).Runnable)
		})
	}
}

// TestForClusterPacksBySize is a packing case: A(2, 500m)
// -hash-> B(1, 500m), A -hash-> C(1, 100m), all pipelined, on slots of
// 1000m and 600m. The locality packing {A, B, C} = 1100m + {A} = 500m does
// not fit; {A, B} + {A, C} does. Check says runnable and names the
// packing; the simulation, asking for the same slots, finishes.
func TestForClusterPacksBySize(t *testing.T) {
	cpu := func(m int64) resource.Profile { return resource.New(m, 0) }
	g := build(t, topology.NewBuilder("pack").
		AddVertex(topology.JobVertex{ID: "A", Parallelism: 2, Resources: cpu(500)}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 1, Resources: cpu(500)}).
		AddVertex(topology.JobVertex{ID: "C", Parallelism: 1, Resources: cpu(100)}).
		Connect("A", "B", exchange.Hash).
		Connect("A", "C", exchange.Hash))
	rs := region.FromJob(g, exchange.AllPipelined)
	require.Equal(t, 1, rs.NumRegions())
	cluster := []resource.Count{{Profile: cpu(1000), N: 1}, {Profile: cpu(600), N: 1}}

	locality := rs.Slots(0)
	require.Len(t, locality, 2)
	assert.Equal(t, []resource.Profile{cpu(1100), cpu(500)}, []resource.Profile{locality[0].Profile, locality[1].Profile})

	pk := rs.ForCluster(cluster, resource.FitsEveryDimension)
	assert.Equal(t, region.ResourcePacking, pk.Packing(0))
	assert.Equal(t, region.LocalityPacking, rs.Packing(0), "rs itself is unchanged")
	assert.Equal(t, []region.ID{0}, pk.Repacked())
	packed := pk.Slots(0)
	require.Len(t, packed, 2)
	assert.Equal(t, 2, pk.SlotCount(0))
	requireValidPacking(t, pk, 0, packed)
	a := resource.Assign(resource.Tally([]resource.Profile{packed[0].Profile, packed[1].Profile}), cluster, resource.FitsEveryDimension)
	assert.True(t, a.Complete(), "%v", packed)

	v := rs.Check(cluster, resource.FitsEveryDimension)
	assert.True(t, v.Runnable, v.Reason)
	assert.Equal(t, []region.ID{0}, v.Repacked)
	assert.Contains(t, v.Reason, "packing: resource-aware")
	assert.Contains(t, v.Reason, "{A#1, B#0}")

	res, err := simulator.Run(simulator.Config{Regions: rs, Cluster: cluster, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, runfile.Finished, res.Verdict, res.Reason)

	// Packing again for a cluster the locality packing fits undoes it.
	big := []resource.Count{{Profile: cpu(2000), N: 2}}
	again := pk.ForCluster(big, resource.FitsEveryDimension)
	assert.Equal(t, region.LocalityPacking, again.Packing(0))
	assert.Equal(t, locality, again.Slots(0))
	// No packing fits two 500m slots: the locality packing stays, not runnable.
	small := []resource.Count{{Profile: cpu(500), N: 2}}
	assert.Equal(t, region.LocalityPacking, rs.ForCluster(small, resource.FitsEveryDimension).Packing(0))
	assert.False(t, rs.Check(small, resource.FitsEveryDimension).Runnable)
	// Three 600m slots: A, A+C, B in separate slots — more slots than the
	// locality packing, still a valid packing.
	three := []resource.Count{{Profile: cpu(600), N: 3}}
	pk3 := rs.ForCluster(three, resource.FitsEveryDimension)
	require.Equal(t, region.ResourcePacking, pk3.Packing(0))
	requireValidPacking(t, pk3, 0, pk3.Slots(0))
	assert.Len(t, pk3.Slots(0), 3)
	assert.True(t, rs.Check(three, resource.FitsEveryDimension).Runnable)
}

// requireValidPacking checks the rules of slot sharing on a slot list of
// region r: every member once, in one slot sharing group per slot, no two
// subtasks of one job vertex in a slot, profiles summed, held forever iff
// a member never finishes.
func requireValidPacking(t *testing.T, rs *region.Regions, r region.ID, slots []region.Slot) {
	t.Helper()
	et := rs.Topology()
	g := et.Job()
	seen := map[topology.ExecutionVertexID]bool{}
	for i, s := range slots {
		require.NotEmpty(t, s.Members, "slot %d", i)
		vertices := map[topology.JobVertexID]bool{}
		sum := resource.Unknown
		never := false
		for _, v := range s.Members {
			require.False(t, seen[v], "%s is in two slots", et.VertexName(v))
			seen[v] = true
			require.Equal(t, r, rs.RegionOf(v))
			jv := et.JobVertexOf(v)
			require.False(t, vertices[jv], "slot %d holds two subtasks of %s", i, g.Vertex(jv).ID)
			vertices[jv] = true
			require.Equal(t, s.SlotSharingGroup, g.Vertex(jv).SlotSharingGroup, "slot %d mixes slot sharing groups", i)
			sum = sum.Add(g.Vertex(jv).Resources)
			never = never || rs.NeverFinishes(jv)
		}
		require.Equal(t, sum, s.Profile, "slot %d profile", i)
		require.Equal(t, never, s.Unbounded, "slot %d held forever", i)
	}
	require.Len(t, seen, rs.Size(r))
}

// TestForClusterRandomPackingsAreValid: on random small jobs and
// clusters, every slot list of ForCluster obeys the rules of slot
// sharing, and a repacked region fits the cluster on its own.
func TestForClusterRandomPackingsAreValid(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	repacked := 0
	for i := range 1500 {
		g, err := smallResourceJob(r)
		require.NoError(t, err)
		mode := exchange.Modes()[r.IntN(len(exchange.Modes()))]
		m := []resource.Matching{resource.FitsEveryDimension, resource.ExactMatch}[r.IntN(2)]
		cluster := smallCluster(r)
		pk := region.FromJob(g, mode).ForCluster(cluster, m)
		for reg := range region.ID(pk.NumRegions()) {
			slots := pk.Slots(reg)
			requireValidPacking(t, pk, reg, slots)
			if pk.Packing(reg) == region.ResourcePacking {
				repacked++
				var ps []resource.Profile
				for _, s := range slots {
					ps = append(ps, s.Profile)
				}
				require.True(t, resource.Assign(resource.Tally(ps), cluster, m).Complete(), "case %d region %d", i, reg)
			}
		}
	}
	t.Logf("%d regions repacked", repacked)
	assert.Positive(t, repacked)
}

// TestClusterSize: counts add up without overflow; a negative count or a
// total beyond MaxClusterSlots is a typed error naming the entry.
func TestClusterSize(t *testing.T) {
	n, err := region.ClusterSize([]resource.Count{{N: 3}, {Profile: resource.New(1, 1), N: 4}})
	require.NoError(t, err)
	assert.Equal(t, 7, n)
	n, err = region.ClusterSize([]resource.Count{{N: region.MaxClusterSlots}})
	require.NoError(t, err)
	assert.Equal(t, region.MaxClusterSlots, n)

	huge := 4611686018427387904
	_, err = region.ClusterSize([]resource.Count{{N: huge}, {N: huge}})
	require.Error(t, err)
	assert.ErrorIs(t, err, region.ErrClusterTooLarge)
	var se *region.ClusterSizeError
	require.True(t, errors.As(err, &se))
	assert.Equal(t, 0, se.Entry, "the first entry is already too large")
	_, err = region.ClusterSize([]resource.Count{{N: region.MaxClusterSlots}, {N: 1}})
	require.True(t, errors.As(err, &se))
	assert.Equal(t, 1, se.Entry)
	assert.Contains(t, err.Error(), "entry 1")

	_, err = region.ClusterSize([]resource.Count{{N: 1}, {N: -2}})
	assert.ErrorIs(t, err, region.ErrNegativeSlotCount)
	assert.Contains(t, err.Error(), "-2")
}

// TestCheckHugeClusterDoesNotOverflow: Check sums counts saturating, so
// an absurd cluster never turns negative ("the cluster has
// -9223372036854775808 slots").
func TestCheckHugeClusterDoesNotOverflow(t *testing.T) {
	rs := region.FromJob(build(t, topology.NewBuilder("one").AddVertex(topology.JobVertex{ID: "A", Parallelism: 1})), exchange.AllBlocking)
	huge := 4611686018427387904
	for _, cluster := range [][]resource.Count{
		{{Profile: resource.Unknown, N: huge}, {Profile: resource.Unknown, N: huge}},
		{{Profile: resource.New(1000, 1024), N: math.MaxInt}, {Profile: resource.Unknown, N: math.MaxInt}},
	} {
		v := rs.Check(cluster, resource.FitsEveryDimension)
		assert.True(t, v.Runnable, v.Reason)
		assert.NotContains(t, v.Reason, "-")
		assert.Contains(t, v.Reason, fmt.Sprintf("at least %d slots", math.MaxInt))
	}
	_, err := simulator.Run(simulator.Config{Regions: rs, Cluster: []resource.Count{{N: huge}, {N: huge}}})
	assert.ErrorIs(t, err, region.ErrClusterTooLarge)
}

// streamingJobs are random small jobs with unbounded vertices anywhere:
// 1-6 vertices of parallelism 1-3, any ship strategy and pinned exchange
// (hybrid ones included),
// one or two slot sharing groups, a third of the jobs sized, durations of
// 100 ms - 2 s.
var streamingJobs = jobgen.Options{
	Name:            "streaming",
	Vertices:        jobgen.IntRange{Min: 1, Max: 6},
	Parallelism:     jobgen.IntRange{Min: 1, Max: 3},
	Density:         jobgen.FloatRange{Min: 0.2, Max: 0.5},
	ChainRate:       0.5,
	ForwardRate:     0.5,
	PinRates:        []float64{0, 0.3},
	PinTypes:        jobgen.AllPinTypes(),
	Groups:          []string{topology.DefaultSlotSharingGroup, "other"},
	GroupRate:       0.3,
	Profiles:        []resource.Profile{resource.Unknown, resource.New(500, 512), resource.New(1000, 1024)},
	ResourceJobRate: 1.0 / 3,
	ResourceRate:    0.8,
	UnboundedRate:   0.25,
	Duration:        jobgen.DurationRange{Min: 100 * time.Millisecond, Max: 2 * time.Second, Step: 100 * time.Millisecond},
}

// TestCheckAgreesWithSimulationOnStreamingJobs is the soundness property
// on random jobs with unbounded vertices anywhere, in every mode (hybrid
// ones with a random selective share): when Check
// says deadlock-free the region policy finishes (or runs steadily) for
// every seed, and when it says not runnable and Definite it never does.
// A not-Definite verdict depends on timing; those cases are counted.
func TestCheckAgreesWithSimulationOnStreamingJobs(t *testing.T) {
	cases, seeds := 600, 4
	if testing.Short() {
		cases, seeds = 150, 2
	}
	r := rand.New(rand.NewPCG(1111, 11))
	var runnable, definite, timing, timingFinished, streaming int
	for i := range cases {
		g, err := jobgen.Generate(r, streamingJobs)
		require.NoError(t, err)
		mode := exchange.Modes()[r.IntN(len(exchange.Modes()))]
		rs := region.FromJob(g, mode)
		share := []float64{0.1, 0.5, 1}[r.IntN(3)]
		cluster := unknownSlots(r.IntN(rs.MinimumSlots() + 4))
		if r.IntN(3) == 0 {
			cluster = []resource.Count{{Profile: resource.New(1000, 1024), N: r.IntN(4)}, {Profile: resource.New(2000, 2048), N: r.IntN(4)}}
		}
		v := rs.Check(cluster, resource.FitsEveryDimension)
		if v.Indefinite > 0 {
			streaming++
		}
		desc := func() string {
			return fmt.Sprintf("case %d, mode %v, share %v, cluster %v, verdict %+v\njob %s", i, mode, share, cluster, v, encodeJob(g))
		}
		finished := 0
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			res, err := simulator.Run(simulator.Config{Regions: rs, Cluster: cluster, Seed: seed, SelectiveShare: share})
			require.NoError(t, err, desc())
			switch {
			case v.Runnable:
				require.True(t, res.Verdict.OK(), "check says deadlock-free, seed %d ends %s: %s", seed, res.Reason, desc())
			case v.Definite:
				require.False(t, res.Verdict.OK(), "check says definitely not runnable, seed %d ends %s: %s", seed, res.Reason, desc())
			}
			if res.Verdict.OK() {
				finished++
			}
		}
		switch {
		case v.Runnable:
			runnable++
		case v.Definite:
			definite++
		default:
			timing++
			if finished > 0 {
				timingFinished++
			}
			assert.True(t, strings.Contains(v.Reason, "depends on timing"), desc())
		}
	}
	t.Logf("%d cases (%d with slots held forever): %d deadlock-free, %d definitely not runnable, %d not runnable depending on timing (%d of which finished for some seed)",
		cases, streaming, runnable, definite, timing, timingFinished)
	assert.Positive(t, runnable)
	assert.Positive(t, definite)
	assert.Greater(t, streaming, cases/4)
}
