package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simulateSVG runs simulate with --svg and returns the summary, the exit
// code and the picture.
func simulateSVG(t *testing.T, args ...string) (cliResult, string) {
	t.Helper()
	svg := filepath.Join(t.TempDir(), "run.svg")
	res := execCLI(t, "", append([]string{"simulate", "--svg", svg}, args...)...)
	data, err := os.ReadFile(svg)
	require.NoError(t, err, res.stdout+res.stderr)
	return res, string(data)
}

// The picture's title says how the jobs were admitted, as the summary
// does: the cluster file's queues with their policies, and the policy of
// any other queue.
func TestPictureTitleNamesTheQueuePolicies(t *testing.T) {
	files := gangRepro(t, "reclaim-victim-order", "cluster.json", "low.json", "mid.json", "high.json")
	res, svg := simulateSVG(t, "--cluster", files[0], files[1], files[2], files[3])
	require.Equal(t, 0, res.code, res.stdout)
	const admitted = "queues root.default priority, any other queue fifo"
	assert.Contains(t, res.stdout, admitted)
	texts, _ := svgTexts(t, svg)
	title := strings.Join(texts, " ")
	assert.Contains(t, title, "3 jobs — all-blocking, region policy, "+admitted+", 2 slots")
	assert.NotContains(t, title, "fifo queues")
	// its reclaims are drawn on the admission's lane
	assert.Contains(t, texts, "reclaim mid → low")
	assert.Contains(t, texts, "reclaim high → low")

	res, svg = simulateSVG(t, "--slots", "2", "--queue-policy", "stateaware", files[1], files[2])
	require.Equal(t, 0, res.code, res.stdout)
	texts, _ = svgTexts(t, svg)
	assert.Contains(t, strings.Join(texts, " "), "2 jobs — all-blocking, region policy, queue policy stateaware, 2 slots")
}

// The eager deadlock of FLIP-119's example: the summary says half the
// slot time was held while waiting; the picture hatches B#0 and B#1, the
// two tasks holding two of four slots, from their deploy to the deadlock.
func TestPictureHeldWhileWaiting(t *testing.T) {
	res, svg := simulateSVG(t, "--mode", "all-pipelined", "--slots", "4", "--policy", "eager", flip119Path)
	require.Equal(t, 1, res.code, res.stdout)
	assert.Contains(t, res.stdout, "held waiting:      50.0% of slot time")
	assert.Equal(t, 2, strings.Count(svg, `class="stalled"`))
	for _, task := range []string{"B#0", "B#1"} {
		assert.Contains(t, svg, "<title>"+task+" (region 0, attempt 0) slot ")
		assert.Regexp(t, task+` \(region 0, attempt 0\) slot \d: 0 ms - 1000 ms, still holding its slot at the end; held without progress for 1000 ms`, svg)
	}
	texts, _ := svgTexts(t, svg)
	assert.Contains(t, texts, "holds its slot without progress (held while waiting)")
}

// A stream's picture draws the stream running for a window after the
// last event and says so, instead of a 1 ms axis and a utilization of 0.
func TestPictureStreamWindow(t *testing.T) {
	stream := writeTemp(t, "st.json", `{"name":"st","vertices":[{"id":"a","parallelism":1,"bounded":false}]}`)
	res, svg := simulateSVG(t, "--slots", "2", stream)
	require.Equal(t, 0, res.code, res.stdout)
	texts, _ := svgTexts(t, svg)
	all := strings.Join(texts, " ")
	assert.Contains(t, all, "a stream runs on: no makespan; the last event at 0 ms, drawn to 1000 ms")
	assert.NotContains(t, all, "0% with work progressing")
	assert.Contains(t, texts, "stream: runs on beyond this window (last event at 0 ms, drawn 1000 ms further)")
	assert.Contains(t, texts, "a#0")
	assert.Contains(t, texts, "1.0s")
}

// A gang's placeholders are drawn on their slots while the other job
// waits for them.
func TestPictureGangPlaceholders(t *testing.T) {
	files := gangRepro(t, "gang-rejected-modelled-slots", "placeholders.json", "wide.json")
	res, svg := simulateSVG(t, "--slots", "10", files[0], files[1])
	require.Equal(t, 0, res.code, res.stdout)
	assert.Equal(t, 7, strings.Count(svg, `class="kept"`))
	texts, _ := svgTexts(t, svg)
	assert.Contains(t, texts, "reserved for gang of gang")
}

// A job in a queue the cluster file does not configure runs in a queue
// the admission creates with --queue-policy: the summary says so in one
// line naming the queues, in the order the jobs name them.
func TestSimulateNamesTheQueuesTheClusterFileLacks(t *testing.T) {
	cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 2}], "queues": [{"name": "root.etl", "policy": "priority"}]}`)
	job := func(name, queue string) string {
		return writeTemp(t, name+".json", `{"name": "`+name+`", "queue": "`+queue+`", "vertices": [{"id": "a", "parallelism": 1}], "edges": []}`)
	}
	res := execCLI(t, "", "simulate", "--cluster", cluster, "--queue-policy", "fairshare",
		job("a", "root.etl"), job("b", "root.urgent"), job("c", "root.adhoc"), job("d", "root.urgent"))
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "\nnot in the cluster file's queues, so created with --queue-policy fairshare: root.urgent, root.adhoc\n")

	// every queue configured: no such line
	res = execCLI(t, "", "simulate", "--cluster", cluster, job("a", "root.etl"), job("e", "root.etl"))
	require.Equal(t, 0, res.code, res.stderr)
	assert.NotContains(t, res.stdout, "not in the cluster file's queues")
}
