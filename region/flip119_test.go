package region_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

func loadFLIP119(t testing.TB) *topology.JobGraph { return testjobs.FLIP119(t) }

// regionView is a region as docs/cli.md prints it.
type regionView struct {
	Vertices []string
	Slots    int
	Consumes []region.ID
}

func view(rs *region.Regions) []regionView {
	t := rs.Topology()
	out := make([]regionView, rs.NumRegions())
	for r := range region.ID(rs.NumRegions()) {
		for _, v := range rs.Members(r) {
			out[r].Vertices = append(out[r].Vertices, t.VertexName(v))
		}
		out[r].Slots = rs.SlotCount(r)
		out[r].Consumes = rs.ProducerRegions(r)
	}
	return out
}

// TestFLIP119Table checks the table of FLIP-119 "Data Exchange Mode
// Examples" for all four modes, and the hybrid modes, which cut regions
// where all-blocking does.
func TestFLIP119Table(t *testing.T) {
	g := loadFLIP119(t)
	tests := []struct {
		mode                           exchange.Mode
		regions, blocking, hybrid, min int
	}{
		{exchange.AllBlocking, 12, 3, 0, 1},
		{exchange.ForwardPipelinedOnly, 10, 2, 0, 1},
		{exchange.PointwisePipelinedOnly, 6, 1, 0, 2},
		{exchange.AllPipelined, 1, 0, 0, 4},
		{exchange.AllHybridFull, 12, 0, 3, 1},
		{exchange.AllHybridSelective, 12, 0, 3, 1},
	}
	for _, tc := range tests {
		t.Run(tc.mode.String(), func(t *testing.T) {
			rs := region.FromJob(g, tc.mode)
			assert.Equal(t, tc.regions, rs.NumRegions(), "pipelined regions")
			assert.Equal(t, tc.blocking, g.BlockingEdges(tc.mode), "blocking logical edges")
			assert.Equal(t, tc.hybrid, g.HybridEdges(tc.mode), "hybrid logical edges")
			assert.Equal(t, 3-tc.blocking-tc.hybrid, g.PipelinedEdges(tc.mode), "pipelined logical edges")
			assert.Equal(t, tc.min, rs.MinimumSlots(), "minimum slots required")
			assert.Equal(t, 12, rs.Topology().NumExecutionVertices())
		})
	}
}

func TestFLIP119RegionsPerMode(t *testing.T) {
	g := loadFLIP119(t)
	single := func(name string, consumes ...region.ID) regionView {
		return regionView{Vertices: []string{name}, Slots: 1, Consumes: consumes}
	}
	tests := []struct {
		mode exchange.Mode
		want []regionView
	}{
		{exchange.AllBlocking, []regionView{
			single("A#0"), single("A#1"),
			single("B#0", 0), single("B#1", 1),
			single("C#0", 2), single("C#1", 2), single("C#2", 3), single("C#3", 3),
			single("D#0", 4, 5, 6, 7), single("D#1", 4, 5, 6, 7), single("D#2", 4, 5, 6, 7), single("D#3", 4, 5, 6, 7),
		}},
		{exchange.ForwardPipelinedOnly, []regionView{
			{Vertices: []string{"A#0", "B#0"}, Slots: 1},
			{Vertices: []string{"A#1", "B#1"}, Slots: 1},
			single("C#0", 0), single("C#1", 0), single("C#2", 1), single("C#3", 1),
			single("D#0", 2, 3, 4, 5), single("D#1", 2, 3, 4, 5), single("D#2", 2, 3, 4, 5), single("D#3", 2, 3, 4, 5),
		}},
		// docs/cli.md: region 0 = A#0, B#0, C#0, C#1; region 4 = D#2 consuming [0 1].
		{exchange.PointwisePipelinedOnly, []regionView{
			{Vertices: []string{"A#0", "B#0", "C#0", "C#1"}, Slots: 2},
			{Vertices: []string{"A#1", "B#1", "C#2", "C#3"}, Slots: 2},
			single("D#0", 0, 1), single("D#1", 0, 1), single("D#2", 0, 1), single("D#3", 0, 1),
		}},
		{exchange.AllPipelined, []regionView{
			{Vertices: []string{"A#0", "A#1", "B#0", "B#1", "C#0", "C#1", "C#2", "C#3", "D#0", "D#1", "D#2", "D#3"}, Slots: 4},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.mode.String(), func(t *testing.T) {
			assert.Equal(t, tc.want, view(region.FromJob(g, tc.mode)))
		})
	}
}

func TestFLIP119PointwiseGroups(t *testing.T) {
	g := loadFLIP119(t)
	rs := region.FromJob(g, exchange.PointwisePipelinedOnly)
	require.Equal(t, 6, rs.NumRegions())
	et := rs.Topology()
	// The only blocking edge, C -hash-> D, is one group of 4 producers in
	// regions 0 and 1, read by the four D regions.
	hash := et.GroupsOf(2)
	require.Equal(t, 1, hash.Len())
	grp := topology.GroupID(hash.Start)
	assert.Equal(t, []region.ID{0, 1}, rs.GroupProducerRegions(grp))
	assert.Equal(t, []region.ID{2, 3, 4, 5}, rs.GroupConsumerRegions(grp))
	assert.False(t, rs.IsCrossRegion(grp))
	for r := range region.ID(2) {
		assert.Empty(t, rs.ConsumedGroups(r))
		assert.Equal(t, []topology.GroupID{grp}, rs.ProducedGroups(r))
		assert.Equal(t, []region.ID{2, 3, 4, 5}, rs.ConsumerRegions(r))
	}
	for r := region.ID(2); r < 6; r++ {
		assert.Equal(t, []topology.GroupID{grp}, rs.ConsumedGroups(r))
		assert.Empty(t, rs.ProducedGroups(r))
		assert.Empty(t, rs.ConsumerRegions(r))
	}
	// Pipelined groups list no regions.
	for _, e := range []topology.JobEdgeID{0, 1} {
		gs := et.GroupsOf(e)
		for x := gs.Start; x < gs.End; x++ {
			assert.Empty(t, rs.GroupProducerRegions(topology.GroupID(x)))
			assert.Empty(t, rs.GroupConsumerRegions(topology.GroupID(x)))
		}
	}
	d2, err := et.ParseVertexName("D#2")
	require.NoError(t, err)
	assert.Equal(t, region.ID(4), rs.RegionOf(d2))
	assert.True(t, rs.Contains(4, d2))
	assert.False(t, rs.Contains(3, d2))
	assert.Equal(t, 1, rs.Size(4))
	assert.Equal(t, 4, rs.Size(0))
}

// TestFLIP119SecondRegionNeedsTwoSlots: by docs/architecture.md, Flink's
// job-wide slot sharing puts {A#1, B#1, C#2, C#3} into 3 groups; per
// region we need exactly 2 slots, and the explicit assignment reaches it.
func TestFLIP119SecondRegionNeedsTwoSlots(t *testing.T) {
	g := loadFLIP119(t)
	rs := region.FromJob(g, exchange.PointwisePipelinedOnly)
	et := rs.Topology()
	names := func(vs []topology.ExecutionVertexID) []string {
		var out []string
		for _, v := range vs {
			out = append(out, et.VertexName(v))
		}
		return out
	}
	require.Equal(t, []string{"A#1", "B#1", "C#2", "C#3"}, names(rs.Members(1)))
	assert.Equal(t, 2, rs.SlotCount(1))
	slots := rs.Slots(1)
	require.Len(t, slots, 2)
	assert.Equal(t, []string{"A#1", "B#1", "C#2"}, names(slots[0].Members), "the chain and the first consumer share the producer's slot")
	assert.Equal(t, []string{"C#3"}, names(slots[1].Members))
	for _, s := range slots {
		assert.Equal(t, "default", s.SlotSharingGroup)
		assert.True(t, s.Profile.IsUnknown())
		assert.False(t, s.Unbounded)
	}
}

// The derived gang size of FLIP-119's job: the slots of its source
// regions (A's subtasks, with whatever they pipeline into), plus one for
// a driver.
func TestFLIP119GangMinSlots(t *testing.T) {
	g := loadFLIP119(t)
	for mode, want := range map[exchange.Mode]int{
		exchange.AllBlocking:            2, // A#0, A#1
		exchange.ForwardPipelinedOnly:   2, // {A#0, B#0}, {A#1, B#1}
		exchange.PointwisePipelinedOnly: 4, // two regions of 2 slots
		exchange.AllPipelined:           4, // the one region
	} {
		rs := region.FromJob(g, mode)
		assert.Equal(t, want, rs.GangMinSlots(false, 0), mode.String())
		assert.Equal(t, want+1, rs.GangMinSlots(true, 0), mode.String())
	}
}

// The derived gang is capped at what the job's queue can hold: FLIP-119
// all-pipelined (one region of 4 slots) derives 4, or 5 with a driver;
// a queue of 3 slots caps both at 3, one of 4 only the second; a queue
// as large as the gang, or no cap (0 or less), changes nothing.
func TestGangMinSlotsCappedAtTheQueue(t *testing.T) {
	rs := region.FromJob(loadFLIP119(t), exchange.AllPipelined)
	for _, c := range []struct {
		queue            int
		without, withDrv int
	}{{1, 1, 1}, {3, 3, 3}, {4, 4, 4}, {5, 4, 5}, {100, 4, 5}, {0, 4, 5}, {-1, 4, 5}} {
		assert.Equal(t, c.without, rs.GangMinSlots(false, c.queue), "queue of %d", c.queue)
		assert.Equal(t, c.withDrv, rs.GangMinSlots(true, c.queue), "queue of %d, with a driver", c.queue)
	}
}
