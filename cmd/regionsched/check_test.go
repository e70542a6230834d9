package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckFLIP119Slots: the FLIP-119 example against unknown-sized
// slots, at and below each mode's minimum.
func TestCheckFLIP119Slots(t *testing.T) {
	tests := []struct {
		mode     string
		slots    int
		code     int
		prefix   string
		contains []string
	}{
		{"all-pipelined", 4, 0, "deadlock-free:", []string{"region 0", "4 slots"}},
		{"all-pipelined", 100, 0, "deadlock-free:", []string{"region 0"}},
		{"all-pipelined", 3, 1, "not runnable:", []string{"region 0", "4 slots", "A#0"}},
		{"all-pipelined", 0, 1, "not runnable:", []string{"region 0", "4 slots"}},
		{"pointwise-pipelined-only", 2, 0, "deadlock-free:", []string{"region 0", "2 slots"}},
		{"pointwise-pipelined-only", 1, 1, "not runnable:", []string{"region 0", "2 slots"}},
		{"forward-pipelined-only", 1, 0, "deadlock-free:", []string{"1 slot"}},
		{"forward-pipelined-only", 0, 1, "not runnable:", []string{"region 0", "1 slot"}},
		{"all-blocking", 1, 0, "deadlock-free:", nil},
		{"all-blocking", 0, 1, "not runnable:", []string{"region 0", "1 slot"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%d", tc.mode, tc.slots), func(t *testing.T) {
			res := execCLI(t, "", "check", "--mode", tc.mode, "--slots", strconv.Itoa(tc.slots), flip119Path)
			assert.Equal(t, tc.code, res.code, "stderr: %s", res.stderr)
			assert.True(t, strings.HasPrefix(res.stdout, tc.prefix), "stdout %q should start with %q", res.stdout, tc.prefix)
			assert.Equal(t, 1, strings.Count(res.stdout, "\n"), "one line: %q", res.stdout)
			for _, s := range tc.contains {
				assert.Contains(t, res.stdout, s)
			}
			if tc.code == 0 {
				assert.Empty(t, res.stderr)
			} else {
				assert.NotContains(t, res.stderr, "Usage", "a negative verdict is not a usage error")
			}
		})
	}
}

// TestCheckJSONFormat: `--format json` prints one object with runnable,
// minimumSlots and reason, and keeps the exit code of the verdict.
func TestCheckJSONFormat(t *testing.T) {
	tests := []struct {
		mode     string
		slots    int
		runnable bool
		minimum  int
	}{
		{"all-pipelined", 4, true, 4},
		{"all-pipelined", 3, false, 4},
		{"pointwise-pipelined-only", 2, true, 2},
		{"pointwise-pipelined-only", 1, false, 2},
		{"all-blocking", 1, true, 1},
		{"all-blocking", 0, false, 1},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%d", tc.mode, tc.slots), func(t *testing.T) {
			res := execCLI(t, "", "check", "--format", "json", "--mode", tc.mode, "--slots", strconv.Itoa(tc.slots), flip119Path)
			wantCode := 0
			if !tc.runnable {
				wantCode = 1
			}
			assert.Equal(t, wantCode, res.code, "stderr: %s", res.stderr)
			var out checkOutput
			decodeStrict(t, res.stdout, &out)
			assert.Equal(t, checkOutput{Runnable: tc.runnable, MinimumSlots: tc.minimum, Reason: out.Reason}, out)
			assert.Contains(t, out.Reason, "region 0")
			if tc.runnable {
				assert.Empty(t, res.stderr)
			}
		})
	}
}

// sizedJob has two slot sharing groups with different slot profiles: in
// all-pipelined mode one region needs 2 default slots of
// {cpu=1000m mem=2048MB} (source and parse share one) and one "gpu" slot of
// {cpu=1000m mem=4096MB gpu=1}.
const sizedJob = `{
  "name": "sized",
  "vertices": [
    {"id": "source", "parallelism": 2, "resources": {"cpuMillis": 500, "memoryMB": 1024}},
    {"id": "parse", "parallelism": 2, "resources": {"cpuMillis": 500, "memoryMB": 1024}},
    {"id": "train", "parallelism": 1, "slotSharingGroup": "gpu", "resources": {"cpuMillis": 1000, "memoryMB": 4096, "extended": {"gpu": 1}}}
  ],
  "edges": [
    {"source": "source", "target": "parse", "shipStrategy": "forward"},
    {"source": "parse", "target": "train", "shipStrategy": "rebalance"}
  ]
}`

// TestCheckSizedCluster: --cluster with sized, unknown-sized and mixed
// slots; a negative verdict names the region and what is missing.
func TestCheckSizedCluster(t *testing.T) {
	job := writeTemp(t, "sized.json", sizedJob)
	tests := []struct {
		name, mode, cluster string
		code                int
		contains            []string
	}{
		{"slots too small in memory", "all-pipelined",
			`{"slots": [{"count": 3, "resources": {"cpuMillis": 4000, "memoryMB": 1024, "extended": {"gpu": 1}}}]}`,
			1, []string{"region 0", "missing", "2 x {cpu=1000m mem=2048MB}", "1 x {cpu=1000m mem=4096MB gpu=1}"}},
		{"enough slots but no gpu", "all-pipelined",
			`{"slots": [{"count": 5, "resources": {"cpuMillis": 4000, "memoryMB": 8192}}]}`,
			1, []string{"region 0", "missing 1 x {cpu=1000m mem=4096MB gpu=1}", "the cluster has 5 slots"}},
		{"right sizes", "all-pipelined",
			`{"slots": [{"count": 2, "resources": {"cpuMillis": 1000, "memoryMB": 2048}}, {"count": 1, "resources": {"cpuMillis": 1000, "memoryMB": 4096, "extended": {"gpu": 1}}}]}`,
			0, []string{"region 0"}},
		{"big uniform slots", "all-pipelined",
			`{"slots": [{"count": 3, "resources": {"cpuMillis": 8000, "memoryMB": 32768, "extended": {"gpu": 4}}}]}`,
			0, nil},
		{"one gpu slot too few", "all-pipelined",
			`{"slots": [{"count": 1, "resources": {"cpuMillis": 8000, "memoryMB": 32768, "extended": {"gpu": 4}}}, {"count": 1, "resources": {"cpuMillis": 1000, "memoryMB": 2048}}]}`,
			1, []string{"region 0", "missing"}},
		{"unknown-sized slots fit anything", "all-pipelined",
			`{"slots": [{"count": 3}]}`, 0, nil},
		{"unknown-sized slots, one too few", "all-pipelined",
			`{"slots": [{"count": 2}]}`, 1, []string{"region 0", "missing"}},
		{"unknown-sized slot stands in for the gpu slot", "all-pipelined",
			`{"slots": [{"count": 2, "resources": {"cpuMillis": 1000, "memoryMB": 2048}}, {"count": 1}]}`, 0, nil},
		{"tiny sized slots are useless", "all-pipelined",
			`{"slots": [{"count": 10, "resources": {"cpuMillis": 100, "memoryMB": 100}}, {"count": 1}]}`, 1, []string{"region 0", "missing"}},
		{"blocking: each subtask alone, but the training region needs a gpu", "all-blocking",
			`{"slots": [{"count": 8, "resources": {"cpuMillis": 4000, "memoryMB": 8192}}]}`,
			1, []string{"region 4", "train#0", "missing 1 x {cpu=1000m mem=4096MB gpu=1}"}},
		{"blocking: one slot of each size suffices", "all-blocking",
			`{"slots": [{"count": 1, "resources": {"cpuMillis": 500, "memoryMB": 1024}}, {"count": 1, "resources": {"cpuMillis": 1000, "memoryMB": 4096, "extended": {"gpu": 1}}}]}`,
			0, nil},
		{"empty cluster", "all-blocking", `{"slots": []}`, 1, []string{"region 0", "missing"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cluster := writeTemp(t, "cluster.json", tc.cluster)
			res := execCLI(t, "", "check", "--mode", tc.mode, "--cluster", cluster, job)
			require.Equal(t, tc.code, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			prefix := "deadlock-free:"
			if tc.code == 1 {
				prefix = "not runnable:"
			}
			assert.True(t, strings.HasPrefix(res.stdout, prefix), "stdout %q should start with %q", res.stdout, prefix)
			for _, s := range tc.contains {
				assert.Contains(t, res.stdout, s)
			}

			js := execCLI(t, "", "check", "--format", "json", "--mode", tc.mode, "--cluster", cluster, job)
			require.Equal(t, tc.code, js.code, js.stderr)
			var out checkOutput
			decodeStrict(t, js.stdout, &out)
			assert.Equal(t, tc.code == 0, out.Runnable)
			assert.Equal(t, strings.TrimPrefix(strings.TrimSpace(res.stdout), prefix+" "), out.Reason, "text and json give the same reason")
		})
	}
}

// streamingJob has an unbounded region of 2 slots (ingest -hash-> enrich,
// never finishing) and a bounded region of 2 slots pinned apart from it:
// the unbounded slots are never given back, so the job needs 4 slots.
const streamingJob = `{
  "name": "streaming-plus-batch",
  "vertices": [
    {"id": "ingest", "parallelism": 2, "bounded": false},
    {"id": "enrich", "parallelism": 2, "bounded": false},
    {"id": "backfill", "parallelism": 2},
    {"id": "compact", "parallelism": 2}
  ],
  "edges": [
    {"source": "ingest", "target": "enrich", "shipStrategy": "hash", "exchange": "pipelined"},
    {"source": "backfill", "target": "compact", "shipStrategy": "hash", "exchange": "pipelined-bounded"}
  ]
}`

// TestCheckCountsUnboundedSlotsForEveryRegion: slots held by streaming
// subtasks are counted against every region.
func TestCheckCountsUnboundedSlotsForEveryRegion(t *testing.T) {
	job := writeTemp(t, "streaming.json", streamingJob)
	for _, mode := range modeNames {
		t.Run(mode, func(t *testing.T) {
			out := regionsJSON(t, "--mode", mode, job)
			require.Len(t, out.Regions, 2)
			assert.Equal(t, 2, out.MinimumSlots)

			enough := execCLI(t, "", "check", "--mode", mode, "--slots", "4", job)
			assert.Equal(t, 0, enough.code, enough.stdout)
			assert.True(t, strings.HasPrefix(enough.stdout, "deadlock-free:"), enough.stdout)

			short := execCLI(t, "", "check", "--mode", mode, "--slots", "3", job)
			assert.Equal(t, 1, short.code, short.stdout)
			assert.True(t, strings.HasPrefix(short.stdout, "not runnable:"), short.stdout)
			assert.Contains(t, short.stdout, "4 slots")
			assert.Contains(t, short.stdout, "indefinitely")
			assert.Regexp(t, `region [01] `, short.stdout)
		})
	}
}

// TestCheckClusterFlagErrors: the cluster is given exactly once, validly.
func TestCheckClusterFlagErrors(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	good := file("good.json", `{"slots": [{"count": 4}]}`)
	tests := []struct {
		name     string
		args     []string
		contains []string
	}{
		{"both --slots and --cluster", []string{"--slots", "4", "--cluster", good}, []string{"--slots", "--cluster"}},
		{"neither --slots nor --cluster", nil, []string{"--slots", "--cluster"}},
		{"negative --slots", []string{"--slots", "-1"}, []string{"--slots", "-1"}},
		{"very negative --slots", []string{"--slots=-7"}, []string{"--slots", "-7"}},
		{"non-numeric --slots", []string{"--slots", "four"}, []string{"--slots", "four"}},
		{"missing cluster file", []string{"--cluster", filepath.Join(dir, "absent.json")}, []string{"absent.json"}},
		{"malformed cluster file", []string{"--cluster", file("malformed.json", `{"slots": [`)}, []string{"malformed.json"}},
		{"empty cluster file", []string{"--cluster", file("empty.json", "")}, []string{"empty.json", "empty"}},
		{"unknown field in the cluster", []string{"--cluster", file("unknown.json", `{"slots": [{"count": 2, "size": 4}]}`)}, []string{"size"}},
		{"unknown top-level field", []string{"--cluster", file("top.json", `{"slot": [{"count": 2}]}`)}, []string{"slot"}},
		{"unknown resource field", []string{"--cluster", file("res.json", `{"slots": [{"count": 2, "resources": {"cpu": 1}}]}`)}, []string{"cpu"}},
		{"negative memory", []string{"--cluster", file("neg.json", `{"slots": [{"count": 2, "resources": {"cpuMillis": 1, "memoryMB": -5}}]}`)}, []string{"memoryMB"}},
		{"negative count", []string{"--cluster", file("count.json", `{"slots": [{"count": -2}]}`)}, []string{"count"}},
		{"missing count", []string{"--cluster", file("nocount.json", `{"slots": [{"resources": {"cpuMillis": 1, "memoryMB": 1}}]}`)}, []string{"count"}},
		{"missing slots", []string{"--cluster", file("noslots.json", `{}`)}, []string{"slots"}},
		{"bad --format", []string{"--slots", "4", "--format", "yaml"}, []string{"yaml", "text", "json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"check"}, tc.args...), flip119Path)
			res := execCLI(t, "", args...)
			assert.Equal(t, 2, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			assert.Empty(t, res.stdout, "no verdict on bad input")
			require.NotEmpty(t, res.stderr)
			for _, s := range tc.contains {
				assert.Contains(t, res.stderr, s)
			}
		})
	}
}

// TestCheckExampleJobsAtMinimumSlots: for every example job and mode,
// `check --slots minimumSlots` is deadlock-free and one slot fewer is not
// runnable (docs/cli.md: minimumSlots is exactly the threshold).
func TestCheckExampleJobsAtMinimumSlots(t *testing.T) {
	for _, file := range exampleJobs(t) {
		for _, mode := range modeNames {
			t.Run(filepath.Base(file)+"/"+mode, func(t *testing.T) {
				minimum := regionsJSON(t, "--mode", mode, file).MinimumSlots
				require.GreaterOrEqual(t, minimum, 1)

				ok := execCLI(t, "", "check", "--mode", mode, "--slots", strconv.Itoa(minimum), file)
				assert.Equal(t, 0, ok.code, "stdout: %s\nstderr: %s", ok.stdout, ok.stderr)
				assert.True(t, strings.HasPrefix(ok.stdout, "deadlock-free:"), ok.stdout)

				short := execCLI(t, "", "check", "--mode", mode, "--slots", strconv.Itoa(minimum-1), file)
				assert.Equal(t, 1, short.code, "stdout: %s\nstderr: %s", short.stdout, short.stderr)
				assert.True(t, strings.HasPrefix(short.stdout, "not runnable:"), short.stdout)
				assert.Regexp(t, `region \d+ `, short.stdout)

				js := execCLI(t, "", "check", "--format", "json", "--mode", mode, "--slots", strconv.Itoa(minimum-1), file)
				var out checkOutput
				decodeStrict(t, js.stdout, &out)
				assert.False(t, out.Runnable)
				assert.Equal(t, minimum, out.MinimumSlots)
			})
		}
	}
}

// TestCheckMLExampleCluster: the sized cluster of examples/jobs/README.md
// runs ml-feature-pipeline.json in every mode. With single-gpu slots the
// locality packing puts train#i and evaluate#i in one slot needing two
// gpus; where such a pair is a region of its own, the resource-aware
// packing gives each its own single-gpu slot and the job runs (and the
// simulation, which asks for that packing, finishes); all-pipelined needs
// four gpu slots at once and does not run.
func TestCheckMLExampleCluster(t *testing.T) {
	const job = "../../examples/jobs/ml-feature-pipeline.json"
	enough := writeTemp(t, "enough.json", `{"slots": [{"count": 6, "resources": {"cpuMillis": 2250, "memoryMB": 4608}},
		{"count": 2, "resources": {"cpuMillis": 6000, "memoryMB": 24576, "extended": {"gpu": 2}}}]}`)
	oneGPU := writeTemp(t, "one-gpu.json", `{"slots": [{"count": 6, "resources": {"cpuMillis": 2250, "memoryMB": 4608}},
		{"count": 2, "resources": {"cpuMillis": 6000, "memoryMB": 24576, "extended": {"gpu": 1}}}]}`)
	for _, mode := range modeNames {
		t.Run(mode, func(t *testing.T) {
			ok := execCLI(t, "", "check", "--mode", mode, "--cluster", enough, job)
			assert.Equal(t, 0, ok.code, "stdout: %s\nstderr: %s", ok.stdout, ok.stderr)
			assert.True(t, strings.HasPrefix(ok.stdout, "deadlock-free:"), ok.stdout)

			short := execCLI(t, "", "check", "--mode", mode, "--cluster", oneGPU, job)
			sim := execCLI(t, "", "simulate", "--mode", mode, "--cluster", oneGPU, job)
			switch mode {
			case "all-blocking", "all-hybrid-full", "all-hybrid-selective": // train and evaluate are separate regions, one gpu each
				assert.Equal(t, 0, short.code, short.stdout)
				assert.Contains(t, short.stdout, "packing: locality")
			case "all-pipelined":
				assert.Equal(t, 1, short.code, "stdout: %s\nstderr: %s", short.stdout, short.stderr)
				assert.True(t, strings.HasPrefix(short.stdout, "not runnable:"), short.stdout)
				assert.Contains(t, short.stdout, "gpu=2")
				assert.Regexp(t, `region \d+ `, short.stdout)
				assert.Equal(t, 1, sim.code, sim.stdout)
				return
			default:
				assert.Equal(t, 0, short.code, "stdout: %s\nstderr: %s", short.stdout, short.stderr)
				assert.True(t, strings.HasPrefix(short.stdout, "deadlock-free:"), short.stdout)
				assert.Contains(t, short.stdout, "packing: resource-aware")
				assert.Contains(t, short.stdout, "{train#0} + {evaluate#0}")
			}
			assert.Equal(t, 0, sim.code, "stdout: %s\nstderr: %s", sim.stdout, sim.stderr)
			assert.Contains(t, sim.stdout, "finished:")
		})
	}
}

// streamReaderJob is a first case: B reads the unbounded U
// through a pipelined edge, so it never finishes and both slots of their
// region are held forever; X needs a third slot.
const streamReaderJob = `{"name":"stream-reader","vertices":[{"id":"U","parallelism":1,"bounded":false},{"id":"B","parallelism":2},{"id":"X","parallelism":1}],
 "edges":[{"source":"U","target":"B","shipStrategy":"hash","exchange":"pipelined"}]}`

// TestCheckStreamReader: with 2 slots check says not runnable and names
// the tasks that hold slots forever, and the simulation does not finish;
// at the true minimum, 3 slots, check says deadlock-free and the
// simulation reaches its steady state.
func TestCheckStreamReader(t *testing.T) {
	job := writeTemp(t, "stream-reader.json", streamReaderJob)
	short := execCLI(t, "", "check", "--slots", "2", job)
	assert.Equal(t, 1, short.code, "stdout: %s\nstderr: %s", short.stdout, short.stderr)
	assert.True(t, strings.HasPrefix(short.stdout, "not runnable:"), short.stdout)
	assert.Contains(t, short.stdout, "region 1 {X#0} needs 3 slots")
	assert.Contains(t, short.stdout, "held indefinitely by {U#0, B#0, B#1}, which never finish")
	assert.NotContains(t, short.stdout, "depends on timing", "X asks after U's region: the deadlock is certain")
	sim := execCLI(t, "", "simulate", "--slots", "2", job)
	assert.Equal(t, 1, sim.code, "stdout: %s\nstderr: %s", sim.stdout, sim.stderr)
	assert.NotContains(t, sim.stdout, "finished:")

	ok := execCLI(t, "", "check", "--slots", "3", job)
	assert.Equal(t, 0, ok.code, "stdout: %s\nstderr: %s", ok.stdout, ok.stderr)
	assert.True(t, strings.HasPrefix(ok.stdout, "deadlock-free:"), ok.stdout)
	steady := execCLI(t, "", "simulate", "--slots", "3", job)
	assert.Equal(t, 0, steady.code, "stdout: %s\nstderr: %s", steady.stdout, steady.stderr)
	assert.Contains(t, steady.stdout, "running:")
}

// TestCheckAbsurdClusterIsBadInput: slot counts that add up past
// region.MaxClusterSlots (here: past math.MaxInt64, which used to wrap to
// a negative cluster) are refused with exit 2 naming the field, by check
// and simulate alike; so is such a --slots.
func TestCheckAbsurdClusterIsBadInput(t *testing.T) {
	big := writeTemp(t, "big.json", `{"slots": [{"count": 4611686018427387904}, {"count": 4611686018427387904}]}`)
	job := writeTemp(t, "one.json", `{"name": "one", "vertices": [{"id": "A", "parallelism": 1}], "edges": []}`)
	for _, args := range [][]string{
		{"check", "--cluster", big, job},
		{"simulate", "--cluster", big, job},
		{"check", "--slots", "9223372036854775807", job},
		{"simulate", "--slots", "1099511627777", job},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			res := execCLI(t, "", args...)
			assert.Equal(t, 2, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			assert.Empty(t, res.stdout)
			assert.Contains(t, res.stderr, "1099511627776")
			assert.Contains(t, res.stderr, "surely a mistake")
			assert.NotContains(t, res.stderr, "-9223372036854775808")
			if args[1] == "--cluster" {
				assert.Contains(t, res.stderr, `"slots[0].count"`)
			}
		})
	}
	// The largest cluster allowed still works.
	ok := execCLI(t, "", "check", "--slots", "1099511627776", job)
	assert.Equal(t, 0, ok.code, "stdout: %s\nstderr: %s", ok.stdout, ok.stderr)
}

// TestCheckPacksBySize is a packing case: A(2, 500m) -hash->
// B(1, 500m), A -hash-> C(1, 100m), all pipelined, on slots of 1000m and
// 600m: the locality packing {A, B, C} + {A} does not fit, {A, B} + {A, C}
// does; check says deadlock-free and which packing, and the simulation,
// which asks for that packing, finishes.
func TestCheckPacksBySize(t *testing.T) {
	job := writeTemp(t, "pack.json", `{"name": "pack", "vertices": [
		{"id": "A", "parallelism": 2, "resources": {"cpuMillis": 500, "memoryMB": 0}},
		{"id": "B", "parallelism": 1, "resources": {"cpuMillis": 500, "memoryMB": 0}},
		{"id": "C", "parallelism": 1, "resources": {"cpuMillis": 100, "memoryMB": 0}}],
	  "edges": [{"source": "A", "target": "B", "shipStrategy": "hash"}, {"source": "A", "target": "C", "shipStrategy": "hash"}]}`)
	cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 1, "resources": {"cpuMillis": 1000, "memoryMB": 0}},
		{"count": 1, "resources": {"cpuMillis": 600, "memoryMB": 0}}]}`)
	res := execCLI(t, "", "check", "--mode", "all-pipelined", "--cluster", cluster, job)
	assert.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.True(t, strings.HasPrefix(res.stdout, "deadlock-free:"), res.stdout)
	assert.Contains(t, res.stdout, "packing: resource-aware")
	assert.Contains(t, res.stdout, "{A#0, C#0} + {A#1, B#0}")

	sim := execCLI(t, "", "simulate", "--mode", "all-pipelined", "--cluster", cluster, job)
	assert.Equal(t, 0, sim.code, "stdout: %s\nstderr: %s", sim.stdout, sim.stderr)
	assert.Contains(t, sim.stdout, "finished: all 4 tasks finished")
}

// TestSharedSlotBeyondTheLargestAmount: two subtasks sharing a slot that
// each need the most a slot can offer (math.MaxInt64) of CPU, memory or
// an extended resource need more than the one slot of the most: check
// says not runnable (the sum reads ">"), and simulate fails instead of
// running both in it. One such subtask alone fits the slot.
func TestSharedSlotBeyondTheLargestAmount(t *testing.T) {
	const most = "9223372036854775807"
	cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 1, "resources": {"cpuMillis": `+most+`, "memoryMB": `+most+`, "extended": {"gpu": `+most+`}}}]}`)
	for name, tc := range map[string]struct{ resources, need string }{
		"cpu":      {`{"cpuMillis": ` + most + `}`, "{cpu>" + most + "m mem=0MB}"},
		"memory":   {`{"memoryMB": ` + most + `}`, "{cpu=0m mem>" + most + "MB}"},
		"extended": {`{"extended": {"gpu": ` + most + `}}`, "{cpu=0m mem=0MB gpu>" + most + "}"},
	} {
		t.Run(name, func(t *testing.T) {
			pair := writeTemp(t, "pair.json", `{"name": "pair", "vertices": [{"id": "A", "parallelism": 1, "resources": `+tc.resources+`},
			 {"id": "B", "parallelism": 1, "resources": `+tc.resources+`}],
			 "edges": [{"source": "A", "target": "B", "shipStrategy": "forward", "exchange": "pipelined"}]}`)
			res := execCLI(t, "", "check", "--cluster", cluster, pair)
			require.Equal(t, 1, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			assert.Equal(t, "not runnable: region 0 {A#0, B#0} needs 1 x "+tc.need+" at once; the cluster has 1 slot; missing 1 x "+tc.need+"; packing: locality\n", res.stdout)

			js := execCLI(t, "", "check", "--format", "json", "--cluster", cluster, pair)
			require.Equal(t, 1, js.code, js.stderr)
			assert.Contains(t, js.stdout, `"reason":"region 0 {A#0, B#0} needs 1 x `+tc.need)

			sim := execCLI(t, "", "simulate", "--cluster", cluster, "--trace", "-", pair)
			require.Equal(t, 1, sim.code, "stdout: %s\nstderr: %s", sim.stdout, sim.stderr)
			assert.NotContains(t, sim.stdout, `"event": "deploy"`)
			assert.Contains(t, sim.stdout+sim.stderr, "failed: region 0 {A#0, B#0} needs 1 slot at once; the cluster can never give it: missing 1 x "+tc.need)

			one := writeTemp(t, "one.json", `{"name": "one", "vertices": [{"id": "A", "parallelism": 1, "resources": `+tc.resources+`}]}`)
			res = execCLI(t, "", "check", "--cluster", cluster, one)
			assert.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			sim = execCLI(t, "", "simulate", "--cluster", cluster, one)
			assert.Equal(t, 0, sim.code, "stdout: %s\nstderr: %s", sim.stdout, sim.stderr)
		})
	}
}
