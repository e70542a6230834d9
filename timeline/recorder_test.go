package timeline_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/timeline"
)

// timelineOf is the Timeline of a result, without its events.
func timelineOf(res *simulator.Result, rows, regions int, colorBy timeline.ColorBy, jobs []string) timeline.Timeline {
	return timeline.Timeline{Title: "run", Subtitle: fmt.Sprintf("%d slots", res.Slots), Slots: rows, Regions: regions,
		Makespan: res.Makespan, Verdict: res.Verdict, Reason: res.Reason, ColorBy: colorBy, Jobs: jobs}
}

// slotsNamed is the largest slot id of the events, plus 1.
func slotsNamed(events []runfile.Event) int {
	n := 0
	for _, e := range events {
		n = max(n, e.Slot+1)
	}
	return n
}

// streamedPicture draws a run twice: from its recorded events with
// WriteSVG, and from its events streamed into a Recorder; the
// two must be the same bytes.
func streamedPicture(t *testing.T, run func(record bool, onEvent func(runfile.Event)) *simulator.Result, tl func(*simulator.Result) timeline.Timeline) string {
	t.Helper()
	recorded := run(true, nil)
	want := tl(recorded)
	want.Events = recorded.Events
	var wantSVG bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&wantSVG, want))

	rec := timeline.NewRecorder()
	defer func() { require.NoError(t, rec.Close()) }()
	streamed := run(false, rec.Event)
	assert.Empty(t, streamed.Events)
	assert.Equal(t, slotsNamed(recorded.Events), rec.Slots())
	var got bytes.Buffer
	require.NoError(t, rec.WriteSVG(&got, tl(streamed)))
	require.Equal(t, wantSVG.String(), got.String())
	// drawing twice gives the same picture
	var again bytes.Buffer
	require.NoError(t, rec.WriteSVG(&again, tl(streamed)))
	require.Equal(t, got.String(), again.String())
	return got.String()
}

// TestRecorderDrawsTheRecordedPicture: for one job, small and
// large (aggregated by attempts or by slots), finished, deadlocked and
// with a failover, region and eager policy, the streamed picture is the
// picture of the recorded events, byte for byte.
func TestRecorderDrawsTheRecordedPicture(t *testing.T) {
	fail := func(rs *region.Regions, at string) []simulator.Failure {
		f, err := simulator.ParseFailure(rs.Topology(), at)
		require.NoError(t, err)
		return []simulator.Failure{f}
	}
	big := chains(t, 4, 1000)
	for _, tc := range []struct {
		name       string
		rs         *region.Regions
		slots      int
		policy     simulator.Policy
		colorBy    timeline.ColorBy
		fail       string
		aggregated bool
	}{
		{name: "flip119-pointwise", rs: region.FromJob(flip119(t), exchange.PointwisePipelinedOnly), slots: 2},
		{name: "flip119-eager-deadlock", rs: region.FromJob(flip119(t), exchange.AllPipelined), slots: 4, policy: simulator.EagerPolicy, colorBy: timeline.ColorByVertex},
		{name: "flip119-failover", rs: region.FromJob(flip119(t), exchange.PointwisePipelinedOnly), slots: 2, fail: "B#1@500"},
		{name: "chains-attempts", rs: region.FromJob(big, exchange.AllBlocking), slots: 40, aggregated: true},
		{name: "chains-slots", rs: region.FromJob(chains(t, 2, 400), exchange.AllBlocking), slots: 150, aggregated: true},
		{name: "chains-by-region", rs: region.FromJob(big, exchange.AllPipelined), slots: 200, colorBy: timeline.ColorByRegion, fail: "v1#2@50", aggregated: true},
		{name: "chains-eager", rs: region.FromJob(big, exchange.AllBlocking), slots: 60, policy: simulator.EagerPolicy, colorBy: timeline.ColorByVertex, aggregated: true},
		{name: "chains-eager-deadlock", rs: region.FromJob(big, exchange.AllPipelined), slots: 150, policy: simulator.EagerPolicy, colorBy: timeline.ColorByVertex, aggregated: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := simulator.Config{Regions: tc.rs, Cluster: slots(tc.slots), Policy: tc.policy, Seed: 3}
			if tc.fail != "" {
				cfg.Failures = fail(tc.rs, tc.fail)
			}
			svg := streamedPicture(t, func(record bool, onEvent func(runfile.Event)) *simulator.Result {
				cfg.Record, cfg.OnEvent = record, onEvent
				res, err := simulator.Run(cfg)
				require.NoError(t, err)
				return res
			}, func(res *simulator.Result) timeline.Timeline {
				return timelineOf(res, res.Slots, tc.rs.NumRegions(), tc.colorBy, nil)
			})
			assert.Equal(t, tc.aggregated, bytes.Contains([]byte(svg), []byte("too many for one bar each")))
		})
	}
}

// TestRecorderSeveralJobs: the pictures of runs of several jobs,
// coloured by job, streamed through JobsConfig.OnEvent, are the pictures
// of the recorded events.
func TestRecorderSeveralJobs(t *testing.T) {
	flood := floodJobs(t)
	large := []runfile.Job{{Name: "a", Job: chains(t, 3, 800)}, {Name: "b", Job: chains(t, 2, 1500)}}
	for _, tc := range []struct {
		name   string
		jobs   []runfile.Job
		slots  int
		policy simulator.Policy
		queues admission.Policy
	}{
		{name: "flood-fifo", jobs: flood, slots: 4, queues: admission.FIFO},
		{name: "flood-stateaware", jobs: flood, slots: 4, queues: admission.StateAware},
		{name: "flood-eager", jobs: flood, slots: 4, policy: simulator.EagerPolicy},
		{name: "large-fairshare", jobs: large, slots: 130, queues: admission.FairShare},
		{name: "large-eager", jobs: large, slots: 50, policy: simulator.EagerPolicy},
		{name: "drivers-aggregated", jobs: append(append([]runfile.Job{}, flood...), large...), slots: 130, queues: admission.FIFO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			for _, j := range tc.jobs {
				names = append(names, j.Name)
			}
			cfg := simulator.JobsConfig{Jobs: tc.jobs, Mode: exchange.AllBlocking, Cluster: slots(tc.slots), Policy: tc.policy,
				DefaultPolicy: tc.queues, Seed: 5}
			streamedPicture(t, func(record bool, onEvent func(runfile.Event)) *simulator.Result {
				cfg.Record, cfg.OnEvent = record, onEvent
				res, _, err := simulator.RunJobs(cfg)
				require.NoError(t, err)
				return res
			}, func(res *simulator.Result) timeline.Timeline {
				return timelineOf(res, res.Slots, 0, timeline.ColorByJob, names)
			})
		})
	}
}

// TestRecorderSpoolError: a large run's picture needs a temporary
// file; when none can be made, WriteSVG says so with ErrSpool.
func TestRecorderSpoolError(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()+"/missing")
	rec := timeline.NewRecorder()
	res, err := simulator.Run(simulator.Config{Regions: region.FromJob(chains(t, 2, 2000), exchange.AllBlocking), Cluster: slots(10),
		OnEvent: rec.Event})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.ErrorIs(t, rec.WriteSVG(&buf, timelineOf(res, res.Slots, 0, timeline.ColorAuto, nil)), timeline.ErrSpool)
	require.NoError(t, rec.Close())
	var none *timeline.Recorder
	require.NoError(t, none.Close())
}
