package simulator_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/jobgen"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// fuzzJobs are the jobs FuzzSimulate draws: bounded, pinned exchanges and
// the cross-region motif included, so the scheduler meets every shape.
var fuzzJobs = jobgen.Options{
	Vertices:     jobgen.IntRange{Min: 1, Max: 7},
	Parallelism:  jobgen.IntRange{Min: 1, Max: 6},
	ShuffleOrder: true,
	Density:      jobgen.FloatRange{Min: 0.2, Max: 0.6},
	ForwardRate:  0.4,
	PinRates:     []float64{0, 0.3},
	PinTypes:     jobgen.AllPinTypes(),
	Groups:       []string{"default", "other"},
	GroupRate:    0.3,
	Motifs:       []jobgen.Motif{jobgen.ForwardTriangle, jobgen.RescaleTriangle},
	MotifRate:    0.25,
	Duration:     jobgen.DurationRange{Min: 100 * time.Millisecond, Max: 900 * time.Millisecond, Step: 100 * time.Millisecond},
}

// FuzzSimulate drives the whole pipeline (job, regions, strategy, slot
// pool, scheduler, simulator) on generated jobs: with at least
// MinimumSlots slots the region policy always finishes and its trace keeps
// every invariant, also with an injected failure; the eager baseline
// always returns (finished or deadlock), never hangs or errs.
func FuzzSimulate(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed, uint8(seed), uint8(0), uint16(0))
		f.Add(seed, uint8(4+seed%2), uint8(seed%3), uint16(100*seed)) // hybrid modes
	}
	f.Fuzz(func(t *testing.T, seed uint64, modeIdx, extraSlots uint8, failAt uint16) {
		rng := rand.New(rand.NewPCG(seed, 0xf022))
		job, err := jobgen.Generate(rng, fuzzJobs)
		require.NoError(t, err)
		rs := region.FromJob(job, exchange.Modes()[int(modeIdx)%len(exchange.Modes())])
		cluster := []resource.Count{{Profile: resource.Unknown, N: rs.MinimumSlots() + int(extraSlots%3)}}
		cfg := simulator.Config{Regions: rs, Cluster: cluster, Seed: seed, Ties: tiesFor(seed), Record: true, MaxEvents: 1 << 20}
		if failAt > 0 {
			// A failure point within the victim's duration (one at or
			// beyond it never fires, and Run refuses it).
			topo := rs.Topology()
			victim := topology.ExecutionVertexID(rng.IntN(topo.NumExecutionVertices()))
			after := time.Duration(failAt) * time.Millisecond
			if vx := topo.Job().Vertex(topo.JobVertexOf(victim)); !vx.Unbounded {
				after %= vx.Duration
			}
			cfg.Failures = []simulator.Failure{{Task: victim, After: after}}
		}
		res := run(t, cfg)
		require.Equal(t, runfile.Finished, res.Verdict, "%s\n%s", res.Reason, describeJob(job))
		_, err = checkTrace(rs, cluster, simulator.RegionPolicy, res)
		require.NoError(t, err, describeJob(job))

		cfg.Policy = simulator.EagerPolicy
		res = run(t, cfg)
		require.Contains(t, []runfile.Verdict{runfile.Finished, runfile.Deadlock}, res.Verdict, res.Reason)
	})
}
