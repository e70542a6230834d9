package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/jsontext"
)

// quoteJSON quotes a value as JSON writes it, as error messages quote
// the values of a file.
func quoteJSON(s string) string { return string(jsontext.AppendString(nil, s)) }

// flip119Path is the FLIP-119 example job, relative to this package.
const flip119Path = "../../examples/jobs/flip119.json"

// modeNames are the canonical names of the six global modes of docs/job-file.md
// section 2, from least to most pipelined.
var modeNames = []string{"all-blocking", "forward-pipelined-only", "pointwise-pipelined-only", "all-pipelined", "all-hybrid-full", "all-hybrid-selective"}

// cliResult is what one in-process invocation of the command line produced.
type cliResult struct {
	code           int
	stdout, stderr string
}

// execCLI runs the command line in process with stdin as standard input and
// fails the test if it panics.
func execCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	return execCLITo(t, stdin, &bytes.Buffer{}, args...)
}

// execCLITo is execCLI with a caller-supplied standard output; the result's
// stdout is filled in only when out is a *bytes.Buffer.
func execCLITo(t *testing.T, stdin string, out io.Writer, args ...string) cliResult {
	t.Helper()
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	var stderr bytes.Buffer
	var res cliResult
	require.NotPanics(t, func() {
		res.code = run(args, strings.NewReader(stdin), out, &stderr)
	}, "regionsched %s", strings.Join(args, " "))
	if b, ok := out.(*bytes.Buffer); ok {
		res.stdout = b.String()
	}
	res.stderr = stderr.String()
	return res
}

// writeTemp writes content to a fresh file in the test's temporary
// directory and returns its path.
func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// regionsOutput is the object `regions --format json` prints (docs/job-file.md).
type regionsOutput struct {
	Job                  string         `json:"job"`
	Mode                 string         `json:"mode"`
	ExecutionVertices    int            `json:"executionVertices"`
	BlockingLogicalEdges int            `json:"blockingLogicalEdges"`
	HybridLogicalEdges   int            `json:"hybridLogicalEdges"`
	MinimumSlots         int            `json:"minimumSlots"`
	Regions              []regionOutput `json:"regions"`
}

// regionOutput is one region of `regions --format json`, its consumes
// and consumesHybrid expanded from the ranges the command prints into the
// ids they hold. ConsumesHybrid is nil when the region has no
// consumesHybrid (a job without hybrid edges).
type regionOutput struct {
	ID             int
	Vertices       []string
	Slots          int
	Consumes       []int
	ConsumesHybrid []int
}

// UnmarshalJSON decodes a region strictly and expands its consumes and
// consumesHybrid, which must be [first, last] ranges, ascending, disjoint
// and not adjacent (two adjacent ranges would be one). consumes must be
// there; consumesHybrid may be absent, never null.
func (r *regionOutput) UnmarshalJSON(data []byte) error {
	var raw struct {
		ID             int             `json:"id"`
		Vertices       []string        `json:"vertices"`
		Slots          int             `json:"slots"`
		Consumes       [][]int         `json:"consumes"`
		ConsumesHybrid json.RawMessage `json:"consumesHybrid"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if raw.Consumes == nil {
		return fmt.Errorf("region %d: consumes is null or missing, want []", raw.ID)
	}
	consumes, err := expandRanges(raw.ID, "consumes", raw.Consumes)
	if err != nil {
		return err
	}
	*r = regionOutput{ID: raw.ID, Vertices: raw.Vertices, Slots: raw.Slots, Consumes: consumes}
	if raw.ConsumesHybrid != nil {
		var ranges [][]int
		if err := json.Unmarshal(raw.ConsumesHybrid, &ranges); err != nil {
			return fmt.Errorf("region %d: consumesHybrid: %w", raw.ID, err)
		}
		if ranges == nil {
			return fmt.Errorf("region %d: consumesHybrid is null, want []", raw.ID)
		}
		if r.ConsumesHybrid, err = expandRanges(raw.ID, "consumesHybrid", ranges); err != nil {
			return err
		}
	}
	return nil
}

// expandRanges expands the [first, last] ranges of field of region id
// into the ids they hold (never nil), refusing a range that is not one,
// and ranges out of order, overlapping or adjacent.
func expandRanges(id int, field string, ranges [][]int) ([]int, error) {
	out := []int{}
	for i, x := range ranges {
		if len(x) != 2 || x[0] > x[1] {
			return nil, fmt.Errorf("region %d: %s[%d] = %v, want [first, last] with first <= last", id, field, i, x)
		}
		if i > 0 && x[0] <= ranges[i-1][1]+1 {
			return nil, fmt.Errorf("region %d: %s[%d] = %v overlaps or touches %v", id, field, i, x, ranges[i-1])
		}
		for v := x[0]; v <= x[1]; v++ {
			out = append(out, v)
		}
	}
	return out, nil
}

// checkOutput is the object `check --format json` prints.
type checkOutput struct {
	Runnable     bool   `json:"runnable"`
	MinimumSlots int    `json:"minimumSlots"`
	Reason       string `json:"reason"`
}

// decodeStrict decodes exactly one JSON value with no unknown fields.
func decodeStrict(t *testing.T, data string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v), "output:\n%s", clip(data))
	var extra json.RawMessage
	require.ErrorIs(t, dec.Decode(&extra), io.EOF, "more than one JSON value in the output")
}

// regionsJSON runs `regions --format json` with the given extra arguments
// and decodes the result, which must satisfy assertRegionsInvariants.
func regionsJSON(t *testing.T, args ...string) regionsOutput {
	t.Helper()
	res := execCLI(t, "", append([]string{"regions", "--format", "json"}, args...)...)
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	assert.Empty(t, res.stderr)
	var out regionsOutput
	decodeStrict(t, res.stdout, &out)
	assertRegionsInvariants(t, out)
	return out
}

// assertRegionsInvariants checks the structural promises of docs/job-file.md
// section 4: ids 0..n-1 in order, a topological order (consumes and
// consumesHybrid list only smaller ids, ascending, distinct, never null;
// consumesHybrid exactly when the job has hybrid edges), every execution vertex in
// exactly one region, minimumSlots the largest slots.
func assertRegionsInvariants(t *testing.T, out regionsOutput) {
	t.Helper()
	require.NotEmpty(t, out.Regions)
	seen := make(map[string]int, out.ExecutionVertices)
	maxSlots := 0
	for i, r := range out.Regions {
		assert.Equal(t, i, r.ID, "region ids are their position")
		assert.NotEmpty(t, r.Vertices, "region %d is empty", r.ID)
		assert.GreaterOrEqual(t, r.Slots, 1, "region %d", r.ID)
		assert.LessOrEqual(t, r.Slots, len(r.Vertices), "region %d", r.ID)
		assert.NotNil(t, r.Consumes, "region %d: consumes must be [] rather than null", r.ID)
		if out.HybridLogicalEdges > 0 {
			assert.NotNil(t, r.ConsumesHybrid, "region %d: consumesHybrid must be there in a job with hybrid edges", r.ID)
		} else {
			assert.Nil(t, r.ConsumesHybrid, "region %d: consumesHybrid only in a job with hybrid edges", r.ID)
		}
		for field, ids := range map[string][]int{"consumes": r.Consumes, "consumesHybrid": r.ConsumesHybrid} {
			assert.True(t, slices.IsSorted(ids), "region %d %s %v: not ascending", r.ID, field, ids)
			assert.Equal(t, len(ids), len(slices.Compact(slices.Clone(ids))), "region %d %s %v: duplicates", r.ID, field, ids)
			for _, c := range ids {
				assert.True(t, c >= 0 && c < r.ID, "region %d %s region %d: not a producer listed before it", r.ID, field, c)
			}
		}
		for _, v := range r.Vertices {
			if prev, dup := seen[v]; dup {
				assert.Failf(t, "vertex in two regions", "%s is in regions %d and %d", v, prev, r.ID)
			}
			seen[v] = r.ID
			assert.Contains(t, v, "#", "execution vertex names are ID#i")
		}
		maxSlots = max(maxSlots, r.Slots)
	}
	assert.Len(t, seen, out.ExecutionVertices, "every execution vertex exactly once")
	assert.Equal(t, maxSlots, out.MinimumSlots, "minimumSlots is the largest region requirement")
}

// exampleJobs lists examples/jobs/*.json; there must be several.
func exampleJobs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../examples/jobs/*.json")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 2, "examples/jobs holds the FLIP-119 example and realistic jobs")
	return files
}

// countingWriter discards what it is given and counts the bytes.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// clip shortens long command output for failure messages.
func clip(s string) string {
	const limit = 2000
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "... (" + strconv.Itoa(len(s)) + " bytes)"
}
