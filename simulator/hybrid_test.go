package simulator_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/jobgen"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// TestHybridConsumerWorksBesideItsProducer: src (2 s) -hash-> sink (1 s).
// A full hybrid sink deployed beside its src works at once and finishes
// with it, as a pipelined one; a blocking one starts after it; with one
// slot the hybrid sink goes into its src's slot and still finishes with
// it, while without slot sharing it waits for the slot, as a blocking one
// does; a selective sink waits for its share of finished srcs.
func TestHybridConsumerWorksBesideItsProducer(t *testing.T) {
	job, err := topology.NewBuilder("two").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 1, Duration: 2 * time.Second}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1, Duration: time.Second}).
		Connect("src", "sink", exchange.Hash).
		Build()
	require.NoError(t, err)
	tests := []struct {
		mode      exchange.Mode
		slots     int
		noSharing bool
		makespan  time.Duration
	}{
		{exchange.AllBlocking, 2, false, 3 * time.Second},
		{exchange.AllPipelined, 2, false, 2 * time.Second},
		{exchange.AllHybridFull, 2, false, 2 * time.Second},
		{exchange.AllHybridFull, 1, false, 2 * time.Second},
		{exchange.AllHybridFull, 1, true, 3 * time.Second},
		{exchange.AllHybridSelective, 2, false, 3 * time.Second}, // its one src must finish first
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%v/%d/sharing=%t", tc.mode, tc.slots, !tc.noSharing), func(t *testing.T) {
			rs := region.FromJob(job, tc.mode)
			cluster := []resource.Count{{Profile: resource.Unknown, N: tc.slots}}
			res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Seed: 1, Record: true, DisableHybridSlotSharing: tc.noSharing})
			require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
			assert.Equal(t, tc.makespan, res.Makespan)
			requireTrace(t, rs, cluster, simulator.RegionPolicy, res)
			if tc.mode == exchange.AllHybridFull && tc.slots == 1 {
				slotOf := map[string]int{}
				for _, ev := range res.Events {
					if ev.Kind == runfile.Deploy {
						slotOf[ev.Task] = ev.Slot
						assert.Equal(t, ev.Task == "sink#0" && !tc.noSharing, ev.Shared, "%s deployed shared", ev.Task)
					}
				}
				assert.Equal(t, slotOf["src#0"], slotOf["sink#0"], "one slot")
			}
			if tc.mode == exchange.AllHybridFull && tc.slots == 2 {
				for _, ev := range res.Events {
					if ev.Task == "sink#0" && ev.Kind == runfile.Deploy {
						assert.Zero(t, ev.At, "the sink is deployed with its src")
					}
					if ev.Task == "sink#0" && ev.Kind == runfile.Finish {
						assert.Equal(t, 2*time.Second, ev.At, "its work is done at 1 s; it finishes with its src")
					}
				}
			}
		})
	}
}

// TestHybridFailoverInSimulation: src fails at 1 s while the full hybrid
// sink reads it live: both restart (the sink is canceled), and the job
// finishes; the trace keeps every invariant.
func TestHybridFailoverInSimulation(t *testing.T) {
	job, err := topology.NewBuilder("two").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 2, Duration: 2 * time.Second}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 2, Duration: time.Second}).
		Connect("src", "sink", exchange.Hash).
		Build()
	require.NoError(t, err)
	rs := region.FromJob(job, exchange.AllHybridFull)
	cluster := []resource.Count{{Profile: resource.Unknown, N: 4}}
	src0, err := rs.Topology().ParseVertexName("src#0")
	require.NoError(t, err)
	res := run(t, simulator.Config{Regions: rs, Cluster: cluster, Seed: 1, Record: true,
		Failures: []simulator.Failure{{Task: src0, After: time.Second}}})
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	requireTrace(t, rs, cluster, simulator.RegionPolicy, res)
	require.Len(t, res.Restarts, 1)
	assert.Equal(t, []region.ID{0, 2, 3}, res.Restarts[0].Regions, "src#0 and both sinks, which read it live")
	canceled := map[string]bool{}
	for _, ev := range res.Events {
		if ev.Kind == runfile.Cancel {
			canceled[ev.Task] = true
		}
	}
	assert.Equal(t, map[string]bool{"sink#0": true, "sink#1": true}, canceled)
	assert.Equal(t, 3*time.Second, res.Makespan, "src#0 runs again from 1 s to 3 s, the sinks beside it")
}

// hybridJobs are random bounded jobs with hybrid exchanges: pinned
// exchanges of every type (a third of the edges in some jobs), and the
// cross-region motif with its cut on a hybrid edge.
var hybridJobs = jobgen.Options{
	Vertices:     jobgen.IntRange{Min: 2, Max: 7},
	Parallelism:  jobgen.IntRange{Min: 1, Max: 6},
	ShuffleOrder: true,
	Density:      jobgen.FloatRange{Min: 0.2, Max: 0.6},
	ForwardRate:  0.4,
	PinRates:     []float64{0, 0.3},
	PinTypes:     jobgen.AllPinTypes(),
	Groups:       []string{"default", "other"},
	GroupRate:    0.3,
	Motifs:       []jobgen.Motif{jobgen.ForwardTriangle, jobgen.RescaleTriangle},
	MotifRate:    0.3,
	Duration:     jobgen.DurationRange{Min: 100 * time.Millisecond, Max: 900 * time.Millisecond, Step: 100 * time.Millisecond},
}

// TestRegionPolicyFinishesHybridJobsAtMinimumSlots is the oracle of the
// region policy on hybrid jobs: on exactly MinimumSlots slots (and one
// more) every random hybrid job finishes for every seed, tie order and
// selective share, with and without an injected failure, check calls it
// deadlock-free, and the trace keeps every invariant (no consumer
// deployed before its hybrid producers, none finishing before them).
func TestRegionPolicyFinishesHybridJobsAtMinimumSlots(t *testing.T) {
	cases, seeds := 300, 3
	if raceEnabled || testing.Short() {
		cases, seeds = 60, 2
	}
	rng := rand.New(rand.NewPCG(235, 2))
	withHybrid := 0
	for c := range cases {
		o := hybridJobs
		o.MotifCut = []exchange.ResultPartitionType{exchange.Blocking, exchange.HybridFull, exchange.HybridSelective}[rng.IntN(3)]
		job, err := jobgen.Generate(rng, o)
		require.NoError(t, err)
		mode := exchange.Modes()[rng.IntN(len(exchange.Modes()))]
		if rng.IntN(2) == 0 {
			mode = []exchange.Mode{exchange.AllHybridFull, exchange.AllHybridSelective}[rng.IntN(2)]
		}
		rs := region.FromJob(job, mode)
		if job.HybridEdges(mode) > 0 {
			withHybrid++
		}
		share := []float64{0.1, 0.5, 1}[rng.IntN(3)]
		cluster := []resource.Count{{Profile: resource.Unknown, N: rs.MinimumSlots() + rng.IntN(2)}}
		v := rs.Check(cluster, resource.FitsEveryDimension)
		desc := fmt.Sprintf("case %d: %s, mode %s, share %v, %d slots", c, describeJob(job), mode, share, cluster[0].N)
		require.True(t, v.Runnable, "%s: %s", desc, v.Reason)
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			cfg := simulator.Config{Regions: rs, Cluster: cluster, Seed: seed, Ties: tiesFor(seed), Record: true, SelectiveShare: share}
			if seed == 2 {
				topo := rs.Topology()
				x := topology.ExecutionVertexID(rng.IntN(topo.NumExecutionVertices()))
				d := job.Vertex(topo.JobVertexOf(x)).Duration
				cfg.Failures = []simulator.Failure{{Task: x, After: time.Duration(rng.Int64N(int64(d)))}}
			}
			res := run(t, cfg)
			require.Equal(t, runfile.Finished, res.Verdict, "%s, seed %d: %s", desc, seed, res.Reason)
			requireTrace(t, rs, cluster, simulator.RegionPolicy, res, "%s, seed %d", desc, seed)
		}
	}
	t.Logf("%d jobs, %d with hybrid edges", cases, withHybrid)
	assert.Greater(t, withHybrid, cases/2)
}

// TestSelectiveShareIsChecked: Run refuses a share outside (0, 1].
func TestSelectiveShareIsChecked(t *testing.T) {
	rs := region.FromJob(testjobs.FLIP119(t), exchange.AllHybridSelective)
	for _, bad := range []float64{-0.5, 1.5} {
		_, err := simulator.Run(simulator.Config{Regions: rs, Cluster: []resource.Count{{N: 4}}, SelectiveShare: bad})
		assert.ErrorIs(t, err, strategy.ErrInvalidShare)
	}
}

// tpcdsModes are the modes the TPC-DS-like benchmark compares.
var tpcdsModes = []exchange.Mode{exchange.AllBlocking, exchange.AllPipelined, exchange.AllHybridFull, exchange.AllHybridSelective}

// tpcdsRun simulates examples/jobs/tpcds-q3.json in mode on n slots, seed
// 1 (separate: without hybrid slot sharing).
func tpcdsRun(tb testing.TB, mode exchange.Mode, n int, separate ...bool) *simulator.Result {
	tb.Helper()
	rs := region.FromJob(testjobs.Load(tb, "tpcds-q3.json"), mode)
	res, err := simulator.Run(simulator.Config{Regions: rs, Cluster: []resource.Count{{Profile: resource.Unknown, N: n}}, Seed: 1,
		DisableHybridSlotSharing: len(separate) > 0 && separate[0]})
	require.NoError(tb, err)
	return res
}

// tpcdsEnough is the slots that run every subtask of the TPC-DS-like job
// at once; tpcdsTenth a tenth of them.
const tpcdsEnough, tpcdsTenth = 40, 4

// TestHybridTPCDSTargets holds the figures of docs/performance.md: on the
// TPC-DS-like job with enough slots, full hybrid's makespan is within 10%
// of all-pipelined's and at least 30% below all-blocking's, and with its
// consumers in their producers' slots it holds them for at most 60% of
// the slot time it needs without (within 10% of all-pipelined's); on a
// tenth of the slots hybrid finishes where all-pipelined cannot (its one
// region never fits).
func TestHybridTPCDSTargets(t *testing.T) {
	blocking := tpcdsRun(t, exchange.AllBlocking, tpcdsEnough)
	pipelined := tpcdsRun(t, exchange.AllPipelined, tpcdsEnough)
	hybrid := tpcdsRun(t, exchange.AllHybridFull, tpcdsEnough)
	for _, r := range []*simulator.Result{blocking, pipelined, hybrid} {
		require.Equal(t, runfile.Finished, r.Verdict, r.Reason)
	}
	assert.LessOrEqual(t, float64(hybrid.Makespan), 1.1*float64(pipelined.Makespan), "hybrid %v, pipelined %v", hybrid.Makespan, pipelined.Makespan)
	assert.LessOrEqual(t, float64(hybrid.Makespan), 0.7*float64(blocking.Makespan), "hybrid %v, blocking %v", hybrid.Makespan, blocking.Makespan)

	// Consumers in their producers' slots: the same makespan on about
	// half the slot time, close to all-pipelined's.
	separate := tpcdsRun(t, exchange.AllHybridFull, tpcdsEnough, true)
	require.Equal(t, runfile.Finished, separate.Verdict, separate.Reason)
	slotTime := func(r *simulator.Result) float64 { return r.Utilization * float64(r.Slots) * r.Makespan.Seconds() }
	assert.Equal(t, separate.Makespan, hybrid.Makespan)
	assert.Positive(t, hybrid.RegionsShared)
	assert.Less(t, slotTime(hybrid), 0.6*slotTime(separate), "slot time shared %.1f s, separate %.1f s", slotTime(hybrid), slotTime(separate))
	assert.LessOrEqual(t, slotTime(hybrid), 1.1*slotTime(pipelined))

	few := tpcdsRun(t, exchange.AllPipelined, tpcdsTenth)
	assert.Equal(t, runfile.Failed, few.Verdict, few.Reason)
	assert.Contains(t, few.Reason, "needs 16 slots at once")
	for _, mode := range []exchange.Mode{exchange.AllHybridFull, exchange.AllHybridSelective} {
		r := tpcdsRun(t, mode, tpcdsTenth)
		assert.Equal(t, runfile.Finished, r.Verdict, "%v: %s", mode, r.Reason)
	}
}

// BenchmarkHybridTPCDS simulates the TPC-DS-like job
// (examples/jobs/tpcds-q3.json: three scans, two hash shuffles into a
// join and an aggregate, a top-k) in the blocking, pipelined and hybrid
// modes side by side, seed 1, on enough slots to run every subtask at
// once (40) and on a tenth of them (4); the hybrid modes also without
// slot sharing ("-separate": consumers never go into their producers'
// slots). Each line reports the makespan in virtual ms (makespan-ms), or
// -1 when the job cannot run there, the slot time held in virtual
// seconds (slot-s) and the region deployments that went into shared
// slots (shared).
func BenchmarkHybridTPCDS(b *testing.B) {
	for _, n := range []int{tpcdsEnough, tpcdsTenth} {
		for _, mode := range tpcdsModes {
			for _, separate := range []bool{false, true} {
				if separate && !mode.IsHybrid() {
					continue
				}
				name := fmt.Sprintf("%v-slots%d", mode, n)
				if separate {
					name = fmt.Sprintf("%v-separate-slots%d", mode, n)
				}
				b.Run(name, func(b *testing.B) {
					var res *simulator.Result
					for b.Loop() {
						res = tpcdsRun(b, mode, n, separate)
					}
					makespan := float64(res.Makespan.Milliseconds())
					if res.Verdict != runfile.Finished {
						makespan = -1
					}
					b.ReportMetric(makespan, "makespan-ms")
					b.ReportMetric(res.Utilization*float64(res.Slots)*res.Makespan.Seconds(), "slot-s")
					b.ReportMetric(float64(res.RegionsShared), "shared")
				})
			}
		}
	}
}

// A region reading full hybrid results asks for slots once its producers
// are deployed, and the trace says so in order: every request of a
// consumer comes after the deploys of the producers it reads, within the
// instant too.
func TestHybridConsumersAskAfterTheirProducersDeploy(t *testing.T) {
	job, err := topology.NewBuilder("j1").
		AddVertex(topology.JobVertex{ID: "A", Parallelism: 4, Duration: 2 * time.Second}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 2, Duration: time.Second}).
		AddVertex(topology.JobVertex{ID: "C", Parallelism: 3, Duration: 500 * time.Millisecond}).
		Connect("A", "B", exchange.Rescale).
		Connect("B", "C", exchange.Hash).
		Build()
	require.NoError(t, err)
	for _, n := range []int{1, 2, 9} {
		res := run(t, simulator.Config{Regions: region.FromJob(job, exchange.AllHybridFull), Cluster: slots(n), Seed: 1, Record: true})
		require.Equal(t, runfile.Finished, res.Verdict)
		deployed := map[byte]int{}
		for i, e := range res.Events {
			switch e.Kind {
			case runfile.Deploy:
				deployed[e.Task[0]]++
			case runfile.Request:
				// (A#i reads nothing; B#0 reads A#0 and A#1, B#1 A#2 and A#3;
				// every C reads both Bs.)
				switch e.Task {
				case "B#0":
					require.GreaterOrEqual(t, deployed['A'], 2, "%d slots, event %d: %+v", n, i, e)
				case "B#1":
					require.GreaterOrEqual(t, deployed['A'], 4, "%d slots, event %d: %+v", n, i, e)
				}
				if e.Task[0] == 'C' {
					require.GreaterOrEqual(t, deployed['B'], 2, "%d slots, event %d: %+v", n, i, e)
				}
			}
		}
	}
}
