package strategy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// The FLINK-17330 cycle is one region: it is deployed at start, finishes,
// and its internal blocking partitions are released when it finishes.
func TestCycleIsScheduledAndFinishes(t *testing.T) {
	for _, mode := range exchange.Modes() { // every edge is pinned: the mode changes nothing
		t.Run(mode.String(), func(t *testing.T) {
			rec := recorderFor(cycleJob(t), mode)
			require.Equal(t, 1, rec.Strategy().Regions().NumRegions(), "the cycle merges into one region")
			runStepsToEnd(t, rec, []step{
				{do: "start", deploy: []string{"{src#0 src#1 side#0 side#1 join#0 join#1}"}},
				{do: "src#0"},
				{do: "src#1"},
				{do: "side#0"},
				{do: "side#1"},
				{do: "join#0"},
				{do: "join#1", release: []string{"src#0->side", "src#1->side"}},
			})
		})
	}
}

// A cross-region group (FLINK-22017) does not block its consuming region:
// T#0's region also produces into the group, so it waits only for S#1.
func TestCrossRegionGroupWaitsOnlyForOutsideProducers(t *testing.T) {
	rec := recorderFor(crossJob(t), exchange.AllBlocking)
	s := rec.Strategy()
	rs := s.Regions()
	require.Equal(t, 2, rs.NumRegions())
	big, small := regionByName(t, s, "S#1"), regionByName(t, s, "T#0")
	require.Equal(t, "{S#1 S#2 S#3 X#1 X#2 T#1}", regionString(s, big))
	require.Equal(t, "{S#0 X#0 T#0}", regionString(s, small))
	topo := rs.Topology()
	blocking := topology.JobEdgeID(2) // S -> T
	require.Equal(t, exchange.Blocking, topo.PartitionType(blocking))
	g := topo.ConsumedGroup(blocking, 0) // T#0 reads S#0 and S#1
	require.True(t, rs.IsCrossRegion(g))
	require.Equal(t, []topology.GroupID{g}, rs.ConsumedGroups(small))

	runStepsToEnd(t, rec, []step{
		{do: "start", deploy: []string{"{S#1 S#2 S#3 X#1 X#2 T#1}"}},
		{do: "S#1", deploy: []string{"{S#0 X#0 T#0}"}}, // S#0 is unfinished, but inside the region
		{do: "S#0"},
		{do: "X#0"},
		{do: "T#0", release: []string{"S#0->T", "S#1->T"}},
		{do: "S#2"},
		{do: "S#3"},
		{do: "X#1"},
		{do: "X#2"},
		{do: "T#1", release: []string{"S#2->T", "S#3->T"}},
	})
}

// Restarting the producer side of a cross-region group makes the
// consuming region wait for it again, and only for it.
func TestCrossRegionGroupAfterRestart(t *testing.T) {
	rec := recorderFor(crossJob(t), exchange.AllBlocking)
	s := rec.Strategy()
	big, small := regionByName(t, s, "S#1"), regionByName(t, s, "T#0")
	_, err := rec.Start()
	require.NoError(t, err)
	_, err = rec.Report("S#1", strategy.TaskFinished)
	require.NoError(t, err)

	restart, err := rec.RegionsToRestart(vertexByName(t, s, "S#2"))
	require.NoError(t, err)
	require.Equal(t, []region.ID{big, small}, restart, "the small region consumes S#1's partition")
	d, err := rec.Restart(restart)
	require.NoError(t, err)
	assert.Equal(t, []string{"{S#1 S#2 S#3 X#1 X#2 T#1}"}, deployedStrings(s, d))
	st, err := s.Region(small)
	require.NoError(t, err)
	assert.Equal(t, strategy.RegionStatus{State: strategy.RegionWaiting, Attempt: 1, UnsatisfiedInputs: 1, UnfinishedMembers: 3}, st)

	runStepsToEnd(t, rec, []step{
		{do: "S#2"},
		{do: "S#1", deploy: []string{"{S#0 X#0 T#0}"}},
		{do: "S#3"}, {do: "X#1"}, {do: "X#2"},
		{do: "T#1", release: []string{"S#2->T", "S#3->T"}},
		{do: "S#0"}, {do: "X#0"},
		{do: "T#0", release: []string{"S#0->T", "S#1->T"}},
	})
}
