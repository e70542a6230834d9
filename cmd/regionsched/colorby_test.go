package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// legendTitle matches the title of a picture's legend: what its colours
// stand for.
var legendTitle = regexp.MustCompile(`^colour = [a-z ]+:$`)

// colourTitle is the title of the picture's legend ("colour = job:").
func colourTitle(t *testing.T, texts []string) string {
	t.Helper()
	for _, s := range texts {
		if legendTitle.MatchString(s) {
			return s
		}
	}
	t.Fatalf("no legend title in %q", texts)
	return ""
}

// tenantsFiles are the tenants case's cluster file with guarantees and
// its job files.
func tenantsFiles(t *testing.T) []string {
	t.Helper()
	bigs, err := filepath.Glob("../../examples/scenarios/tenants/big-*.json")
	require.NoError(t, err)
	require.Len(t, bigs, 2)
	dir := "../../examples/scenarios/tenants/"
	return append([]string{"--cluster", dir + "cluster.json", dir + "small-burst.json"}, bigs...)
}

// --color-by queue colours a run of several jobs by their queues: the
// legend names the queues (as the job files give them, hierarchical
// names included), one entry each, and no job.
func TestSimulateColorByQueue(t *testing.T) {
	res, svg := simulateSVG(t, append([]string{"--color-by", "queue"}, tenantsFiles(t)...)...)
	require.Equal(t, 0, res.code, res.stderr)
	texts, _ := svgTexts(t, svg)
	assert.Equal(t, "colour = queue:", colourTitle(t, texts))
	for _, q := range []string{"root.small", "root.big"} {
		assert.Contains(t, texts, q, "the legend names the queue")
	}
	for _, j := range []string{"small-burst", "big-etl", "big-report"} {
		assert.NotContains(t, texts, j, "no legend entry for a job")
	}

	dir := t.TempDir()
	var jobs []string
	for name, queue := range map[string]string{"etl": "root.prod.etl", "report": "root.prod.etl", "adhoc": "root.adhoc"} {
		path := filepath.Join(dir, name+".json")
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`{"name": %q, "queue": %q, "vertices": [{"id": "A", "parallelism": 1, "durationMs": 100}]}`, name, queue)), 0o644))
		jobs = append(jobs, path)
	}
	res, svg = simulateSVG(t, append([]string{"--slots", "2", "--color-by", "QUEUE"}, jobs...)...)
	require.Equal(t, 0, res.code, res.stderr)
	texts, _ = svgTexts(t, svg)
	for _, q := range []string{"root.prod.etl", "root.adhoc"} {
		n := 0
		for _, s := range texts {
			if s == q {
				n++
			}
		}
		assert.Equal(t, 1, n, "one legend entry for %s", q)
	}
}

// --color-by chooses what the colours of simulate's picture stand for;
// auto is what simulate drew before the flag: region for one job, job for
// several. A job coloured by queue or job alone gets one colour, named.
func TestSimulateColorByModes(t *testing.T) {
	flood, err := filepath.Glob("../../examples/jobs/flood/spark-*.json")
	require.NoError(t, err)
	one := []string{"--mode", "pointwise-pipelined-only", "--slots", "2", flip119Path}
	several := append([]string{"--slots", "4", "--queue-policy", "stateaware"}, flood...)
	for _, tc := range []struct {
		args    []string
		colorBy string
		title   string
		legend  string // an entry of the legend
	}{
		{one, "", "colour = region:", "region 5"},
		{one, "auto", "colour = region:", "region 0"},
		{one, "vertex", "colour = job vertex:", "C"},
		{one, "job", "colour = job:", "flip119-example"},
		{one, "queue", "colour = queue:", "root.default"},
		{several, "", "colour = job:", "spark-4"},
		{several, "region", "colour = region:", "region 0"},
		{several, "queue", "colour = queue:", "root.default"},
	} {
		args := tc.args
		if tc.colorBy != "" {
			args = append([]string{"--color-by", tc.colorBy}, args...)
		}
		res, svg := simulateSVG(t, args...)
		require.Equal(t, 0, res.code, "%v: %s", args, res.stderr)
		texts, _ := svgTexts(t, svg)
		assert.Equal(t, tc.title, colourTitle(t, texts), "%v", args)
		assert.Contains(t, texts, tc.legend, "%v", args)
	}
	// a job alone coloured by job is named in its bars, as one of several
	_, svg := simulateSVG(t, append([]string{"--color-by", "job"}, one...)...)
	assert.Contains(t, svg, "<title>flip119-example:A#0 (region 0, attempt 0)")
}

// A --color-by that names no colouring is bad input (exit 2) naming the
// valid ones, on simulate and on run, before anything runs.
func TestColorByBadValue(t *testing.T) {
	const want = `--color-by: unknown colouring "tenant" (valid: auto, region, vertex, job, queue)`
	for _, args := range [][]string{
		{"simulate", "--slots", "2", "--color-by", "tenant", flip119Path},
		{"simulate", "--slots", "2", "--color-by", "tenant", flip119Path, flip119Path},
		{"run", "--slurm", "--color-by", "tenant", flip119Path},
	} {
		res := execCLI(t, "", args...)
		assert.Equal(t, 2, res.code, "%v", args)
		assert.Contains(t, res.stderr, want, "%v", args)
		assert.NotContains(t, res.stdout, "makespan", "%v: nothing ran", args)
	}
	res := execCLI(t, "", "run", "--help")
	require.Equal(t, 0, res.code)
	assert.Contains(t, res.stdout, "--color-by")
	assert.Contains(t, res.stdout, "--svg")
	assert.True(t, strings.Contains(res.stdout, "queue (the queue each job was submitted to"))
}
