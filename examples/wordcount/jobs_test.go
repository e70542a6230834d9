package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/examples/wordcount/internal/engine"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
)

// runJobsChecked runs cfg and checks every job: it finished with exactly
// the single-job reference, released every blocking partition, and the
// slots were never overused; no temporary file is left.
func runJobsChecked(t *testing.T, cfg engine.JobsConfig) *engine.JobsResult {
	t.Helper()
	cfg.TempDir = t.TempDir()
	res, err := engine.RunJobs(testContext(t), cfg)
	require.NoError(t, err)
	require.Len(t, res.Jobs, len(cfg.Jobs))
	want := reference(cfg.Text, cfg.TopK)
	for i, jr := range res.Jobs {
		require.Equal(t, cfg.Jobs[i].Name, jr.Name)
		require.Equal(t, multijob.Finished, jr.Outcome, "%s: %v", jr.Name, jr.Err)
		require.Equal(t, want, jr.Counts, "%s's result", jr.Name)
		assert.Equal(t, blockingPartitions(cfg.Job, cfg.Mode), jr.PartitionsReleased, "%s's blocking partitions released", jr.Name)
		assert.LessOrEqual(t, firstDeploy(t, jr), jr.Ended, jr.Name)
	}
	assert.Positive(t, res.PeakSlots)
	assert.LessOrEqual(t, res.PeakSlots, cfg.Slots)
	left, _ := os.ReadDir(cfg.TempDir)
	assert.Empty(t, left, "files left in the temporary directory")
	return res
}

// jobSpecs names n jobs wc-1 ... wc-n.
func jobSpecs(n int) []engine.JobSpec {
	out := make([]engine.JobSpec, n)
	for i := range out {
		out[i].Name = jobName(i + 1)
	}
	return out
}

// TestJobsEveryPolicy runs 4 jobs at once on 2 slots under each queue
// policy, in a mode of 1-slot regions and in one of 2-slot regions with
// pipelined edges, one job with an injected failure: every job finishes
// with the single-job result.
func TestJobsEveryPolicy(t *testing.T) {
	job, lines := wordcountJob(t), text(t)
	for _, policy := range []admission.Policy{admission.FIFO, admission.Priority, admission.FairShare, admission.StateAware} {
		for _, mode := range []exchange.Mode{exchange.AllBlocking, exchange.PointwisePipelinedOnly} {
			t.Run(policy.String()+"/"+mode.String(), func(t *testing.T) {
				t.Parallel()
				jobs := jobSpecs(4)
				for i := range jobs {
					jobs[i].Priority = 1000 * (i + 1)
				}
				jobs[1].Fail = []string{"counter#1"}
				res := runJobsChecked(t, engine.JobsConfig{
					Config: engine.Config{Job: job, Mode: mode, Slots: 2, Text: lines, TopK: 10},
					Jobs:   jobs, Policy: policy,
				})
				checkFailover(t, &res.Jobs[1].Result, "counter#1")
				for _, jr := range res.Jobs {
					assert.LessOrEqual(t, jr.PeakSlots, 2, jr.Name)
				}
			})
		}
	}
}

// firstDeploy returns when a job was first deployed, failing the test if
// it never was.
func firstDeploy(t *testing.T, jr engine.JobResult) time.Duration {
	t.Helper()
	at, ok := jr.FirstDeploy()
	require.True(t, ok, "%s was never deployed", jr.Name)
	return at
}

// TestJobsPriorityDecidesFirstGrant: the jobs are submitted as one
// instant, so on 2 slots the priority policy deploys the high-priority
// job first although it was submitted second; fifo deploys the first.
func TestJobsPriorityDecidesFirstGrant(t *testing.T) {
	job, lines := wordcountJob(t), text(t)
	for policy, first := range map[admission.Policy]int{admission.Priority: 1, admission.FIFO: 0} {
		t.Run(policy.String(), func(t *testing.T) {
			t.Parallel()
			jobs := jobSpecs(2)
			jobs[0].Priority, jobs[1].Priority = 1000, 9000
			res := runJobsChecked(t, engine.JobsConfig{
				Config: engine.Config{Job: job, Mode: exchange.AllBlocking, Slots: 2, Text: lines, TopK: 5},
				Jobs:   jobs, Policy: policy,
			})
			winner, other := res.Jobs[first], res.Jobs[1-first]
			assert.Less(t, firstDeploy(t, winner), firstDeploy(t, other), "%s deploys first under %s", winner.Name, policy)
			assert.Equal(t, []int{1000, 9000}, []int{res.Jobs[0].Priority, res.Jobs[1].Priority})
		})
	}
}

// jobsTimelineLine is a region attempt of the standard error of --jobs:
// job, region, attempt, deploy, end, outcome, slots, tasks.
var jobsTimelineLine = regexp.MustCompile(`(?m)^(wc-\d+) +(\d+) +(\d+) +([\d.]+)ms +([\d.]+)ms +(\S.*?) +\[[\d ]+\] +(\S.*)$`)

// jobsSummaryLine is a job's summary line: job, priority, submitted,
// first deploy, ended, outcome, deployments, failovers, restarts, peak
// slots.
var jobsSummaryLine = regexp.MustCompile(`(?m)^(wc-\d+) +(\d+) +([\d.]+)ms +([\d.]+)ms +([\d.]+)ms +(\w+) +(\d+) +(\d+) +(\d+) +(\d+)$`)

// millis parses a "12.3" of the timeline.
func millis(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	_, err := fmt.Sscan(s, &f)
	require.NoError(t, err)
	return f
}

// TestCLIJobsFairShareConcurrent: two equal jobs on 4 slots under fair
// share both make progress at once: each is deployed before the other
// ended, and a region of one runs while a region of the other does (the
// first decision gives each job 2 of the 4 slots).
func TestCLIJobsFairShareConcurrent(t *testing.T) {
	code, out, errOut := runCLI(t, "--jobs", "2", "--slots", "4", "--queue-policy", "fairshare", "--top", "5")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "== wc-1 ==\n"+formatted(t, 5)+"== wc-2 ==\n"+formatted(t, 5), out)
	assert.Contains(t, errOut, "queue policy fairshare")

	type span struct{ from, to float64 }
	runs := map[string][]span{}
	for _, l := range jobsTimelineLine.FindAllStringSubmatch(errOut, -1) {
		assert.Equal(t, "finished", l[6], l[0])
		runs[l[1]] = append(runs[l[1]], span{millis(t, l[4]), millis(t, l[5])})
	}
	require.Len(t, runs["wc-1"], 15, errOut)
	require.Len(t, runs["wc-2"], 15, errOut)
	overlap := false
	for _, a := range runs["wc-1"] {
		for _, b := range runs["wc-2"] {
			overlap = overlap || (a.from < b.to && b.from < a.to)
		}
	}
	assert.True(t, overlap, "no region of wc-1 ran while one of wc-2 did:\n%s", errOut)

	summary := map[string][]string{}
	for _, l := range jobsSummaryLine.FindAllStringSubmatch(errOut, -1) {
		summary[l[1]] = l
	}
	require.Len(t, summary, 2, errOut)
	for job, other := range map[string]string{"wc-1": "wc-2", "wc-2": "wc-1"} {
		assert.Equal(t, "finished", summary[job][6])
		assert.Less(t, millis(t, summary[job][4]), millis(t, summary[other][5]), "%s deployed before %s ended", job, other)
	}
}

// TestCLIJobs runs three jobs of different priorities on 2 slots, one
// with an injected failure: each job's result follows its header, the
// timeline is tagged by job, and the summary has a line per job.
func TestCLIJobs(t *testing.T) {
	code, out, errOut := runCLI(t, "--jobs", "3", "--slots", "2", "--mode", "pointwise-pipelined-only",
		"--queue-policy", "priority", "--priorities", "1000,5000,9000", "--fail", "wc-2:counter#1")
	require.Equal(t, 0, code, errOut)
	var want strings.Builder
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&want, "== wc-%d ==\n%s", i, formatted(t, 10))
	}
	assert.Equal(t, want.String(), out)
	assert.True(t, strings.HasPrefix(errOut,
		"3 jobs of wordcount in pointwise-pipelined-only mode: 7 regions each, at least 2 slots; 2 slots; queue policy priority\n"), errOut)

	attempts := map[string]int{}
	for _, l := range jobsTimelineLine.FindAllStringSubmatch(errOut, -1) {
		attempts[l[1]]++
		if strings.HasPrefix(l[6], "failed") {
			assert.Equal(t, []string{"wc-2", "failed: counter#1"}, []string{l[1], l[6]}, l[0])
			assert.Contains(t, l[7], "counter#1")
		}
	}
	assert.Equal(t, map[string]int{"wc-1": 7, "wc-2": 8, "wc-3": 7}, attempts, errOut)

	summary := jobsSummaryLine.FindAllStringSubmatch(errOut, -1)
	require.Len(t, summary, 3, errOut)
	for i, l := range summary {
		assert.Equal(t, []string{jobName(i + 1), fmt.Sprint(1000 + 4000*i), "finished"}, []string{l[1], l[2], l[6]})
		failovers := "0"
		if i == 1 {
			failovers = "1"
		}
		assert.Equal(t, failovers, l[8], l[0])
	}
	released := 3 * blockingPartitions(wordcountJob(t), exchange.PointwisePipelinedOnly)
	assert.Regexp(t, fmt.Sprintf(`(?m)^at most [12] slots in use, %d blocking partitions released$`, released), errOut)
}

// TestCLIOneJob: --jobs 1 is the single-job program, whatever the policy;
// --fail may name the one job.
func TestCLIOneJob(t *testing.T) {
	code, out, errOut := runCLI(t, "--jobs", "1", "--queue-policy", "fairshare", "--slots", "2",
		"--mode", "pointwise-pipelined-only", "--fail", "wc-1:counter#1")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, formatted(t, 10), out)
	assert.Len(t, timelineLine.FindAllString(errOut, -1), 8, errOut)
	assert.NotContains(t, errOut, "wc-1")
}

// TestCLIJobsErrors: bad --jobs, --queue-policy, --priorities or --fail
// exit 2 naming the culprit (and the valid values); jobs that can never
// run on the slots are rejected, each with the admission's verdict, exit 1.
func TestCLIJobsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msgs []string
	}{
		{[]string{"--jobs", "0"}, 2, []string{"--jobs 0: must be at least 1"}},
		{[]string{"--jobs", "-3"}, 2, []string{"--jobs -3"}},
		{[]string{"--jobs", "2", "--queue-policy", "lifo"}, 2, []string{`"lifo"`, "valid: fifo, priority, fairshare, stateaware"}},
		{[]string{"--jobs", "2", "--priorities", "1,2,3"}, 2, []string{"--priorities", "3 values for 2 jobs"}},
		{[]string{"--jobs", "2", "--priorities", "100,high"}, 2, []string{`"high" for wc-2`, "1 ... 10000"}},
		{[]string{"--jobs", "2", "--priorities", "0,5"}, 2, []string{`"0" for wc-1`}},
		{[]string{"--jobs", "2", "--fail", "counter#1"}, 2, []string{"--fail", "wc-1:counter#1"}},
		{[]string{"--jobs", "2", "--fail", "wc-3:counter#1"}, 2, []string{`no job "wc-3"`}},
		{[]string{"--jobs", "2", "--fail", "wc-2:counter#9"}, 2, []string{"wc-2", "counter#9"}},
		{[]string{"--fail", "wc-2:counter#1"}, 2, []string{`no job "wc-2"`}},
		{[]string{"--jobs", "2", "--mode", "all-pipelined", "--slots", "3"}, 1,
			[]string{"wordcount: wc-1: admission: job rejected", "wordcount: wc-2: admission: job rejected", "needs 4 slots at once"}},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		assert.Empty(t, out, tc.args)
		for _, msg := range tc.msgs {
			assert.Contains(t, errOut, msg, tc.args)
		}
	}
}

// TestRunJobsBadConfig: no jobs, a job without a name, two of one name, a
// run-wide Fail or a bad subtask of one job are refused before anything
// runs.
func TestRunJobsBadConfig(t *testing.T) {
	base := engine.Config{Job: wordcountJob(t), Slots: 2, Text: text(t)}
	named := func(names ...string) []engine.JobSpec {
		out := make([]engine.JobSpec, len(names))
		for i, n := range names {
			out[i].Name = n
		}
		return out
	}
	withFail := base
	withFail.Fail = []string{"counter#1"}
	for msg, cfg := range map[string]engine.JobsConfig{
		"no jobs":                  {Config: base},
		"job 2 has no name":        {Config: base, Jobs: named("a", "")},
		`two jobs named "a"`:       {Config: base, Jobs: named("a", "a")},
		"takes no Config.Fail":     {Config: withFail, Jobs: named("a", "b")},
		"job b: --fail":            {Config: base, Jobs: []engine.JobSpec{{Name: "a"}, {Name: "b", Fail: []string{"nothing#0"}}}},
		"slots must be at least 1": {Config: engine.Config{Job: base.Job, Text: base.Text}, Jobs: named("a")},
	} {
		res, err := engine.RunJobs(testContext(t), cfg)
		assert.Nil(t, res, msg)
		assert.ErrorContains(t, err, msg)
	}
}
