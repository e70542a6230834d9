package simulator_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

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

// TestTraceEscapesControlCharacters: every trace line of a run whose
// vertex ids contain control characters is valid JSON that gives the id
// back (strconv.Quote would write \x01, which JSON does not know).
func TestTraceEscapesControlCharacters(t *testing.T) {
	rs := region.FromJob(oddJob(t), exchange.AllBlocking)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 1, Record: true})
	require.Equal(t, simulator.Finished, res.Verdict)
	var buf bytes.Buffer
	require.NoError(t, simulator.WriteTrace(&buf, res.Events))
	tasks := map[string]bool{}
	sc := bufio.NewScanner(&buf)
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		require.True(t, json.Valid(line), "%q", line)
		var l traceLine
		require.NoError(t, json.Unmarshal(line, &l), "%q", line)
		require.NotNil(t, l.Task)
		assert.Equal(t, res.Events[n].Task, *l.Task, "the task name comes back exactly")
		tasks[*l.Task] = true
		n++
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, len(res.Events), n)
	for _, id := range oddIDs {
		assert.True(t, tasks[id+"#0"], "%q#0 in the trace", id)
	}

	// invalid UTF-8 (not possible from a job file, but from the library)
	line := simulator.Event{Kind: simulator.Deploy, Task: "bad\xff#0", Slot: 3}.AppendJSON(nil)
	require.True(t, json.Valid(line), "%q", line)
	var l traceLine
	require.NoError(t, json.Unmarshal(line, &l))
	assert.Equal(t, "bad\ufffd#0", *l.Task)
	assert.Contains(t, string(line), `"task": "bad\ufffd#0"`)
}

// TestWriteSVGSanitizesText: an SVG of a run whose vertex ids (and title)
// contain control characters is well-formed XML (encoding/xml parses it;
// rsvg-convert rejected &#1; and raw U+0001 alike), the characters shown
// as U+FFFD.
func TestWriteSVGSanitizesText(t *testing.T) {
	rs := region.FromJob(oddJob(t), exchange.AllBlocking)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 1, Record: true})
	var buf bytes.Buffer
	require.NoError(t, simulator.WriteSVG(&buf, simulator.Timeline{
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
	assert.Equal(t, countKind(res.Events, simulator.Deploy), st.bars)
	assert.Contains(t, svg, "job \ufffd &lt;odd&gt; \ufffd &amp; \ufffd")
	assert.Contains(t, svg, "tab\tand\ufffdbackspace")
	joined := strings.Join(st.titles, "\n")
	for _, want := range []string{"A\ufffdx#0", "nul\ufffd#1", "esc\ufffd[31m#0", `q"uote\back#1`, "<&>'#0", "\u007fdel#1", "nonchar\ufffd\ufffd#0", "é✗🚀#1"} {
		assert.Contains(t, joined, want+" (region", "bar title of %q", want)
	}
}
