package timeline_test

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flip119 is the FLIP-119 example job.
func flip119(t testing.TB) *topology.JobGraph { return testjobs.FLIP119(t) }

// slots is a cluster of n unknown-sized slots.
func slots(n int) []resource.Count { return []resource.Count{{Profile: resource.Unknown, N: n}} }

// run simulates and fails the test on a configuration error.
func run(t testing.TB, cfg simulator.Config) *simulator.Result {
	t.Helper()
	res, err := simulator.Run(cfg)
	require.NoError(t, err)
	require.NotNil(t, res)
	return res
}

// tiesFor is the tie order a test over seeds runs seed with: one seed in
// four in order, the others seeded.
func tiesFor(seed uint64) simulator.TieOrder {
	if seed%4 == 1 {
		return simulator.TiesInOrder
	}
	return simulator.TiesSeeded
}

// decodeJob decodes a job file's text into a job of a multi-job run.
func decodeJob(t *testing.T, text string) runfile.Job {
	t.Helper()
	g, err := topology.Decode(strings.NewReader(text))
	require.NoError(t, err)
	return runfile.Job{Name: g.Name(), Job: g}
}

// floodJobs loads the four jobs with drivers of examples/jobs/flood.
func floodJobs(t *testing.T) []runfile.Job {
	t.Helper()
	paths, err := filepath.Glob("../examples/jobs/flood/spark-*.json")
	require.NoError(t, err)
	require.Len(t, paths, 4)
	var jobs []runfile.Job
	for _, p := range paths {
		f, err := os.Open(p)
		require.NoError(t, err)
		g, err := topology.Decode(f)
		require.NoError(t, f.Close())
		require.NoError(t, err)
		jobs = append(jobs, runfile.Job{Name: g.Name(), Job: g})
	}
	return jobs
}

// chains is a job of `length` vertices of parallelism p connected by
// forward edges, every subtask running 100 ms.
func chains(tb testing.TB, length, p int) *topology.JobGraph {
	tb.Helper()
	b := topology.NewBuilder(fmt.Sprintf("chains-%dx%d", length, p))
	for i := range length {
		b.AddVertex(topology.JobVertex{ID: fmt.Sprintf("v%d", i), Parallelism: p, Duration: 100 * time.Millisecond})
		if i > 0 {
			b.Connect(fmt.Sprintf("v%d", i-1), fmt.Sprintf("v%d", i), exchange.Forward)
		}
	}
	job, err := b.Build()
	require.NoError(tb, err)
	return job
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

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

func countKind(events []runfile.Event, k runfile.Kind) int {
	n := 0
	for _, ev := range events {
		if ev.Kind == k {
			n++
		}
	}
	return n
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
