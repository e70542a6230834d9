package timeline_test

import (
	"bytes"
	"encoding/xml"
	"io"
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

// recorded draws a run through a Recorder fed with Detail, as
// simulate --svg does; run runs the simulation with the OnEvent given
// and returns the Timeline to draw.
func recorded(t *testing.T, run func(onEvent func(runfile.Event)) timeline.Timeline) (string, svgStats) {
	t.Helper()
	rec := timeline.NewRecorder()
	defer rec.Close()
	tl := run(rec.Event)
	tl.Progress = true
	var buf bytes.Buffer
	require.NoError(t, rec.WriteSVG(&buf, tl))
	st := parseSVG(t, bytes.NewReader(buf.Bytes()))
	assertTextsInside(t, st)
	return buf.String(), st
}

// classRect is a <rect> or <path> of a class: its x, width and title (or
// that of the <g> it is in).
type classRect struct {
	x, w  float64
	title string
}

// classRects returns the rects of a class, with the title of the bar
// they are in (or their own).
func classRects(t *testing.T, svg, class string) []classRect {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var out []classRect
	group, in := "", false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		switch tok := tok.(type) {
		case xml.StartElement:
			switch {
			case tok.Name.Local == "g":
				group = ""
			case tok.Name.Local == "title":
				var s string
				require.NoError(t, dec.DecodeElement(&s, &tok))
				if in {
					out[len(out)-1].title = s
				} else {
					group = s
				}
			case tok.Name.Local == "rect" && attr(tok, "class") == class:
				out = append(out, classRect{x: attrFloat(t, tok, "x"), w: attrFloat(t, tok, "width"), title: group})
				in = true
			}
		case xml.EndElement:
			if tok.Name.Local == "rect" {
				in = false
			}
		}
	}
}

// The eager deadlock of FLIP-119's example: the summary says half the
// slot time was held while waiting (B#0 and B#1 hold two of four slots
// for the whole run without progress). The picture hatches B#0 and B#1
// over their whole bars, from their deploy, and nothing of A's.
func TestWriteSVGHeldWithoutProgress(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	var res *simulator.Result
	svg, st := recorded(t, func(onEvent func(runfile.Event)) timeline.Timeline {
		res = run(t, simulator.Config{Regions: rs, Cluster: slots(4), Policy: simulator.EagerPolicy, Seed: 1, OnEvent: onEvent, Detail: true})
		return timeline.Timeline{Title: "eager", Slots: res.Slots, Makespan: res.Makespan, Verdict: res.Verdict, Reason: res.Reason, ColorBy: timeline.ColorByVertex}
	})
	require.Equal(t, runfile.Deadlock, res.Verdict)
	require.InDelta(t, 0.5, res.HeldWaiting, 1e-9)
	stalled := classRects(t, svg, "stalled")
	require.Len(t, stalled, 2, "B#0 and B#1")
	xd := deadlockLineX(t, svg)
	for _, s := range stalled {
		assert.Regexp(t, `^B#[01] .*held without progress for 1000 ms$`, s.title, "the time held is counted to the deadlock")
		bar := barRects(t, svg, strings.Fields(s.title)[0]+" ")
		require.Len(t, bar, 1)
		assert.InDelta(t, bar[0][0], s.x, 0.1, "hatched from its deploy")
		assert.InDelta(t, bar[0][0]+bar[0][2], s.x+s.w, 0.1, "to the end of its bar")
		assert.Greater(t, s.x+s.w, xd+20, "drawn on past the deadlock")
	}
	// C#0 and C#3 were deployed at the deadlock: the axis goes on past it
	// so that their bars show, as the header and the column name them
	for _, c := range []string{"C#0 ", "C#3 "} {
		bar := barRects(t, svg, c)
		require.Len(t, bar, 1, c)
		assert.InDelta(t, xd, bar[0][0], 0.1, "%s starts at the deadlock", c)
		assert.Greater(t, bar[0][2], 20.0, "%s is drawn on past it", c)
	}
	assert.Contains(t, st.texts, "holds its slot without progress (held while waiting)")
	assert.NotContains(t, st.texts, "holds its slot when the run ends", "what holds its slot at the deadlock is hatched already")
}

// A gang's placeholders are drawn on their slots, labelled, while the
// other job waits: the slots sit idle because they are kept for the gang.
func TestWriteSVGKeptForGang(t *testing.T) {
	jobs := []runfile.Job{
		decodeJob(t, `{"name":"g","driver":{"startupMs":1000},"gang":{"minSlots":8,"style":"hard","timeoutMs":5000},"vertices":[{"id":"x","parallelism":1,"durationMs":1000}]}`),
		decodeJob(t, `{"name":"wide","submitAtMs":100,"vertices":[{"id":"x","parallelism":5,"durationMs":1000}]}`),
	}
	svg, st := recorded(t, func(onEvent func(runfile.Event)) timeline.Timeline {
		res, _, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Cluster: slots(10), OnEvent: onEvent, Detail: true})
		require.NoError(t, err)
		return timeline.Timeline{Title: "gang", Slots: res.Slots, Makespan: res.Makespan, Verdict: res.Verdict, Reason: res.Reason,
			ColorBy: timeline.ColorByJob, Jobs: []string{"g", "wide"}}
	})
	kept := classRects(t, svg, "kept")
	require.Len(t, kept, 7)
	for _, k := range kept {
		assert.Regexp(t, `^slot \d reserved for gang of g: 0 ms - 1000 ms$`, k.title)
	}
	assert.Contains(t, st.texts, "reserved for gang of g")
	assert.Contains(t, st.texts, "slot kept for a job, idle (gang placeholder or claim)")
	assert.Equal(t, 7, st.bars, "five tasks of wide, the gang's task and its driver: bars, not the kept slots")
}

// Reclaims, priority changes, kills and refusals are marked on the
// admission's lane at their times, with who did what to whom.
func TestWriteSVGAdmissionLane(t *testing.T) {
	jobs := []runfile.Job{
		decodeJob(t, `{"name":"low","priority":1000,"vertices":[{"id":"a","parallelism":2,"durationMs":5000}]}`),
		decodeJob(t, `{"name":"high","priority":9000,"submitAtMs":100,"vertices":[{"id":"a","parallelism":1,"durationMs":1000}]}`),
	}
	svg, st := recorded(t, func(onEvent func(runfile.Event)) timeline.Timeline {
		res, _, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Cluster: slots(2), OnEvent: onEvent, Detail: true,
			Queues: []admission.QueueConfig{{Name: "root.default", Policy: admission.Priority, Preempt: true, ReclaimTimeout: 300 * time.Millisecond}},
			Users:  map[string]admission.Role{"alice": admission.RoleAdmin},
			Events: []runfile.JobEvent{
				{At: 2 * time.Second, Action: admission.ActionSetPriority, Job: "low", Priority: 5000, By: "alice"},
				{At: 3 * time.Second, Action: admission.ActionKill, Job: "low", By: "mallory"},
			}})
		require.NoError(t, err)
		return timeline.Timeline{Title: "lane", Slots: res.Slots, Makespan: res.Makespan, Verdict: res.Verdict, Reason: res.Reason,
			ColorBy: timeline.ColorByJob, Jobs: []string{"low", "high"}}
	})
	for _, want := range []string{"admission", "reclaim high → low", "alice: low priority 5000", "refused: mallory kill low",
		"reclaim: claimant → victim", "priority change or kill", "refused change"} {
		assert.Contains(t, st.texts, want)
	}
	assert.Equal(t, 3, strings.Count(svg, `<g class="mark">`))
	assert.Contains(t, svg, "<title>at 100 ms 1 slot of job low reclaimed for job high: ")
}

// A stream's picture has time in it: the axis goes on for StreamWindow
// past the last event, the stream's task runs to its end, and the picture
// says the stream runs on.
func TestWriteSVGStreamWindow(t *testing.T) {
	jobs := []runfile.Job{decodeJob(t, `{"name":"st","vertices":[{"id":"a","parallelism":1,"bounded":false}]}`)}
	svg, st := recorded(t, func(onEvent func(runfile.Event)) timeline.Timeline {
		res, _, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Cluster: slots(2), OnEvent: onEvent, Detail: true})
		require.NoError(t, err)
		require.Equal(t, runfile.Steady, res.Verdict)
		require.Zero(t, res.Makespan)
		return timeline.Timeline{Title: "stream", Slots: res.Slots, Makespan: res.Makespan, Verdict: res.Verdict, Reason: res.Reason,
			ColorBy: timeline.ColorByJob, Jobs: []string{"st"}}
	})
	assert.Contains(t, st.texts, "1.0s", "the axis runs to 1 s")
	assert.NotContains(t, st.texts, "1ms")
	assert.Contains(t, st.texts, "stream: runs on beyond this window (last event at 0 ms, drawn 1000 ms further)")
	assert.Contains(t, st.texts, "runs on beyond this window")
	assert.Contains(t, st.texts, "st:a#0", "the bar is wide enough for its label")
	bars := barRects(t, svg, "st:a#0")
	require.Len(t, bars, 1)
	assert.Greater(t, bars[0][2], 1000.0, "the bar runs to the end of the axis")
	assert.Contains(t, st.titles[0], "still running at the end of the window")
}
