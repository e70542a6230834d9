package runcli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/runcli"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/timeline"
)

// tracingBackend runs every job of its input as one task in a slot of
// its own, from 10 ms to 100 ms (a run of one job names no job in its
// events, as the backends' traces do), and counts its runs.
type tracingBackend struct{ runs int }

func (f *tracingBackend) backend() runcli.Backend {
	return runcli.Backend{
		Name: "Fake",
		Run: func(_ context.Context, in runcli.Input) (runcli.Result, error) {
			f.runs++
			var out []runcli.Outcome
			for i, j := range in.Jobs {
				job := j.Name
				if len(in.Jobs) == 1 {
					job = ""
				}
				for _, e := range []runfile.Event{
					{At: 0, Kind: runfile.Request, Job: job, Task: "A#0", Slot: runfile.NoSlot},
					{At: 10 * time.Millisecond, Kind: runfile.Deploy, Job: job, Task: "A#0", Slot: i},
					{At: 100 * time.Millisecond, Kind: runfile.Finish, Job: job, Task: "A#0", Slot: i},
					{At: 100 * time.Millisecond, Kind: runfile.Release, Job: job, Task: "A#0", Slot: i},
				} {
					in.Trace(e)
				}
				out = append(out, runcli.Outcome{Name: j.Name, End: 100 * time.Millisecond, Work: "1 task run"})
			}
			return runcli.Result{Jobs: out, Slots: len(in.Jobs)}, nil
		},
	}
}

// executeFiles runs "x run ARGS" over the backend b.
func executeFiles(t *testing.T, b runcli.Backend, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var flags runcli.Flags
	root := &cobra.Command{Use: "x", SilenceUsage: true, SilenceErrors: true}
	c := &cobra.Command{Use: "run", RunE: func(c *cobra.Command, args []string) error {
		return flags.Execute(c, args, strings.NewReader(""), b)
	}}
	flags.Add(c, "events", "audit")
	root.AddCommand(c)
	var out, errOut bytes.Buffer
	code = runcli.Main(root, append([]string{"run"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// queueJobs writes job files of one task each into dir, job name ->
// queue ("" names none), and returns their paths in the order of names.
func queueJobs(t *testing.T, dir string, names []string, queues map[string]string) []string {
	t.Helper()
	var paths []string
	for _, name := range names {
		queue := ""
		if q := queues[name]; q != "" {
			queue = fmt.Sprintf(`, "queue": %q`, q)
		}
		path := filepath.Join(dir, name+".json")
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`{"name": %q%s, "vertices": [{"id": "A", "parallelism": 1}]}`, name, queue)), 0o644))
		paths = append(paths, path)
	}
	return paths
}

// A run draws its picture with --svg: by job unless --color-by says
// otherwise; by queue the legend names the queues as the job files give
// them, one colour each.
func TestExecuteSVGColorBy(t *testing.T) {
	dir := t.TempDir()
	names := []string{"etl", "report", "adhoc"}
	paths := queueJobs(t, dir, names, map[string]string{"etl": "root.prod.etl", "report": "root.prod.etl", "adhoc": "root.adhoc"})
	draw := func(t *testing.T, args ...string) string {
		t.Helper()
		svg := filepath.Join(dir, "run.svg")
		code, stdout, stderr := executeFiles(t, (&tracingBackend{}).backend(), append(append([]string{"--svg", svg}, args...), paths...)...)
		require.Equal(t, runcli.ExitOK, code, stderr)
		assert.Contains(t, stdout, "finished: all 3 jobs finished at 100 ms")
		data, err := os.ReadFile(svg)
		require.NoError(t, err)
		return string(data)
	}

	byJob := draw(t)
	assert.Contains(t, byJob, ">3 jobs on Fake</text>")
	assert.Contains(t, byJob, ">colour = job:</text>")
	for _, n := range names {
		assert.Contains(t, byJob, ">"+n+"</text>", "the legend names the job")
	}

	byQueue := draw(t, "--color-by", "Queue")
	assert.Contains(t, byQueue, ">colour = queue:</text>")
	assert.NotContains(t, byQueue, "colour = job:")
	for _, q := range []string{"root.prod.etl", "root.adhoc"} {
		assert.Equal(t, 1, strings.Count(byQueue, ">"+q+"</text>"), "one legend entry for %s", q)
	}
	assert.Contains(t, byQueue, "finished: all 3 jobs finished at 100 ms", "the verdict is in the picture")

	byRegion := draw(t, "--color-by", "region")
	assert.Contains(t, byRegion, ">colour = region:</text>")
}

// A run of one job names no job in its events: coloured by queue (or
// job) the picture names it, one colour for its queue; by default it is
// coloured by region.
func TestExecuteSVGOneJob(t *testing.T) {
	dir := t.TempDir()
	paths := queueJobs(t, dir, []string{"etl"}, nil)
	code, stdout, stderr := executeFiles(t, (&tracingBackend{}).backend(), "--svg", "-", "--color-by", "queue", paths[0])
	require.Equal(t, runcli.ExitOK, code, stderr)
	assert.Contains(t, stdout, ">colour = queue:</text>")
	assert.Contains(t, stdout, ">"+runcli.DefaultQueue+"</text>", "a job naming no queue is in root.default")
	assert.Contains(t, stdout, "<title>etl:A#0 ", "the bar names the job")
	assert.Equal(t, `job "etl" on Fake: mode all-blocking, policy region, 1 slot
fake: job etl: 1 task run
makespan:          100 ms of real time, until the last event
slot utilization:  90.0% of slot time with work progressing
held waiting:      0.0% of slot time held with no task in it
regions scheduled: 1 deployment of 1 region
restarts:          0 (regions restarted: 0)
finished: the only task finished at 100 ms
`, stderr, "the picture on standard output, the summary on standard error")

	code, stdout, stderr = executeFiles(t, (&tracingBackend{}).backend(), "--svg", "-", paths[0])
	require.Equal(t, runcli.ExitOK, code, stderr)
	assert.Contains(t, stdout, ">colour = region:</text>")
	assert.Contains(t, stdout, ">1 job on Fake</text>")
}

// A --color-by that names no colouring, or two outputs on standard
// output, are bad input before anything runs.
func TestExecuteSVGBadInput(t *testing.T) {
	paths := queueJobs(t, t.TempDir(), []string{"etl"}, nil)
	f := &tracingBackend{}
	code, _, stderr := executeFiles(t, f.backend(), "--svg", "-", "--color-by", "tenant", paths[0])
	assert.Equal(t, runcli.ExitBadInput, code)
	assert.Equal(t, "x run: --color-by: unknown colouring \"tenant\" (valid: auto, region, vertex, job, queue)\n", stderr)
	code, _, stderr = executeFiles(t, f.backend(), "--svg", "-", "--trace", "-", paths[0])
	assert.Equal(t, runcli.ExitBadInput, code)
	assert.Contains(t, stderr, "only one output can go to standard output")
	assert.Zero(t, f.runs, "nothing ran")
}

func TestParseColorBy(t *testing.T) {
	for in, want := range map[string]timeline.ColorBy{"region": timeline.ColorByRegion, " Vertex ": timeline.ColorByVertex,
		"JOB": timeline.ColorByJob, "queue": timeline.ColorByQueue} {
		c, err := runcli.ParseColorBy(in)
		require.NoError(t, err, in)
		tl := timeline.Timeline{ColorBy: timeline.ColorByJob}
		c.Apply(&tl, nil)
		assert.Equal(t, want, tl.ColorBy, in)
		assert.Equal(t, want == timeline.ColorByJob || want == timeline.ColorByQueue, c.ByJob(), in)
	}
	auto, err := runcli.ParseColorBy("auto")
	require.NoError(t, err)
	tl := timeline.Timeline{ColorBy: timeline.ColorByJob}
	auto.Apply(&tl, nil)
	assert.Equal(t, timeline.ColorByJob, tl.ColorBy, "auto keeps the command's default")
	assert.False(t, auto.ByJob())

	_, err = runcli.ParseColorBy("")
	var ce *runcli.ColorByError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, []string{"auto", "region", "vertex", "job", "queue"}, ce.Valid)
	var ee *runcli.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, runcli.ExitBadInput, ee.Code)
}
