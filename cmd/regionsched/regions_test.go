package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/graph/encoding/dot"
	"gonum.org/v1/gonum/graph/simple"
)

// flip119Want is FLIP-119's table per canonical mode (docs/architecture.md).
// The hybrid modes cut regions where all-blocking does.
var flip119Want = map[string]struct{ regions, blocking, hybrid, minimumSlots int }{
	"all-blocking":             {12, 3, 0, 1},
	"forward-pipelined-only":   {10, 2, 0, 1},
	"pointwise-pipelined-only": {6, 1, 0, 2},
	"all-pipelined":            {1, 0, 0, 4},
	"all-hybrid-full":          {12, 0, 3, 1},
	"all-hybrid-selective":     {12, 0, 3, 1},
}

// TestRegionsFLIP119EveryModeSpelling runs `regions --format json` on the
// FLIP-119 example with every accepted spelling of every mode (docs/job-file.md) and checks FLIP-119's table and the canonical mode name.
func TestRegionsFLIP119EveryModeSpelling(t *testing.T) {
	spellings := []struct{ flag, canonical string }{
		{"all-blocking", "all-blocking"},
		{"ALL_EDGES_BLOCKING", "all-blocking"},
		{"all_edges_blocking", "all-blocking"},
		{"All_Edges_Blocking", "all-blocking"},
		{"batch", "all-blocking"},
		{"BATCH", "all-blocking"},
		{"forward-pipelined-only", "forward-pipelined-only"},
		{"FORWARD_EDGES_PIPELINED", "forward-pipelined-only"},
		{"forward_edges_pipelined", "forward-pipelined-only"},
		{"Forward_Edges_Pipelined", "forward-pipelined-only"},
		{"pointwise-pipelined-only", "pointwise-pipelined-only"},
		{"POINTWISE_EDGES_PIPELINED", "pointwise-pipelined-only"},
		{"pointwise_edges_pipelined", "pointwise-pipelined-only"},
		{"PointWise_Edges_Pipelined", "pointwise-pipelined-only"},
		{"all-pipelined", "all-pipelined"},
		{"ALL_EDGES_PIPELINED", "all-pipelined"},
		{"all_edges_pipelined", "all-pipelined"},
		{"pipelined", "all-pipelined"},
		{"Pipelined", "all-pipelined"},
		{"all-hybrid-full", "all-hybrid-full"},
		{"ALL_EXCHANGES_HYBRID_FULL", "all-hybrid-full"},
		{"all_edges_hybrid_full", "all-hybrid-full"},
		{"all-hybrid-selective", "all-hybrid-selective"},
		{"ALL_EXCHANGES_HYBRID_SELECTIVE", "all-hybrid-selective"},
		{"All_Edges_Hybrid_Selective", "all-hybrid-selective"},
	}
	for _, sp := range spellings {
		t.Run(sp.flag, func(t *testing.T) {
			want := flip119Want[sp.canonical]
			for _, args := range [][]string{
				{"--mode", sp.flag, flip119Path},
				{"--mode=" + sp.flag, flip119Path},
				{flip119Path, "--mode", sp.flag}, // flags after the job file
			} {
				out := regionsJSON(t, args...)
				assert.Equal(t, "flip119-example", out.Job)
				assert.Equal(t, sp.canonical, out.Mode, "the mode is printed by its canonical name")
				assert.Equal(t, 12, out.ExecutionVertices)
				assert.Len(t, out.Regions, want.regions)
				assert.Equal(t, want.blocking, out.BlockingLogicalEdges)
				assert.Equal(t, want.hybrid, out.HybridLogicalEdges)
				assert.Equal(t, want.minimumSlots, out.MinimumSlots)
			}
		})
	}
}

// TestRegionsFLIP119PointwiseExample is the example output of docs/job-file.md
// section 4, region by region.
func TestRegionsFLIP119PointwiseExample(t *testing.T) {
	out := regionsJSON(t, "--mode", "pointwise-pipelined-only", flip119Path)
	require.Len(t, out.Regions, 6)
	assert.Equal(t, regionOutput{ID: 0, Vertices: []string{"A#0", "B#0", "C#0", "C#1"}, Slots: 2, Consumes: []int{}}, out.Regions[0])
	assert.Equal(t, regionOutput{ID: 1, Vertices: []string{"A#1", "B#1", "C#2", "C#3"}, Slots: 2, Consumes: []int{}}, out.Regions[1])
	for i, d := range []string{"D#0", "D#1", "D#2", "D#3"} {
		assert.Equal(t, regionOutput{ID: 2 + i, Vertices: []string{d}, Slots: 1, Consumes: []int{0, 1}}, out.Regions[2+i])
	}
	assert.Equal(t, regionOutput{ID: 4, Vertices: []string{"D#2"}, Slots: 1, Consumes: []int{0, 1}}, out.Regions[4])
}

// TestRegionsFLIP119OtherModes spells out the regions of the other modes.
func TestRegionsFLIP119OtherModes(t *testing.T) {
	blocking := regionsJSON(t, "--mode", "all-blocking", flip119Path)
	require.Len(t, blocking.Regions, 12)
	wantBlocking := []struct {
		vertex   string
		consumes []int
	}{
		{"A#0", []int{}}, {"A#1", []int{}}, {"B#0", []int{0}}, {"B#1", []int{1}},
		{"C#0", []int{2}}, {"C#1", []int{2}}, {"C#2", []int{3}}, {"C#3", []int{3}},
		{"D#0", []int{4, 5, 6, 7}}, {"D#1", []int{4, 5, 6, 7}}, {"D#2", []int{4, 5, 6, 7}}, {"D#3", []int{4, 5, 6, 7}},
	}
	for i, w := range wantBlocking {
		assert.Equal(t, regionOutput{ID: i, Vertices: []string{w.vertex}, Slots: 1, Consumes: w.consumes}, blocking.Regions[i])
	}

	forward := regionsJSON(t, "--mode", "forward-pipelined-only", flip119Path)
	require.Len(t, forward.Regions, 10)
	assert.Equal(t, regionOutput{ID: 0, Vertices: []string{"A#0", "B#0"}, Slots: 1, Consumes: []int{}}, forward.Regions[0])
	assert.Equal(t, regionOutput{ID: 1, Vertices: []string{"A#1", "B#1"}, Slots: 1, Consumes: []int{}}, forward.Regions[1])
	assert.Equal(t, regionOutput{ID: 9, Vertices: []string{"D#3"}, Slots: 1, Consumes: []int{2, 3, 4, 5}}, forward.Regions[9])

	pipelined := regionsJSON(t, "--mode", "all-pipelined", flip119Path)
	require.Len(t, pipelined.Regions, 1)
	assert.Equal(t, regionOutput{ID: 0, Slots: 4, Consumes: []int{}, Vertices: []string{
		"A#0", "A#1", "B#0", "B#1", "C#0", "C#1", "C#2", "C#3", "D#0", "D#1", "D#2", "D#3",
	}}, pipelined.Regions[0])
}

// TestRegionsDefaultModeIsAllBlocking: without --mode the output is the
// all-blocking one, in every format.
func TestRegionsDefaultModeIsAllBlocking(t *testing.T) {
	for _, format := range []string{"json", "text", "dot"} {
		t.Run(format, func(t *testing.T) {
			def := execCLI(t, "", "regions", "--format", format, flip119Path)
			explicit := execCLI(t, "", "regions", "--format", format, "--mode", "all-blocking", flip119Path)
			require.Equal(t, 0, def.code, def.stderr)
			require.Equal(t, 0, explicit.code, explicit.stderr)
			assert.Equal(t, explicit.stdout, def.stdout)
		})
	}
}

// TestRegionsReadsStandardInput: "-" reads the job from standard input
// and gives the same output as the file.
func TestRegionsReadsStandardInput(t *testing.T) {
	data, err := os.ReadFile(flip119Path)
	require.NoError(t, err)
	for _, mode := range modeNames {
		for _, format := range []string{"json", "text", "dot"} {
			t.Run(mode+"/"+format, func(t *testing.T) {
				fromFile := execCLI(t, "", "regions", "--mode", mode, "--format", format, flip119Path)
				fromStdin := execCLI(t, string(data), "regions", "--mode", mode, "--format", format, "-")
				require.Equal(t, 0, fromStdin.code, fromStdin.stderr)
				assert.Empty(t, fromStdin.stderr)
				assert.NotEmpty(t, fromStdin.stdout)
				assert.Equal(t, fromFile.stdout, fromStdin.stdout)
			})
		}
	}
}

// TestRegionsTextFormat: the human-readable table (the default format)
// carries the counts, the canonical mode and one row per region.
func TestRegionsTextFormat(t *testing.T) {
	for _, mode := range modeNames {
		t.Run(mode, func(t *testing.T) {
			want := flip119Want[mode]
			res := execCLI(t, "", "regions", "--mode", mode, "--format", "text", flip119Path)
			require.Equal(t, 0, res.code, res.stderr)
			assert.Empty(t, res.stderr)
			out := res.stdout
			assert.Contains(t, out, "flip119-example")
			assert.Contains(t, out, mode)
			assert.Contains(t, out, "12 execution vertices")
			regions := fmt.Sprintf("%d regions", want.regions)
			if want.regions == 1 {
				regions = "1 region,"
			}
			assert.Contains(t, out, regions)
			blocking := fmt.Sprintf("%d blocking logical edges", want.blocking)
			if want.blocking == 1 {
				blocking = "1 blocking logical edge,"
			}
			assert.Contains(t, out, blocking)
			if want.hybrid > 0 {
				assert.Contains(t, out, fmt.Sprintf("%d hybrid logical edges", want.hybrid))
				assert.Regexp(t, `(?m)^8\s+1\s+D#0\s+hybrid 4-7$`, out, "regions read through hybrid exchanges are marked")
			} else {
				assert.NotContains(t, out, "hybrid")
			}
			assert.Contains(t, out, fmt.Sprintf("minimum slots %d", want.minimumSlots))
			assert.Contains(t, out, "A#0")
			// One row per region: a line that starts with the region id.
			for r := range want.regions {
				assert.Regexp(t, regexp.MustCompile(fmt.Sprintf(`(?m)^%d\s+\d+\s+\S`, r)), out, "row of region %d", r)
			}
			assert.NotRegexp(t, regexp.MustCompile(fmt.Sprintf(`(?m)^%d\s+\d+\s+\S`, want.regions)), out, "no row past the last region")

			def := execCLI(t, "", "regions", "--mode", mode, flip119Path)
			assert.Equal(t, out, def.stdout, "text is the default format")
		})
	}
}

// clusterRE matches the opening of one region's cluster in the DOT output.
var clusterRE = regexp.MustCompile(`(?m)^\s*subgraph\s+"?cluster_[^\s{]*"?\s*\{`)

// TestRegionsDOTFormat: a Graphviz digraph that gonum can read back, with
// one cluster per region and one node per execution vertex.
func TestRegionsDOTFormat(t *testing.T) {
	for _, mode := range modeNames {
		t.Run(mode, func(t *testing.T) {
			want := flip119Want[mode]
			res := execCLI(t, "", "regions", "--mode", mode, "--format", "dot", flip119Path)
			require.Equal(t, 0, res.code, res.stderr)
			assert.Empty(t, res.stderr)
			out := res.stdout
			assert.Regexp(t, `^(strict )?digraph\b`, strings.TrimSpace(out))
			assert.Len(t, clusterRE.FindAllString(out, -1), want.regions, "one cluster per region")
			for r := range want.regions {
				assert.Contains(t, out, fmt.Sprintf("region %d ", r))
			}

			g := simple.NewDirectedGraph()
			require.NoError(t, dot.Unmarshal([]byte(out), g), "the output must be valid DOT")
			assert.Equal(t, 12, g.Nodes().Len(), "one node per execution vertex")
			// A->B forward: 2 arrows, B->C rescale: 4, C->D hash: 4 x 4.
			assert.Equal(t, 22, g.Edges().Len())
			for _, v := range []string{"A#0", "A#1", "B#0", "B#1", "C#0", "C#3", "D#0", "D#3"} {
				assert.Contains(t, out, `"`+v+`"`)
			}
			if want.blocking > 0 {
				assert.Contains(t, out, "dashed", "blocking exchanges are dashed")
			} else {
				assert.NotContains(t, out, "dashed")
			}
			if want.hybrid > 0 {
				assert.Contains(t, out, "dotted", "hybrid exchanges are dotted")
			} else {
				assert.NotContains(t, out, "dotted")
			}
		})
	}
}

// TestRegionsExampleJobs: every example job gives valid, consistent
// output in every mode and every format.
func TestRegionsExampleJobs(t *testing.T) {
	for _, file := range exampleJobs(t) {
		for _, mode := range modeNames {
			t.Run(file[strings.LastIndex(file, "/")+1:]+"/"+mode, func(t *testing.T) {
				out := regionsJSON(t, "--mode", mode, file)
				assert.NotEmpty(t, out.Job, "example jobs have a name")
				assert.Equal(t, mode, out.Mode)
				assert.LessOrEqual(t, out.ExecutionVertices, 250, "examples stay small enough to simulate quickly")

				text := execCLI(t, "", "regions", "--mode", mode, file)
				require.Equal(t, 0, text.code, text.stderr)
				assert.Contains(t, text.stdout, fmt.Sprintf("minimum slots %d", out.MinimumSlots))

				d := execCLI(t, "", "regions", "--mode", mode, "--format", "dot", file)
				require.Equal(t, 0, d.code, d.stderr)
				assert.Len(t, clusterRE.FindAllString(d.stdout, -1), len(out.Regions))
				require.NoError(t, dot.Unmarshal([]byte(d.stdout), simple.NewDirectedGraph()))
			})
		}
	}
}

// largeAllToAllJob is source(p) -hash-> sink(p) as a job file.
func largeAllToAllJob(p int) string {
	return fmt.Sprintf(`{"name": "alltoall-%d", "vertices": [{"id": "source", "parallelism": %d}, {"id": "sink", "parallelism": %d}],
"edges": [{"source": "source", "target": "sink", "shipStrategy": "hash"}]}`, p, p, p)
}

// TestRegionsLargeAllToAllJSONIsFast: the JSON of a
// 2 x 10,000 all-to-all job is printed in well under 3 seconds. In the
// default all-blocking mode that is 20,000 regions, each of the 10,000
// consumers listing its 10,000 producer regions as one range; in
// all-pipelined mode one region of 20,000 subtasks.
func TestRegionsLargeAllToAllJSONIsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test: skipped with -short")
	}
	if raceEnabled {
		t.Skip("timing test: the race detector slows it about tenfold")
	}
	const p = 10_000
	path := writeTemp(t, "alltoall.json", largeAllToAllJob(p))

	t.Run("all-blocking", func(t *testing.T) {
		var w countingWriter
		start := time.Now()
		res := execCLITo(t, "", &w, "regions", "--format", "json", path)
		elapsed := time.Since(start)
		t.Logf("2 x %d all-to-all, all-blocking: %d bytes of JSON in %v", p, w.n, elapsed)
		require.Equal(t, 0, res.code, res.stderr)
		// Each consumer lists its 10,000 producer regions as one range.
		assert.Less(t, w.n, int64(2*p*100))
		assert.Less(t, elapsed, 3*time.Second)
	})

	t.Run("all-pipelined", func(t *testing.T) {
		var buf bytes.Buffer
		start := time.Now()
		res := execCLITo(t, "", &buf, "regions", "--mode", "all-pipelined", "--format", "json", path)
		elapsed := time.Since(start)
		t.Logf("2 x %d all-to-all, all-pipelined: %d bytes of JSON in %v", p, buf.Len(), elapsed)
		require.Equal(t, 0, res.code, res.stderr)
		assert.Less(t, elapsed, 3*time.Second)

		var out regionsOutput
		require.NoError(t, json.Unmarshal(buf.Bytes(), &out))
		assert.Equal(t, "all-pipelined", out.Mode)
		assert.Equal(t, 2*p, out.ExecutionVertices)
		assert.Equal(t, 0, out.BlockingLogicalEdges)
		require.Len(t, out.Regions, 1)
		assert.Len(t, out.Regions[0].Vertices, 2*p)
		assert.Equal(t, p, out.Regions[0].Slots)
		assert.Equal(t, p, out.MinimumSlots)
		assert.Empty(t, out.Regions[0].Consumes)
	})
}

// tpcdsLikeJob is a plan of 19 stages, 17 of parallelism p and 2 of one,
// joined by 35 all-to-all blocking exchanges: many stages read two or
// three others, so a region consumes several groups' producers.
func tpcdsLikeJob(p int) string {
	edges := [][2]int{{0, 1}, {0, 3}, {0, 9}, {1, 2}, {1, 6}, {1, 11}, {2, 3}, {3, 4}, {4, 5}, {4, 8}, {4, 18}, {5, 6},
		{5, 18}, {6, 7}, {6, 18}, {7, 8}, {7, 17}, {8, 9}, {8, 15}, {9, 10}, {10, 11}, {11, 12}, {11, 16}, {12, 13},
		{12, 18}, {13, 14}, {13, 17}, {14, 15}, {14, 16}, {15, 16}, {15, 17}, {15, 18}, {16, 17}, {16, 18}, {17, 18}}
	var b strings.Builder
	b.WriteString(`{"name": "tpcds-like", "vertices": [`)
	for i := range 19 {
		if i > 0 {
			b.WriteString(", ")
		}
		par := p
		if i >= 17 {
			par = 1
		}
		fmt.Fprintf(&b, `{"id": "s%d", "parallelism": %d}`, i, par)
	}
	b.WriteString(`], "edges": [`)
	for i, e := range edges {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"source": "s%d", "target": "s%d", "shipStrategy": "hash", "exchange": "blocking"}`, e[0], e[1])
	}
	b.WriteString("]}")
	return b.String()
}

// TestRegionsManyExchangesGrowWithRegionsNotTheirProduct: a TPC-DS-like
// plan at parallelism 1,000 (17,002 regions, 35 all-to-all blocking
// exchanges) prints each region's consumes as a few ranges, so both
// formats are about a hundred bytes a region and come back at once; the
// JSON expands to exactly the producer regions of each region.
func TestRegionsManyExchangesGrowWithRegionsNotTheirProduct(t *testing.T) {
	const p = 1000
	path := writeTemp(t, "tpcds.json", tpcdsLikeJob(p))
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		start := time.Now()
		res := execCLITo(t, "", &buf, "regions", "--format", format, path)
		elapsed := time.Since(start)
		require.Equal(t, 0, res.code, res.stderr)
		t.Logf("%s: %d bytes in %v", format, buf.Len(), elapsed)
		assert.Less(t, buf.Len(), 17_002*120, "%s: more than 120 bytes a region", format)
		if !raceEnabled && !testing.Short() {
			assert.Less(t, elapsed, time.Second, format)
		}
		if format != "json" {
			continue
		}
		var out regionsOutput
		decodeStrict(t, buf.String(), &out)
		assertRegionsInvariants(t, out)
		require.Len(t, out.Regions, 17*p+2)
		// s18 (the last region) reads s4, s5, s6, s12, s15, s16 and s17:
		// stages 4-6 are regions 4,000-6,999, and so on.
		want := []int{}
		for _, stage := range []int{4, 5, 6, 12, 15, 16} {
			for i := range p {
				want = append(want, stage*p+i)
			}
		}
		want = append(want, 17*p)
		assert.Equal(t, want, out.Regions[17*p+1].Consumes)
	}
}

// The text table lists vertex names as they are, braces in ids included.
func TestRegionsTextKeepsBracesInNames(t *testing.T) {
	job := writeTemp(t, "braces.json", `{"vertices": [{"id": "{src}", "parallelism": 2}, {"id": "sink}", "parallelism": 1}],
		"edges": [{"source": "{src}", "target": "sink}", "shipStrategy": "hash"}]}`)
	res := execCLI(t, "", "regions", "--mode", "all-pipelined", job)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "\n0       2      {src}#0, {src}#1, sink}#0 ")
}

// The JSON form counts hybrid logical edges only when the job has some,
// as the text header does: the other modes print the documented shape.
func TestRegionsJSONCountsHybridEdgesOnlyWhenThereAreSome(t *testing.T) {
	res := execCLI(t, "", "regions", "--mode", "pointwise-pipelined-only", "--format", "json", flip119Path)
	require.Equal(t, 0, res.code, res.stderr)
	assert.NotContains(t, res.stdout, "hybridLogicalEdges")
	res = execCLI(t, "", "regions", "--mode", "all-hybrid-full", "--format", "json", flip119Path)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, `"hybridLogicalEdges": 3,`)
}
