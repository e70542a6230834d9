package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tpcdsPath is the TPC-DS-like example: three scans hash-joined, an
// aggregate, a top-k.
const tpcdsPath = "../../examples/jobs/tpcds-q3.json"

// TestHybridModesOnTheTPCDSExample: on a tenth of the slots that run every
// subtask at once, check calls all-pipelined not runnable (its one region
// needs 16) and the hybrid modes deadlock-free (1 slot is their minimum),
// and simulate agrees: all-pipelined fails, hybrid finishes. With all 40
// slots, full hybrid overlaps producers and consumers as all-pipelined
// does.
func TestHybridModesOnTheTPCDSExample(t *testing.T) {
	pipelined := execCLI(t, "", "check", "--mode", "all-pipelined", "--slots", "4", tpcdsPath)
	assert.Equal(t, 1, pipelined.code, pipelined.stdout)
	assert.True(t, strings.HasPrefix(pipelined.stdout, "not runnable:"), pipelined.stdout)
	sim := execCLI(t, "", "simulate", "--mode", "all-pipelined", "--slots", "4", tpcdsPath)
	assert.Equal(t, 1, sim.code, sim.stdout)
	for _, mode := range []string{"ALL_EXCHANGES_HYBRID_FULL", "all-hybrid-selective"} {
		check := execCLI(t, "", "check", "--mode", mode, "--slots", "4", tpcdsPath)
		assert.Equal(t, 0, check.code, check.stdout)
		assert.True(t, strings.HasPrefix(check.stdout, "deadlock-free:"), check.stdout)
		sim := execCLI(t, "", "simulate", "--mode", mode, "--slots", "4", tpcdsPath)
		assert.Equal(t, 0, sim.code, sim.stdout+sim.stderr)
		assert.Contains(t, sim.stdout, "finished: all 40 tasks finished")
	}
	full := execCLI(t, "", "simulate", "--mode", "all-hybrid-full", "--slots", "40", tpcdsPath)
	require.Equal(t, 0, full.code, full.stderr)
	assert.Contains(t, full.stdout, "makespan:          6000 ms")
	sel := execCLI(t, "", "simulate", "--mode", "all-hybrid-selective", "--selective-share", "0.25", "--slots", "40", tpcdsPath)
	require.Equal(t, 0, sel.code, sel.stderr)
	assert.Contains(t, sel.stdout, "mode all-hybrid-selective (selective share 0.25)")
}

// TestSelectiveShareFlag: --selective-share takes a share in (0, 1]; any
// other value is bad input naming the flag and the valid range.
func TestSelectiveShareFlag(t *testing.T) {
	for _, bad := range []string{"0", "-1", "1.5", "NaN"} {
		requireBadInput(t, execCLI(t, "", "simulate", "--mode", "all-hybrid-selective", "--selective-share", bad, "--slots", "4", flip119Path),
			"--selective-share", "more than 0 and at most 1")
	}
	requireBadInput(t, execCLI(t, "", "simulate", "--selective-share", "x", "--slots", "4", flip119Path), "selective-share")
	ok := execCLI(t, "", "simulate", "--mode", "all-blocking", "--selective-share", "1", "--slots", "1", flip119Path)
	assert.Equal(t, 0, ok.code, ok.stderr)
	assert.NotContains(t, ok.stdout, "selective share", "no selective edge: the share is not shown")
}

// TestSelectiveShareWithSeveralJobs: the share holds for every job of a
// multi-job run. On 3 slots without slot sharing the second job's
// producers run in two waves: with a quarter of them finished its
// consumers start after the first wave, with all of them only after the
// second. With sharing (the default) they go into their producers'
// slots and both jobs finish at 3 s.
func TestSelectiveShareWithSeveralJobs(t *testing.T) {
	job := `{"name": "NAME", "vertices": [{"id": "A", "parallelism": 4, "durationMs": 1000}, {"id": "B", "parallelism": 2, "durationMs": 1000}],
 "edges": [{"source": "A", "target": "B", "shipStrategy": "hash"}]}`
	s1 := writeTemp(t, "s1.json", strings.Replace(job, "NAME", "s1", 1))
	s2 := writeTemp(t, "s2.json", strings.Replace(job, "NAME", "s2", 1))
	for share, want := range map[string]string{"0.25": `job "s2": submitted 0 ms, first deploy 1000 ms, finished 4000 ms`, "1": `job "s2": submitted 0 ms, first deploy 1000 ms, finished 5000 ms`} {
		res := execCLI(t, "", "simulate", "--mode", "all-hybrid-selective", "--selective-share", share, "--hybrid-slot-sharing=false", "--slots", "3", s1, s2)
		require.Equal(t, 0, res.code, res.stderr)
		assert.Contains(t, res.stdout, want, "share %s", share)
	}
	res := execCLI(t, "", "simulate", "--mode", "all-hybrid-selective", "--selective-share", "0.25", "--slots", "3", s1, s2)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, `job "s2": submitted 0 ms, first deploy 1000 ms, finished 3000 ms`)
	assert.Contains(t, res.stdout, "finished: all 2 jobs finished at 3000 ms")
}

// TestRegionsShowsHybridAndBlockingInputs: a region that reads blocking
// and hybrid results lists both kinds of producer regions, apart: the
// text after "hybrid", the JSON in consumes and consumesHybrid.
func TestRegionsShowsHybridAndBlockingInputs(t *testing.T) {
	job := writeTemp(t, "mixed.json", `{"name": "mixed", "vertices": [{"id": "A", "parallelism": 2}, {"id": "B", "parallelism": 1}, {"id": "C", "parallelism": 1}],
	 "edges": [{"source": "A", "target": "C", "shipStrategy": "hash", "exchange": "blocking"},
	           {"source": "B", "target": "C", "shipStrategy": "forward", "exchange": "hybrid"}]}`)
	res := execCLI(t, "", "regions", job)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "1 blocking logical edge, 1 hybrid logical edge")
	assert.Regexp(t, `(?m)^3\s+1\s+C#0\s+0-1; hybrid 2$`, res.stdout)
	out := regionsJSON(t, job)
	assert.Equal(t, 1, out.BlockingLogicalEdges)
	assert.Equal(t, 1, out.HybridLogicalEdges)
	assert.Equal(t, []int{0, 1}, out.Regions[3].Consumes)
	assert.Equal(t, []int{2}, out.Regions[3].ConsumesHybrid)
	res = execCLI(t, "", "regions", "--format", "json", job)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, `{"id": 3, "vertices": ["C#0"], "slots": 1, "consumes": [[0, 1]], "consumesHybrid": [[2, 2]]}`)
}

// TestRegionsJSONConsumesOnlyBlockingResults: under an all-hybrid mode no
// region reads a blocking result, so every consumes is empty and the
// producers are in consumesHybrid, on every region; a job without hybrid
// edges has no consumesHybrid (regionsJSON's invariants).
func TestRegionsJSONConsumesOnlyBlockingResults(t *testing.T) {
	const flip119 = "../../examples/jobs/flip119.json"
	for _, mode := range []string{"all-hybrid-full", "all-hybrid-selective"} {
		out := regionsJSON(t, "--mode", mode, flip119)
		require.Equal(t, 3, out.HybridLogicalEdges)
		require.Len(t, out.Regions, 12)
		want := [][]int{{}, {}, {0}, {1}, {2}, {2}, {3}, {3}, {4, 5, 6, 7}, {4, 5, 6, 7}, {4, 5, 6, 7}, {4, 5, 6, 7}}
		for i, r := range out.Regions {
			assert.Equal(t, []int{}, r.Consumes, "%s region %d", mode, i)
			assert.Equal(t, want[i], r.ConsumesHybrid, "%s region %d", mode, i)
		}
	}
	out := regionsJSON(t, "--mode", "all-blocking", flip119)
	assert.Zero(t, out.HybridLogicalEdges)
	for _, r := range out.Regions {
		assert.Nil(t, r.ConsumesHybrid, "region %d", r.ID)
	}
	res := execCLI(t, "", "regions", "--format", "json", flip119)
	require.Equal(t, 0, res.code, res.stderr)
	assert.NotContains(t, res.stdout, "consumesHybrid")
}
