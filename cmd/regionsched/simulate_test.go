package main

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceLine is one line of a --trace file (docs/cli.md).
type traceLine struct {
	T       *int64  `json:"t"`
	Event   string  `json:"event"`
	Task    string  `json:"task"`
	Region  *int    `json:"region"`
	Slot    *int    `json:"slot"`
	Attempt int     `json:"attempt"`
	Job     *string `json:"job"`
}

func readTrace(t *testing.T, path string) []traceLine {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []traceLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l traceLine
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&l), "trace line %q", sc.Text())
		require.NotNil(t, l.T, "trace line %q has no t", sc.Text())
		require.NotNil(t, l.Region, "trace line %q has no region", sc.Text())
		out = append(out, l)
	}
	require.NoError(t, sc.Err())
	return out
}

func TestSimulateFLIP119Verdicts(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		code     int
		verdict  string // prefix of the last line of standard output
		contains []string
	}{
		{"pointwise on 2 slots", []string{"--mode", "pointwise-pipelined-only", "--slots", "2"}, 0, "finished:",
			[]string{"makespan:          4000 ms", "slot utilization:  100.0%", "regions scheduled: 6 deployments of 6 regions", "restarts:          0"}},
		{"all-blocking on 1 slot", []string{"--slots", "1"}, 0, "finished:", []string{"makespan:          12000 ms"}},
		{"all-pipelined on 4 slots", []string{"--mode", "all-pipelined", "--slots", "4"}, 0, "finished:", []string{"makespan:          1000 ms"}},
		{"all-pipelined on 3 slots", []string{"--mode", "all-pipelined", "--slots", "3"}, 1, "failed:", []string{"region 0"}},
		{"eager deadlock", []string{"--mode", "all-pipelined", "--slots", "4", "--policy", "eager"}, 1, "deadlock:", []string{"hold slots while waiting"}},
		{"sized cluster", []string{"--mode", "pointwise-pipelined-only", "--cluster", writeTemp(t, "c.json", `{"slots":[{"count":2,"resources":{"cpuMillis":1000,"memoryMB":1024}}]}`)}, 0, "finished:", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := execCLI(t, "", append(append([]string{"simulate"}, tc.args...), flip119Path)...)
			require.Equal(t, tc.code, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
			lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
			last := lines[len(lines)-1]
			assert.True(t, strings.HasPrefix(last, tc.verdict), "last line %q", last)
			for _, s := range tc.contains {
				assert.Contains(t, res.stdout, s)
			}
			if tc.code == 1 {
				assert.Empty(t, res.stderr, "a negative verdict is printed once, on standard output")
			} else {
				assert.Empty(t, res.stderr)
			}
		})
	}
}

func TestSimulateEagerDeadlocksForSomeSeedsAndNeverHangs(t *testing.T) {
	deadlocks := 0
	for seed := 1; seed <= 20; seed++ {
		res := execCLI(t, "", "simulate", "--mode", "all-pipelined", "--slots", "4", "--policy", "eager", "--seed", strconv.Itoa(seed), flip119Path)
		if res.code == 1 {
			require.Contains(t, res.stdout, "\ndeadlock:", "the verdict is on standard output")
			require.Empty(t, res.stderr, "and only there")
			deadlocks++
		} else {
			require.Equal(t, 0, res.code, res.stderr)
		}
	}
	assert.Positive(t, deadlocks)
}

// --ties seeded lets the seed order the ends of a wave: the same seed
// then gives another trace than in order, deterministic, and the summary
// says so. In order (the default) a wave ends as it was deployed. Runs of
// several jobs take the flag too.
func TestSimulateTies(t *testing.T) {
	trace := func(args ...string) string {
		res := execCLI(t, "", append(append([]string{"simulate", "--trace", "-"}, args...), flip119Path)...)
		require.Equal(t, 0, res.code, res.stderr)
		return res.stdout
	}
	for seed := 1; seed <= 4; seed++ {
		s := strconv.Itoa(seed)
		seeded := trace("--slots", "3", "--seed", s, "--ties", "seeded")
		assert.Equal(t, seeded, trace("--slots", "3", "--seed", s, "--ties", "SEEDED"), "deterministic, case-insensitive")
		assert.NotEqual(t, trace("--slots", "3", "--seed", s), seeded, "seed %d: the seed orders the wave's ends", seed)
		assert.Equal(t, trace("--slots", "3", "--seed", s), trace("--slots", "3", "--seed", s, "--ties", "order"), "in order by default")
	}
	// in order, tasks that end together end as they were deployed (all
	// blocking: no task waits for another to finish)
	deployedAt := map[string]int{}
	var lastT, lastPos, together int
	for i, line := range strings.Split(strings.TrimSpace(trace("--slots", "3", "--seed", "5")), "\n") {
		var ev struct {
			T           int
			Event, Task string
		}
		require.NoError(t, json.Unmarshal([]byte(line), &ev))
		switch ev.Event {
		case "deploy":
			deployedAt[ev.Task] = i
		case "finish":
			if ev.T == lastT {
				assert.Less(t, lastPos, deployedAt[ev.Task], "%s ends after a task deployed later, at %d ms", ev.Task, ev.T)
				together++
			}
			lastT, lastPos = ev.T, deployedAt[ev.Task]
		}
	}
	assert.Positive(t, together, "tasks end together")

	res := execCLI(t, "", "simulate", "--slots", "3", "--ties", "seeded", "--seed", "4", flip119Path)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "3 slots, seed 4, seeded ties\n")
	res = execCLI(t, "", "simulate", "--slots", "3", "--seed", "4", flip119Path)
	assert.Contains(t, res.stdout, "3 slots, seed 4\n")

	jobs, err := filepath.Glob("../../examples/jobs/flood/spark-*.json")
	require.NoError(t, err)
	several := func(args ...string) cliResult {
		res := execCLI(t, "", append(append([]string{"simulate", "--slots", "4", "--queue-policy", "stateaware", "--trace", "-"}, args...), jobs...)...)
		require.Equal(t, 0, res.code, res.stderr)
		return res
	}
	inOrder, seeded := several(), several("--ties", "seeded")
	assert.NotEqual(t, inOrder.stdout, seeded.stdout, "several jobs: the seed orders the waves' ends")
	assert.Contains(t, seeded.stderr, "4 slots, seed 1, seeded ties\n")
	assert.Contains(t, inOrder.stderr, "4 slots, seed 1\n")
}

func TestSimulateTraceAndSVG(t *testing.T) {
	dir := t.TempDir()
	trace, svg := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.svg")
	res := execCLI(t, "", "simulate", "--mode", "pointwise-pipelined-only", "--slots", "2", "--fail", "B#1@500",
		"--trace", trace, "--svg", svg, flip119Path)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "restarts:          1 (regions restarted: 5)")
	assert.Contains(t, res.stdout, "at 1500 ms B#1 failed: restarted regions 1-5")

	lines := readTrace(t, trace)
	require.NotEmpty(t, lines)
	kinds := map[string]int{}
	var last int64
	for _, l := range lines {
		assert.GreaterOrEqual(t, *l.T, last, "trace in time order")
		last = *l.T
		kinds[l.Event]++
		switch l.Event {
		case "request":
			assert.Nil(t, l.Slot, "a request has no slot yet")
		case "deploy", "finish", "fail", "cancel", "release":
			assert.NotNil(t, l.Slot, "%s of %s has a slot", l.Event, l.Task)
		default:
			t.Errorf("unknown event %q", l.Event)
		}
		assert.Nil(t, l.Job, "single-job traces carry no job field")
	}
	assert.Equal(t, 1, kinds["fail"])
	assert.Equal(t, 3, kinds["cancel"], "A#1, C#2 and C#3 are canceled with B#1")
	assert.Equal(t, 12, kinds["finish"])
	assert.Equal(t, 12+4, kinds["deploy"], "12 tasks plus the 4 of the restarted region")

	data, err := os.ReadFile(svg)
	require.NoError(t, err)
	dec := xml.NewDecoder(strings.NewReader(string(data)))
	for {
		_, err := dec.Token()
		if err != nil {
			require.ErrorContains(t, err, "EOF", "the SVG is well-formed XML")
			break
		}
	}
	assert.Contains(t, string(data), "slot 0")
	assert.Contains(t, string(data), "region 5")
}

func TestSimulateBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string // in standard error
	}{
		{"unknown policy", []string{"--slots", "2", "--policy", "lazy"}, "valid: region, eager"},
		{"unknown tie order", []string{"--slots", "2", "--ties", "random"}, `--ties: unknown tie order "random" (valid: order, seeded)`},
		{"bad failure spec", []string{"--slots", "2", "--fail", "B#1"}, "ID#i@MS"},
		{"failure of an unknown subtask", []string{"--slots", "2", "--fail", "B#7@10"}, "B#7"},
		{"negative failure time", []string{"--slots", "2", "--fail", "B#1@-5"}, "-5"},
		{"no cluster", nil, "--slots N or --cluster FILE"},
		{"both cluster flags", []string{"--slots", "2", "--cluster", "x.json"}, "not both"},
		{"unknown mode", []string{"--slots", "2", "--mode", "streaming"}, "valid"},
		{"unwritable trace", []string{"--slots", "2", "--trace", filepath.Join(t.TempDir(), "no", "such", "dir", "t.jsonl")}, "cannot write"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := execCLI(t, "", append(append([]string{"simulate"}, tc.args...), flip119Path)...)
			assert.Equal(t, 2, res.code, res.stderr)
			assert.Contains(t, res.stderr, tc.want)
			assert.Empty(t, res.stdout)
		})
	}
	t.Run("the same job twice", func(t *testing.T) { // several jobs: see jobs_test.go
		res := execCLI(t, "", "simulate", "--slots", "2", flip119Path, flip119Path)
		assert.Equal(t, 2, res.code)
		assert.Contains(t, res.stderr, `both name the job "flip119-example"`)
	})
	t.Run("bad job from stdin", func(t *testing.T) {
		res := execCLI(t, `{"vertices":[{"id":"A","parallelism":0}]}`, "simulate", "--slots", "2", "-")
		assert.Equal(t, 2, res.code)
		assert.Contains(t, res.stderr, `"A"`)
		assert.Contains(t, res.stderr, "parallelism")
	})
}

func TestSimulateEveryExampleAtMinimumSlots(t *testing.T) {
	for _, path := range exampleJobs(t) {
		for _, mode := range modeNames {
			out := regionsJSON(t, "--mode", mode, path)
			res := execCLI(t, "", "simulate", "--mode", mode, "--slots", strconv.Itoa(out.MinimumSlots), path)
			assert.Equal(t, 0, res.code, "%s in %s on %d slots: %s", path, mode, out.MinimumSlots, res.stdout)
		}
	}
}

func TestSimulateReviewCases(t *testing.T) {
	t.Run("ids with @ work with --fail", func(t *testing.T) {
		job := writeTemp(t, "at.json", `{"name":"at","vertices":[{"id":"a@b","parallelism":2},{"id":"c","parallelism":2}],
			"edges":[{"source":"a@b","target":"c","shipStrategy":"forward"}]}`)
		res := execCLI(t, "", "simulate", "--slots", "1", "--fail", "a@b#1@100", job)
		require.Equal(t, 0, res.code, res.stderr)
		assert.Contains(t, res.stdout, "a@b#1 failed")
	})
	t.Run("failures that cannot fire are refused", func(t *testing.T) {
		for _, fails := range [][]string{{"D#0@1000"}, {"D#0@5000"}, {"D#0@100", "D#0@200"}} {
			args := []string{"simulate", "--slots", "2"}
			for _, f := range fails {
				args = append(args, "--fail", f)
			}
			res := execCLI(t, "", append(args, flip119Path)...)
			assert.Equal(t, 2, res.code, "%v: %s", fails, res.stdout)
			assert.Contains(t, res.stderr, "D#0")
		}
	})
	t.Run("a huge cluster costs nothing", func(t *testing.T) {
		res := execCLI(t, "", "simulate", "--slots", "100000000", "--svg", filepath.Join(t.TempDir(), "t.svg"), flip119Path)
		require.Equal(t, 0, res.code, res.stderr)
		assert.Contains(t, res.stdout, "100000000 slots")
	})
	t.Run("a blocking result of a stream is never complete", func(t *testing.T) {
		job := writeTemp(t, "stream.json", `{"name":"stream","vertices":[{"id":"S","parallelism":1,"bounded":false},
			{"id":"M","parallelism":1},{"id":"K","parallelism":1}],
			"edges":[{"source":"S","target":"M","shipStrategy":"forward","exchange":"pipelined"},
			         {"source":"M","target":"K","shipStrategy":"hash","exchange":"blocking"}]}`)
		res := execCLI(t, "", "check", "--slots", "10", job)
		assert.Equal(t, 1, res.code)
		assert.Contains(t, res.stdout, "not runnable: region 1 {K#0} can never run")
		res = execCLI(t, "", "simulate", "--slots", "10", job)
		assert.Equal(t, 1, res.code)
		assert.Contains(t, res.stdout, "K#0 can never start")
	})
	t.Run("the summary is the same on every run", func(t *testing.T) {
		a := execCLI(t, "", "simulate", "--slots", "2", flip119Path)
		b := execCLI(t, "", "simulate", "--slots", "2", flip119Path)
		assert.Equal(t, a.stdout, b.stdout)
	})
	t.Run("no command", func(t *testing.T) {
		res := execCLI(t, "")
		assert.Equal(t, 2, res.code)
		assert.Contains(t, res.stderr, "a command is missing")
	})
}

// TestSimulateFailoverWithdrawsWaitingRequest: B reads A over a hybrid
// edge and, without hybrid slot sharing, waits for the one slot A#0
// holds; A#0 fails at 500 ms and restarts both regions. The trace
// withdraws B#0's first request at 500 ms, right before the requests of
// that instant, so every request ends in a deploy or a withdraw; the
// picture draws it withdrawn.
func TestSimulateFailoverWithdrawsWaitingRequest(t *testing.T) {
	job := writeTemp(t, "w.json", `{"name":"w","vertices":[{"id":"A","parallelism":1},{"id":"B","parallelism":1}],
	 "edges":[{"source":"A","target":"B","shipStrategy":"forward","exchange":"hybrid-full"}]}`)
	svg := filepath.Join(t.TempDir(), "w.svg")
	res := execCLI(t, "", "simulate", "--slots", "1", "--hybrid-slot-sharing=false", "--fail", "A#0@500", "--trace", "-", "--svg", svg, job)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, `{"t": 0, "event": "request", "task": "B#0", "region": 1, "attempt": 0}
{"t": 500, "event": "fail", "task": "A#0", "region": 0, "slot": 0, "attempt": 0}
{"t": 500, "event": "release", "task": "A#0", "region": 0, "slot": 0, "attempt": 0}
{"t": 500, "event": "withdraw", "task": "B#0", "region": 1, "attempt": 0}
{"t": 500, "event": "request", "task": "A#0", "region": 0, "attempt": 1}
{"t": 500, "event": "deploy", "task": "A#0", "region": 0, "slot": 0, "attempt": 1}
{"t": 500, "event": "request", "task": "B#0", "region": 1, "attempt": 1}
`)
	open := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var ev struct{ Event, Task string }
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		switch ev.Event {
		case "request":
			assert.False(t, open[ev.Task], "%s asks again while its request is open: %s", ev.Task, line)
			open[ev.Task] = true
		case "deploy", "withdraw":
			delete(open, ev.Task)
		}
	}
	assert.Empty(t, open)
	assert.Contains(t, res.stderr, "14 trace events")
	data, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.Contains(t, string(data), "B#0 withdrawn at 500 ms as its region restarted, after waiting since 0 ms")
}
