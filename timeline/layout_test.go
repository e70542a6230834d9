package timeline_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/timeline"
)

// picture runs a job and draws it the way simulate --svg does.
func picture(t *testing.T, rs *region.Regions, cfg simulator.Config, title string) (timeline.Timeline, *simulator.Result, string) {
	t.Helper()
	cfg.Regions, cfg.Record = rs, true
	res := run(t, cfg)
	tl := timeline.Timeline{Title: title, Subtitle: "subtitle", Slots: res.Slots, Regions: rs.NumRegions(),
		Makespan: res.Makespan, Events: res.Events, Verdict: res.Verdict, Reason: res.Reason}
	if cfg.Policy == simulator.EagerPolicy {
		tl.ColorBy = timeline.ColorByVertex
	}
	var buf bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, tl))
	return tl, res, buf.String()
}

// barRects returns the x, y, width of every <rect> inside a <g> whose
// title contains want.
func barRects(t *testing.T, svg, want string) [][3]float64 {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var out [][3]float64
	inBar, title := false, ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "g":
				inBar, title = true, ""
			case "rect":
				if inBar && strings.Contains(title, want) && !strings.HasPrefix(attr(tok, "fill"), "url(") && attr(tok, "class") == "" { // the bar, not its overlays
					out = append(out, [3]float64{attrFloat(t, tok, "x"), attrFloat(t, tok, "y"), attrFloat(t, tok, "width")})
				}
			}
		case xml.CharData:
			if inBar && title == "" {
				title = string(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "g" {
				inBar = false
			}
		}
	}
}

// deadlockLineX is the x of the red dashed line marking the deadlock.
func deadlockLineX(t *testing.T, svg string) float64 {
	t.Helper()
	i := strings.Index(svg, `stroke="#d62728" stroke-width="1.5" stroke-dasharray="6,3"`)
	require.Positive(t, i, "the deadlock is marked")
	line := svg[strings.LastIndex(svg[:i], "<line"):i]
	x := strings.TrimPrefix(strings.Fields(line)[1], `x1="`)
	f, err := strconv.ParseFloat(strings.TrimSuffix(x, `"`), 64)
	require.NoError(t, err)
	return f
}

// A deadlock picture explains the deadlock: the verdict, bars that stop at
// the deadlock, the requests waiting for a slot and what every slot holds.
func TestWriteSVGDeadlockExplains(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	_, res, svg := picture(t, rs, simulator.Config{Cluster: slots(4), Policy: simulator.EagerPolicy, Seed: 1, Ties: simulator.TiesSeeded}, "eager")
	require.Equal(t, runfile.Deadlock, res.Verdict)
	require.Equal(t, 2*time.Second, res.Makespan)
	st := parseSVG(t, strings.NewReader(svg))
	assertTextsInside(t, st)

	// the verdict, whole, in the picture
	assert.Contains(t, strings.Join(st.texts, " "), res.Reason)
	// a task was deployed at the deadlock, so the axis goes on past it
	// for a tenth of the run: what still holds a slot is drawn on to the
	// end of the axis, everything else ends before the deadlock
	xd := deadlockLineX(t, svg)
	bars := barRects(t, svg, "")
	require.Len(t, bars, countKind(res.Events, runfile.Deploy))
	holding := barRects(t, svg, "still holding")
	require.NotEmpty(t, holding)
	xEnd := holding[0][0] + holding[0][2]
	assert.InDelta(t, xd+(xd-xLeft(t, svg))/10, xEnd, 1, "the axis goes on for a tenth of the run")
	for _, b := range holding {
		assert.InDelta(t, xEnd, b[0]+b[2], 0.1, "a task holding its slot is drawn to the end of the axis")
		assert.LessOrEqual(t, b[0], xd+0.1, "and starts by the deadlock")
	}
	assert.Equal(t, len(bars)-len(holding), len(barRects(t, svg, "finished")))
	for _, b := range barRects(t, svg, "finished") {
		assert.LessOrEqual(t, b[0]+b[2], xd+1.6, "a finished bar runs past the deadlock: %v", b) // 1.5 px: the least width of a bar
	}
	assert.Len(t, barRects(t, svg, "still holding"), len(res.Holding))
	assert.Equal(t, len(res.Holding), st.hatched)
	// the waiting request, from when, and the state of each slot
	require.Equal(t, []string{"C#1"}, res.Waiting)
	assert.Contains(t, st.texts, "C#1 waits for a slot since 0 ms")
	assert.Equal(t, 1, strings.Count(svg, `class="waiting"`), "one waiting request drawn on the time axis")
	assert.Contains(t, st.texts, "at the deadlock (2000 ms)")
	for _, h := range res.Holding {
		assert.Contains(t, st.texts, h+" holds the slot, cannot progress")
	}
	// the axis ends a tenth past the deadlock
	assert.Contains(t, st.texts, "2.0s")
	assert.NotContains(t, st.texts, "2.5s")
	assert.Contains(t, st.texts, "colour = job vertex:", "the eager policy has no regions")
	assert.Empty(t, st.regionLabels)
}

// A deadlock at 0 ms has no time to show: no meaningless axis, the state of
// every slot, and no clipped label.
func TestWriteSVGDeadlockAtZero(t *testing.T) {
	rs := region.FromJob(testjobs.Load(t, "cycle-side-input.json"), exchange.AllPipelined)
	_, res, svg := picture(t, rs, simulator.Config{Cluster: slots(8), Policy: simulator.EagerPolicy, Seed: 1}, "side input")
	require.Equal(t, runfile.Deadlock, res.Verdict)
	require.Zero(t, res.Makespan)
	st := parseSVG(t, strings.NewReader(svg))
	assertTextsInside(t, st)
	assert.Contains(t, strings.Join(st.texts, " "), res.Reason)
	assert.Contains(t, st.texts, "every event of the run happened at 0 ms")
	assert.NotContains(t, st.texts, "1.0s")
	assert.NotContains(t, svg, "gresses after", "no label cut at the left edge")
	free := 0
	for _, s := range st.texts {
		if s == "free" {
			free++
		}
	}
	assert.Equal(t, 8-len(res.Holding), free)
	for _, h := range res.Holding {
		assert.Contains(t, st.texts, h+" holds the slot, cannot progress")
	}
}

// No label leaves the canvas, whatever the picture: long titles and
// verdicts wrap, narrow bars drop their names.
func TestWriteSVGLabelsInsideTheCanvas(t *testing.T) {
	flip := flip119(t)
	x, err := region.FromJob(flip, exchange.PointwisePipelinedOnly).Topology().ParseVertexName("B#1")
	require.NoError(t, err)
	cases := []struct {
		name string
		rs   *region.Regions
		cfg  simulator.Config
	}{
		{"failover", region.FromJob(flip, exchange.PointwisePipelinedOnly), simulator.Config{Cluster: slots(2), Seed: 1,
			Failures: []simulator.Failure{{Task: x, After: 500 * time.Millisecond}}}},
		{"eager deadlock", region.FromJob(flip, exchange.AllPipelined), simulator.Config{Cluster: slots(4), Policy: simulator.EagerPolicy, Seed: 1}},
		{"failed job", region.FromJob(flip, exchange.AllPipelined), simulator.Config{Cluster: slots(3), Seed: 1}},
		{"wordcount", region.FromJob(testjobs.Load(t, "wordcount.json"), exchange.AllBlocking), simulator.Config{Cluster: slots(8), Seed: 1}},
	}
	long := strings.Repeat("a very long title that goes on ", 8) + strings.Repeat("x", 300)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, svg := picture(t, tc.rs, tc.cfg, long)
			st := parseSVG(t, strings.NewReader(svg))
			assertTextsInside(t, st)
			assert.Contains(t, svg, "…", "the word longer than a line is cut")
		})
	}
}

// Many regions are coloured by job vertex; a few by region.
func TestWriteSVGColours(t *testing.T) {
	_, _, svg := picture(t, region.FromJob(testjobs.Load(t, "wordcount.json"), exchange.AllBlocking), simulator.Config{Cluster: slots(8), Seed: 1}, "wc")
	st := parseSVG(t, strings.NewReader(svg))
	assert.Contains(t, st.texts, "colour = job vertex:", "28 regions")
	assert.Empty(t, st.regionLabels)
	for _, v := range []string{"text-source", "tokenizer", "counter", "result-sink"} {
		assert.Contains(t, st.texts, v)
	}
	assert.Contains(t, st.texts, "tokenizer#2", "a wide bar keeps its task's name")

	_, _, svg = picture(t, region.FromJob(flip119(t), exchange.PointwisePipelinedOnly), simulator.Config{Cluster: slots(2), Seed: 1}, "flip")
	st = parseSVG(t, strings.NewReader(svg))
	assert.Contains(t, st.texts, "colour = region:")
	assert.Len(t, st.regionLabels, 6)
}

// TestWriteSVGRendersToPNG renders the pictures with rsvg-convert, as a
// person would look at them, when it is installed (make pictures installs
// it; CI has only Go).
func TestWriteSVGRendersToPNG(t *testing.T) {
	bin, err := exec.LookPath("rsvg-convert")
	if err != nil {
		t.Skip("rsvg-convert not installed (apt-get install librsvg2-bin, or make pictures): PNG rendering not checked")
	}
	dir := t.TempDir()
	flip := flip119(t)
	pics := map[string]struct {
		rs  *region.Regions
		cfg simulator.Config
	}{
		"pointwise": {region.FromJob(flip, exchange.PointwisePipelinedOnly), simulator.Config{Cluster: slots(2), Seed: 1}},
		"deadlock":  {region.FromJob(flip, exchange.AllPipelined), simulator.Config{Cluster: slots(4), Policy: simulator.EagerPolicy, Seed: 1}},
		"zero":      {region.FromJob(testjobs.Load(t, "cycle-side-input.json"), exchange.AllPipelined), simulator.Config{Cluster: slots(8), Policy: simulator.EagerPolicy, Seed: 1}},
	}
	for name, pc := range pics {
		_, _, svg := picture(t, pc.rs, pc.cfg, name)
		in, out := filepath.Join(dir, name+".svg"), filepath.Join(dir, name+".png")
		require.NoError(t, os.WriteFile(in, []byte(svg), 0o644))
		msg, err := exec.Command(bin, "-o", out, in).CombinedOutput()
		require.NoError(t, err, "rsvg-convert %s: %s", name, msg)
		png, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG")), name)
		assert.Greater(t, len(png), 5000, "%s: a picture, not an empty canvas", name)
	}
}

// xLeft returns the x of the time axis' origin: where its first label,
// 0 of some unit, is centred.
func xLeft(t *testing.T, svg string) float64 {
	t.Helper()
	for _, b := range parseSVG(t, strings.NewReader(svg)).boxes {
		if b.text == "0.0s" || b.text == "0ms" || b.text == "0s" {
			return b.x
		}
	}
	require.Fail(t, "no 0 label on the time axis")
	return 0
}
