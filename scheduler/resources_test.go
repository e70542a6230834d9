package scheduler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

var (
	small  = resource.New(500, 512)
	medium = resource.New(1000, 1024)
	large  = resource.New(4000, 8192)
)

// mixedJob has two slot sharing groups with different profiles:
// group "etl": S(2, small) -forward pipelined-> M(2, small), shared slots
// of 2 x small = {1000m, 1024MB}; group "ml": M -hash blocking->
// G(2, large) -forward pipelined-> K(2, medium), shared slots of large +
// medium; and K -hash-> W(1, small) back in "etl" (blocking but in
// all-pipelined mode, where W joins the "ml" region with an etl slot).
func mixedJob(t testing.TB) *topology.JobGraph {
	return build(t, topology.NewBuilder("mixed").
		AddVertex(topology.JobVertex{ID: "S", Parallelism: 2, SlotSharingGroup: "etl", Resources: small}).
		AddVertex(topology.JobVertex{ID: "M", Parallelism: 2, SlotSharingGroup: "etl", Resources: small}).
		AddVertex(topology.JobVertex{ID: "G", Parallelism: 2, SlotSharingGroup: "ml", Resources: large}).
		AddVertex(topology.JobVertex{ID: "K", Parallelism: 2, SlotSharingGroup: "ml", Resources: medium}).
		AddVertex(topology.JobVertex{ID: "W", Parallelism: 1, SlotSharingGroup: "etl", Resources: small}).
		ConnectPinned("S", "M", exchange.Forward, exchange.Pipelined).
		ConnectPinned("M", "G", exchange.Hash, exchange.Blocking).
		ConnectPinned("G", "K", exchange.Forward, exchange.PipelinedBounded).
		Connect("K", "W", exchange.Hash))
}

// TestSlotsOfDifferentSizes: on a cluster with slots of exactly the
// profiles the regions need (and a few larger ones), every deploy goes
// into a slot whose profile serves its region slot's profile (the fake
// checks it on every Deploy), and the job finishes, in every mode and
// under both matchings where the cluster allows.
func TestSlotsOfDifferentSizes(t *testing.T) {
	job := mixedJob(t)
	etl := small.Add(small)
	ml := large.Add(medium)
	for _, mode := range modes() {
		rs := region.FromJob(job, mode)
		for _, sl := range rs.Slots(rs.RegionOf(0)) {
			require.Equal(t, etl, sl.Profile, "S and M share a slot")
		}
		for _, m := range []resource.Matching{resource.FitsEveryDimension, resource.ExactMatch} {
			// Two slots of each needed profile, plus one larger slot that
			// serves anything (used only under FitsEveryDimension).
			cluster := []resource.Profile{etl, etl, ml, ml, small, medium, large}
			if m == resource.FitsEveryDimension {
				cluster = []resource.Profile{etl, ml, ml.Add(ml), small}
			}
			counts := resource.Tally(cluster)
			v := rs.Check(counts, m)
			if !v.Runnable {
				t.Logf("%v %v: not runnable on %v: %s", mode, m, counts, v.Reason)
				continue
			}
			for seed := uint64(1); seed <= 10; seed++ {
				h := newHarness(t, rs, Config{Pool: slotpool.Config{Matching: m}}, seed)
				h.setCapacity(counts)
				h.offer(h.sized(cluster...)...)
				h.start()
				h.drive()
				require.Equal(t, JobFinished, h.s.State(), "%v %v seed %d: %v", mode, m, seed, h.s.Err())
				h.checkClean()
				for _, d := range h.f.deploys {
					need := h.f.slotProfOfV[d.V]
					assert.True(t, m.Serves(h.f.slotProfile[d.Slot], need))
				}
			}
		}
	}
}

// TestSmallSlotsNeverServeLargeRegion: the "ml" region's slots need
// {5000m, 9216MB}; a cluster of only etl-sized slots can never run it,
// with a declared capacity the job fails as soon as it asks.
func TestSmallSlotsNeverServeLargeRegion(t *testing.T) {
	rs := region.FromJob(mixedJob(t), exchange.AllBlocking)
	etl := small.Add(small)
	cluster := []resource.Profile{etl, etl, etl, etl}
	v := rs.Check(resource.Tally(cluster), resource.FitsEveryDimension)
	require.False(t, v.Runnable)
	h := newHarness(t, rs, Config{}, 1)
	h.setCapacity(resource.Tally(cluster))
	h.offer(h.sized(cluster...)...)
	h.start()
	h.drive()
	requireRegionError(t, h, v.Region, true)
	for _, d := range h.f.deploys {
		assert.True(t, resource.FitsEveryDimension.Serves(h.f.slotProfile[d.Slot], h.f.slotProfOfV[d.V]))
	}
	h.checkClean()
}
