package summary_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/runfile"
)

func TestCompareNames(t *testing.T) {
	names := []string{"j10", "etl", "j2", "j01", "j1", "adhoc", "j1a", "spark-2", "spark-10", "j"}
	slices.SortFunc(names, summary.CompareNames)
	assert.Equal(t, []string{"adhoc", "etl", "j", "j01", "j1", "j1a", "j2", "j10", "spark-2", "spark-10"}, names)
	for _, a := range names {
		assert.Zero(t, summary.CompareNames(a, a), a)
		for _, b := range names {
			assert.Equal(t, -summary.CompareNames(a, b), summary.CompareNames(b, a), "%s %s", a, b)
		}
	}

	tasks := []string{"j10:driver", "j2:b#0", "j10:a#1", "j2:a#0", "j10:a#0"}
	summary.SortByJob(tasks)
	assert.Equal(t, []string{"j2:b#0", "j2:a#0", "j10:driver", "j10:a#1", "j10:a#0"}, tasks, "by job, each job's tasks as they were")
}

// The verdict names jobs in the order of their names, whatever the order
// of the jobs given.
func TestJobsVerdictNamesInNameOrder(t *testing.T) {
	killed := func(name string, at int64) summary.Job {
		return summary.Job{Name: name, Finished: time.Duration(at) * ms, Verdict: runfile.Killed, Reason: "killed: by bob"}
	}
	failed := func(name string) summary.Job {
		return summary.Job{Name: name, Verdict: runfile.Failed, Reason: "failed: region 0 failed"}
	}
	jobs := []summary.Job{killed("j10", 300), {Name: "ok", Finished: 100 * ms}, killed("j2", 500)}
	want := "finished: 1 of 3 jobs finished at 100 ms, j2 killed at 500 ms, j10 killed at 300 ms"
	for range 2 {
		line, ok := summary.JobsVerdict(jobs, "")
		assert.True(t, ok)
		assert.Equal(t, want, line)
		slices.Reverse(jobs)
	}
	jobs = []summary.Job{failed("z"), failed("b10"), failed("b9")}
	for range 2 {
		line, _ := summary.JobsVerdict(jobs, "")
		assert.Equal(t, "failed: 3 of 3 jobs: b9 failed: region 0 failed; b10 failed: region 0 failed; z failed: region 0 failed", line)
		slices.Reverse(jobs)
	}
}
