package strategy_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// hybridJob is src(p) -ship-> sink(c), the edge pinned to pt.
func hybridJob(t testing.TB, p, c int, ship exchange.ShipStrategy, pt exchange.ResultPartitionType) *topology.JobGraph {
	t.Helper()
	g, err := topology.NewBuilder("hybrid").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: p}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: c}).
		ConnectPinned("src", "sink", ship, pt).
		Build()
	require.NoError(t, err)
	return g
}

// deployRegion reports region r (of one member) deploying and returns
// the regions that became ready.
func deployRegion(t testing.TB, s *strategy.Strategy, r region.ID) []string {
	t.Helper()
	n, d, err := s.MarkDeploying(r)
	require.NoError(t, err)
	require.Equal(t, s.Regions().Size(r), n)
	return deployedStrings(s, d)
}

// finishVertex reports the vertex named name finished in its current
// attempt and returns the regions that became ready.
func finishVertex(t testing.TB, s *strategy.Strategy, name string) []string {
	t.Helper()
	v := vertexByName(t, s, name)
	st, err := s.Vertex(v)
	require.NoError(t, err)
	d, err := s.UpdateState(v, st.Attempt, strategy.TaskFinished)
	require.NoError(t, err)
	return deployedStrings(s, d)
}

// TestHybridFullConsumableOnceProducersDeployed: a full hybrid consumer
// is scheduled when every producer region is deployed, not before and
// without waiting for any finish; the first report of a member
// (deploying, running or finished) deploys its region as MarkDeploying
// does.
func TestHybridFullConsumableOnceProducersDeployed(t *testing.T) {
	for _, ship := range []exchange.ShipStrategy{exchange.Hash, exchange.Forward} {
		t.Run(ship.String(), func(t *testing.T) {
			s := strategy.New(region.FromJob(hybridJob(t, 2, 2, ship, exchange.HybridFull), exchange.AllBlocking))
			d, err := s.Start()
			require.NoError(t, err)
			require.Equal(t, []string{"{src#0}", "{src#1}"}, deployedStrings(s, d))

			got := deployRegion(t, s, regionByName(t, s, "src#0"))
			if ship == exchange.Forward {
				assert.Equal(t, []string{"{sink#0}"}, got, "forward: sink#0 reads src#0 alone")
			} else {
				assert.Empty(t, got, "hash: src#1 is not deployed")
			}
			_, d, err = s.MarkDeploying(regionByName(t, s, "src#0"))
			require.NoError(t, err)
			assert.True(t, d.IsEmpty(), "deployed once")

			d, err = s.UpdateState(vertexByName(t, s, "src#1"), 0, strategy.TaskRunning)
			require.NoError(t, err)
			want := []string{"{sink#0}", "{sink#1}"}
			if ship == exchange.Forward {
				want = []string{"{sink#1}"}
			}
			assert.Equal(t, want, deployedStrings(s, d), "a running report deploys the region")
			for _, name := range []string{"src#0", "src#1", "sink#0", "sink#1"} {
				assert.Empty(t, finishVertex(t, s, name))
			}
			assert.True(t, s.Finished())
		})
	}
}

// TestHybridSelectiveShare: a selective hybrid consumer of 4 producers is
// scheduled once every producer is deployed and ceil(share * 4) of them
// finished; the default share is 0.5, and an invalid one leaves it.
func TestHybridSelectiveShare(t *testing.T) {
	tests := []struct {
		share float64 // 0: no option
		need  int
	}{
		{0.1, 1}, {0.25, 1}, {0.26, 2}, {0.5, 2}, {0.75, 3}, {1, 4}, {0, 2}, {-1, 2}, {math.NaN(), 2}, {1.5, 2},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.share), func(t *testing.T) {
			var opts []strategy.Option
			if tc.share != 0 {
				opts = append(opts, strategy.WithSelectiveShare(tc.share))
			}
			s := strategy.New(region.FromJob(hybridJob(t, 4, 2, exchange.Rebalance, exchange.HybridSelective), exchange.AllBlocking), opts...)
			_, err := s.Start()
			require.NoError(t, err)
			// src#0 finishes before the others are deployed: not enough.
			assert.Empty(t, finishVertex(t, s, "src#0"))
			for i := 1; i < 4; i++ {
				got := deployRegion(t, s, regionByName(t, s, fmt.Sprintf("src#%d", i)))
				if tc.need == 1 && i == 3 {
					assert.Equal(t, []string{"{sink#0}", "{sink#1}"}, got, "the last producer deployed")
				} else {
					assert.Empty(t, got, "src#%d deployed", i)
				}
			}
			for i := 1; i < 4; i++ {
				got := finishVertex(t, s, fmt.Sprintf("src#%d", i))
				if i+1 == tc.need {
					assert.Equal(t, []string{"{sink#0}", "{sink#1}"}, got, "%d finished", i+1)
				} else {
					assert.Empty(t, got, "%d finished", i+1)
				}
			}
		})
	}
}

// TestValidateSelectiveShare: the valid shares are (0, 1]; anything else is a
// *ShareError naming the share and the range.
func TestValidateSelectiveShare(t *testing.T) {
	for _, ok := range []float64{1e-9, 0.5, 1} {
		assert.NoError(t, strategy.ValidateSelectiveShare(ok), "%v", ok)
	}
	for _, bad := range []float64{0, -0.5, 1.0000001, 2, math.NaN(), math.Inf(1)} {
		err := strategy.ValidateSelectiveShare(bad)
		require.ErrorIs(t, err, strategy.ErrInvalidShare, "%v", bad)
		var se *strategy.ShareError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, fmt.Sprint(bad), fmt.Sprint(se.Share))
		assert.Contains(t, err.Error(), "more than 0 and at most 1")
	}
}

// TestHybridFinishBeforeProducerIsRefused: a consumer's finish before a
// hybrid producer's is refused with an *EarlyFinishError naming both, and
// changes nothing; after the producer's finish it is accepted.
func TestHybridFinishBeforeProducerIsRefused(t *testing.T) {
	for _, pt := range []exchange.ResultPartitionType{exchange.HybridFull, exchange.HybridSelective} {
		t.Run(pt.String(), func(t *testing.T) {
			s := strategy.New(region.FromJob(hybridJob(t, 2, 1, exchange.Hash, pt), exchange.AllBlocking), strategy.WithSelectiveShare(0.5))
			_, err := s.Start()
			require.NoError(t, err)
			deployRegion(t, s, regionByName(t, s, "src#1"))
			finishVertex(t, s, "src#0")
			sink := vertexByName(t, s, "sink#0")
			st, err := s.Vertex(sink)
			require.NoError(t, err)
			require.Equal(t, strategy.TaskScheduled, st.State, "the sink may start")
			_, err = s.UpdateState(sink, 0, strategy.TaskRunning)
			require.NoError(t, err)

			before := snapshot(t, s)
			d, err := s.UpdateState(sink, 0, strategy.TaskFinished)
			require.ErrorIs(t, err, strategy.ErrEarlyFinish)
			assert.True(t, d.IsEmpty())
			var ee *strategy.EarlyFinishError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, "sink#0", ee.Name)
			assert.Equal(t, "src#1", ee.ProducerName, "the producer that has not finished")
			assert.Equal(t, pt, ee.Exchange)
			assert.Equal(t, fmt.Sprintf("strategy: finish before a hybrid producer finished: sink#0 (id 2) reads src#1 (id 1) "+
				"through a %s exchange, and src#1 has not finished; report its finish first", pt), err.Error())
			assert.Equal(t, before, snapshot(t, s), "a refused finish changes nothing")

			finishVertex(t, s, "src#1")
			d, err = s.UpdateState(sink, 0, strategy.TaskFinished)
			require.NoError(t, err)
			assert.Len(t, d.Release, 2, "both partitions are released with their last consumer")
			assert.True(t, s.Finished())
		})
	}
}

// TestHybridFailover: a failed hybrid producer restarts its region and
// every consumer region (those running read it live); a failed full
// hybrid consumer restarts alone and may start again at once; a selective
// one that read live restarts the producers (and so their consumers),
// unless it started once they had all finished (share 1).
func TestHybridFailover(t *testing.T) {
	setup := func(t *testing.T, pt exchange.ResultPartitionType, share float64, finishFirst int) *strategy.Strategy {
		s := strategy.New(region.FromJob(hybridJob(t, 2, 2, exchange.Hash, pt), exchange.AllBlocking), strategy.WithSelectiveShare(share))
		_, err := s.Start()
		require.NoError(t, err)
		deployRegion(t, s, regionByName(t, s, "src#0"))
		deployRegion(t, s, regionByName(t, s, "src#1"))
		for i := range finishFirst {
			finishVertex(t, s, fmt.Sprintf("src#%d", i))
		}
		for _, name := range []string{"sink#0", "sink#1"} {
			st, err := s.Vertex(vertexByName(t, s, name))
			require.NoError(t, err)
			require.Equal(t, strategy.TaskScheduled, st.State, "%s may start", name)
			deployRegion(t, s, regionByName(t, s, name))
		}
		return s
	}
	restartOf := func(t *testing.T, s *strategy.Strategy, failed string) []string {
		v := vertexByName(t, s, failed)
		st, err := s.Vertex(v)
		require.NoError(t, err)
		_, err = s.UpdateState(v, st.Attempt, strategy.TaskFailed)
		require.NoError(t, err)
		regions, err := s.RegionsToRestart(v)
		require.NoError(t, err)
		return regionStrings(s, regions)
	}

	t.Run("full producer", func(t *testing.T) {
		s := setup(t, exchange.HybridFull, 1, 0)
		restart := restartOf(t, s, "src#0")
		assert.Equal(t, []string{"{src#0}", "{sink#0}", "{sink#1}"}, restart)
		regions, _ := s.RegionsToRestart(vertexByName(t, s, "src#0"))
		d, err := s.Restart(regions)
		require.NoError(t, err)
		assert.Equal(t, []string{"{src#0}"}, deployedStrings(s, d), "the sinks wait for src#0 to be deployed again")
		assert.Equal(t, []string{"{sink#0}", "{sink#1}"}, deployRegion(t, s, regionByName(t, s, "src#0")))
	})
	t.Run("full consumer", func(t *testing.T) {
		s := setup(t, exchange.HybridFull, 1, 0)
		assert.Equal(t, []string{"{sink#1}"}, restartOf(t, s, "sink#1"))
		d, err := s.Restart([]region.ID{regionByName(t, s, "sink#1")})
		require.NoError(t, err)
		assert.Equal(t, []string{"{sink#1}@1"}, attemptStrings(s, d), "the srcs are deployed: it starts again at once")
	})
	t.Run("selective consumer read live", func(t *testing.T) {
		s := setup(t, exchange.HybridSelective, 0.5, 1)
		assert.Equal(t, []string{"{src#0}", "{src#1}", "{sink#0}", "{sink#1}"}, restartOf(t, s, "sink#1"),
			"src#1 ran when sink#1 started: both producers, and their other consumer")
	})
	t.Run("selective consumer read nothing live", func(t *testing.T) {
		s := setup(t, exchange.HybridSelective, 1, 2)
		assert.Equal(t, []string{"{sink#1}"}, restartOf(t, s, "sink#1"), "every src had finished when it started")
	})
	t.Run("selective producer", func(t *testing.T) {
		s := setup(t, exchange.HybridSelective, 0.5, 1)
		assert.Equal(t, []string{"{src#0}", "{src#1}", "{sink#0}", "{sink#1}"}, restartOf(t, s, "src#1"),
			"the sinks read src#1 live, so src#0 restarts with them")
	})
}

// TestSelectiveFailoverRestartsOnlyWhatWasReadLive: a consumer of two
// selective results, one complete when it started (persisted whole) and
// one still being written (read live), restarts the producers of the one
// it read live only.
func TestSelectiveFailoverRestartsOnlyWhatWasReadLive(t *testing.T) {
	g, err := topology.NewBuilder("two-inputs").
		AddVertex(topology.JobVertex{ID: "Y", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "X", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "C", Parallelism: 1}).
		ConnectPinned("X", "C", exchange.Hash, exchange.HybridSelective).
		ConnectPinned("Y", "C", exchange.Hash, exchange.HybridSelective).
		Build()
	require.NoError(t, err)
	s := strategy.New(region.FromJob(g, exchange.AllBlocking), strategy.WithSelectiveShare(0.5))
	_, err = s.Start()
	require.NoError(t, err)
	for _, name := range []string{"Y#0", "X#0", "X#1"} {
		deployRegion(t, s, regionByName(t, s, name))
	}
	finishVertex(t, s, "Y#0")
	finishVertex(t, s, "X#0")
	c := vertexByName(t, s, "C#0")
	st, err := s.Vertex(c)
	require.NoError(t, err)
	require.Equal(t, strategy.TaskScheduled, st.State, "C may start: Y complete, half of X finished")
	deployRegion(t, s, regionByName(t, s, "C#0"))
	_, err = s.UpdateState(c, st.Attempt, strategy.TaskFailed)
	require.NoError(t, err)
	regions, err := s.RegionsToRestart(c)
	require.NoError(t, err)
	assert.Equal(t, []string{"{X#0}", "{X#1}", "{C#0}"}, regionStrings(s, regions),
		"X#1 was running when C started: X's producers restart; Y's result was complete, and stays")
}

// attemptStrings renders the deployed regions of d with their attempts.
func attemptStrings(s *strategy.Strategy, d strategy.Decisions) []string {
	var out []string
	for _, dep := range d.Deploy {
		out = append(out, fmt.Sprintf("%s@%d", regionString(s, dep.Region), dep.Attempt))
	}
	return out
}

// TestHybridCrossRegionGroup: in crossJob with the S -> T edge hybrid,
// T#0's region {S#0 X#0 T#0} reads a group that S#0 (its own member) and
// S#1 (the other region) write. It waits only for the other region's
// deployment (full), or for the others' finishes too (selective, share 1:
// one finish is all the other region can give it); T#0 still never
// finishes before S#0 and S#1.
func TestHybridCrossRegionGroup(t *testing.T) {
	job := func(t *testing.T, pt exchange.ResultPartitionType) *topology.JobGraph {
		g, err := topology.NewBuilder("cross-hybrid").
			AddVertex(topology.JobVertex{ID: "S", Parallelism: 4}).
			AddVertex(topology.JobVertex{ID: "X", Parallelism: 3}).
			AddVertex(topology.JobVertex{ID: "T", Parallelism: 2}).
			ConnectPinned("S", "X", exchange.Rescale, exchange.PipelinedBounded).
			ConnectPinned("X", "T", exchange.Rescale, exchange.PipelinedBounded).
			ConnectPinned("S", "T", exchange.Rescale, pt).
			Build()
		require.NoError(t, err)
		return g
	}
	for _, pt := range []exchange.ResultPartitionType{exchange.HybridFull, exchange.HybridSelective} {
		t.Run(pt.String(), func(t *testing.T) {
			s := strategy.New(region.FromJob(job(t, pt), exchange.AllBlocking), strategy.WithSelectiveShare(1))
			rs := s.Regions()
			require.Equal(t, 2, rs.NumRegions())
			own, other := regionByName(t, s, "T#0"), regionByName(t, s, "S#1")
			require.Equal(t, own, regionByName(t, s, "S#0"))
			require.NotEqual(t, own, other)
			g := rs.ConsumedGroups(own)
			require.Len(t, g, 1)
			require.True(t, rs.IsCrossRegion(g[0]))

			d, err := s.Start()
			require.NoError(t, err)
			assert.Equal(t, []string{regionString(s, other)}, deployedStrings(s, d), "the other region reads nothing from outside")
			got := deployRegion(t, s, other)
			if pt == exchange.HybridFull {
				assert.Equal(t, []string{regionString(s, own)}, got)
			} else {
				assert.Empty(t, got)
				assert.Empty(t, finishVertex(t, s, "S#2"))
				assert.Empty(t, finishVertex(t, s, "S#3"))
				assert.Equal(t, []string{regionString(s, own)}, finishVertex(t, s, "S#1"),
					"S#1 is the one partition of the group the other region writes")
			}
			deployRegion(t, s, own)
			if pt == exchange.HybridFull {
				for _, name := range []string{"S#1", "S#2", "S#3"} {
					finishVertex(t, s, name)
				}
			}
			_, err = s.UpdateState(vertexByName(t, s, "T#0"), 0, strategy.TaskFinished)
			var ee *strategy.EarlyFinishError
			require.ErrorAs(t, err, &ee, "T#0 before S#0")
			assert.Equal(t, "S#0", ee.ProducerName)
			for _, name := range []string{"S#0", "X#0", "T#0", "X#1", "X#2", "T#1"} {
				finishVertex(t, s, name)
			}
			assert.True(t, s.Finished())
		})
	}
}

// TestHybridGroupReadByItsOnlyProducerRegion: X(3) -rescale-> T(4) is
// hybrid, and the pipelined edges S -> X and S -> T glue X#0 with T#0 in
// one region, which writes the group {T#0, T#1} alone and reads it too
// (not as an input: only its own partition). That region's finish must
// not count the group as an input of its own, so restarting it (and the
// region of T#1) after everything finished leaves it ready at once.
func TestHybridGroupReadByItsOnlyProducerRegion(t *testing.T) {
	for _, pt := range []exchange.ResultPartitionType{exchange.HybridFull, exchange.HybridSelective} {
		t.Run(pt.String(), func(t *testing.T) {
			g, err := topology.NewBuilder("own-hybrid").
				AddVertex(topology.JobVertex{ID: "S", Parallelism: 4}).
				AddVertex(topology.JobVertex{ID: "X", Parallelism: 3}).
				AddVertex(topology.JobVertex{ID: "T", Parallelism: 4}).
				ConnectPinned("S", "X", exchange.Rescale, exchange.PipelinedBounded).
				ConnectPinned("S", "T", exchange.Forward, exchange.PipelinedBounded).
				ConnectPinned("X", "T", exchange.Rescale, pt).
				Build()
			require.NoError(t, err)
			s := strategy.New(region.FromJob(g, exchange.AllBlocking), strategy.WithSelectiveShare(0.5))
			rs := s.Regions()
			own := regionByName(t, s, "X#0")
			require.Equal(t, own, regionByName(t, s, "T#0"))
			require.Empty(t, rs.ConsumedGroups(own), "its own partition is no input")

			d, err := s.Start()
			require.NoError(t, err)
			assert.Len(t, finishAll(t, s, d), rs.NumRegions())
			require.True(t, s.Finished())

			all := make([]region.ID, rs.NumRegions())
			for r := range all {
				all[r] = region.ID(r)
			}
			d, err = s.Restart(all)
			require.NoError(t, err)
			assert.Contains(t, deployedStrings(s, d), regionString(s, own), "the region that writes and reads the group is ready again")
			st, err := s.Region(own)
			require.NoError(t, err)
			assert.Zero(t, st.UnsatisfiedInputs)
		})
	}
}
