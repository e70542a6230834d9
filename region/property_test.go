package region_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/jobgen"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// randomJobs are DAGs of 1-9 vertices, parallelism 1-12 (often equal,
// from a per-job pool, so that forward edges occur), random ship
// strategies (forward only between equal parallelisms), random pinned
// exchanges, now and then parallel edges, and sometimes several slot
// sharing groups, resources (with gpus) and unbounded vertices. Vertices
// are declared in a random order unrelated to the edge direction, and
// some jobs plant the FLINK-22017 motif W -> P -> Q, W -> Q: a blocking
// rescale whose blocks can straddle the regions glued by the pipelined
// W -> P (rescale) and W -> Q (forward).
var randomJobs = jobgen.Options{
	Name:             "random",
	Vertices:         jobgen.IntRange{Min: 1, Max: 9},
	Parallelism:      jobgen.IntRange{Min: 1, Max: 12},
	ParallelismPool:  3,
	PoolRate:         0.5,
	ShuffleOrder:     true,
	Density:          jobgen.FloatRange{Min: 0.15, Max: 0.65},
	ParallelEdgeRate: 0.25,
	ShuffleEdges:     true,
	Ships:            []exchange.ShipStrategy{exchange.Rescale, exchange.Rescale, exchange.Hash, exchange.Rebalance, exchange.Broadcast},
	ForwardRate:      0.5,
	PinRates:         []float64{0, 0.2, 0.5},
	PinTypes:         jobgen.AllPinTypes(),
	Groups:           []string{topology.DefaultSlotSharingGroup, "a", "b"},
	GroupRate:        1.0 / 3,
	Profiles:         jobgen.Grid([]int64{0, 100, 200, 300, 400}, []int64{0, 256, 512, 768}),
	ResourceJobRate:  1,
	ResourceRate:     0.5,
	GPURate:          0.25,
	GPUs:             []int64{0, 1, 2},
	UnboundedRate:    1.0 / 6,
	Motifs:           []jobgen.Motif{jobgen.ForwardTriangle},
	MotifRate:        7.0 / 36, // a quarter of the jobs of 3+ vertices
}

// randomJob draws a job of randomJobs.
func randomJob(r *rand.Rand) (*topology.JobGraph, error) { return jobgen.Generate(r, randomJobs) }

func encodeJob(g *topology.JobGraph) string {
	var buf bytes.Buffer
	if err := topology.Encode(&buf, g); err != nil {
		return err.Error()
	}
	return buf.String()
}

// propertyStats counts what the random jobs exercised.
type propertyStats struct {
	cases, merged, crossRegion, multiRegion, multiGroupSlots int
}

func TestRegionsMatchNaiveReferenceOnRandomDAGs(t *testing.T) {
	const cases = 600
	var st propertyStats
	for seed := uint64(1); seed <= cases; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x5eed))
		g, err := randomJob(r)
		require.NoError(t, err, "seed %d", seed)
		mode := exchange.Modes()[r.IntN(len(exchange.Modes()))]
		ok := t.Run(fmt.Sprintf("seed=%d/%v", seed, mode), func(t *testing.T) {
			checkRegionProperties(t, g, mode, &st)
		})
		if !ok {
			t.Logf("seed %d, mode %v, job:\n%s", seed, mode, encodeJob(g))
		}
	}
	st.cases = cases
	t.Logf("%+v", st)
	// The generator must reach the interesting cases.
	assert.Greater(t, st.merged, 5, "cycle merges")
	assert.Greater(t, st.crossRegion, 5, "cross-region groups")
	assert.Greater(t, st.multiRegion, cases/4, "jobs with several regions")
	assert.Greater(t, st.multiGroupSlots, 5, "regions spanning several slot sharing groups")
}

func checkRegionProperties(t *testing.T, g *topology.JobGraph, mode exchange.Mode, st *propertyStats) {
	x := expand(g, mode)
	var rs *region.Regions
	require.NotPanics(t, func() { rs = region.FromJob(g, mode) })
	et := rs.Topology()
	n := x.numSubtasks()
	require.Equal(t, n, et.NumExecutionVertices())

	// Map the reference numbering onto ours by name.
	ours := make([]topology.ExecutionVertexID, n)
	for u := range n {
		v, err := et.ParseVertexName(x.name(u))
		require.NoError(t, err)
		require.Equal(t, x.name(u), et.VertexName(v))
		ours[u] = v
	}
	R := func(u int) region.ID { return rs.RegionOf(ours[u]) }

	// Every subtask in exactly one region; members ascending.
	seen := make([]int, n)
	for r := range region.ID(rs.NumRegions()) {
		m := rs.Members(r)
		require.NotEmpty(t, m, "region %d is empty", r)
		assert.True(t, slices.IsSorted(m), "region %d members not ascending", r)
		assert.Equal(t, len(m), rs.Size(r))
		only, one := rs.OnlyMember(r)
		assert.Equal(t, len(m) == 1, one, "region %d: OnlyMember", r)
		if one {
			assert.Equal(t, m[0], only, "region %d: OnlyMember", r)
		} else {
			assert.Equal(t, topology.ExecutionVertexID(-1), only, "region %d: OnlyMember", r)
		}
		for _, v := range m {
			require.True(t, int(v) >= 0 && int(v) < n)
			seen[v]++
			assert.Equal(t, r, rs.RegionOf(v))
		}
	}
	for v, c := range seen {
		assert.Equal(t, 1, c, "subtask %s is in %d regions", et.VertexName(topology.ExecutionVertexID(v)), c)
	}

	// Same partition as the naive gonum reference.
	label, components := naiveRegions(x)
	got := make([]int, n)
	for u := range n {
		got[u] = int(R(u))
	}
	require.Equal(t, canonical(label), canonical(got), "regions differ from the naive reference")
	if components > rs.NumRegions() {
		st.merged++
	}
	if rs.NumRegions() > 1 {
		st.multiRegion++
	}

	// Pipelined edges stay inside a region; blocking edges go forward in
	// region id order, so the region graph is acyclic and ids are a
	// topological order. Collect the expected neighbours on the way.
	type pair struct{ u, v int }
	blocking := map[pair]bool{}
	producers := make([]map[region.ID]bool, rs.NumRegions())
	consumers := make([]map[region.ID]bool, rs.NumRegions())
	for i := range producers {
		producers[i], consumers[i] = map[region.ID]bool{}, map[region.ID]bool{}
	}
	x.forEachEdge(func(e, u, v int, pipelined bool) {
		if pipelined {
			assert.Equal(t, R(u), R(v), "pipelined edge %s -> %s crosses regions", x.name(u), x.name(v))
			return
		}
		blocking[pair{u, v}] = true
		if R(u) != R(v) {
			assert.Less(t, R(u), R(v), "blocking edge %s -> %s goes backwards in region order", x.name(u), x.name(v))
			producers[R(v)][R(u)] = true
			consumers[R(u)][R(v)] = true
		}
	})
	sortedKeys := func(m map[region.ID]bool) []region.ID {
		var out []region.ID
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	for r := range region.ID(rs.NumRegions()) {
		assert.Equal(t, sortedKeys(producers[r]), nilIfEmpty(rs.ProducerRegions(r)), "ProducerRegions(%d)", r)
		assert.Equal(t, sortedKeys(consumers[r]), nilIfEmpty(rs.ConsumerRegions(r)), "ConsumerRegions(%d)", r)
	}

	// Groups: per blocking group, the regions of its producers and
	// consumers; consumed/produced groups are exactly the groups with a
	// blocking execution edge entering/leaving the region.
	inverse := map[topology.ExecutionVertexID]int{}
	for u, v := range ours {
		inverse[v] = u
	}
	wantConsumed := make([]map[topology.GroupID]bool, rs.NumRegions())
	wantProduced := make([]map[topology.GroupID]bool, rs.NumRegions())
	for i := range wantConsumed {
		wantConsumed[i], wantProduced[i] = map[topology.GroupID]bool{}, map[topology.GroupID]bool{}
	}
	for gid := range topology.GroupID(et.NumGroups()) {
		pg := et.Group(gid)
		if et.PartitionType(pg.Edge).IsPipelined() {
			assert.Empty(t, rs.GroupProducerRegions(gid))
			assert.Empty(t, rs.GroupConsumerRegions(gid))
			continue
		}
		prodRegions, consRegions := map[region.ID]bool{}, map[region.ID]bool{}
		for p := pg.Producers.Start; p < pg.Producers.End; p++ {
			prodRegions[rs.RegionOf(topology.ExecutionVertexID(p))] = true
		}
		for c := pg.Consumers.Start; c < pg.Consumers.End; c++ {
			consRegions[rs.RegionOf(topology.ExecutionVertexID(c))] = true
		}
		assert.Equal(t, sortedKeys(prodRegions), rs.GroupProducerRegions(gid), "group %d producers", gid)
		assert.Equal(t, sortedKeys(consRegions), rs.GroupConsumerRegions(gid), "group %d consumers", gid)
		for p := pg.Producers.Start; p < pg.Producers.End; p++ {
			for c := pg.Consumers.Start; c < pg.Consumers.End; c++ {
				u, v := inverse[topology.ExecutionVertexID(p)], inverse[topology.ExecutionVertexID(c)]
				require.True(t, blocking[pair{u, v}], "group %d pairs %s and %s, not a blocking execution edge", gid, x.name(u), x.name(v))
				if R(u) != R(v) {
					wantConsumed[R(v)][gid] = true
					wantProduced[R(u)][gid] = true
				}
			}
		}
		if rs.IsCrossRegion(gid) {
			st.crossRegion++
		}
	}
	groupSet := func(gs []topology.GroupID) map[topology.GroupID]bool {
		m := map[topology.GroupID]bool{}
		for _, g := range gs {
			assert.False(t, m[g], "group %d listed twice", g)
			m[g] = true
		}
		return m
	}
	// AllConsumedGroups: every blocking group listing r among its consumer
	// regions, ascending.
	wantAll := make([][]topology.GroupID, rs.NumRegions())
	for gid := range topology.GroupID(et.NumGroups()) {
		for _, c := range rs.GroupConsumerRegions(gid) {
			wantAll[c] = append(wantAll[c], gid)
		}
	}
	for r := range region.ID(rs.NumRegions()) {
		assert.Equal(t, wantAll[r], nilIfEmpty(rs.AllConsumedGroups(r)), "AllConsumedGroups(%d)", r)
		assert.Equal(t, wantConsumed[r], groupSet(rs.ConsumedGroups(r)), "ConsumedGroups(%d)", r)
		assert.Equal(t, wantProduced[r], groupSet(rs.ProducedGroups(r)), "ProducedGroups(%d)", r)
	}

	checkSlots(t, rs, x, st)
}

// checkSlots verifies the explicit slot assignment of every region.
func checkSlots(t *testing.T, rs *region.Regions, x *expansion, st *propertyStats) {
	et := rs.Topology()
	g := et.Job()
	maxCount := 0
	never := referenceNever(rs)
	for r := range region.ID(rs.NumRegions()) {
		// Lower bound: per slot sharing group, the max over job vertices
		// of their subtasks in the region; summed over groups.
		perVertex := map[topology.JobVertexID]int{}
		for _, v := range rs.Members(r) {
			perVertex[x.jobVertex(int(v))]++
		}
		perGroup := map[string]int{}
		for jv, c := range perVertex {
			ssg := g.Vertex(jv).SlotSharingGroup
			perGroup[ssg] = max(perGroup[ssg], c)
		}
		bound := 0
		for _, c := range perGroup {
			bound += c
		}
		if len(perGroup) > 1 {
			st.multiGroupSlots++
		}
		assert.Equal(t, bound, rs.SlotCount(r), "region %d: SlotCount is the lower bound", r)
		maxCount = max(maxCount, rs.SlotCount(r))

		slots := rs.Slots(r)
		require.Len(t, slots, rs.SlotCount(r), "region %d: Slots has SlotCount slots", r)
		placed := map[topology.ExecutionVertexID]int{}
		for i, s := range slots {
			require.NotEmpty(t, s.Members, "region %d slot %d is empty", r, i)
			vertices := map[topology.JobVertexID]bool{}
			sum := resource.Unknown
			unbounded := false
			for _, v := range s.Members {
				placed[v]++
				assert.Equal(t, r, rs.RegionOf(v), "slot %d of region %d holds %s of another region", i, r, et.VertexName(v))
				jv := x.jobVertex(int(v))
				assert.False(t, vertices[jv], "region %d slot %d holds two subtasks of %s", r, i, g.Vertex(jv).ID)
				vertices[jv] = true
				assert.Equal(t, s.SlotSharingGroup, g.Vertex(jv).SlotSharingGroup, "region %d slot %d mixes slot sharing groups", r, i)
				sum = sum.Add(g.Vertex(jv).Resources)
				unbounded = unbounded || never[jv]
			}
			assert.Equal(t, sum, s.Profile, "region %d slot %d profile", r, i)
			assert.Equal(t, unbounded, s.Unbounded, "region %d slot %d unbounded", r, i)
		}
		for _, v := range rs.Members(r) {
			assert.Equal(t, 1, placed[v], "region %d: %s is in %d slots", r, et.VertexName(v), placed[v])
		}
		assert.Len(t, placed, rs.Size(r))
	}
	assert.Equal(t, maxCount, rs.MinimumSlots())
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// AppendSlots appends what Slots returns, whatever the destination holds
// or has room for, and leaves what was there.
func TestAppendSlotsAppendsWhatSlotsReturns(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 0xa99e))
		g, err := randomJob(r)
		require.NoError(t, err, "seed %d", seed)
		rs := region.FromJob(g, exchange.Modes()[r.IntN(len(exchange.Modes()))])
		prefix := region.Slot{SlotSharingGroup: "prefix"}
		for id := range region.ID(rs.NumRegions()) {
			want := rs.Slots(id)
			for _, dst := range [][]region.Slot{nil, {prefix}, append(make([]region.Slot, 0, 64), prefix)} {
				got := rs.AppendSlots(dst, id)
				require.Len(t, got, len(dst)+len(want), "seed %d, region %d", seed, id)
				if len(dst) > 0 {
					assert.Equal(t, dst, got[:len(dst)], "seed %d, region %d: what was there stays", seed, id)
				}
				assert.Equal(t, want, got[len(dst):], "seed %d, region %d", seed, id)
			}
		}
	}
}
