package simulator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
)

// Four example jobs on 16 slots under fair share, 5% of attempts 10
// times slower: with speculation (a speculative attempt asks the
// admission for its slot) against the same run without. The figures of
// docs/cli.md:
//
//	regionsched simulate --mode all-blocking --slots 16 --queue-policy fairshare \
//	  --speculation --speculation-baseline-lower-bound 0 --stragglers 0.05 --seed 7 \
//	  examples/jobs/etl-join.json examples/jobs/tpcds-q3.json \
//	  examples/jobs/ml-feature-pipeline.json examples/jobs/stragglers.json
func TestJobsSpeculationFigures(t *testing.T) {
	var jobs []runfile.Job
	for _, f := range []string{"etl-join.json", "tpcds-q3.json", "ml-feature-pipeline.json", "stragglers.json"} {
		g := testjobs.Load(t, f)
		jobs = append(jobs, runfile.Job{Name: g.Name(), Job: g})
	}
	sp := scheduler.DefaultSpeculation()
	sp.BaselineLowerBound = 0
	cfg := JobsConfig{Jobs: jobs, Mode: exchange.AllBlocking, Cluster: []resource.Count{{Profile: resource.Unknown, N: 16}},
		DefaultPolicy: admission.FairShare, Seed: 7, Stragglers: 0.05, Speculation: sp}
	with, withJobs, without, withoutJobs, err := CompareJobsSpeculation(cfg)
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, with.Verdict, with.Reason)
	require.Equal(t, runfile.Finished, without.Verdict, without.Reason)

	ms := func(rs []JobResult) []time.Duration {
		out := make([]time.Duration, len(rs))
		for i, r := range rs {
			out[i] = r.Makespan()
		}
		return out
	}
	s := time.Millisecond
	assert.Equal(t, []time.Duration{39500 * s, 54900 * s, 366800 * s, 1434000 * s}, ms(withJobs))
	assert.Equal(t, []time.Duration{39500 * s, 54900 * s, 366800 * s, 2544000 * s}, ms(withoutJobs))
	assert.Equal(t, SpeculationSummary{Requested: 10, Started: 9, Won: 8, SlotTime: 780 * time.Second, Stragglers: 12}, with.Speculation)
	assert.Equal(t, 9, withJobs[3].SpeculativeStarted)
	assert.Equal(t, 8, withJobs[3].SpeculativeWon)
	// Slot time: 5.00 slot-hours with speculation, 5.55 without.
	assert.InDelta(t, 5.00, with.SlotTime.Hours(), 0.005)
	assert.InDelta(t, 5.55, without.SlotTime.Hours(), 0.005)

	// Speculation under the eager policy, or an invalid setting, is refused.
	cfg.Policy = EagerPolicy
	_, _, err = RunJobs(cfg)
	require.ErrorIs(t, err, ErrSpeculationPolicy)
	cfg.Policy, cfg.Speculation.BaselineRatio = RegionPolicy, 2
	_, _, err = RunJobs(cfg)
	var se *scheduler.SpeculationError
	require.ErrorAs(t, err, &se)
}
