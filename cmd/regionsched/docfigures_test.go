package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docFigure ties figures a doc quotes to the command they come from.
type docFigure struct {
	// doc is the file, from the repository's root.
	doc string
	// cmd is the command line, without the program's name, as the doc
	// shows it when shown (the doc must then hold it, bin/regionsched or
	// regionsched before it); shell quotes are dropped, examples/... paths
	// are read from the repository, a * is expanded, --svg and --trace
	// write into a temporary directory.
	cmd   string
	shown bool
	// files are input files the doc's command names that the repository
	// does not hold (make pictures writes them), by the path the command
	// names, with their content.
	files map[string]string
	// args, if set, makes the command's arguments instead of cmd (its
	// files are made by the test).
	args func(t *testing.T) []string
	// code is the command's exit code.
	code int
	// lines are the command's output as the doc quotes it: each is in the
	// doc and in the output.
	lines []string
	// quote is prose of the doc that states figures of the output; want
	// are the parts of the output it states.
	quote []string
	want  []string
}

// figuresOfDocs is every figure of README.md and docs/*.md quoted from a
// command's output (not the benchmark figures of docs/performance.md, nor
// the output of a real Slurm cluster in docs/slurm.md and of a real
// Kubernetes API server in docs/kubernetes.md).
var figuresOfDocs = []docFigure{
	{doc: "README.md", cmd: "check --mode all-pipelined --slots 3 examples/jobs/flip119.json", shown: true, code: 1,
		lines: []string{"not runnable: region 0 {A#0, A#1, B#0, B#1, C#0, C#1, C#2, C#3, ... (12 in all)} needs 4 slots at once; the cluster has 3 slots; missing 1 slot"}},

	{doc: "docs/cli.md", cmd: "regions --mode pointwise-pipelined-only examples/jobs/flip119.json", shown: true, lines: []string{
		`job "flip119-example", mode pointwise-pipelined-only`,
		"12 execution vertices, 6 regions, 1 blocking logical edge, minimum slots 2",
		"REGION  SLOTS  VERTICES                                 CONSUMES",
		"0       2      A#0, B#0, C#0, C#1                       -",
		"1       2      A#1, B#1, C#2, C#3                       -",
		"2       1      D#0                                      0-1",
	}},
	{doc: "docs/cli.md", cmd: "regions --mode ALL_EXCHANGES_HYBRID_FULL examples/jobs/flip119.json", shown: true, lines: []string{
		`job "flip119-example", mode all-hybrid-full`,
		"12 execution vertices, 12 regions, 0 blocking logical edges, 3 hybrid logical edges, minimum slots 1",
		"8       1      D#0                                      hybrid 4-7",
	}},
	{doc: "docs/cli.md", cmd: "regions --mode ALL_EXCHANGES_HYBRID_FULL --format json examples/jobs/flip119.json", shown: true, lines: []string{
		`  "hybridLogicalEdges": 3,`,
		`    {"id": 2, "vertices": ["B#0"], "slots": 1, "consumes": [], "consumesHybrid": [[0, 0]]},`,
		`    {"id": 8, "vertices": ["D#0"], "slots": 1, "consumes": [], "consumesHybrid": [[4, 7]]},`,
	}},
	{doc: "docs/cli.md", cmd: "check --mode all-pipelined --slots 4 examples/jobs/flip119.json", shown: true, lines: []string{
		"deadlock-free: every region fits; the largest, region 0 {A#0, A#1, B#0, B#1, C#0, C#1, C#2, C#3, ... (12 in all)}, needs 4 slots at once; the cluster has 4 slots",
	}},
	{doc: "docs/cli.md", cmd: "check --mode all-pipelined --slots 3 examples/jobs/flip119.json", shown: true, code: 1,
		quote: []string{"not runnable: region 0 {...} needs 4 slots at once; the cluster has 3 slots; missing 1 slot"},
		want:  []string{"not runnable: region 0 {", "} needs 4 slots at once; the cluster has 3 slots; missing 1 slot"}},
	{doc: "docs/cli.md", cmd: "simulate --mode all-hybrid-full --speculation --stragglers 0.05 examples/jobs/tpcds-q3.json --slots 40", shown: true,
		quote: []string{"# 0 speculative attempts started; speculation saved -6800 ms (-11.3%)"},
		want:  []string{"speculation:       0 speculative attempts started", "speculation saved -6800 ms (-11.3%)"}},
	{doc: "docs/cli.md", cmd: `simulate --mode all-hybrid-full --speculation --stragglers 0.05 examples/jobs/tpcds-q3.json --slots 40 \ --speculation-baseline-lower-bound 1s --speculation-check-interval 100ms`, shown: true,
		quote: []string{"# 2 speculative attempts started, 1 won; speculation saved 38200 ms (63.7%)"},
		want:  []string{"speculation:       2 speculative attempts started", ", 1 won;", "speculation saved 38200 ms (63.7%)"}},
	{doc: "docs/cli.md", cmd: "simulate --slots 80 --stragglers 0.05 --speculation --seed 2 examples/jobs/stragglers.json", shown: true, lines: []string{
		"stragglers:        10 attempts ran 10x slower (--stragglers 0.05)",
		"speculation:       10 speculative attempts started (10 asked for), 10 won; 600 s of slot time in them",
		"without it:        makespan 1800000 ms: speculation saved 1350000 ms (75.0%); slot time 4.42 slot-hours against 5.50 slot-hours (-19.7%)",
	}},
	{doc: "docs/cli.md", cmd: "simulate --mode all-blocking --slots 16 --queue-policy fairshare --speculation --speculation-baseline-lower-bound 0 --stragglers 0.05 --seed 7 " +
		"examples/jobs/etl-join.json examples/jobs/tpcds-q3.json examples/jobs/ml-feature-pipeline.json examples/jobs/stragglers.json", shown: true, lines: []string{
		"stragglers:        12 attempts ran 10x slower (--stragglers 0.05)",
		"speculation:       9 speculative attempts started (10 asked for), 8 won; 780 s of slot time in them",
		"without it:        makespan 2544000 ms: speculation saved 1110000 ms (43.6%); slot time 5.00 slot-hours against 5.55 slot-hours (-10.0%)",
		`  job "nightly-orders-etl": 0 speculative attempts, 0 won; makespan 39500 ms with speculation, 39500 ms without`,
		`  job "tpcds-q3-like": 0 speculative attempts, 0 won; makespan 54900 ms with speculation, 54900 ms without`,
		`  job "ml-feature-pipeline": 0 speculative attempts, 0 won; makespan 366800 ms with speculation, 366800 ms without`,
		`  job "stragglers": 9 speculative attempts, 8 won; makespan 1434000 ms with speculation, 2544000 ms without`,
	}},
	{doc: "docs/cli.md", cmd: "simulate --mode pointwise-pipelined-only --slots 2 examples/jobs/flip119.json", lines: []string{
		`job "flip119-example": mode pointwise-pipelined-only, policy region, 2 slots, seed 1`,
		"makespan:          4000 ms of virtual time, until the last event",
		"slot utilization:  100.0% of slot time with work progressing",
		"held waiting:      0.0% of slot time held by tasks that could not progress",
		"regions scheduled: 6 deployments of 6 regions",
		"restarts:          0 (regions restarted: 0)",
		"simulation steps:  12 (task progress ends and slot-request timeouts handled); 44 trace events",
		"finished: all 12 tasks finished at 4000 ms",
	}},
	{doc: "docs/cli.md", args: explainedRun, lines: []string{
		"2 jobs: mode all-blocking, policy region, queues root.default priority, any other queue fifo, 2 slots, seed 1",
		`job "etl": submitted 0 ms, first deploy 0 ms, finished 5000 ms, wait 0 ms, makespan 5000 ms; finished`,
		`job "adhoc": submitted 1000 ms, first deploy 5000 ms, finished 7000 ms, wait 4000 ms, makespan 6000 ms; finished`,
		"event 100 ms: bob set-priority etl -> 6000: refused: role user may change only their own jobs; the job is alice's",
		"event 500 ms: bob kill adhoc: refused: the job has not arrived yet (it arrives at 1000 ms)",
		"event 4000 ms: alice set-priority etl 3000 -> 9000: applied",
		"event 20000 ms: alice kill etl: refused: the job is completed",
		"makespan:          20000 ms of virtual time, until the last event",
		"slot utilization:  30.0% of slot time with work progressing",
		"held waiting:      0.0% of slot time held by tasks that could not progress",
		"regions scheduled: 3 deployments",
		"restarts:          0 (regions restarted: 0)",
		"finished: all 2 jobs finished at 7000 ms",
	}},

	{doc: "docs/job-file.md", cmd: "simulate --cluster examples/scenarios/tenants/cluster.json examples/scenarios/tenants/small-burst.json examples/scenarios/tenants/big-*.json", shown: true, lines: []string{
		"queue root.small: guaranteed 2, max unlimited, peak 8 slots, 75.0% of slot time",
	}},
	{doc: "docs/job-file.md", cmd: "simulate --slots 4 --queue-policy stateaware examples/jobs/flood/spark-*.json", lines: []string{
		"4 jobs: mode all-blocking, policy region, queue policy stateaware, 4 slots, seed 1",
		`job "spark-1": submitted 0 ms, first deploy 1000 ms, finished 4000 ms, wait 1000 ms, makespan 4000 ms; finished`,
		`job "spark-2": submitted 100 ms, first deploy 5000 ms, finished 8000 ms, wait 4900 ms, makespan 7900 ms; finished`,
		"makespan:          16000 ms of virtual time, until the last event",
		"slot utilization:  56.2% of slot time with work progressing",
		"held waiting:      0.0% of slot time held by tasks that could not progress",
		"drivers:           25.0% of slot time held by job drivers",
		"regions scheduled: 16 deployments",
		"restarts:          0 (regions restarted: 0)",
		"finished: all 4 jobs finished at 16000 ms",
	}},
	{doc: "docs/job-file.md", cmd: "simulate --slots 4 --queue-policy fifo examples/jobs/flood/spark-*.json", code: 1, lines: []string{
		`job "spark-2": submitted 100 ms, first deploy -, finished -, wait -, makespan -; never finished (deadlock; stuck starting)`,
	}},
	{doc: "docs/job-file.md", args: explainedRun, lines: []string{
		"event 100 ms: bob set-priority etl -> 6000: refused: role user may change only their own jobs; the job is alice's",
		"event 500 ms: bob kill adhoc: refused: the job has not arrived yet (it arrives at 1000 ms)",
		"event 4000 ms: alice set-priority etl 3000 -> 9000: applied",
	}},

	{doc: "docs/pictures.md", cmd: "simulate --mode pointwise-pipelined-only --slots 2 --svg docs/flip119-pointwise.svg examples/jobs/flip119.json", shown: true,
		quote: []string{"The job finishes at 4 s with every slot busy all the time."},
		want:  []string{"finished: all 12 tasks finished at 4000 ms", "slot utilization:  100.0% "}},
	{doc: "docs/pictures.md", cmd: "simulate --mode all-pipelined --slots 4 examples/jobs/flip119.json",
		quote: []string{"says deadlock-free and the region scheduler finishes in 1 s"}, want: []string{"finished: all 12 tasks finished at 1000 ms"}},
	{doc: "docs/pictures.md", cmd: "simulate --mode all-pipelined --slots 4 --policy eager --svg docs/flip119-eager-deadlock.svg examples/jobs/flip119.json", shown: true, code: 1,
		quote: []string{"The red line marks the deadlock (1 s)", "progressed (50%: the A tasks)", "the rest of the held slot time (50%: the B tasks"},
		want:  []string{"deadlock: at 1000 ms B#0, B#1, C#0, C#3 hold slots while waiting", "slot utilization:  50.0% ", "held waiting:      50.0% "}},
	{doc: "docs/pictures.md", cmd: "simulate --mode pointwise-pipelined-only --slots 2 --fail 'B#1@500' --svg docs/flip119-failover.svg examples/jobs/flip119.json", shown: true,
		quote: []string{"B#1 fails after 500 ms of work, at 1.5 s. Region failover restarts its region and every region that reads its results: regions 1 to 5.",
			"The job finishes at 4.5 s."},
		want: []string{"at 1500 ms B#1 failed: restarted regions 1-5", "finished: all 12 tasks finished at 4500 ms"}},
	{doc: "docs/pictures.md", cmd: "simulate --slots 400 --svg docs/wordcount-large.svg out/wordcount-large.json", shown: true,
		files: map[string]string{"out/wordcount-large.json": `{"name": "wordcount-large", "vertices": [
{"id": "text-source", "parallelism": 1000, "durationMs": 2000}, {"id": "tokenizer", "parallelism": 2000, "durationMs": 1500},
{"id": "counter", "parallelism": 2000, "durationMs": 2500}, {"id": "result-sink", "parallelism": 2000, "durationMs": 500}],
"edges": [{"source": "text-source", "target": "tokenizer", "shipStrategy": "rebalance"},
{"source": "tokenizer", "target": "counter", "shipStrategy": "hash"}, {"source": "counter", "target": "result-sink", "shipStrategy": "forward"}]}`},
		quote: []string{"the 7,000 regions of a word count"}, want: []string{" of 7000 regions"}},
	{doc: "docs/pictures.md", cmd: "simulate --mode all-pipelined --slots 8 --policy eager --svg docs/cycle-side-input-deadlock.svg examples/jobs/cycle-side-input.json", shown: true, code: 1,
		quote: []string{"four slots held, four free, nothing moves"},
		want:  []string{"8 slots", "deadlock: at 0 ms events#0, events#1, events#2, events#3 hold slots while waiting\n"}},
	{doc: "docs/pictures.md", cmd: "simulate --mode all-pipelined --slots 8 examples/jobs/cycle-side-input.json",
		quote: []string{"finishes the job in 4 s"}, want: []string{"regions scheduled: 1 deployment of 1 region", "finished: all 12 tasks finished at 4000 ms"}},
	{doc: "docs/pictures.md", cmd: "simulate --slots 4 --queue-policy stateaware --svg docs/flood-stateaware.svg examples/jobs/flood/spark-*.json", shown: true,
		quote: []string{"all four finish, the last at 16 s", "(`held waiting: 0.0%`). The drivers hold 25% of the slot time (`drivers: 25.0%`)"},
		want:  []string{"finished: all 4 jobs finished at 16000 ms", "held waiting:      0.0% ", "drivers:           25.0% "}},
	{doc: "docs/pictures.md", cmd: "simulate --slots 6 --svg docs/gang.svg examples/jobs/gang/train.json examples/jobs/gang/etl.json", shown: true,
		quote: []string{"its driver starts the job 1 s later"}, want: []string{`job "train": submitted 0 ms, first deploy 1000 ms`}},
	{doc: "docs/pictures.md", cmd: "simulate --cluster examples/jobs/preempt/cluster.json --events examples/jobs/preempt/events.jsonl \\ " +
		"--svg docs/preempt.svg examples/jobs/preempt/low.json examples/jobs/preempt/high.json examples/jobs/preempt/urgent.json", shown: true,
		quote: []string{"`high` arrives at 500 ms and reclaims a slot of `low`, whose task is cancelled at 800 ms", "mallory's kill of `low` at 3 s is refused"},
		want:  []string{`job "high": submitted 500 ms, first deploy 800 ms`, "reclaims:          2 ", "event 3000 ms: mallory kill low: refused"}},
	{doc: "docs/pictures.md", cmd: "simulate --slots 6 --stragglers 0.15 --speculation --speculation-baseline-lower-bound 0 --seed 5 --svg docs/speculation.svg examples/jobs/wordcount.json", shown: true,
		quote: []string{"15% of the attempts run 10 times their duration."}, want: []string{"attempts ran 10x slower (--stragglers 0.15)", "2 speculative attempts started (2 asked for), 2 won"}},
	{doc: "docs/pictures.md", cmd: "simulate --mode all-hybrid-full --slots 8 --svg docs/hybrid-sharing.svg examples/jobs/tpcds-q3.json", shown: true,
		quote: []string{"The subtitle counts the regions that shared (11 of 40)"}, want: []string{"40 deployments of 40 regions (11 into their hybrid producers' slots)"}},
}

// spaces collapses every run of white space into one space: prose wraps
// and tables align.
var spaces = regexp.MustCompile(`\s+`)

func squash(s string) string { return strings.TrimSpace(spaces.ReplaceAllString(s, " ")) }

// docArgs makes the arguments of a row's command.
func docArgs(t *testing.T, f docFigure) []string {
	t.Helper()
	if f.args != nil {
		return f.args(t)
	}
	dir := t.TempDir()
	var args []string
	fields := strings.Fields(strings.ReplaceAll(f.cmd, `\`, " "))
	for i := 0; i < len(fields); i++ {
		a := strings.Trim(fields[i], "'")
		switch {
		case a == "--svg" || a == "--trace":
			args = append(args, a, filepath.Join(dir, "out"+a[2:]))
			i++
		case f.files[a] != "":
			path := filepath.Join(dir, filepath.Base(a))
			require.NoError(t, os.WriteFile(path, []byte(f.files[a]), 0o600))
			args = append(args, path)
		case strings.HasPrefix(a, "examples/"):
			paths, err := filepath.Glob("../../" + a)
			require.NoError(t, err)
			require.NotEmpty(t, paths, a)
			args = append(args, paths...)
		default:
			args = append(args, a)
		}
	}
	return args
}

// Every figure a doc quotes from a command's output is what the command
// prints: the doc shows the command (when it says it does) and quotes its
// lines, or states them in prose, and the command prints them.
func TestDocFiguresComeFromTheirCommands(t *testing.T) {
	docs := map[string]string{}
	for _, f := range figuresOfDocs {
		if _, ok := docs[f.doc]; !ok {
			data, err := os.ReadFile("../../" + f.doc)
			require.NoError(t, err)
			docs[f.doc] = squash(string(data))
		}
		name := f.doc + ": " + f.cmd
		if f.args != nil {
			name = f.doc + ": " + strings.Join(f.lines[:1], "")
		}
		t.Run(name, func(t *testing.T) {
			doc := docs[f.doc]
			if f.shown {
				cmd := "regionsched " + squash(f.cmd)
				assert.True(t, strings.Contains(doc, cmd), "%s does not show the command %q", f.doc, cmd)
			}
			for _, q := range append(append([]string(nil), f.lines...), f.quote...) {
				assert.True(t, strings.Contains(doc, squash(q)), "%s does not quote %q", f.doc, q)
			}
			res := execCLI(t, "", docArgs(t, f)...)
			require.Equal(t, f.code, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
			out := res.stdout + res.stderr
			for _, l := range f.lines {
				assert.Contains(t, squash(out), squash(l), "the command prints the doc's line")
			}
			for _, w := range f.want {
				assert.Contains(t, out, w, "the command prints what the doc states")
			}
		})
	}
}

// outputLine matches a line of a command's output as docs quote it: the
// summary and verdict of simulate, check's verdicts, the regions table.
var outputLine = regexp.MustCompile(`^(job "|\d+ jobs: |makespan: |slot utilization: |held waiting: |drivers: |regions scheduled: |restarts: |at \d+ ms \S+ failed: |` +
	`not in the cluster file's queues|reclaims: |simulation steps: |finished: |deadlock: |deadlock-free: |not runnable: |failed: |running: |event \d+ ms: |stragglers: |speculation: |without it: |` +
	`\d+ speculative attempts|\d+ execution vertices|REGION |\d+ +\d+ +\S)`)

// docPercent matches a percentage (not a URL's escape such as %3A).
var docPercent = regexp.MustCompile(`-?\d+(\.\d+)?%([^0-9A-Fa-f]|$)`)

// Every output line a doc quotes in a code block (or in a comment after a
// command) and every percentage in its prose is in a row of
// figuresOfDocs, so a figure added to a doc gets its command. The Slurm
// guide quotes a real cluster's output and the performance figures come
// from benchmarks: neither is checked here.
func TestDocFiguresAreAllTied(t *testing.T) {
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	docs = append(docs, "../../README.md")
	tied := map[string][]string{}
	for _, f := range figuresOfDocs {
		for _, q := range append(append([]string(nil), f.lines...), f.quote...) {
			tied[f.doc] = append(tied[f.doc], squash(q))
		}
	}
	isTied := func(doc, s string) bool {
		for _, q := range tied[doc] {
			if strings.Contains(q, s) {
				return true
			}
		}
		return false
	}
	checked := 0
	for _, path := range docs {
		doc := strings.TrimPrefix(path, "../../")
		if doc == "docs/performance.md" || doc == "docs/slurm.md" || doc == "docs/kubernetes.md" {
			continue
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		inBlock, lang := false, ""
		for i, line := range strings.Split(string(data), "\n") {
			trimmed := strings.TrimSpace(line)
			if strings.HasPrefix(trimmed, "```") {
				inBlock, lang = !inBlock, strings.TrimPrefix(trimmed, "```")
				continue
			}
			var quoted []string
			switch {
			case inBlock && strings.Contains(line, " # "):
				quoted = append(quoted, trimmed[strings.Index(trimmed, "# "):])
			case inBlock && (lang == "" || lang == "text") && outputLine.MatchString(trimmed):
				quoted = append(quoted, trimmed)
			case !inBlock:
				for _, m := range docPercent.FindAllStringIndex(line, -1) {
					from := max(0, m[0]-12)
					quoted = append(quoted, squash(strings.TrimRight(line[from:m[1]], ",;). ")))
				}
			}
			for _, q := range quoted {
				checked++
				if strings.HasPrefix(q, "#") && !docPercent.MatchString(q) && !outputLine.MatchString(strings.TrimPrefix(q, "# ")) {
					continue // a comment that quotes no output
				}
				assert.True(t, isTied(doc, squash(q)), "%s line %d quotes %q: add its command to figuresOfDocs", doc, i+1, q)
			}
		}
	}
	assert.Greater(t, checked, 40)
}
