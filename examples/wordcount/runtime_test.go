package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/regionsched/regionsched/examples/wordcount/internal/engine"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// slotCounts returns the slot counts a mode is tried with: 1 where the
// mode allows it, exactly the minimum, and more.
func slotCounts(minimum int) []int {
	if minimum == 1 {
		return []int{1, 4}
	}
	return []int{minimum, minimum + 3}
}

// checkRun runs cfg and checks that the result equals the reference, the
// slots were never overused, every blocking and hybrid partition was
// deleted once the scheduler released it (once per run of its producer:
// with an injected failure a producer may run twice) and no temporary
// file is left.
func checkRun(t *testing.T, cfg engine.Config) *engine.Result {
	t.Helper()
	return checkRunWant(t, cfg, reference(cfg.Text, cfg.TopK))
}

// checkRunWant is checkRun with the expected result given.
func checkRunWant(t *testing.T, cfg engine.Config, want []engine.WordCount) *engine.Result {
	t.Helper()
	cfg.TempDir = t.TempDir()
	res, err := engine.Run(testContext(t), cfg)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !slices.Equal(res.Counts, want) {
		t.Fatalf("result differs from the reference:\n got %v\nwant %v", head(res.Counts), head(want))
	}
	if n := blockingPartitions(cfg.Job, cfg.Mode); res.PartitionsReleased < n || (len(cfg.Fail) == 0 && res.PartitionsReleased != n) {
		t.Fatalf("%d blocking and hybrid partitions released, want all %d", res.PartitionsReleased, n)
	}
	if res.PeakSlots > cfg.Slots || res.PeakSlots < 1 {
		t.Fatalf("%d slots in use at once, with %d slots", res.PeakSlots, cfg.Slots)
	}
	if left, _ := os.ReadDir(cfg.TempDir); len(left) > 0 {
		t.Fatalf("%d files left in the temporary directory", len(left))
	}
	return res
}

// blockingPartitions counts the result partitions of blocking and hybrid
// edges.
func blockingPartitions(job *topology.JobGraph, mode exchange.Mode) int {
	topo := topology.NewExecutionTopology(job, mode)
	n := 0
	for e := range topology.JobEdgeID(job.NumEdges()) {
		if !topo.PartitionType(e).IsPipelined() {
			src, _ := job.EdgeEnds(e)
			n += job.Vertex(src).Parallelism
		}
	}
	return n
}

func head(wc []engine.WordCount) string {
	if len(wc) > 8 {
		return fmt.Sprintf("%v ... (%d words)", wc[:8], len(wc))
	}
	return fmt.Sprint(wc)
}

// checkFailover checks that task failed once in its first attempt and its
// region then ran again to the end.
func checkFailover(t *testing.T, res *engine.Result, task string) {
	t.Helper()
	if res.Stats.Failovers != 1 || res.Stats.RegionRestarts < 1 {
		t.Fatalf("stats %+v: want one failover that restarts regions", res.Stats)
	}
	failed := -1
	for i, r := range res.Timeline {
		if r.Outcome == "failed: "+task {
			failed = i
			if r.Attempt != 0 || !slices.Contains(r.Tasks, task) {
				t.Fatalf("failed region attempt %+v", r)
			}
		}
	}
	if failed < 0 {
		t.Fatalf("no region attempt failed with %s: %+v", task, res.Timeline)
	}
	for _, r := range res.Timeline[failed+1:] {
		if r.Region == res.Timeline[failed].Region && r.Attempt > 0 && r.Outcome == "finished" {
			return
		}
	}
	t.Fatalf("region %d did not run again after %s failed: %+v", res.Timeline[failed].Region, task, res.Timeline)
}

// TestRuntimeMatchesReference runs the word count in every mode, on 1 slot
// where the mode allows it, on exactly its minimum and on more, without
// and with an injected failure of a subtask of a middle operator: the
// result is always exactly the single-threaded reference.
func TestRuntimeMatchesReference(t *testing.T) {
	job, lines := wordcountJob(t), text(t)
	for _, mode := range exchange.Modes() {
		minimum := region.FromJob(job, mode).MinimumSlots()
		for _, slots := range slotCounts(minimum) {
			for _, fail := range []string{"", "tokenizer#1", "counter#2"} {
				name := fmt.Sprintf("%s/slots=%d/fail=%s", mode, slots, fail)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					cfg := engine.Config{Job: job, Mode: mode, Slots: slots, Text: lines}
					if fail != "" {
						cfg.Fail = []string{fail}
					}
					res := checkRun(t, cfg)
					if fail != "" {
						checkFailover(t, res, fail)
					} else if res.Stats.Failovers != 0 || res.Stats.RegionsDeployed != res.Regions {
						t.Fatalf("stats %+v, %d regions: want each region deployed once", res.Stats, res.Regions)
					}
				})
			}
		}
	}
}

// TestTopK keeps the k most frequent words, ties broken by word.
func TestTopK(t *testing.T) {
	job, lines := wordcountJob(t), text(t)
	for _, k := range []int{1, 7, 10} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			t.Parallel()
			res := checkRun(t, engine.Config{Job: job, Mode: exchange.PointwisePipelinedOnly, Slots: 2, Text: lines, TopK: k,
				Fail: []string{"top-k#0"}})
			if len(res.Counts) != k {
				t.Fatalf("%d words, want %d", len(res.Counts), k)
			}
		})
	}
}

// TestFailureAtEndOfInput: an attempt that fails after it read its whole
// input (and, for a source, emitted all its lines) is still redone.
func TestFailureAtEndOfInput(t *testing.T) {
	job, lines := wordcountJob(t), text(t)
	for _, task := range []string{"text-source#1", "counter#0", "result-sink#0"} {
		t.Run(task, func(t *testing.T) {
			t.Parallel()
			res := checkRun(t, engine.Config{Job: job, Mode: exchange.AllPipelined, Slots: 4, Text: lines,
				Fail: []string{task}, FailAfter: 1 << 30})
			checkFailover(t, res, task)
		})
	}
}

// TestFailureAfterATime: "ID#i@MS" fails the first attempt once it has run
// MS ms (0: at its first record), or at the end of its input if that comes
// first (a minute: no task of the test runs that long); either way the
// job recovers with the same result.
func TestFailureAfterATime(t *testing.T) {
	job, lines := wordcountJob(t), text(t)
	for _, fail := range []string{"text-source#0@0", "counter#1@0", "result-sink#0@0", "counter#0@60000", "text-source#1@60000"} {
		t.Run(fail, func(t *testing.T) {
			t.Parallel()
			res := checkRun(t, engine.Config{Job: job, Mode: exchange.PointwisePipelinedOnly, Slots: 2, Text: lines, Fail: []string{fail}})
			checkFailover(t, res, fail[:strings.IndexByte(fail, '@')])
		})
	}
}

// TestTooFewSlots: with fewer slots than the minimum of the mode, the run
// stops at once with the scheduler's typed error, having deployed nothing.
func TestTooFewSlots(t *testing.T) {
	job, lines := wordcountJob(t), text(t)
	tried := 0
	for _, mode := range exchange.Modes() {
		minimum := region.FromJob(job, mode).MinimumSlots()
		for slots := 1; slots < minimum; slots++ {
			tried++
			t.Run(fmt.Sprintf("%s/slots=%d", mode, slots), func(t *testing.T) {
				res, err := engine.Run(testContext(t), engine.Config{Job: job, Mode: mode, Slots: slots, Text: lines, TempDir: t.TempDir()})
				var re *scheduler.RegionError
				if !errors.As(err, &re) {
					t.Fatalf("error %v, want a *scheduler.RegionError", err)
				}
				if re.Slots != minimum || res == nil || res.Stats.RegionsDeployed != 0 || len(res.Counts) != 0 {
					t.Fatalf("region error %v (needs %d slots), result %+v", re, re.Slots, res)
				}
			})
		}
	}
	if tried == 0 {
		t.Fatal("every mode runs on 1 slot: nothing tried")
	}
}

// TestWordcountGraph pins what the modes make of examples/jobs/wordcount.json
// (examples/jobs/README.md gives the same figures): every pipelining mode
// cuts it differently, and two need more than one slot; the hybrid modes
// cut it as all-blocking does.
func TestWordcountGraph(t *testing.T) {
	job := wordcountJob(t)
	want := map[exchange.Mode][2]int{ // regions, minimum slots
		exchange.AllBlocking:            {15, 1},
		exchange.ForwardPipelinedOnly:   {11, 1},
		exchange.PointwisePipelinedOnly: {7, 2},
		exchange.AllPipelined:           {1, 4},
		exchange.AllHybridFull:          {15, 1},
		exchange.AllHybridSelective:     {15, 1},
	}
	for mode, w := range want {
		rs := region.FromJob(job, mode)
		if got := [2]int{rs.NumRegions(), rs.MinimumSlots()}; got != w {
			t.Errorf("%s: %d regions, minimum %d slots; want %d, %d", mode, got[0], got[1], w[0], w[1])
		}
	}
}

// TestOtherGraph runs another graph of the same operators (what --job
// does): a rescale fan-in, hash edges, no top-k, one edge pinned to
// blocking, two counters by name suffix.
func TestOtherGraph(t *testing.T) {
	const graph = `{
  "name": "wordcount-variant",
  "vertices": [
    {"id": "text-source", "parallelism": 4},
    {"id": "tokenizer", "parallelism": 2},
    {"id": "counter.partial", "parallelism": 3},
    {"id": "counter.final", "parallelism": 3},
    {"id": "result-sink", "parallelism": 2}
  ],
  "edges": [
    {"source": "text-source", "target": "tokenizer", "shipStrategy": "rescale"},
    {"source": "tokenizer", "target": "counter.partial", "shipStrategy": "hash"},
    {"source": "counter.partial", "target": "counter.final", "shipStrategy": "forward", "exchange": "blocking"},
    {"source": "counter.final", "target": "result-sink", "shipStrategy": "hash"}
  ]
}`
	job, err := topology.DecodeBytes([]byte(graph))
	if err != nil {
		t.Fatal(err)
	}
	lines := text(t)
	for _, mode := range exchange.Modes() {
		minimum := region.FromJob(job, mode).MinimumSlots()
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			res := checkRun(t, engine.Config{Job: job, Mode: mode, Slots: minimum, Text: lines, TopK: 15,
				Fail: []string{"counter.final#1"}})
			checkFailover(t, res, "counter.final#1")
		})
	}
}

// TestSideInputGraph runs the FLINK-17330 shape (examples/jobs/cycle-side-input.json):
// tokenizer -forward-> result-sink, and tokenizer -hash, pinned blocking->
// counter -forward-> result-sink. Once forward edges are pipelined the
// regions depend on each other in a cycle and merge into one region with
// a blocking edge inside: the counters are deployed with the tokenizers
// and read their files once they finished. The sink adds up both inputs,
// so every count is twice the reference's.
func TestSideInputGraph(t *testing.T) {
	const graph = `{
  "name": "wordcount-side-input",
  "vertices": [
    {"id": "text-source", "parallelism": 2},
    {"id": "tokenizer", "parallelism": 2},
    {"id": "counter", "parallelism": 2},
    {"id": "result-sink", "parallelism": 2}
  ],
  "edges": [
    {"source": "text-source", "target": "tokenizer", "shipStrategy": "forward"},
    {"source": "tokenizer", "target": "result-sink", "shipStrategy": "forward"},
    {"source": "tokenizer", "target": "counter", "shipStrategy": "hash", "exchange": "blocking"},
    {"source": "counter", "target": "result-sink", "shipStrategy": "forward"}
  ]
}`
	job, err := topology.DecodeBytes([]byte(graph))
	if err != nil {
		t.Fatal(err)
	}
	lines := text(t)
	want := reference(lines, 0)
	for i := range want {
		want[i].Count *= 2
	}
	if rs := region.FromJob(job, exchange.ForwardPipelinedOnly); rs.NumRegions() != 1 {
		t.Fatalf("%d regions in forward-pipelined-only mode, want the cycle merged into 1", rs.NumRegions())
	}
	for _, mode := range exchange.Modes() {
		for _, fail := range []string{"", "counter#1"} {
			t.Run(mode.String()+"/fail="+fail, func(t *testing.T) {
				t.Parallel()
				cfg := engine.Config{Job: job, Mode: mode, Slots: region.FromJob(job, mode).MinimumSlots(), Text: lines}
				if fail != "" {
					cfg.Fail = []string{fail}
				}
				res := checkRunWant(t, cfg, want)
				if fail != "" {
					checkFailover(t, res, fail)
				}
			})
		}
	}
}

// TestBadGraphs: a vertex the runtime has no operator for, or a source
// that is not a text source, is refused before anything runs.
func TestBadGraphs(t *testing.T) {
	for name, graph := range map[string]string{
		"unknown operator": `{"name": "x", "vertices": [{"id": "text-source", "parallelism": 1}, {"id": "mapper", "parallelism": 1}],
			"edges": [{"source": "text-source", "target": "mapper", "shipStrategy": "forward"}]}`,
		"counter as a source": `{"name": "x", "vertices": [{"id": "counter", "parallelism": 1}], "edges": []}`,
		"text source with input": `{"name": "x", "vertices": [{"id": "text-source", "parallelism": 1}, {"id": "text-source.2", "parallelism": 1}],
			"edges": [{"source": "text-source", "target": "text-source.2", "shipStrategy": "forward"}]}`,
	} {
		job, err := topology.DecodeBytes([]byte(graph))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, err := engine.Run(testContext(t), engine.Config{Job: job, Slots: 1, Text: text(t)})
		if err == nil || res != nil || !strings.Contains(err.Error(), "vertex") {
			t.Errorf("%s: result %v, error %v; want an error naming the vertex", name, res, err)
		}
	}
}
