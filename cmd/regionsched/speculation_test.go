package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const stragglersPath = "../../examples/jobs/stragglers.json"

func TestSimulateSpeculationSummary(t *testing.T) {
	res := execCLI(t, "", "simulate", "--slots", "80", "--stragglers", "0.05", "--speculation", "--seed", "2", stragglersPath)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "makespan:          450000 ms")
	assert.Contains(t, res.stdout, "stragglers:        10 attempts ran 10x slower (--stragglers 0.05)\n")
	assert.Contains(t, res.stdout, "speculation:       10 speculative attempts started (10 asked for), 10 won; 600 s of slot time in them\n")
	assert.Contains(t, res.stdout, "without it:        makespan 1800000 ms: speculation saved 1350000 ms (75.0%); slot time 4.42 slot-hours against 5.50 slot-hours (-19.7%)\n")

	// Without --speculation: no comparison, the stragglers only.
	res = execCLI(t, "", "simulate", "--slots", "80", "--stragglers", "0.05", "--seed", "2", stragglersPath)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "makespan:          1800000 ms")
	assert.NotContains(t, res.stdout, "speculation:")
}

func TestSimulateSpeculationTraceShowsAttemptsAndWinners(t *testing.T) {
	res := execCLI(t, "", "simulate", "--slots", "80", "--stragglers", "0.05", "--speculation", "--trace", "-", stragglersPath)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, `"event": "speculate"`)
	assert.Contains(t, res.stdout, `"event": "win"`)
	assert.Contains(t, res.stdout, `"speculative": true`)
	assert.Contains(t, res.stderr, "speculation:", "the summary goes to standard error")
}

func TestSimulateSpeculationBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--speculation-baseline-ratio", "0.5"}, "--speculation-baseline-ratio: needs --speculation"},
		{[]string{"--speculation", "--speculation-baseline-ratio", "2"}, "BaselineRatio 2 (valid: 0 ... 1)"},
		{[]string{"--speculation", "--speculation-max-concurrent-executions", "1"}, "MaxConcurrentExecutions 1 (valid: 2 ... 1024)"},
		{[]string{"--speculation", "--speculation-check-interval", "0s"}, "CheckInterval 0s (valid: more than 0)"},
		{[]string{"--stragglers", "1.5"}, "--stragglers 1.5: a share of attempts, 0 ... 1"},
		{[]string{"--straggler-factor", "0.5"}, "--straggler-factor 0.5: 1 ... 1000"},
		{[]string{"--speculation", "--policy", "eager"}, "--speculation: needs --policy region"},
		// Several jobs (or --queue-policy) take the same checks.
		{[]string{"--speculation", "--queue-policy", "fifo", "--speculation-baseline-ratio", "2"}, "BaselineRatio 2 (valid: 0 ... 1)"},
		{[]string{"--speculation", "--queue-policy", "fifo", "--policy", "eager"}, "--speculation: needs --policy region"},
		{[]string{"--queue-policy", "fifo", "--stragglers", "1.5"}, "--stragglers 1.5: a share of attempts, 0 ... 1"},
	} {
		args := append(append([]string{"simulate", "--slots", "4"}, tc.args...), stragglersPath)
		res := execCLI(t, "", args...)
		assert.Equal(t, 2, res.code, strings.Join(tc.args, " "))
		assert.Contains(t, res.stderr, tc.want)
	}
}

func TestClusterFileNodes(t *testing.T) {
	cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 40, "node": "a"}, {"count": 40, "node": "b"}]}`)
	res := execCLI(t, "", "simulate", "--cluster", cluster, "--stragglers", "0.05", "--speculation", stragglersPath)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "speculation:")

	bad := writeTemp(t, "bad.json", `{"slots": [{"count": 2, "node": "a b"}]}`)
	res = execCLI(t, "", "simulate", "--cluster", bad, stragglersPath)
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, `field "slots[0].node": "a b" is not a node name`)
}

// Speculation on a job whose every task shares a pipelined region is bad
// input naming why.
func TestSpeculationWithoutASpeculableTask(t *testing.T) {
	requireBadInput(t, execCLI(t, "", "simulate", "--speculation", "--mode", "all-pipelined", "--slots", "4", flip119Path),
		"no task is alone in its region, reading blocking or full hybrid results and writing blocking or full hybrid ones")
	// In all-hybrid-selective mode every task reads or writes a
	// selective hybrid result.
	requireBadInput(t, execCLI(t, "", "simulate", "--speculation", "--mode", "all-hybrid-selective", "--slots", "4", tpcdsPath),
		"reads or writes a selective hybrid result")
}

// In all-hybrid-full mode every task of the TPC-DS-like job is
// speculable, and its consumers read its results only once finished.
// Under Flink's defaults (a baseline of at least a minute) no task of
// seconds is ever slow, and reading only finished results costs the
// overlap of hybrid exchanges; with the lower bound and check interval
// scaled to tasks of seconds, the stragglers are beaten.
func TestSimulateSpeculationHybridFull(t *testing.T) {
	base := []string{"simulate", "--mode", "all-hybrid-full", "--speculation", "--stragglers", "0.05", tpcdsPath, "--slots", "40"}
	res := execCLI(t, "", base...)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "stragglers:        2 attempts ran 10x slower (--stragglers 0.05)\n")
	assert.Contains(t, res.stdout, "speculation:       0 speculative attempts started (0 asked for), 0 won; 0 s of slot time in them\n")
	assert.Contains(t, res.stdout, "without it:        makespan 60000 ms: speculation saved -6800 ms (-11.3%); slot time 0.23 slot-hours against 0.21 slot-hours (+7.7%)\n")
	assert.Contains(t, res.stdout, "finished: all 40 tasks finished at 66800 ms")

	res = execCLI(t, "", append(base, "--speculation-baseline-lower-bound", "1s", "--speculation-check-interval", "100ms")...)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "speculation:       2 speculative attempts started (2 asked for), 1 won; 13 s of slot time in them\n")
	assert.Contains(t, res.stdout, "without it:        makespan 60000 ms: speculation saved 38200 ms (63.7%); slot time 0.08 slot-hours against 0.21 slot-hours (-61.7%)\n")
	assert.Contains(t, res.stdout, "finished: all 40 tasks finished at 21800 ms")
}

// With several jobs, speculative attempts ask the admission for their
// slots; the summary counts them for the run and per job, against the
// same run without speculation.
func TestSimulateJobsSpeculation(t *testing.T) {
	args := []string{"simulate", "--mode", "all-blocking", "--slots", "16", "--queue-policy", "fairshare", "--speculation",
		"--speculation-baseline-lower-bound", "0", "--stragglers", "0.05", "--seed", "7",
		"../../examples/jobs/etl-join.json", "../../examples/jobs/tpcds-q3.json", "../../examples/jobs/ml-feature-pipeline.json", stragglersPath}
	res := execCLI(t, "", args...)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "stragglers:        12 attempts ran 10x slower (--stragglers 0.05)\n")
	assert.Contains(t, res.stdout, "speculation:       9 speculative attempts started (10 asked for), 8 won; 780 s of slot time in them\n")
	assert.Contains(t, res.stdout, "without it:        makespan 2544000 ms: speculation saved 1110000 ms (43.6%); slot time 5.00 slot-hours against 5.55 slot-hours (-10.0%)\n")
	assert.Contains(t, res.stdout, `  job "stragglers": 9 speculative attempts, 8 won; makespan 1434000 ms with speculation, 2544000 ms without`+"\n")
	assert.Contains(t, res.stdout, `  job "tpcds-q3-like": 0 speculative attempts, 0 won; makespan 54900 ms with speculation, 54900 ms without`+"\n")
	assert.Contains(t, res.stdout, "finished: all 4 jobs finished at 1434000 ms\n")

	// The stragglers without speculation: no comparison.
	res = execCLI(t, "", slicesWithout(args, "--speculation", "--speculation-baseline-lower-bound", "0")...)
	require.Equal(t, 0, res.code, res.stderr)
	// (one speculative attempt was a straggler itself)
	assert.Contains(t, res.stdout, "stragglers:        11 attempts ran 10x slower (--stragglers 0.05)\n")
	assert.Contains(t, res.stdout, "finished: all 4 jobs finished at 2544000 ms\n")
	assert.NotContains(t, res.stdout, "speculation:")
}

// slicesWithout returns args without the arguments drop.
func slicesWithout(args []string, drop ...string) []string {
	var out []string
	for _, a := range args {
		keep := true
		for _, d := range drop {
			if a == d {
				keep = false
			}
		}
		if keep {
			out = append(out, a)
		}
	}
	return out
}
