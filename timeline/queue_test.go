package timeline_test

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/timeline"
)

// barFill matches a bar of the detailed view: its title and the fill of
// its first rectangle, the bar itself.
var barFill = regexp.MustCompile(`<g( class="driver")?><title>([^<]*)</title><rect [^>]*? fill="(#[0-9a-f]+)"`)

// legendSwatch matches a legend entry: its swatch's fill and its label.
var legendSwatch = regexp.MustCompile(`width="14" height="14" rx="2" fill="(#[0-9a-f]+)"[^>]*/>(?:<rect[^>]*/>)?<text[^>]*>([^<]*)</text>`)

// legendFills maps the legend's labels to their swatches' fills, and
// lists the labels in order.
func legendFills(svg string) (map[string]string, []string) {
	fills := map[string]string{}
	var labels []string
	for _, m := range legendSwatch.FindAllStringSubmatch(svg, -1) {
		label := html.UnescapeString(m[2])
		fills[label] = m[1]
		labels = append(labels, label)
	}
	return fills, labels
}

// floodQueues puts the four jobs of the driver flood into three queues,
// two of them children of root.prod.
var floodQueues = map[string]string{"spark-1": "root.prod.etl", "spark-2": "root.adhoc", "spark-3": "root.prod.etl", "spark-4": "root.prod.ml"}

// queuesPicture runs the driver flood under StateAware and draws it
// coloured by queue (floodQueues), from the recorded events and from a
// Recorder: the two are the same bytes.
func queuesPicture(t *testing.T) (*simulator.Result, string) {
	t.Helper()
	jobs := floodJobs(t)
	rec := timeline.NewRecorder()
	defer rec.Close()
	res, _, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Mode: exchange.AllBlocking,
		Cluster: slots(4), DefaultPolicy: admission.StateAware, Record: true, OnEvent: rec.Event})
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
	}
	tl := timeline.Timeline{Title: "flood", Slots: res.Slots, Makespan: res.Makespan, Events: res.Events,
		Verdict: res.Verdict, Reason: res.Reason, ColorBy: timeline.ColorByQueue, Jobs: names, JobQueues: floodQueues}
	var buf, streamed bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, tl))
	require.NoError(t, rec.WriteSVG(&streamed, tl))
	assert.Equal(t, buf.String(), streamed.String(), "the recorder draws the same picture")
	assertTextsInside(t, parseSVG(t, bytes.NewReader(buf.Bytes())))
	return res, buf.String()
}

// TestWriteSVGColorByQueue: one colour per queue, the queue names as
// given in the legend in the order of their first job, every bar in its
// job's queue's colour, drivers hatched in it.
func TestWriteSVGColorByQueue(t *testing.T) {
	res, svg := queuesPicture(t)
	fills, labels := legendFills(svg)
	require.GreaterOrEqual(t, len(labels), 4)
	assert.Equal(t, []string{"root.prod.etl", "root.adhoc", "root.prod.ml", "driver (job master) in its queue's colour"}, labels[:4])
	assert.Contains(t, svg, ">colour = queue:</text>")
	assert.NotContains(t, svg, "colour = job:")
	assert.NotEqual(t, fills["root.prod.etl"], fills["root.adhoc"])
	assert.NotEqual(t, fills["root.prod.etl"], fills["root.prod.ml"])
	assert.NotEqual(t, fills["root.adhoc"], fills["root.prod.ml"])

	bars := barFill.FindAllStringSubmatch(svg, -1)
	require.Len(t, bars, countKind(res.Events, runfile.Deploy), "one bar per deploy")
	drivers := 0
	for _, b := range bars {
		job, _, _ := strings.Cut(b[2], ":") // task bars: "job:task (...)"
		if b[1] != "" {
			drivers++
			_, job, _ = strings.Cut(b[2], "the driver of job ")
			job, _, _ = strings.Cut(job, ",")
		}
		queue, ok := floodQueues[job]
		require.True(t, ok, "bar %q names a job of the run", b[2])
		assert.Equal(t, fills[queue], b[3], "%q is in the colour of %s", b[2], queue)
	}
	assert.Equal(t, 4, drivers, "every job's driver")
	assert.Equal(t, 4, strings.Count(svg, `fill="url(#driver)"/>`)-1, "every driver is hatched (and the legend's swatch)")
}

// TestWriteSVGColorByQueueMissingJob: a job of the events or of Jobs
// without a queue is a *JobQueueError naming it, from WriteSVG and from a
// Recorder, never a panic.
func TestWriteSVGColorByQueueMissingJob(t *testing.T) {
	events := []runfile.Event{
		{At: 0, Kind: runfile.Deploy, Job: "etl", Task: "a#0", Region: 0, Slot: 0},
		{At: 0, Kind: runfile.Deploy, Job: "adhoc", Task: "a#0", Region: 0, Slot: 1},
		{At: time.Second, Kind: runfile.Finish, Job: "etl", Task: "a#0", Region: 0, Slot: 0},
		{At: time.Second, Kind: runfile.Finish, Job: "adhoc", Task: "a#0", Region: 0, Slot: 1},
	}
	base := timeline.Timeline{Title: "two", Slots: 2, Makespan: time.Second, Events: events, Verdict: runfile.Finished,
		Reason: "finished", ColorBy: timeline.ColorByQueue}
	for name, tc := range map[string]struct {
		jobs    []string
		queues  map[string]string
		missing string
		msg     string
	}{
		"a job of the events":    {queues: map[string]string{"etl": "root.etl"}, missing: "adhoc", msg: `job "adhoc" has no queue`},
		"a job of Jobs":          {jobs: []string{"etl", "adhoc", "late"}, queues: map[string]string{"etl": "root.etl", "adhoc": "root.adhoc"}, missing: "late", msg: "the jobs it maps: adhoc, etl"},
		"no map at all":          {missing: "etl", msg: "the jobs it maps: none"},
		"the one job of one run": {queues: map[string]string{"etl": "root.etl", "adhoc": "root.etl"}, jobs: []string{""}, missing: ""},
	} {
		t.Run(name, func(t *testing.T) {
			tl := base
			tl.Jobs, tl.JobQueues = tc.jobs, tc.queues
			var buf bytes.Buffer
			err := timeline.WriteSVG(&buf, tl)
			var qe *timeline.JobQueueError
			require.True(t, errors.As(err, &qe), "%v", err)
			assert.Equal(t, tc.missing, qe.Job)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Zero(t, buf.Len(), "nothing is drawn")

			rec := timeline.NewRecorder()
			defer rec.Close()
			for _, e := range events {
				rec.Event(e)
			}
			require.ErrorAs(t, rec.WriteSVG(&buf, tl), &qe)
			assert.Equal(t, tc.missing, qe.Job)
		})
	}
	// other modes ignore the map
	tl := base
	tl.ColorBy = timeline.ColorByJob
	require.NoError(t, timeline.WriteSVG(&bytes.Buffer{}, tl))
}

// TestWriteSVGColorByQueueOneJob: the one job of a run of one job ("" in
// the events) is coloured by its queue: one colour, named in the legend.
func TestWriteSVGColorByQueueOneJob(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.PointwisePipelinedOnly)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 1, Record: true})
	var buf bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, timeline.Timeline{Title: "one", Slots: res.Slots, Regions: rs.NumRegions(), Makespan: res.Makespan,
		Events: res.Events, Verdict: res.Verdict, Reason: res.Reason, ColorBy: timeline.ColorByQueue, JobQueues: map[string]string{"": "root.default"}}))
	svg := buf.String()
	fills, labels := legendFills(svg)
	assert.Equal(t, []string{"root.default"}, labels)
	bars := barFill.FindAllStringSubmatch(svg, -1)
	require.Len(t, bars, 12)
	for _, b := range bars {
		assert.Equal(t, fills["root.default"], b[3], b[2])
	}
	assert.NotContains(t, svg, "regions in all", "the colours do not stand for regions")
}

// TestWriteSVGColorByQueueAggregated: a run too large for one bar per
// task is drawn by queue too; beyond the palette the queues with the most
// deploys keep colours and the rest are grey, counted in the legend.
func TestWriteSVGColorByQueueAggregated(t *testing.T) {
	const jobs, queues, slotsN = 40, 20, 130
	var events []runfile.Event
	jobQueues := map[string]string{}
	for j := range jobs {
		job := fmt.Sprintf("job-%02d", j)
		queue := fmt.Sprintf("root.team-%02d.batch", j%queues)
		jobQueues[job] = queue
		deploys := 1
		if j%queues < 3 {
			deploys = 5 // the three busiest queues: team-00, team-01, team-02
		}
		for d := range deploys {
			slot := (j*5 + d) % slotsN
			at := time.Duration(j) * 100 * time.Millisecond
			events = append(events,
				runfile.Event{At: at, Kind: runfile.Deploy, Job: job, Task: fmt.Sprintf("a#%d", d), Region: d, Slot: slot},
				runfile.Event{At: at + 50*time.Millisecond, Kind: runfile.Finish, Job: job, Task: fmt.Sprintf("a#%d", d), Region: d, Slot: slot},
				runfile.Event{At: at + 50*time.Millisecond, Kind: runfile.Release, Job: job, Slot: slot})
		}
	}
	var buf bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, timeline.Timeline{Title: "many queues", Slots: slotsN, Makespan: 4 * time.Second,
		Events: events, Verdict: runfile.Finished, Reason: "finished", ColorBy: timeline.ColorByQueue, JobQueues: jobQueues}))
	st := parseSVG(t, bytes.NewReader(buf.Bytes()))
	assert.Zero(t, st.bars, "aggregated: no bar per task")
	assert.Contains(t, st.texts, "colour = queue:")
	for _, q := range []string{"root.team-00.batch", "root.team-01.batch", "root.team-02.batch"} {
		assert.Contains(t, st.texts, q, "a busy queue keeps its colour")
	}
	assert.Contains(t, st.texts, "9 other queues")
	assert.Contains(t, strings.Join(st.texts, " "), "in the colour of the queue of the task that took the slot")
}
