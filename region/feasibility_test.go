package region_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/jobgen"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// unknownSlots is a cluster of n unknown-sized slots (what --slots N gives).
func unknownSlots(n int) []resource.Count {
	return []resource.Count{{Profile: resource.Unknown, N: n}}
}

// gpuProfile is cpu/memory plus a number of gpus.
func gpuProfile(cpuMillis, memoryMB, gpus int64) resource.Profile {
	return resource.New(cpuMillis, memoryMB).WithExtended("gpu", gpus)
}

// totalN sums the counts.
func totalN(cs []resource.Count) int {
	n := 0
	for _, c := range cs {
		n += c.N
	}
	return n
}

// TestCheckUnknownSizedClusterBoundary: with unknown-sized slots only the
// count matters, and MinimumSlots is exactly the threshold, in every mode,
// however the slots are split into counts.
func TestCheckUnknownSizedClusterBoundary(t *testing.T) {
	g := loadFLIP119(t)
	for _, mode := range exchange.Modes() {
		t.Run(mode.String(), func(t *testing.T) {
			rs := region.FromJob(g, mode)
			minimum := rs.MinimumSlots()
			require.Positive(t, minimum)

			ok := rs.Check(unknownSlots(minimum), resource.FitsEveryDimension)
			assert.True(t, ok.Runnable, ok.Reason)
			assert.Equal(t, minimum, ok.MinimumSlots)
			assert.Empty(t, ok.Missing)
			assert.Equal(t, []resource.Count{{Profile: resource.Unknown, N: minimum}}, ok.Needed)
			assert.Equal(t, minimum, rs.SlotCount(ok.Region), "the verdict names the largest region")
			assert.Contains(t, ok.Reason, fmt.Sprintf("region %d ", ok.Region))

			short := rs.Check(unknownSlots(minimum-1), resource.FitsEveryDimension)
			assert.False(t, short.Runnable)
			assert.Equal(t, minimum, short.MinimumSlots)
			assert.Equal(t, []resource.Count{{Profile: resource.Unknown, N: 1}}, short.Missing)
			assert.Equal(t, minimum, rs.SlotCount(short.Region), "the region that cannot be served")
			assert.Contains(t, short.Reason, fmt.Sprintf("region %d ", short.Region))
			assert.Contains(t, short.Reason, "missing 1 slot")

			split := make([]resource.Count, minimum)
			for i := range split {
				split[i] = resource.Count{Profile: resource.Unknown, N: 1}
			}
			assert.True(t, rs.Check(split, resource.FitsEveryDimension).Runnable, "slots split into counts of one")
			assert.True(t, rs.Check(unknownSlots(minimum+100), resource.ExactMatch).Runnable)
			assert.False(t, rs.Check(nil, resource.FitsEveryDimension).Runnable, "an empty cluster runs nothing")

			// Requests of unknown size fit any sized slot, even a tiny one.
			tiny := []resource.Count{{Profile: resource.New(1, 1), N: minimum}}
			assert.True(t, rs.Check(tiny, resource.FitsEveryDimension).Runnable)
			assert.True(t, rs.Check(tiny, resource.ExactMatch).Runnable)
		})
	}
}

// twoProfileJob is X(2, group "x", 1000m/2048MB) -hash-> Y(2, group "y",
// 1000m/4096MB). In all-pipelined mode it is one region that needs two
// slots of each profile.
func twoProfileJob(t *testing.T) *topology.JobGraph {
	return build(t, topology.NewBuilder("two-profiles").
		AddVertex(topology.JobVertex{ID: "X", Parallelism: 2, SlotSharingGroup: "x", Resources: resource.New(1000, 2048)}).
		AddVertex(topology.JobVertex{ID: "Y", Parallelism: 2, SlotSharingGroup: "y", Resources: resource.New(1000, 4096)}).
		Connect("X", "Y", exchange.Hash))
}

// TestCheckSizedClusterWithTwoSlotProfiles: a region needing slots of two
// profiles against clusters with enough slots in total but the wrong
// sizes, under both matchings.
func TestCheckSizedClusterWithTwoSlotProfiles(t *testing.T) {
	small, large := resource.New(1000, 2048), resource.New(1000, 4096)
	rs := region.FromJob(twoProfileJob(t), exchange.AllPipelined)
	require.Equal(t, 1, rs.NumRegions())
	require.Equal(t, 4, rs.SlotCount(0))
	tests := []struct {
		name     string
		cluster  []resource.Count
		m        resource.Matching
		runnable bool
		missing  []resource.Count // nil: only the total is checked
		missingN int
	}{
		{"only small slots", []resource.Count{{Profile: small, N: 4}}, resource.FitsEveryDimension,
			false, []resource.Count{{Profile: large, N: 2}}, 2},
		{"plenty of small slots", []resource.Count{{Profile: small, N: 100}}, resource.FitsEveryDimension,
			false, []resource.Count{{Profile: large, N: 2}}, 2},
		{"two of each", []resource.Count{{Profile: small, N: 2}, {Profile: large, N: 2}}, resource.FitsEveryDimension, true, nil, 0},
		{"two of each, exact", []resource.Count{{Profile: large, N: 2}, {Profile: small, N: 2}}, resource.ExactMatch, true, nil, 0},
		{"only large slots fit", []resource.Count{{Profile: large, N: 4}}, resource.FitsEveryDimension, true, nil, 0},
		{"only large slots, exact", []resource.Count{{Profile: large, N: 4}}, resource.ExactMatch,
			false, []resource.Count{{Profile: small, N: 2}}, 2},
		{"three large and many tiny", []resource.Count{{Profile: large, N: 3}, {Profile: resource.New(500, 512), N: 10}}, resource.FitsEveryDimension,
			false, nil, 1},
		{"one large slot too few", []resource.Count{{Profile: small, N: 3}, {Profile: large, N: 1}}, resource.FitsEveryDimension,
			false, []resource.Count{{Profile: large, N: 1}}, 1},
		{"unknown-sized slots stand in", []resource.Count{{Profile: small, N: 2}, {Profile: resource.Unknown, N: 2}}, resource.ExactMatch, true, nil, 0},
		{"bigger slots, exact", []resource.Count{{Profile: resource.New(2000, 8192), N: 4}}, resource.ExactMatch,
			false, nil, 4},
		{"bigger slots, fits", []resource.Count{{Profile: resource.New(2000, 8192), N: 4}}, resource.FitsEveryDimension, true, nil, 0},
		{"cpu too small", []resource.Count{{Profile: resource.New(999, 8192), N: 4}}, resource.FitsEveryDimension, false, nil, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := rs.Check(tc.cluster, tc.m)
			assert.Equal(t, tc.runnable, v.Runnable, v.Reason)
			assert.Equal(t, region.ID(0), v.Region)
			assert.ElementsMatch(t, []resource.Count{{Profile: small, N: 2}, {Profile: large, N: 2}}, v.Needed)
			assert.Contains(t, v.Reason, "region 0 ")
			assert.Equal(t, tc.missingN, totalN(v.Missing), "missing: %v", v.Missing)
			if tc.missing != nil {
				assert.Equal(t, tc.missing, v.Missing)
			}
			for _, c := range v.Missing {
				assert.Contains(t, v.Reason, c.Profile.String(), "the reason names the missing profile")
			}
			if tc.runnable {
				assert.Empty(t, v.Missing)
			}
		})
	}
}

// TestCheckExtendedResources: an extended resource (gpu) must be present in
// the slot, in the amount asked for.
func TestCheckExtendedResources(t *testing.T) {
	trainer := gpuProfile(2000, 8192, 1)
	g := build(t, topology.NewBuilder("training").
		AddVertex(topology.JobVertex{ID: "features", Parallelism: 2, Resources: resource.New(500, 1024)}).
		AddVertex(topology.JobVertex{ID: "train", Parallelism: 2, SlotSharingGroup: "gpu", Resources: trainer}).
		Connect("features", "train", exchange.Hash))
	cpuOnly := resource.New(16000, 65536)
	gpuBox := gpuProfile(4000, 16384, 2)
	tests := []struct {
		name     string
		mode     exchange.Mode
		cluster  []resource.Count
		m        resource.Matching
		runnable bool
		region   region.ID
	}{
		{"no gpu anywhere", exchange.AllBlocking, []resource.Count{{Profile: cpuOnly, N: 10}}, resource.FitsEveryDimension, false, 2},
		{"one gpu slot serves one trainer at a time", exchange.AllBlocking,
			[]resource.Count{{Profile: cpuOnly, N: 1}, {Profile: gpuBox, N: 1}}, resource.FitsEveryDimension, true, 0},
		{"pipelined needs both trainers at once", exchange.AllPipelined,
			[]resource.Count{{Profile: cpuOnly, N: 2}, {Profile: gpuBox, N: 1}}, resource.FitsEveryDimension, false, 0},
		{"pipelined with two gpu slots", exchange.AllPipelined,
			[]resource.Count{{Profile: cpuOnly, N: 2}, {Profile: gpuBox, N: 2}}, resource.FitsEveryDimension, true, 0},
		{"gpu slots also serve cpu requests", exchange.AllPipelined,
			[]resource.Count{{Profile: gpuBox, N: 4}}, resource.FitsEveryDimension, true, 0},
		{"exact match wants one gpu, not two", exchange.AllBlocking,
			[]resource.Count{{Profile: resource.New(500, 1024), N: 1}, {Profile: gpuBox, N: 1}}, resource.ExactMatch, false, 2},
		{"exact match with the exact trainer slot", exchange.AllBlocking,
			[]resource.Count{{Profile: resource.New(500, 1024), N: 1}, {Profile: trainer, N: 1}}, resource.ExactMatch, true, 0},
		{"another extended resource does not stand in", exchange.AllBlocking,
			[]resource.Count{{Profile: resource.New(16000, 65536).WithExtended("fpga", 4), N: 4}}, resource.FitsEveryDimension, false, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := region.FromJob(g, tc.mode)
			v := rs.Check(tc.cluster, tc.m)
			assert.Equal(t, tc.runnable, v.Runnable, v.Reason)
			if tc.runnable {
				return
			}
			assert.Equal(t, tc.region, v.Region, v.Reason)
			require.NotEmpty(t, v.Missing)
			assert.Equal(t, int64(1), v.Missing[0].Profile.ExtendedValue("gpu"), "the missing slot is a gpu slot: %v", v.Missing)
			assert.Contains(t, v.Reason, "gpu=1")
			assert.Contains(t, v.Reason, fmt.Sprintf("region %d ", v.Region))
			assert.Contains(t, v.Reason, "train#")
		})
	}
}

// streamingAndBatchJob: an unbounded region of two slots (S1 -hash-> S2,
// streaming) next to a bounded region of two slots (B1 -hash-> B2), both
// pinned pipelined. With res, every subtask asks for res.
func streamingAndBatchJob(t *testing.T, res resource.Profile) *topology.JobGraph {
	return build(t, topology.NewBuilder("streaming-and-batch").
		AddVertex(topology.JobVertex{ID: "S1", Parallelism: 2, Unbounded: true, Resources: res}).
		AddVertex(topology.JobVertex{ID: "S2", Parallelism: 2, Unbounded: true, Resources: res}).
		AddVertex(topology.JobVertex{ID: "B1", Parallelism: 2, Resources: res}).
		AddVertex(topology.JobVertex{ID: "B2", Parallelism: 2, Resources: res}).
		ConnectPinned("S1", "S2", exchange.Hash, exchange.PipelinedBounded).
		ConnectPinned("B1", "B2", exchange.Hash, exchange.PipelinedBounded))
}

// TestCheckHoldsUnboundedSlotsForEveryRegion: slots of streaming subtasks
// never come back, so a job with an unbounded region of 2 slots and a
// bounded region of 2 slots needs 4 slots, sized or not.
func TestCheckHoldsUnboundedSlotsForEveryRegion(t *testing.T) {
	// Two subtasks of 500m/1024MB share each slot.
	slot := resource.New(1000, 2048)
	for _, res := range []resource.Profile{resource.Unknown, resource.New(500, 1024)} {
		t.Run(res.String(), func(t *testing.T) {
			rs := region.FromJob(streamingAndBatchJob(t, res), exchange.AllBlocking)
			require.Equal(t, 2, rs.NumRegions())
			require.Equal(t, 2, rs.MinimumSlots())
			for _, sized := range []bool{false, true} {
				for n := 0; n <= 6; n++ {
					cluster := unknownSlots(n)
					if sized {
						cluster = []resource.Count{{Profile: slot, N: n}}
					}
					v := rs.Check(cluster, resource.FitsEveryDimension)
					assert.Equal(t, n >= 4, v.Runnable, "cluster %v: %s", cluster, v.Reason)
					assert.Equal(t, 2, v.Indefinite, "two slots are held indefinitely")
					assert.Equal(t, 2, v.MinimumSlots)
					assert.Contains(t, v.Reason, "indefinitely")
					assert.Regexp(t, `region [01] `, v.Reason)
					if v.Runnable {
						assert.Equal(t, 4, totalN(v.Needed), "%v", v.Needed)
						assert.Empty(t, v.Missing)
					} else {
						assert.Positive(t, totalN(v.Missing), "cluster %v", cluster)
						assert.LessOrEqual(t, totalN(v.Missing), 4-n, "cluster %v: missing %v", cluster, v.Missing)
					}
				}
			}
		})
	}
}

// TestCheckOnlyUnboundedRegions: a streaming job whose every slot is held
// indefinitely still names its region in the verdict.
func TestCheckOnlyUnboundedRegions(t *testing.T) {
	for _, res := range []resource.Profile{resource.Unknown, resource.New(500, 1024)} {
		t.Run(res.String(), func(t *testing.T) {
			g := build(t, topology.NewBuilder("streaming").
				AddVertex(topology.JobVertex{ID: "kafka", Parallelism: 2, Unbounded: true, Resources: res}).
				AddVertex(topology.JobVertex{ID: "sessionize", Parallelism: 2, Unbounded: true, Resources: res}).
				Connect("kafka", "sessionize", exchange.Hash))
			rs := region.FromJob(g, exchange.AllPipelined)
			require.Equal(t, 1, rs.NumRegions())

			ok := rs.Check([]resource.Count{{Profile: resource.New(1000, 2048), N: 2}}, resource.FitsEveryDimension)
			assert.True(t, ok.Runnable, ok.Reason)
			assert.Equal(t, region.ID(0), ok.Region)
			assert.Equal(t, 2, totalN(ok.Needed), "%v", ok.Needed)
			assert.Contains(t, ok.Reason, "region 0 ")

			short := rs.Check([]resource.Count{{Profile: resource.New(1000, 2048), N: 1}}, resource.FitsEveryDimension)
			assert.False(t, short.Runnable, short.Reason)
			assert.Equal(t, region.ID(0), short.Region)
			assert.Equal(t, 1, totalN(short.Missing))
			assert.Contains(t, short.Reason, "region 0 ")
		})
	}
}

// TestCheckReasonPluralizesSlots: "1 slot", never "1 slots".
func TestCheckReasonPluralizesSlots(t *testing.T) {
	rs := region.FromJob(loadFLIP119(t), exchange.AllBlocking)
	for n := range 3 {
		v := rs.Check(unknownSlots(n), resource.FitsEveryDimension)
		assert.NotContains(t, v.Reason, " 1 slots", v.Reason)
		assert.Contains(t, v.Reason, fmt.Sprintf("the cluster has %s", map[int]string{0: "0 slots", 1: "1 slot", 2: "2 slots"}[n]))
	}
}

// --- brute force ---------------------------------------------------------

// bruteSlotKinds is a cluster as distinct profiles with counts.
type bruteSlotKinds struct {
	profiles []resource.Profile
	counts   []int
}

func newBruteSlotKinds(cluster []resource.Count) bruteSlotKinds {
	var k bruteSlotKinds
	index := map[resource.Profile]int{}
	for _, c := range cluster {
		if c.N == 0 {
			continue
		}
		i, ok := index[c.Profile]
		if !ok {
			i = len(k.profiles)
			index[c.Profile] = i
			k.profiles = append(k.profiles, c.Profile)
			k.counts = append(k.counts, 0)
		}
		k.counts[i] += c.N
	}
	return k
}

// bruteMatch reports whether every request can be given its own slot that
// serves it: an exhaustive search over which kind of slot each request
// takes (slots of one profile are interchangeable).
func bruteMatch(requests []resource.Profile, slots bruteSlotKinds, m resource.Matching) bool {
	total := 0
	for _, c := range slots.counts {
		total += c
	}
	if len(requests) > total {
		return false
	}
	left := append([]int(nil), slots.counts...)
	var try func(i int) bool
	try = func(i int) bool {
		if i == len(requests) {
			return true
		}
		for k, p := range slots.profiles {
			if left[k] > 0 && m.Serves(p, requests[i]) {
				left[k]--
				ok := try(i + 1)
				left[k]++
				if ok {
					return true
				}
			}
		}
		return false
	}
	return try(0)
}

// bruteRemainders lists every cluster that can remain after the held
// requests took slots serving them, one per distinct choice of how many
// slots of each kind they take.
func bruteRemainders(held []resource.Profile, slots bruteSlotKinds, m resource.Matching) []bruteSlotKinds {
	var out []bruteSlotKinds
	take := make([]int, len(slots.counts))
	var choose func(k, left int)
	choose = func(k, left int) {
		if k == len(slots.counts) {
			if left != 0 {
				return
			}
			taken := bruteSlotKinds{profiles: slots.profiles, counts: take}
			if !bruteMatch(held, taken, m) {
				return
			}
			rest := bruteSlotKinds{profiles: slots.profiles, counts: make([]int, len(take))}
			for i := range take {
				rest.counts[i] = slots.counts[i] - take[i]
			}
			out = append(out, rest)
			return
		}
		for n := 0; n <= min(left, slots.counts[k]); n++ {
			take[k] = n
			choose(k+1, left-n)
		}
		take[k] = 0
	}
	choose(0, len(held))
	return out
}

// smallResourceJobs are DAGs of 1-4 vertices of parallelism 1-3 with
// random ship strategies and pinned exchanges, one or two slot sharing
// groups, resources from a small palette (including unknown and gpu) and
// now and then an unbounded vertex: regions stay small enough for the
// brute force.
var smallResourceJobs = jobgen.Options{
	Name:        "small",
	Vertices:    jobgen.IntRange{Min: 1, Max: 4},
	Parallelism: jobgen.IntRange{Min: 1, Max: 3},
	Density:     jobgen.FloatRange{Min: 0.5, Max: 0.5},
	ForwardRate: 0.5,
	PinRates:    []float64{0.25},
	Groups:      []string{topology.DefaultSlotSharingGroup, topology.DefaultSlotSharingGroup, "other"},
	GroupRate:   1,
	Profiles: []resource.Profile{
		resource.Unknown,
		resource.New(500, 1024),
		resource.New(1000, 1024),
		resource.New(500, 2048),
		gpuProfile(1000, 2048, 1),
	},
	ResourceJobRate: 1,
	ResourceRate:    1,
	UnboundedRate:   1.0 / 8,
}

// smallResourceJob draws a job of smallResourceJobs.
func smallResourceJob(r *rand.Rand) (*topology.JobGraph, error) {
	return jobgen.Generate(r, smallResourceJobs)
}

// smallCluster draws 0-4 slot kinds of 0-5 slots each, sizes from a
// palette that includes unknown-sized, too-small and gpu slots.
func smallCluster(r *rand.Rand) []resource.Count {
	palette := []resource.Profile{
		resource.Unknown,
		resource.New(500, 1024),
		resource.New(1000, 2048),
		resource.New(2000, 4096),
		resource.New(3000, 8192),
		gpuProfile(1000, 2048, 1),
		gpuProfile(4000, 8192, 2),
		resource.New(100, 128),
	}
	var out []resource.Count
	for range r.IntN(5) {
		out = append(out, resource.Count{Profile: palette[r.IntN(len(palette))], N: r.IntN(6)})
	}
	return out
}

// TestCheckAgreesWithBruteForce is the soundness property of docs/architecture.md
// section 4 on random small jobs and clusters, with the slots of
// ForCluster (what Check judges): whenever Check says runnable, all slots
// held forever fit at once, and every region's slot list — together with
// the slots held forever by the regions that are not its descendants (nor,
// when every slot serves every request and it is a source region, later
// source regions), however those were placed — can be matched into the
// cluster; whenever
// some region cannot be matched even with the best placement, Check says
// not runnable. For bounded jobs the answer is exact (and Definite) and
// names the first region that cannot be served.
func TestCheckAgreesWithBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(20240601, 119))
	cases := 2000
	if testing.Short() {
		cases = 300
	}
	var runnable, notRunnable, unbounded, sized, blocked int
	for i := range cases {
		g, err := smallResourceJob(r)
		require.NoError(t, err)
		mode := exchange.Modes()[r.IntN(len(exchange.Modes()))]
		m := []resource.Matching{resource.FitsEveryDimension, resource.ExactMatch}[r.IntN(2)]
		cluster := smallCluster(r)
		rs := region.FromJob(g, mode)
		v := rs.Check(cluster, m)
		if e := neverCompleteEdge(rs); e >= 0 {
			// Some blocking result is never complete: no cluster helps.
			blocked++
			edge := g.Edge(e)
			require.False(t, v.Runnable, "case %d: edge %s -> %s never completes", i, edge.Source, edge.Target)
			assert.Contains(t, v.Reason, "can never run")
			assert.Contains(t, v.Reason, edge.Source+" -> ")
			continue
		}

		kinds := newBruteSlotKinds(cluster)
		pk := rs.ForCluster(cluster, m) // the slots Check judges
		n := rs.NumRegions()
		heldOf := make([][]resource.Profile, n) // per region: its slots held forever
		own := make([][]resource.Profile, n)    // per region: all its slots
		anyHeld := false
		for reg := range region.ID(n) {
			for _, s := range pk.Slots(reg) {
				own[reg] = append(own[reg], s.Profile)
				if s.Unbounded {
					heldOf[reg] = append(heldOf[reg], s.Profile)
					anyHeld = true
				}
				if !s.Profile.IsUnknown() {
					sized++
				}
			}
		}
		// strict: every slot serves every request, so bulks are served in
		// FIFO order and the source regions ask in id order at start.
		strict := true
		for reg := range region.ID(n) {
			for _, p := range own[reg] {
				for i, sp := range kinds.profiles {
					if kinds.counts[i] > 0 && !m.Serves(sp, p) {
						strict = false
					}
				}
			}
		}
		source := func(q region.ID) bool { return len(rs.ProducerRegions(q)) == 0 }
		// heldFor[r]: the held slots of every region but r and its
		// descendants (which run only after r was deployed), and with
		// strict FIFO, when r is a source, but the later sources.
		heldFor := make([][]resource.Profile, n)
		for reg := range region.ID(n) {
			desc := descendants(rs, reg)
			for q := range region.ID(n) {
				if desc[q] || (strict && source(reg) && source(q) && q > reg) {
					continue
				}
				heldFor[reg] = append(heldFor[reg], heldOf[q]...)
			}
		}
		var allHeld []resource.Profile
		for _, h := range heldOf {
			allHeld = append(allHeld, h...)
		}
		// fits[r]: r's slots and the held ones it may wait beside fit
		// together at best.
		firstUnfit := region.ID(-1)
		if !bruteMatch(allHeld, kinds, m) {
			firstUnfit = 0
		}
		for reg := range region.ID(n) {
			if !bruteMatch(append(append([]resource.Profile(nil), heldFor[reg]...), own[reg]...), kinds, m) && firstUnfit < 0 {
				firstUnfit = reg
			}
		}
		desc := func() string {
			return fmt.Sprintf("case %d, mode %v, matching %v, cluster %v, verdict %+v\njob %s", i, mode, m, cluster, v, encodeJob(g))
		}
		require.Equal(t, rs.MinimumSlots(), v.MinimumSlots, desc())
		if firstUnfit >= 0 {
			require.False(t, v.Runnable, "region %d cannot be matched, yet Check says runnable: %s", firstUnfit, desc())
		}
		if !anyHeld {
			require.Equal(t, firstUnfit < 0, v.Runnable, "bounded jobs get an exact answer: %s", desc())
			if !v.Runnable {
				assert.Equal(t, firstUnfit, v.Region, "the first region that cannot be served: %s", desc())
				assert.True(t, v.Definite, desc())
			}
		} else {
			unbounded++
			if v.Runnable {
				require.True(t, bruteMatch(allHeld, kinds, m), "runnable, but the held slots do not fit at once: %s", desc())
				for reg := range region.ID(n) {
					for _, rest := range bruteRemainders(heldFor[reg], kinds, m) {
						require.True(t, bruteMatch(own[reg], rest, m),
							"runnable, but region %d does not fit next to the held slots in %v: %s", reg, rest, desc())
					}
				}
			}
		}
		if v.Runnable {
			runnable++
			assert.Empty(t, v.Missing, desc())
		} else {
			notRunnable++
			assert.NotEmpty(t, v.Missing, desc())
			assert.LessOrEqual(t, totalN(v.Missing), totalN(v.Needed), desc())
			needed := map[resource.Profile]bool{}
			for _, c := range v.Needed {
				needed[c.Profile] = true
			}
			for _, c := range v.Missing {
				assert.True(t, needed[c.Profile], "missing %v is something needed: %s", c, desc())
			}
		}
		require.GreaterOrEqual(t, v.Region, region.ID(0), desc())
		require.Less(t, int(v.Region), rs.NumRegions(), desc())
		assert.Contains(t, v.Reason, fmt.Sprintf("region %d ", v.Region), desc())
	}
	t.Logf("%d cases: %d runnable, %d not runnable, %d with unbounded slots, %d sized slots, %d never complete", cases, runnable, notRunnable, unbounded, sized, blocked)
	assert.Positive(t, blocked)
	assert.Positive(t, runnable)
	assert.Positive(t, notRunnable)
	assert.Positive(t, unbounded)
}

// descendants marks r and the regions that read its blocking results,
// directly or through others (by ConsumerRegions, a reference walk).
func descendants(rs *region.Regions, r region.ID) map[region.ID]bool {
	seen := map[region.ID]bool{r: true}
	stack := []region.ID{r}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range rs.ConsumerRegions(x) {
			if !seen[c] {
				seen[c] = true
				stack = append(stack, c)
			}
		}
	}
	return seen
}

// neverCompleteEdge returns the index of the first blocking edge whose
// source never finishes (it is unbounded or reads an unbounded vertex
// through pipelined edges, found by fixpoint), or -1.
func neverCompleteEdge(rs *region.Regions) topology.JobEdgeID {
	g := rs.Topology().Job()
	never := referenceNever(rs)
	for e := range topology.JobEdgeID(g.NumEdges()) {
		if src, _ := g.EdgeEnds(e); never[src] && naiveWaits(rs, e) {
			return e
		}
	}
	return -1
}

// A blocking result written by a task that never finishes is never
// complete: its readers can never run, whatever the cluster.
func TestCheckBlockingResultOfUnboundedProducer(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *topology.Builder) *topology.Builder
		mode  exchange.Mode
		edge  string
	}{
		{"unbounded source, blocking edge", func(b *topology.Builder) *topology.Builder {
			return b.Connect("S", "M", exchange.Forward)
		}, exchange.AllBlocking, "S -> M"},
		{"blocking edge inside the stream's region", func(b *topology.Builder) *topology.Builder {
			return b.ConnectPinned("S", "M", exchange.Forward, exchange.PipelinedBounded).
				ConnectPinned("S", "M", exchange.Hash, exchange.Blocking)
		}, exchange.AllBlocking, "S -> M"},
		{"bounded reader of the stream writes a blocking result", func(b *topology.Builder) *topology.Builder {
			return b.Connect("S", "M", exchange.Forward).Connect("M", "K", exchange.Hash)
		}, exchange.ForwardPipelinedOnly, "M -> K"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := topology.NewBuilder(tc.name).
				AddVertex(topology.JobVertex{ID: "S", Parallelism: 1, Unbounded: true}).
				AddVertex(topology.JobVertex{ID: "M", Parallelism: 1}).
				AddVertex(topology.JobVertex{ID: "K", Parallelism: 1})
			g, err := tc.build(b).Build()
			require.NoError(t, err)
			v := region.FromJob(g, tc.mode).Check([]resource.Count{{Profile: resource.Unknown, N: 100}}, resource.FitsEveryDimension)
			assert.False(t, v.Runnable)
			assert.Contains(t, v.Reason, "can never run")
			assert.Contains(t, v.Reason, "edge "+tc.edge)
		})
	}
	// Streaming all the way (pipelined edges only) is runnable.
	g, err := topology.NewBuilder("stream").
		AddVertex(topology.JobVertex{ID: "S", Parallelism: 2, Unbounded: true}).
		AddVertex(topology.JobVertex{ID: "M", Parallelism: 2}).
		Connect("S", "M", exchange.Hash).
		Build()
	require.NoError(t, err)
	v := region.FromJob(g, exchange.AllPipelined).Check([]resource.Count{{Profile: resource.Unknown, N: 2}}, resource.FitsEveryDimension)
	assert.True(t, v.Runnable, v.Reason)
}
