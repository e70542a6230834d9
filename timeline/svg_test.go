package timeline_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/timeline"
	"github.com/regionsched/regionsched/topology"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteSVGReportsWriteErrors(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 1, Record: true})
	assert.Error(t, timeline.WriteSVG(failingWriter{}, timeline.Timeline{Slots: 2, Regions: 12, Makespan: res.Makespan, Events: res.Events}))
}

func TestWriteSVGFinished(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.PointwisePipelinedOnly)
	x, err := rs.Topology().ParseVertexName("C#2")
	require.NoError(t, err)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(3), Seed: 2, Record: true,
		Failures: []simulator.Failure{{Task: x, After: 400 * time.Millisecond}}})
	require.Equal(t, runfile.Finished, res.Verdict)
	var buf bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, timeline.Timeline{
		Title: `FLIP-119 <pointwise> & "friends"`, Subtitle: "3 slots, seed 2",
		Slots: res.Slots, Regions: rs.NumRegions(), Makespan: res.Makespan, Events: res.Events,
	}))
	st := parseSVG(t, bytes.NewReader(buf.Bytes()))
	assert.Equal(t, []string{"slot 0", "slot 1", "slot 2"}, st.slotLabels, "one row label per slot")
	assert.Equal(t, countKind(res.Events, runfile.Deploy), st.bars, "one bar per deploy")
	assert.Len(t, st.regionLabels, rs.NumRegions(), "a legend entry per region")
	assert.Zero(t, st.hatched, "nothing holds a slot at the end")
	failed, canceled := 0, 0
	for _, title := range st.titles {
		if strings.HasSuffix(title, "failed") {
			failed++
		}
		if strings.HasSuffix(title, "canceled") {
			canceled++
		}
	}
	assert.Equal(t, 1, failed)
	assert.Equal(t, countKind(res.Events, runfile.Cancel), canceled)
	assert.Contains(t, buf.String(), "&lt;pointwise&gt; &amp; &#34;friends&#34;")
}

func TestWriteSVGDeadlockHatched(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	var res *simulator.Result
	for seed := uint64(1); seed <= 50; seed++ {
		res = run(t, simulator.Config{Regions: rs, Cluster: slots(4), Policy: simulator.EagerPolicy, Seed: seed, Ties: tiesFor(seed), Record: true})
		if res.Verdict == runfile.Deadlock {
			break
		}
	}
	require.Equal(t, runfile.Deadlock, res.Verdict)
	var buf bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, timeline.Timeline{Title: "eager", Slots: res.Slots, Regions: rs.NumRegions(), Makespan: res.Makespan, Events: res.Events}))
	st := parseSVG(t, bytes.NewReader(buf.Bytes()))
	assert.Len(t, st.slotLabels, 4)
	assert.Equal(t, countKind(res.Events, runfile.Deploy), st.bars)
	assert.Equal(t, len(res.Holding), st.hatched, "each task holding a slot at the end has a hatched end")
	assert.Positive(t, st.hatched)
}

// Many task attempts: the picture shows slot use per group of slots, not
// one bar per attempt, and its size does not grow with the run.
func TestWriteSVGLargeRunAggregated(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(5), Seed: 1, Record: true})
	replicate := func(n int) (timeline.Timeline, int) {
		var events []runfile.Event
		for i := range n {
			for _, ev := range res.Events {
				ev.At += time.Duration(i) * res.Makespan
				ev.Region += 12 * i
				events = append(events, ev)
			}
		}
		return timeline.Timeline{Title: "large", Slots: 5, Regions: 12 * n, Makespan: time.Duration(n) * res.Makespan, Events: events,
			Verdict: runfile.Finished, Reason: "finished: all tasks finished"}, countKind(events, runfile.Deploy)
	}
	sizes := map[int]int{}
	for _, n := range []int{500, 5000} {
		tl, deploys := replicate(n)
		require.Greater(t, deploys, 3000, "above the threshold of the detailed view")
		var buf bytes.Buffer
		require.NoError(t, timeline.WriteSVG(&buf, tl))
		svg := buf.String()
		sizes[n] = len(svg)
		assert.Zero(t, strings.Count(svg, "<g><title>"), "no bar per task attempt")
		assert.Contains(t, svg, fmt.Sprintf("%d task attempts on 5 slots are too many for one bar each", deploys))
		assert.Contains(t, svg, "colour = job vertex:", "%d regions are coloured by job vertex", 12*n)
		assert.Less(t, len(svg), 400_000, "bounded size")
		st := parseSVG(t, strings.NewReader(svg))
		assert.LessOrEqual(t, st.height, 1500.0, "bounded height")
		assert.Len(t, st.slotLabels, 5, "a row per slot when there are few slots")
		for _, v := range []string{"A", "B", "C", "D"} {
			assert.Contains(t, st.texts, v, "legend entry of vertex %s", v)
		}
		assertTextsInside(t, st)
	}
	assert.Less(t, sizes[5000], 2*sizes[500], "10 times the events, about the same picture")

	// many slots: rows are groups of slots
	var events []runfile.Event
	for round := range 5 {
		at := time.Duration(round) * time.Second
		for s := range 1000 {
			task := fmt.Sprintf("map#%d", round*1000+s)
			events = append(events, runfile.Event{At: at, Kind: runfile.Request, Task: task, Slot: runfile.NoSlot},
				runfile.Event{At: at, Kind: runfile.Deploy, Task: task, Slot: s})
		}
		for s := range 1000 {
			task := fmt.Sprintf("map#%d", round*1000+s)
			events = append(events, runfile.Event{At: at + time.Second, Kind: runfile.Finish, Task: task, Slot: s},
				runfile.Event{At: at + time.Second, Kind: runfile.Release, Task: task, Slot: s})
		}
	}
	var buf bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, timeline.Timeline{Slots: 1000, Makespan: 5 * time.Second, Events: events}))
	st := parseSVG(t, bytes.NewReader(buf.Bytes()))
	assert.Contains(t, st.texts, "slots 0-49")
	assert.Contains(t, st.texts, "slots 950-999")
	assert.NotContains(t, st.texts, "slots 1000-1049")
	assertTextsInside(t, st)
}

// A timeline whose Slots is smaller than the slots its events name still
// draws a row for each of them instead of panicking.
func TestWriteSVGTooFewSlots(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(3), Seed: 1, Record: true})
	var buf bytes.Buffer
	require.NotPanics(t, func() {
		require.NoError(t, timeline.WriteSVG(&buf, timeline.Timeline{Regions: 12, Makespan: res.Makespan, Events: res.Events}))
	})
	st := parseSVG(t, bytes.NewReader(buf.Bytes()))
	assert.Len(t, st.slotLabels, 3)
	assert.Equal(t, 12, st.bars)

	// no events at all: an empty picture, still well-formed
	buf.Reset()
	require.NoError(t, timeline.WriteSVG(&buf, timeline.Timeline{Title: "empty"}))
	st = parseSVG(t, bytes.NewReader(buf.Bytes()))
	assert.Empty(t, st.slotLabels)
	assert.Zero(t, st.bars)
}

// oddIDs are vertex ids docs/job-file.md allows (no '#', no whitespace)
// that a careless JSON or XML writer gets wrong.
var oddIDs = []string{"A\u0001x", "nul\x00", "esc\x1b[31m", `q"uote\back`, "<&>'", "\u007fdel", "nonchar\uffff\ufffe", "é✗🚀"}

// oddJob chains one vertex per odd id.
func oddJob(t *testing.T) *topology.JobGraph {
	t.Helper()
	b := topology.NewBuilder("odd\u0002job")
	for i, id := range oddIDs {
		b.AddVertex(topology.JobVertex{ID: id, Parallelism: 2, Duration: time.Second})
		if i > 0 {
			b.Connect(oddIDs[i-1], id, exchange.Forward)
		}
	}
	job, err := b.Build()
	require.NoError(t, err)
	return job
}

// TestWriteSVGSanitizesText: an SVG of a run whose vertex ids (and title)
// contain control characters is well-formed XML (encoding/xml parses it;
// rsvg-convert rejected &#1; and raw U+0001 alike), the characters shown
// as U+FFFD.
func TestWriteSVGSanitizesText(t *testing.T) {
	rs := region.FromJob(oddJob(t), exchange.AllBlocking)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 1, Record: true})
	var buf bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, timeline.Timeline{
		Title: "job \u0001 <odd> \x00 & \xff", Subtitle: "tab\tand\u0008backspace",
		Slots: res.Slots, Regions: rs.NumRegions(), Makespan: res.Makespan, Events: res.Events,
	}))
	svg := buf.String()
	require.True(t, utf8.ValidString(svg), "the SVG is valid UTF-8")
	for _, r := range svg {
		ok := r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r != 0xFFFE && r != 0xFFFF)
		require.True(t, ok, "character %U is not allowed in XML 1.0", r)
	}
	for _, ref := range []string{"&#1;", "&#x1;", "&#0;"} {
		assert.NotContains(t, svg, ref, "control characters are not allowed even as references")
	}
	st := parseSVG(t, strings.NewReader(svg))
	assert.Equal(t, countKind(res.Events, runfile.Deploy), st.bars)
	assert.Contains(t, svg, "job \ufffd &lt;odd&gt; \ufffd &amp; \ufffd")
	assert.Contains(t, svg, "tab\tand\ufffdbackspace")
	joined := strings.Join(st.titles, "\n")
	for _, want := range []string{"A\ufffdx#0", "nul\ufffd#1", "esc\ufffd[31m#0", `q"uote\back#1`, "<&>'#0", "\u007fdel#1", "nonchar\ufffd\ufffd#0", "é✗🚀#1"} {
		assert.Contains(t, joined, want+" (region", "bar title of %q", want)
	}
}
