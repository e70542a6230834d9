package simulator_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/simulator"
)

func TestDeterministicForASeed(t *testing.T) {
	for _, mode := range modes {
		rs := region.FromJob(flip119(t), mode)
		x, err := rs.Topology().ParseVertexName("C#1")
		require.NoError(t, err)
		for _, policy := range []simulator.Policy{simulator.RegionPolicy, simulator.EagerPolicy} {
			for seed := uint64(1); seed <= 10; seed++ {
				cfg := simulator.Config{Regions: rs, Cluster: slots(4), Policy: policy, Seed: seed, Ties: tiesFor(seed), Record: true,
					Failures: []simulator.Failure{{Task: x, After: 300 * time.Millisecond}}}
				a, b := run(t, cfg), run(t, cfg)
				require.Equal(t, a, b, "%v %v seed %d", mode, policy, seed)
				var ta, tb bytes.Buffer
				require.NoError(t, simulator.WriteTrace(&ta, a.Events))
				require.NoError(t, simulator.WriteTrace(&tb, b.Events))
				require.Equal(t, ta.String(), tb.String())
			}
		}
	}
}

// Different seeds order simultaneous events and the offer of slots
// differently; the outcome of the region policy does not change.
func TestSeedsReorderSimultaneousEvents(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	traces := map[string]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		res := run(t, simulator.Config{Regions: rs, Cluster: slots(3), Seed: seed, Ties: tiesFor(seed), Record: true})
		require.Equal(t, simulator.Finished, res.Verdict)
		assert.Equal(t, 6*time.Second, res.Makespan, "A 0-1 s, B 1-2 s, C 2-4 s, D 4-6 s")
		var b bytes.Buffer
		require.NoError(t, simulator.WriteTrace(&b, res.Events))
		traces[b.String()] = true
	}
	assert.Greater(t, len(traces), 1, "seeds change the order of simultaneous events or the slots chosen")
}

func TestParseFailure(t *testing.T) {
	topo := region.FromJob(flip119(t), exchange.AllBlocking).Topology()
	f, err := simulator.ParseFailure(topo, "A#1@500")
	require.NoError(t, err)
	assert.Equal(t, "A#1", topo.VertexName(f.Task))
	assert.Equal(t, 500*time.Millisecond, f.After)

	f, err = simulator.ParseFailure(topo, "D#3@0")
	require.NoError(t, err)
	assert.Equal(t, "D#3", topo.VertexName(f.Task))
	assert.Zero(t, f.After)

	for _, spec := range []string{"A#9@1", "A@1", "A#1@x", "A#1@-1", "A#1", "", "@500", "Z#0@1", "A#1@1.5", "A#1@500ms", "A#01@1"} {
		_, err := simulator.ParseFailure(topo, spec)
		require.Error(t, err, spec)
		assert.True(t, errors.Is(err, simulator.ErrBadFailure), "%q: %v", spec, err)
		if spec != "" {
			assert.Contains(t, err.Error(), spec)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	p, err := simulator.ParsePolicy("region")
	require.NoError(t, err)
	assert.Equal(t, simulator.RegionPolicy, p)
	assert.Equal(t, "region", p.String())
	p, err = simulator.ParsePolicy("eager")
	require.NoError(t, err)
	assert.Equal(t, simulator.EagerPolicy, p)
	assert.Equal(t, "eager", p.String())
	for _, s := range []string{"", "fifo", "regions", "lazy"} {
		_, err := simulator.ParsePolicy(s)
		require.Error(t, err, s)
		assert.True(t, errors.Is(err, simulator.ErrUnknownPolicy))
		assert.Contains(t, err.Error(), "region, eager")
	}
}

func TestVerdictAndKindNames(t *testing.T) {
	assert.Equal(t, "finished", simulator.Finished.String())
	assert.Equal(t, "running", simulator.Steady.String())
	assert.Equal(t, "deadlock", simulator.Deadlock.String())
	assert.Equal(t, "failed", simulator.Failed.String())
	assert.Equal(t, "invalid", simulator.Verdict(9).String())
	assert.True(t, simulator.Finished.OK())
	assert.True(t, simulator.Steady.OK())
	assert.False(t, simulator.Deadlock.OK())
	assert.False(t, simulator.Failed.OK())
	var names []string
	for k := simulator.Request; k <= simulator.Release; k++ {
		names = append(names, k.String())
	}
	assert.Equal(t, []string{"request", "deploy", "finish", "fail", "cancel", "release"}, names)
	assert.Equal(t, "unknown", simulator.Kind(42).String())
}

func TestRunRejectsBadConfig(t *testing.T) {
	_, err := simulator.Run(simulator.Config{})
	require.Error(t, err)
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	_, err = simulator.Run(simulator.Config{Regions: rs, Cluster: slots(-1)})
	require.Error(t, err)
	// a run that processes too many events is stopped, not left running
	_, err = simulator.Run(simulator.Config{Regions: rs, Cluster: slots(1), MaxEvents: 3})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than 3 events")
}

// No slots at all: the region policy fails the job at once.
func TestEmptyCluster(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	res := run(t, simulator.Config{Regions: rs, Seed: 1})
	require.Equal(t, simulator.Failed, res.Verdict, res.Reason)
	assert.Zero(t, res.Slots)
	assert.Zero(t, res.Utilization)
	res = run(t, simulator.Config{Regions: rs, Seed: 1, Policy: simulator.EagerPolicy})
	require.Equal(t, simulator.Deadlock, res.Verdict, res.Reason)
	assert.Len(t, res.Waiting, 2, "A#0 and A#1 wait for a slot")
}

type traceLine struct {
	T       *int64  `json:"t"`
	Event   *string `json:"event"`
	Task    *string `json:"task"`
	Region  *int    `json:"region"`
	Slot    *int    `json:"slot"`
	Attempt *int    `json:"attempt"`
}

func TestWriteTraceJSONLines(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.PointwisePipelinedOnly)
	x, err := rs.Topology().ParseVertexName("B#1")
	require.NoError(t, err)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 5, Record: true,
		Failures: []simulator.Failure{{Task: x, After: 250 * time.Millisecond}}})
	require.Equal(t, simulator.Finished, res.Verdict)
	var buf bytes.Buffer
	require.NoError(t, simulator.WriteTrace(&buf, res.Events))

	kinds := map[string]int{}
	sc := bufio.NewScanner(&buf)
	var last int64
	n := 0
	for sc.Scan() {
		line := sc.Text()
		var raw map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(line), &raw), line)
		var l traceLine
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&l), line)
		require.NotNil(t, l.T, line)
		require.NotNil(t, l.Event, line)
		require.NotNil(t, l.Task, line)
		require.NotNil(t, l.Region, line)
		assert.GreaterOrEqual(t, *l.T, last, "time order: %s", line)
		last = *l.T
		if *l.Event == "request" {
			assert.Nil(t, l.Slot, "a request has no slot: %s", line)
		} else {
			require.NotNil(t, l.Slot, line)
			assert.GreaterOrEqual(t, *l.Slot, 0)
			assert.Less(t, *l.Slot, 2)
		}
		ev := res.Events[n]
		assert.Equal(t, ev.At.Milliseconds(), *l.T)
		assert.Equal(t, ev.Kind.String(), *l.Event)
		assert.Equal(t, ev.Task, *l.Task)
		assert.Equal(t, ev.Region, *l.Region)
		kinds[*l.Event]++
		n++
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, len(res.Events), n)
	for _, k := range []string{"request", "deploy", "finish", "fail", "cancel", "release"} {
		assert.Positive(t, kinds[k], "the trace shows %s events", k)
	}
	// exactly the example line of docs/cli.md, plus the attempt
	line := simulator.Event{At: time.Second, Kind: simulator.Finish, Task: "A#0", Region: 0, Slot: 1}.AppendJSON(nil)
	assert.Equal(t, `{"t": 1000, "event": "finish", "task": "A#0", "region": 0, "slot": 1, "attempt": 0}`, string(line))
	// names are quoted
	line = simulator.Event{Kind: simulator.Request, Task: `we"ird#0`, Slot: simulator.NoSlot}.AppendJSON(nil)
	var l traceLine
	require.NoError(t, json.Unmarshal(line, &l), string(line))
	assert.Equal(t, `we"ird#0`, *l.Task)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWritersReportErrors(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 1, Record: true})
	assert.Error(t, simulator.WriteTrace(failingWriter{}, res.Events))
	assert.Error(t, simulator.WriteSVG(failingWriter{}, simulator.Timeline{Slots: 2, Regions: 12, Makespan: res.Makespan, Events: res.Events}))
}

// svgStats parses an SVG with encoding/xml (it must be well-formed) and
// counts what the timeline draws.
type svgStats struct {
	slotLabels   []string
	regionLabels []string
	bars         int // <g> groups with a <title>: one per task attempt
	hatched      int // rects of bars filled with the hatch pattern
	titles       []string
	texts        []string  // every <text>, trimmed
	boxes        []textBox // where they are
	width        float64
	height       float64
}

// textBox is a <text> element: its position, anchor and estimated width.
type textBox struct {
	text       string
	x, y, size float64
	anchor     string
	bold       bool
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func attrFloat(t *testing.T, se xml.StartElement, name string) float64 {
	t.Helper()
	v := attr(se, name)
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	require.NoError(t, err, "%s=%q", name, v)
	return f
}

var slotLabel = regexp.MustCompile(`^slot \d+$`)
var regionLabel = regexp.MustCompile(`^region \d+$`)

func parseSVG(t *testing.T, r io.Reader) svgStats {
	t.Helper()
	var st svgStats
	dec := xml.NewDecoder(r)
	var stack []string
	var text strings.Builder
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the SVG is well-formed XML")
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
				assert.Equal(t, "http://www.w3.org/2000/svg", tok.Name.Space)
				st.width, st.height = attrFloat(t, tok, "width"), attrFloat(t, tok, "height")
			}
			if tok.Name.Local == "text" {
				anchor := attr(tok, "text-anchor")
				if anchor == "" {
					anchor = "start"
				}
				st.boxes = append(st.boxes, textBox{x: attrFloat(t, tok, "x"), y: attrFloat(t, tok, "y"), size: attrFloat(t, tok, "font-size"),
					anchor: anchor, bold: attr(tok, "font-weight") == "bold"})
			}
			stack = append(stack, tok.Name.Local)
			text.Reset()
			if tok.Name.Local == "rect" && len(stack) > 1 && stack[len(stack)-2] == "g" { // in a bar, not the legend
				for _, a := range tok.Attr {
					if a.Name.Local == "fill" && a.Value == "url(#hatch)" {
						st.hatched++
					}
				}
			}
		case xml.CharData:
			text.Write(tok)
		case xml.EndElement:
			name := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			s := strings.TrimSpace(text.String())
			switch name {
			case "text":
				st.texts = append(st.texts, s)
				st.boxes[len(st.boxes)-1].text = s
				if slotLabel.MatchString(s) {
					st.slotLabels = append(st.slotLabels, s)
				}
				if regionLabel.MatchString(s) {
					st.regionLabels = append(st.regionLabels, s)
				}
			case "title":
				if len(stack) > 0 && stack[len(stack)-1] == "g" {
					st.bars++
					st.titles = append(st.titles, s)
				}
			}
			text.Reset()
		}
	}
	assert.Equal(t, "svg", root)
	assert.Empty(t, stack, "every element is closed")
	return st
}

func countKind(events []simulator.Event, k simulator.Kind) int {
	n := 0
	for _, ev := range events {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

func TestWriteSVGFinished(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.PointwisePipelinedOnly)
	x, err := rs.Topology().ParseVertexName("C#2")
	require.NoError(t, err)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(3), Seed: 2, Record: true,
		Failures: []simulator.Failure{{Task: x, After: 400 * time.Millisecond}}})
	require.Equal(t, simulator.Finished, res.Verdict)
	var buf bytes.Buffer
	require.NoError(t, simulator.WriteSVG(&buf, simulator.Timeline{
		Title: `FLIP-119 <pointwise> & "friends"`, Subtitle: "3 slots, seed 2",
		Slots: res.Slots, Regions: rs.NumRegions(), Makespan: res.Makespan, Events: res.Events,
	}))
	st := parseSVG(t, bytes.NewReader(buf.Bytes()))
	assert.Equal(t, []string{"slot 0", "slot 1", "slot 2"}, st.slotLabels, "one row label per slot")
	assert.Equal(t, countKind(res.Events, simulator.Deploy), st.bars, "one bar per deploy")
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
	assert.Equal(t, countKind(res.Events, simulator.Cancel), canceled)
	assert.Contains(t, buf.String(), "&lt;pointwise&gt; &amp; &#34;friends&#34;")
}

func TestWriteSVGDeadlockHatched(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	var res *simulator.Result
	for seed := uint64(1); seed <= 50; seed++ {
		res = run(t, simulator.Config{Regions: rs, Cluster: slots(4), Policy: simulator.EagerPolicy, Seed: seed, Ties: tiesFor(seed), Record: true})
		if res.Verdict == simulator.Deadlock {
			break
		}
	}
	require.Equal(t, simulator.Deadlock, res.Verdict)
	var buf bytes.Buffer
	require.NoError(t, simulator.WriteSVG(&buf, simulator.Timeline{Title: "eager", Slots: res.Slots, Regions: rs.NumRegions(), Makespan: res.Makespan, Events: res.Events}))
	st := parseSVG(t, bytes.NewReader(buf.Bytes()))
	assert.Len(t, st.slotLabels, 4)
	assert.Equal(t, countKind(res.Events, simulator.Deploy), st.bars)
	assert.Equal(t, len(res.Holding), st.hatched, "each task holding a slot at the end has a hatched end")
	assert.Positive(t, st.hatched)
}

// Many task attempts: the picture shows slot use per group of slots, not
// one bar per attempt, and its size does not grow with the run.
func TestWriteSVGLargeRunAggregated(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(5), Seed: 1, Record: true})
	replicate := func(n int) (simulator.Timeline, int) {
		var events []simulator.Event
		for i := range n {
			for _, ev := range res.Events {
				ev.At += time.Duration(i) * res.Makespan
				ev.Region += 12 * i
				events = append(events, ev)
			}
		}
		return simulator.Timeline{Title: "large", Slots: 5, Regions: 12 * n, Makespan: time.Duration(n) * res.Makespan, Events: events,
			Verdict: simulator.Finished, Reason: "finished: all tasks finished"}, countKind(events, simulator.Deploy)
	}
	sizes := map[int]int{}
	for _, n := range []int{500, 5000} {
		tl, deploys := replicate(n)
		require.Greater(t, deploys, 3000, "above the threshold of the detailed view")
		var buf bytes.Buffer
		require.NoError(t, simulator.WriteSVG(&buf, tl))
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
	var events []simulator.Event
	for round := range 5 {
		at := time.Duration(round) * time.Second
		for s := range 1000 {
			task := fmt.Sprintf("map#%d", round*1000+s)
			events = append(events, simulator.Event{At: at, Kind: simulator.Request, Task: task, Slot: simulator.NoSlot},
				simulator.Event{At: at, Kind: simulator.Deploy, Task: task, Slot: s})
		}
		for s := range 1000 {
			task := fmt.Sprintf("map#%d", round*1000+s)
			events = append(events, simulator.Event{At: at + time.Second, Kind: simulator.Finish, Task: task, Slot: s},
				simulator.Event{At: at + time.Second, Kind: simulator.Release, Task: task, Slot: s})
		}
	}
	var buf bytes.Buffer
	require.NoError(t, simulator.WriteSVG(&buf, simulator.Timeline{Slots: 1000, Makespan: 5 * time.Second, Events: events}))
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
		require.NoError(t, simulator.WriteSVG(&buf, simulator.Timeline{Regions: 12, Makespan: res.Makespan, Events: res.Events}))
	})
	st := parseSVG(t, bytes.NewReader(buf.Bytes()))
	assert.Len(t, st.slotLabels, 3)
	assert.Equal(t, 12, st.bars)

	// no events at all: an empty picture, still well-formed
	buf.Reset()
	require.NoError(t, simulator.WriteSVG(&buf, simulator.Timeline{Title: "empty"}))
	st = parseSVG(t, bytes.NewReader(buf.Bytes()))
	assert.Empty(t, st.slotLabels)
	assert.Zero(t, st.bars)
}

// Utilization splits into time in which work progressed and time slots
// were held by tasks that could not progress; a deadlocked run's waiting
// is not work.
func TestUtilizationSplitsWorkAndWaiting(t *testing.T) {
	for _, mode := range modes {
		rs := region.FromJob(flip119(t), mode)
		x, err := rs.Topology().ParseVertexName("C#1")
		require.NoError(t, err)
		for _, policy := range []simulator.Policy{simulator.RegionPolicy, simulator.EagerPolicy} {
			for seed := uint64(1); seed <= 5; seed++ {
				res := run(t, simulator.Config{Regions: rs, Cluster: slots(4), Policy: policy, Seed: seed, Ties: tiesFor(seed), Record: true,
					Failures: []simulator.Failure{{Task: x, After: 300 * time.Millisecond}}})
				assert.InDelta(t, res.Utilization, res.WorkUtilization+res.HeldWaiting, 1e-9, "%v %v seed %d", mode, policy, seed)
				assert.GreaterOrEqual(t, res.HeldWaiting, 0.0)
				assert.Equal(t, len(res.Events), res.TraceEvents, "every trace event is counted")
				if res.Verdict == simulator.Deadlock && res.Makespan > 0 {
					assert.Less(t, res.WorkUtilization, res.Utilization, "%v %v seed %d: waiting in a deadlock is not work", mode, policy, seed)
				}
			}
		}
	}
	res := run(t, simulator.Config{Regions: region.FromJob(flip119(t), exchange.AllPipelined), Cluster: slots(4), Policy: simulator.EagerPolicy,
		Seed: 1, Ties: simulator.TiesSeeded})
	require.Equal(t, simulator.Deadlock, res.Verdict)
	assert.InDelta(t, 3.0/8, res.WorkUtilization, 1e-9, "B#1 works 0-2 s, A#0 and A#1 0-1 s, of 4 slots for 2 s")
	assert.InDelta(t, 5.0/8, res.HeldWaiting, 1e-9)
	assert.Equal(t, 21, res.TraceEvents, "counted even when not recorded")
	assert.Empty(t, res.Events)
}

// assertTextsInside checks that no label is clipped: every text, with a
// width estimated at 0.55 em per character (0.6 bold; DejaVu Sans, what
// rsvg-convert draws Helvetica with, averages under 0.5 em on English
// text), lies inside the canvas.
func assertTextsInside(t *testing.T, st svgStats) {
	t.Helper()
	require.Positive(t, st.width)
	require.Positive(t, st.height)
	for _, b := range st.boxes {
		em := 0.55
		if b.bold {
			em = 0.6
		}
		w := em * b.size * float64(utf8.RuneCountInString(b.text))
		x0 := b.x
		switch b.anchor {
		case "middle":
			x0 -= w / 2
		case "end":
			x0 -= w
		}
		assert.GreaterOrEqual(t, x0, 0.0, "%q starts left of the canvas", b.text)
		assert.LessOrEqual(t, x0+w, st.width, "%q ends right of the canvas (width %.0f)", b.text, st.width)
		assert.GreaterOrEqual(t, b.y-b.size, 0.0, "%q above the canvas", b.text)
		assert.LessOrEqual(t, b.y, st.height, "%q below the canvas", b.text)
	}
}
