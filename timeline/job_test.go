package timeline_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/timeline"
)

// jobsPicture runs the driver flood under the queue policy and draws it
// coloured by job.
func jobsPicture(t *testing.T, policy admission.Policy, extraJobs ...string) (*simulator.Result, svgStats, string) {
	t.Helper()
	jobs := floodJobs(t)
	res, _, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Mode: exchange.AllBlocking,
		Cluster: []resource.Count{{Profile: resource.Unknown, N: 4}}, DefaultPolicy: policy, Record: true})
	require.NoError(t, err)
	var names []string
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	tl := timeline.Timeline{Title: "flood", Slots: res.Slots, Makespan: res.Makespan, Events: res.Events,
		Verdict: res.Verdict, Reason: res.Reason, ColorBy: timeline.ColorByJob, Jobs: append(names, extraJobs...)}
	var buf bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, tl))
	st := parseSVG(t, bytes.NewReader(buf.Bytes()))
	assertTextsInside(t, st)
	return res, st, buf.String()
}

// TestWriteSVGColorByJob: tasks of different jobs with the same names are
// told apart (one bar per deploy), every job has a colour in the legend
// (even one that never ran), drivers are marked and labelled.
func TestWriteSVGColorByJob(t *testing.T) {
	res, st, svg := jobsPicture(t, admission.StateAware, "never-ran")
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	assert.Equal(t, countKind(res.Events, runfile.Deploy), st.bars, "one bar per deploy, though every job has a scan#0")
	assert.Equal(t, 4, strings.Count(svg, `<g class="driver">`))
	for _, want := range []string{"colour = job:", "spark-1", "spark-2", "spark-3", "spark-4", "never-ran",
		"driver (job master) in its job's colour", "spark-1 driver"} {
		assert.Contains(t, st.texts, want)
	}
	// task bars are titled job:task, drivers by their job
	jobs := map[string]bool{}
	for _, title := range st.titles {
		if job, _, ok := strings.Cut(title, ":"); ok && !strings.HasPrefix(title, "driver") {
			jobs[job] = true
		}
	}
	assert.Len(t, jobs, 4)
	for _, title := range st.titles {
		if strings.HasPrefix(title, "driver") {
			assert.Contains(t, title, "the driver of job spark-")
		}
	}
}

// TestWriteSVGColorByJobDeadlock: the drivers holding every slot are named
// in the column of the deadlock; the waiting requests name their jobs.
func TestWriteSVGColorByJobDeadlock(t *testing.T) {
	res, st, _ := jobsPicture(t, admission.FIFO)
	require.Equal(t, runfile.Deadlock, res.Verdict)
	for _, j := range []string{"spark-1", "spark-2", "spark-3", "spark-4"} {
		assert.Contains(t, st.texts, j+" driver holds the slot, job waits")
	}
	assert.Contains(t, strings.Join(st.texts, " "), "spark-1:scan#0 waits since 1000 ms")
	assert.Contains(t, strings.Join(st.texts, " "), res.Reason)
}

// TestWriteSVGColorByJobManyJobs: beyond the palette the most frequent
// jobs keep colours and the rest are grey, named in the legend.
func TestWriteSVGColorByJobManyJobs(t *testing.T) {
	var events []runfile.Event
	for j := range 20 {
		job := fmt.Sprintf("job-%02d", j)
		at := time.Duration(j) * time.Second
		events = append(events,
			runfile.Event{At: at, Kind: runfile.Deploy, Job: job, Task: "a#0", Region: 0, Slot: j % 3},
			runfile.Event{At: at + time.Second, Kind: runfile.Finish, Job: job, Task: "a#0", Region: 0, Slot: j % 3})
	}
	var buf bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, timeline.Timeline{Title: "many", Slots: 3, Makespan: 21 * time.Second,
		Events: events, Verdict: runfile.Finished, Reason: "finished", ColorBy: timeline.ColorByJob}))
	st := parseSVG(t, &buf)
	assert.Equal(t, 20, st.bars)
	assert.Contains(t, st.texts, "job-00")
	assert.Contains(t, st.texts, "9 other jobs")
}
