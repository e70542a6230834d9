package region_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

func build(t *testing.T, b *topology.Builder) *topology.JobGraph {
	t.Helper()
	g, err := b.Build()
	require.NoError(t, err)
	return g
}

func memberNames(rs *region.Regions, vs []topology.ExecutionVertexID) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, rs.Topology().VertexName(v))
	}
	return out
}

// TestCycleMergesIntoOneRegion is the case of docs/architecture.md
// (FLINK-17330): src -forward pipelined-> join, side -forward pipelined->
// join, src -hash blocking-> side. Per subtask i, {src#i, side#i, join#i}
// is glued by pipelined edges, and the blocking all-to-all edge makes
// those regions depend on each other in a cycle: they must merge.
func TestCycleMergesIntoOneRegion(t *testing.T) {
	for _, p := range []int{1, 2, 5} {
		for _, mode := range exchange.Modes() {
			t.Run(fmt.Sprintf("p%d/%v", p, mode), func(t *testing.T) {
				g := build(t, topology.NewBuilder("cycle").
					AddVertex(topology.JobVertex{ID: "src", Parallelism: p}).
					AddVertex(topology.JobVertex{ID: "side", Parallelism: p}).
					AddVertex(topology.JobVertex{ID: "join", Parallelism: p}).
					ConnectPinned("src", "join", exchange.Forward, exchange.PipelinedBounded).
					ConnectPinned("side", "join", exchange.Forward, exchange.PipelinedBounded).
					ConnectPinned("src", "side", exchange.Hash, exchange.Blocking))
				var rs *region.Regions
				require.NotPanics(t, func() { rs = region.FromJob(g, mode) })
				require.Equal(t, 1, rs.NumRegions())
				assert.Equal(t, 3*p, rs.Size(0))
				assert.Empty(t, rs.ConsumedGroups(0), "the region reads only what it produces itself")
				hash := rs.Topology().GroupsOf(2)
				var own []topology.GroupID
				for g := hash.Start; g < hash.End; g++ {
					own = append(own, topology.GroupID(g))
				}
				assert.Equal(t, own, rs.AllConsumedGroups(0), "... which AllConsumedGroups lists")
				assert.Empty(t, rs.ProducedGroups(0))
				assert.Empty(t, rs.ProducerRegions(0))
				assert.Empty(t, rs.ConsumerRegions(0))
				assert.Equal(t, p, rs.SlotCount(0))
				assert.Equal(t, p, rs.MinimumSlots())
			})
		}
	}
}

// TestCrossRegionGroup: a blocking pointwise block whose producers lie in
// two regions, one of which also consumes it (FLINK-22017). No cycle, so
// no merge; the consumer region comes after the other producer region.
//
//	W(2) -rescale pipelined-> P(3): W#0 feeds P#0, P#1; W#1 feeds P#2
//	W(2) -forward pipelined-> Q(2)
//	P(3) -rescale blocking-> Q(2):  Q#0 reads P#0; Q#1 reads P#1, P#2
func TestCrossRegionGroup(t *testing.T) {
	g := build(t, topology.NewBuilder("cross").
		AddVertex(topology.JobVertex{ID: "W", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "P", Parallelism: 3}).
		AddVertex(topology.JobVertex{ID: "Q", Parallelism: 2}).
		ConnectPinned("W", "P", exchange.Rescale, exchange.Pipelined).
		ConnectPinned("W", "Q", exchange.Forward, exchange.Pipelined).
		ConnectPinned("P", "Q", exchange.Rescale, exchange.Blocking))
	rs := region.FromJob(g, exchange.AllBlocking)
	require.Equal(t, 2, rs.NumRegions())
	assert.Equal(t, []string{"W#0", "P#0", "P#1", "Q#0"}, memberNames(rs, rs.Members(0)))
	assert.Equal(t, []string{"W#1", "P#2", "Q#1"}, memberNames(rs, rs.Members(1)))

	et := rs.Topology()
	blocks := et.GroupsOf(2)
	require.Equal(t, 2, blocks.Len())
	inner, cross := topology.GroupID(blocks.Start), topology.GroupID(blocks.Start+1)
	assert.False(t, rs.IsCrossRegion(inner), "P#0 -> Q#0 stays inside region 0")
	assert.True(t, rs.IsCrossRegion(cross))
	assert.Equal(t, []region.ID{0, 1}, rs.GroupProducerRegions(cross))
	assert.Equal(t, []region.ID{1}, rs.GroupConsumerRegions(cross))

	assert.Empty(t, rs.ConsumedGroups(0))
	assert.Equal(t, []topology.GroupID{inner}, rs.AllConsumedGroups(0), "region 0 reads its own inner block")
	assert.Equal(t, []topology.GroupID{cross}, rs.ProducedGroups(0))
	assert.Equal(t, []topology.GroupID{cross}, rs.ConsumedGroups(1))
	assert.Equal(t, []topology.GroupID{cross}, rs.AllConsumedGroups(1))
	assert.Empty(t, rs.ProducedGroups(1), "region 1 is the only consumer of what it produces")
	assert.Equal(t, []region.ID{0}, rs.ProducerRegions(1))
	assert.Equal(t, []region.ID{1}, rs.ConsumerRegions(0))
	assert.Empty(t, rs.ProducerRegions(0))
	assert.Empty(t, rs.ConsumerRegions(1))
}

func TestPinnedExchangeWinsOverTheMode(t *testing.T) {
	base := func() *topology.Builder {
		return topology.NewBuilder("pinned").
			AddVertex(topology.JobVertex{ID: "A", Parallelism: 2}).
			AddVertex(topology.JobVertex{ID: "B", Parallelism: 2}).
			AddVertex(topology.JobVertex{ID: "C", Parallelism: 4}).
			AddVertex(topology.JobVertex{ID: "D", Parallelism: 4})
	}
	t.Run("blocking pinned in all-pipelined", func(t *testing.T) {
		g := build(t, base().
			ConnectPinned("A", "B", exchange.Forward, exchange.Blocking).
			Connect("B", "C", exchange.Rescale).
			Connect("C", "D", exchange.Hash))
		assert.Equal(t, 1, g.BlockingEdges(exchange.AllPipelined))
		rs := region.FromJob(g, exchange.AllPipelined)
		require.Equal(t, 3, rs.NumRegions())
		assert.Equal(t, []string{"A#0"}, memberNames(rs, rs.Members(0)))
		assert.Equal(t, []string{"A#1"}, memberNames(rs, rs.Members(1)))
		assert.Equal(t, 10, rs.Size(2))
		assert.Equal(t, []region.ID{0, 1}, rs.ProducerRegions(2))
		assert.Equal(t, 4, rs.MinimumSlots())
	})
	for _, pt := range []exchange.ResultPartitionType{exchange.Pipelined, exchange.PipelinedBounded} {
		t.Run(pt.String()+" pinned in all-blocking", func(t *testing.T) {
			g := build(t, base().
				Connect("A", "B", exchange.Forward).
				Connect("B", "C", exchange.Rescale).
				ConnectPinned("C", "D", exchange.Hash, pt))
			assert.Equal(t, 2, g.BlockingEdges(exchange.AllBlocking))
			rs := region.FromJob(g, exchange.AllBlocking)
			require.Equal(t, 5, rs.NumRegions(), "A#0, A#1, B#0, B#1 and {C, D}")
			last := region.ID(4)
			assert.Equal(t, []string{"C#0", "C#1", "C#2", "C#3", "D#0", "D#1", "D#2", "D#3"}, memberNames(rs, rs.Members(last)))
			assert.Equal(t, 4, rs.SlotCount(last))
			assert.Equal(t, []region.ID{2, 3}, rs.ProducerRegions(last))
		})
	}
}

// TestSlotSharingGroupsAddUp: two groups in one pipelined region need the
// sum of their per-group bounds; the explicit slots never mix groups.
func TestSlotSharingGroupsAddUp(t *testing.T) {
	gpu := resource.New(1000, 1024).WithExtended("gpu", 1)
	cpu := resource.New(500, 512)
	g := build(t, topology.NewBuilder("ssg").
		AddVertex(topology.JobVertex{ID: "read", Parallelism: 3, SlotSharingGroup: "io", Resources: cpu}).
		AddVertex(topology.JobVertex{ID: "infer", Parallelism: 2, SlotSharingGroup: "gpu", Resources: gpu}).
		AddVertex(topology.JobVertex{ID: "write", Parallelism: 3, SlotSharingGroup: "io", Resources: cpu, Unbounded: true}).
		Connect("read", "infer", exchange.Hash).
		Connect("infer", "write", exchange.Rebalance))

	one := region.FromJob(g, exchange.AllPipelined)
	require.Equal(t, 1, one.NumRegions())
	assert.Equal(t, 3+2, one.SlotCount(0), "io needs 3, gpu needs 2")
	assert.Equal(t, 5, one.MinimumSlots())

	slots := one.Slots(0)
	require.Len(t, slots, 5)
	perGroup := map[string]int{}
	for _, s := range slots {
		perGroup[s.SlotSharingGroup]++
		switch s.SlotSharingGroup {
		case "io":
			assert.Equal(t, cpu.Add(cpu), s.Profile, "one read and one write subtask: %v", memberNames(one, s.Members))
			assert.True(t, s.Unbounded, "a write subtask never finishes")
		case "gpu":
			assert.Equal(t, gpu, s.Profile)
			assert.False(t, s.Unbounded)
		}
	}
	assert.Equal(t, map[string]int{"io": 3, "gpu": 2}, perGroup)

	// The same job in one group needs only max(3, 2, 3) = 3 slots.
	same := build(t, topology.NewBuilder("one-group").
		AddVertex(topology.JobVertex{ID: "read", Parallelism: 3}).
		AddVertex(topology.JobVertex{ID: "infer", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "write", Parallelism: 3}).
		Connect("read", "infer", exchange.Hash).
		Connect("infer", "write", exchange.Rebalance))
	assert.Equal(t, 3, region.FromJob(same, exchange.AllPipelined).MinimumSlots())

	// Blocking: every subtask alone, one slot each, whatever its group.
	blocking := region.FromJob(g, exchange.AllBlocking)
	assert.Equal(t, 8, blocking.NumRegions())
	assert.Equal(t, 1, blocking.MinimumSlots())
}

// TestSlotsPlaceConsumersWithTheirProducers: a consumer goes into the slot
// of its pipelined producer (forward, aligned all-to-all, rescale).
func TestSlotsPlaceConsumersWithTheirProducers(t *testing.T) {
	g := build(t, topology.NewBuilder("locality").
		AddVertex(topology.JobVertex{ID: "A", Parallelism: 4}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 4}).
		AddVertex(topology.JobVertex{ID: "C", Parallelism: 4}).
		AddVertex(topology.JobVertex{ID: "D", Parallelism: 2}).
		// Declared consumers first: placement follows the topological order.
		Connect("C", "D", exchange.Rescale).
		Connect("B", "C", exchange.Forward).
		Connect("A", "B", exchange.Hash))
	rs := region.FromJob(g, exchange.AllPipelined)
	require.Equal(t, 1, rs.NumRegions())
	slots := rs.Slots(0)
	require.Len(t, slots, 4)
	want := [][]string{
		{"A#0", "B#0", "C#0", "D#0"},
		{"A#1", "B#1", "C#1"},
		{"A#2", "B#2", "C#2", "D#1"},
		{"A#3", "B#3", "C#3"},
	}
	for i, s := range slots {
		assert.Equal(t, want[i], memberNames(rs, s.Members), "slot %d", i)
	}
}

func TestSlotsOfSingleSubtaskRegions(t *testing.T) {
	prof := resource.New(250, 128)
	g := build(t, topology.NewBuilder("single").
		AddVertex(topology.JobVertex{ID: "A", Parallelism: 3, Resources: prof, SlotSharingGroup: "x"}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 2}).
		Connect("A", "B", exchange.Hash))
	rs := region.FromJob(g, exchange.AllBlocking)
	require.Equal(t, 5, rs.NumRegions())
	for r := range region.ID(5) {
		slots := rs.Slots(r)
		require.Len(t, slots, 1)
		assert.Equal(t, rs.Members(r), slots[0].Members)
	}
	assert.Equal(t, prof, rs.Slots(0)[0].Profile)
	assert.Equal(t, "x", rs.Slots(0)[0].SlotSharingGroup)
	assert.True(t, rs.Slots(4)[0].Profile.IsUnknown())
	assert.Equal(t, "default", rs.Slots(4)[0].SlotSharingGroup)
}

func TestTopologicalOrderFollowsBlockingEdgesNotDeclaration(t *testing.T) {
	// Declared sink first: region ids must still put producers first.
	g := build(t, topology.NewBuilder("order").
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "mid", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 1}).
		Connect("mid", "sink", exchange.Hash).
		Connect("src", "mid", exchange.Rescale))
	rs := region.FromJob(g, exchange.AllBlocking)
	require.Equal(t, 4, rs.NumRegions())
	got := make([]string, 0, 4)
	for r := range region.ID(4) {
		got = append(got, memberNames(rs, rs.Members(r))...)
	}
	assert.Equal(t, []string{"src#0", "mid#0", "mid#1", "sink#0"}, got)
	assert.Equal(t, []region.ID{1, 2}, rs.ProducerRegions(3))
	assert.Equal(t, []region.ID{1, 2}, rs.ConsumerRegions(0))
}
