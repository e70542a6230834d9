package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floodJobs are the four jobs with drivers of examples/jobs/flood.
func floodJobs(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../../examples/jobs/flood/spark-*.json")
	require.NoError(t, err)
	require.Len(t, paths, 4)
	return paths
}

// jobLineRE is a job's line of the summary of a run of several jobs
// (docs/job-file.md): times in ms, "-" for what never happened.
var jobLineRE = regexp.MustCompile(`^job "([^"]+)": submitted (\d+ ms), first deploy (\d+ ms|-), finished (\d+ ms|-), wait (\d+ ms|-), makespan (\d+ ms|-); (.+)$`)

// jobLines returns the job lines of a summary by job name.
func jobLines(t *testing.T, stdout string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "job ") {
			m := jobLineRE.FindStringSubmatch(l)
			require.NotNil(t, m, "job line %q", l)
			out[m[1]] = m[2:]
		}
	}
	return out
}

// lastLine is the verdict line of a summary.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestSimulateJobsDriverFlood(t *testing.T) {
	jobs := floodJobs(t)
	t.Run("fifo deadlocks on drivers", func(t *testing.T) {
		res := execCLI(t, "", append([]string{"simulate", "--slots", "4", "--queue-policy", "fifo"}, jobs...)...)
		require.Equal(t, 1, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Empty(t, res.stderr, "a negative verdict is printed once, on standard output")
		verdict := lastLine(res.stdout)
		assert.True(t, strings.HasPrefix(verdict, "deadlock: "), verdict)
		assert.Contains(t, verdict, "jobs spark-1, spark-2, spark-3, spark-4 never finish")
		assert.Contains(t, verdict, "spark-1:driver, spark-2:driver, spark-3:driver, spark-4:driver hold slots while waiting")
		assert.Equal(t, 1, strings.Count(res.stdout, "deadlock: "), "the verdict once")
		lines := jobLines(t, res.stdout)
		require.Len(t, lines, 4)
		// its driver holds a slot from 100 ms, but no task ever ran
		assert.Equal(t, []string{"100 ms", "-", "-", "-", "-", "never finished (deadlock; stuck starting)"}, lines["spark-2"])
	})
	for _, policy := range []string{"stateaware", "StateAware", "STATEAWARE"} {
		t.Run(policy+" finishes", func(t *testing.T) {
			res := execCLI(t, "", append([]string{"simulate", "--slots", "4", "--queue-policy", policy}, jobs...)...)
			require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
			assert.Empty(t, res.stderr)
			assert.Equal(t, "finished: all 4 jobs finished at 16000 ms", lastLine(res.stdout))
			lines := jobLines(t, res.stdout)
			require.Len(t, lines, 4)
			// first deploy: the first task, after the driver's startup of 1000 ms
			assert.Equal(t, []string{"0 ms", "1000 ms", "4000 ms", "1000 ms", "4000 ms", "finished"}, lines["spark-1"])
			assert.Equal(t, []string{"100 ms", "5000 ms", "8000 ms", "4900 ms", "7900 ms", "finished"}, lines["spark-2"])
			assert.Contains(t, res.stdout, "4 jobs: mode all-blocking, policy region, queue policy stateaware, 4 slots, seed 1\n")
		})
	}
	t.Run("maxRunningJobs 1 finishes", func(t *testing.T) {
		cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 4}], "queues": [{"name": "root.default", "maxRunningJobs": 1}]}`)
		res := execCLI(t, "", append([]string{"simulate", "--cluster", cluster}, jobs...)...)
		require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.True(t, strings.HasPrefix(lastLine(res.stdout), "finished: "), res.stdout)
		assert.Contains(t, res.stdout, "queues root.default fifo, any other queue fifo")
		assert.Len(t, jobLines(t, res.stdout), 4)
	})
	t.Run("the summary names the queues' guarantees and maxima", func(t *testing.T) {
		cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 4}], "queues": [{"name": "root.default", "policy": "stateaware", "guaranteedSlots": 2, "maxSlots": 4},
			{"name": "root.other", "maxSlots": 3}]}`)
		res := execCLI(t, "", append([]string{"simulate", "--cluster", cluster}, jobs...)...)
		require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Contains(t, res.stdout, "4 jobs: mode all-blocking, policy region, queues root.default stateaware guaranteed 2 max 4, root.other fifo max 3, any other queue fifo, 4 slots")
	})
	t.Run("the example cluster file's fifo queue deadlocks, --queue-policy does not override it", func(t *testing.T) {
		res := execCLI(t, "", append([]string{"simulate", "--cluster", "../../examples/jobs/flood/cluster-4.json", "--queue-policy", "stateaware"}, jobs...)...)
		require.Equal(t, 1, res.code, res.stdout)
		assert.True(t, strings.HasPrefix(lastLine(res.stdout), "deadlock: "), res.stdout)
	})
	t.Run("a queue not configured is created with --queue-policy", func(t *testing.T) {
		dir := t.TempDir()
		var paths []string
		for _, p := range jobs {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			q := strings.Replace(string(data), `"submitAtMs"`, `"queue": "root.spark", "submitAtMs"`, 1)
			paths = append(paths, filepath.Join(dir, filepath.Base(p)))
			require.NoError(t, os.WriteFile(paths[len(paths)-1], []byte(q), 0o600))
		}
		cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 4}], "queues": [{"name": "root.default", "policy": "fifo"}]}`)
		res := execCLI(t, "", append([]string{"simulate", "--cluster", cluster, "--queue-policy", "stateaware"}, paths...)...)
		assert.Equal(t, 0, res.code, res.stdout)
		res = execCLI(t, "", append([]string{"simulate", "--cluster", cluster, "--queue-policy", "fifo"}, paths...)...)
		assert.Equal(t, 1, res.code, res.stdout)
	})
	t.Run("the trace carries the job", func(t *testing.T) {
		trace := filepath.Join(t.TempDir(), "t.jsonl")
		res := execCLI(t, "", append([]string{"simulate", "--slots", "4", "--queue-policy", "stateaware", "--trace", trace}, jobs...)...)
		require.Equal(t, 0, res.code, res.stderr)
		lines := readTrace(t, trace)
		require.NotEmpty(t, lines)
		drivers := map[string]int{}
		var last int64
		for _, l := range lines {
			require.NotNil(t, l.Job, "every event names its job: %+v", l)
			assert.Regexp(t, `^spark-[1-4]$`, *l.Job)
			assert.GreaterOrEqual(t, *l.T, last, "time order")
			last = *l.T
			if l.Task == "driver" {
				assert.Equal(t, -1, *l.Region, "a driver is in no region")
				if l.Event == "deploy" {
					drivers[*l.Job]++
				}
			}
		}
		assert.Equal(t, map[string]int{"spark-1": 1, "spark-2": 1, "spark-3": 1, "spark-4": 1}, drivers)
	})
	t.Run("the picture: a colour per job, drivers marked", func(t *testing.T) {
		svg := filepath.Join(t.TempDir(), "t.svg")
		res := execCLI(t, "", append([]string{"simulate", "--slots", "4", "--svg", svg, "--queue-policy", "fifo"}, jobs...)...)
		require.Equal(t, 1, res.code, res.stderr)
		data, err := os.ReadFile(svg)
		require.NoError(t, err)
		texts, drivers := svgTexts(t, string(data))
		assert.Equal(t, 4, drivers, "four driver bars")
		for _, want := range []string{"colour = job:", "spark-1", "spark-4", "driver (job master) in its job's colour", "slot 3",
			"spark-2 driver holds the slot, job waits"} {
			assert.Contains(t, texts, want)
		}
		assert.Contains(t, strings.Join(texts, " "), "deadlock: at 1300 ms")
	})
	t.Run("one job file with --queue-policy goes through the admission", func(t *testing.T) {
		res := execCLI(t, "", "simulate", "--slots", "4", "--queue-policy", "fifo", jobs[0])
		require.Equal(t, 0, res.code, res.stderr)
		assert.Contains(t, res.stdout, `job "spark-1": submitted 0 ms, first deploy 1000 ms, finished 4000 ms, wait 1000 ms, makespan 4000 ms; finished`)
	})
	t.Run("a job that can never fit is rejected, the others run", func(t *testing.T) {
		big := writeTemp(t, "big.json", `{"name": "big", "vertices": [{"id": "a", "parallelism": 5}, {"id": "b", "parallelism": 5}],
			"edges": [{"source": "a", "target": "b", "shipStrategy": "hash", "exchange": "pipelined"}]}`)
		res := execCLI(t, "", "simulate", "--slots", "4", big, jobs[0])
		require.Equal(t, 1, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Empty(t, res.stderr)
		lines := jobLines(t, res.stdout)
		assert.Equal(t, []string{"0 ms", "-", "-", "-", "-"}, lines["big"][:5])
		assert.True(t, strings.HasPrefix(lines["big"][5], "rejected at 0 ms: "), lines["big"][5])
		assert.Equal(t, "finished", lines["spark-1"][5])
		verdict := lastLine(res.stdout)
		assert.True(t, strings.HasPrefix(verdict, "failed: 1 of 2 jobs: big rejected"), verdict)
		assert.Contains(t, verdict, "needs 5 slots at once")
	})
	t.Run("eager across jobs", func(t *testing.T) {
		res := execCLI(t, "", append([]string{"simulate", "--slots", "12", "--policy", "eager"}, jobs...)...)
		require.Equal(t, 0, res.code, res.stdout)
		lines := jobLines(t, res.stdout)
		require.Len(t, lines, 4)
		for name, l := range lines {
			assert.Equal(t, "finished", l[5], name)
			assert.NotEqual(t, "-", l[2], name)
		}
		assert.Contains(t, res.stdout, "no admission")
		res = execCLI(t, "", append([]string{"simulate", "--slots", "4", "--policy", "eager"}, jobs...)...)
		require.Equal(t, 1, res.code, res.stdout)
		assert.True(t, strings.HasPrefix(lastLine(res.stdout), "deadlock: "), res.stdout)
	})
}

// svgTexts returns the text of every <text> of an SVG picture and the
// number of driver bars.
func svgTexts(t *testing.T, svg string) ([]string, int) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var texts []string
	drivers := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return texts, drivers
		}
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "text":
				var s string
				require.NoError(t, dec.DecodeElement(&s, &se))
				texts = append(texts, s)
			case "g":
				for _, a := range se.Attr {
					if a.Name.Local == "class" && a.Value == "driver" {
						drivers++
					}
				}
			}
		}
	}
}

func TestSimulateJobsBadInput(t *testing.T) {
	jobs := floodJobs(t)
	dup := writeTemp(t, "again.json", `{"name": "spark-2", "vertices": [{"id": "a", "parallelism": 1}]}`)
	broken := writeTemp(t, "broken.json", `{"name": "x", "vertices": [{"id": "a", "parallelism": 0}]}`)
	badQueue := writeTemp(t, "badq.json", `{"name": "etl", "queue": "default", "vertices": [{"id": "a", "parallelism": 1}]}`)
	cluster := func(queues string) string {
		return writeTemp(t, "cluster.json", `{"slots": [{"count": 4}], "queues": `+queues+`}`)
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown queue policy", []string{"--slots", "4", "--queue-policy", "lifo"}, []string{"--queue-policy", `"lifo"`, "fifo, priority, fairshare, stateaware"}},
		{"unknown queue policy in the file", []string{"--cluster", cluster(`[{"name": "root.default", "policy": "lifo"}]`)},
			[]string{`field "queues[0].policy"`, `"lifo"`, "fifo, priority, fairshare, stateaware"}},
		{"negative maxRunningJobs", []string{"--cluster", cluster(`[{"name": "root.default", "maxRunningJobs": -1}]`)},
			[]string{`field "queues[0].maxRunningJobs"`, "-1", "non-negative"}},
		{"fractional maxRunningJobs", []string{"--cluster", cluster(`[{"name": "root.default", "maxRunningJobs": 1.5}]`)},
			[]string{`field "queues[0].maxRunningJobs"`, "1.5"}},
		{"negative startingTimeoutMs", []string{"--cluster", cluster(`[{"name": "root.default", "startingTimeoutMs": -1}]`)},
			[]string{`field "queues[0].startingTimeoutMs"`, "-1"}},
		{"queue of the file outside root", []string{"--cluster", cluster(`[{"name": "default"}]`)},
			[]string{`field "queues[0].name"`, `"default"`, `"root" or "root." followed by dot-separated non-empty parts`}},
		{"queue of the file ending in a dot", []string{"--cluster", cluster(`[{"name": "root."}]`)},
			[]string{`field "queues[0].name"`, `"root."`, `"root" or "root." followed by dot-separated non-empty parts`}},
		{"duplicate job names", []string{"--slots", "4", dup}, []string{"spark-2.json", "again.json", `both name the job "spark-2"`}},
		{"a job file that does not decode", []string{"--slots", "4", broken}, []string{broken, "parallelism"}},
		{"a job's queue outside root", []string{"--slots", "4", badQueue}, []string{badQueue, `field "queue"`, `"default"`, `"root" or "root." followed by dot-separated non-empty parts`}},
		{"--events missing", []string{"--slots", "4", "--events", "no-such-events.jsonl"}, []string{"--events", "no-such-events.jsonl"}},
		{"--fail with several jobs", []string{"--slots", "4", "--fail", "scan#0@100"}, []string{"--fail", "several jobs"}},
		{"standard input twice", []string{"--slots", "4", "-", "-"}, []string{"standard input", "twice"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := execCLI(t, "", append(append([]string{"simulate"}, tc.args...), jobs...)...)
			assert.Equal(t, 2, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
			assert.Empty(t, res.stdout, "no verdict on bad input")
			for _, s := range tc.want {
				assert.Contains(t, res.stderr, s)
			}
		})
	}
	t.Run("a bad events line names its line and field", func(t *testing.T) {
		ev := writeTemp(t, "ev.jsonl", "{\"t\": 1, \"event\": \"kill\", \"job\": \"flip119-example\", \"by\": \"a\"}\n{\"t\": 2, \"event\": \"pause\", \"job\": \"x\", \"by\": \"a\"}\n")
		res := execCLI(t, "", "simulate", "--slots", "2", "--events", ev, flip119Path)
		assert.Equal(t, 2, res.code)
		assert.Contains(t, res.stderr, "line 2")
		assert.Contains(t, res.stderr, `field "event": "pause" is not an event (valid: set-priority, kill)`)
	})
	t.Run("a job without a name is named after its file", func(t *testing.T) {
		anon := writeTemp(t, "nightly.json", `{"vertices": [{"id": "a", "parallelism": 1}]}`)
		res := execCLI(t, "", "simulate", "--slots", "1", anon, flip119Path)
		require.Equal(t, 0, res.code, res.stderr)
		assert.Contains(t, res.stdout, `job "nightly": submitted 0 ms`)
	})
	t.Run("fair is fairshare", func(t *testing.T) {
		res := execCLI(t, "", append([]string{"simulate", "--slots", "4", "--queue-policy", "fair"}, jobs...)...)
		assert.NotEqual(t, 2, res.code, res.stderr)
		assert.Contains(t, res.stdout, "queue policy fairshare")
	})
}

// chainsJob is a job file of vertices of parallelism p chained by forward
// edges (every subtask its own region under all-blocking).
func chainsJob(t *testing.T, name string, vertices, p int) string {
	t.Helper()
	var vs, es []string
	for i := range vertices {
		vs = append(vs, fmt.Sprintf(`{"id": "v%d", "parallelism": %d, "durationMs": %d}`, i, p, 100+10*i))
		if i > 0 {
			es = append(es, fmt.Sprintf(`{"source": "v%d", "target": "v%d", "shipStrategy": "forward"}`, i-1, i))
		}
	}
	return writeTemp(t, name+".json", fmt.Sprintf(`{"name": %q, "vertices": [%s], "edges": [%s]}`, name, strings.Join(vs, ", "), strings.Join(es, ", ")))
}

// TestSimulateStreamsTraceAndPicture: --trace and --svg are streamed
// during the run, for one job and for several, small (one bar per task)
// and large (the aggregated view): each file is the same whether the other
// is asked for or not, the summary is the same with or without them
// (the per-job times of an eager run included), and the picture's
// temporary file is gone afterwards.
func TestSimulateStreamsTraceAndPicture(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	large := []string{chainsJob(t, "a", 3, 1500), chainsJob(t, "b", 2, 2000)}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"one job", []string{"--mode", "pointwise-pipelined-only", "--slots", "2", "--fail", "B#1@500", flip119Path}},
		{"one large job", []string{"--slots", "150", large[0]}},
		{"one large job eager", []string{"--slots", "60", "--policy", "eager", large[0]}},
		{"several jobs", append([]string{"--slots", "4", "--queue-policy", "stateaware"}, floodJobs(t)...)},
		{"several jobs eager", append([]string{"--slots", "8", "--policy", "eager"}, floodJobs(t)...)},
		{"several large jobs", append([]string{"--slots", "100", "--queue-policy", "fairshare"}, large...)},
		{"several large jobs eager", append([]string{"--slots", "300", "--policy", "eager"}, large...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sim := func(extra ...string) cliResult {
				res := execCLI(t, "", append(append([]string{"simulate"}, extra...), tc.args...)...)
				require.Contains(t, []int{0, 1}, res.code, res.stderr)
				return res
			}
			read := func(name string) string {
				data, err := os.ReadFile(filepath.Join(dir, name))
				require.NoError(t, err)
				return string(data)
			}
			plain := sim()
			both := sim("--trace", filepath.Join(dir, "both.jsonl"), "--svg", filepath.Join(dir, "both.svg"))
			trace := sim("--trace", filepath.Join(dir, "trace.jsonl"))
			svg := sim("--svg", filepath.Join(dir, "svg.svg"))
			for _, r := range []cliResult{both, trace, svg} {
				assert.Equal(t, plain, r, "the summary does not depend on the outputs")
			}
			assert.Equal(t, read("both.jsonl"), read("trace.jsonl"))
			assert.Equal(t, read("both.svg"), read("svg.svg"))
			assert.NotEmpty(t, readTrace(t, filepath.Join(dir, "trace.jsonl")))
			texts, _ := svgTexts(t, read("svg.svg"))
			assert.NotEmpty(t, texts)
			assert.Equal(t, strings.Contains(tc.name, "large"), strings.Contains(read("svg.svg"), "too many for one bar each"), "aggregated view")
			left, err := os.ReadDir(tmp)
			require.NoError(t, err)
			for _, f := range left {
				assert.True(t, f.IsDir(), "temporary file %s left behind", f.Name())
			}
		})
	}
}
