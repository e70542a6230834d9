package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadJobFiles: every kind of bad job file ends with exit code 2, no
// output, and a message on standard error naming the culprit (SPEC.md
// sections 1 and 4), from every command that reads a job, from a file or
// from standard input.
func TestBadJobFiles(t *testing.T) {
	tests := []struct {
		name     string
		job      string
		contains []string
	}{
		{"cyclic graph",
			`{"name": "c", "vertices": [{"id": "map", "parallelism": 1}, {"id": "reduce", "parallelism": 1}, {"id": "src", "parallelism": 1}],
			  "edges": [{"source": "src", "target": "map", "shipStrategy": "hash"}, {"source": "map", "target": "reduce", "shipStrategy": "hash"},
			            {"source": "reduce", "target": "map", "shipStrategy": "rebalance"}]}`,
			[]string{"cycl", "map", "reduce"}},
		{"self loop",
			`{"name": "c", "vertices": [{"id": "iterate", "parallelism": 2}], "edges": [{"source": "iterate", "target": "iterate", "shipStrategy": "hash"}]}`,
			[]string{"iterate"}},
		{"edge to an unknown vertex",
			`{"name": "c", "vertices": [{"id": "a", "parallelism": 1}], "edges": [{"source": "a", "target": "ghost", "shipStrategy": "hash"}]}`,
			[]string{"ghost"}},
		{"edge from an unknown vertex",
			`{"name": "c", "vertices": [{"id": "a", "parallelism": 1}], "edges": [{"source": "phantom", "target": "a", "shipStrategy": "hash"}]}`,
			[]string{"phantom"}},
		{"duplicate id",
			`{"name": "c", "vertices": [{"id": "dup", "parallelism": 1}, {"id": "dup", "parallelism": 2}], "edges": []}`,
			[]string{"dup", "duplicate"}},
		{"id with #",
			`{"name": "c", "vertices": [{"id": "a#1", "parallelism": 1}], "edges": []}`,
			[]string{"a#1", "#"}},
		{"id with a space",
			`{"name": "c", "vertices": [{"id": "my op", "parallelism": 1}], "edges": []}`,
			[]string{"my op", "whitespace"}},
		{"id with a tab",
			`{"name": "c", "vertices": [{"id": "my\top", "parallelism": 1}], "edges": []}`,
			[]string{"whitespace"}},
		{"empty id",
			`{"name": "c", "vertices": [{"id": "", "parallelism": 1}], "edges": []}`,
			[]string{"id"}},
		{"missing id",
			`{"name": "c", "vertices": [{"parallelism": 1}], "edges": []}`,
			[]string{"id"}},
		{"parallelism 0",
			`{"name": "c", "vertices": [{"id": "zero", "parallelism": 0}], "edges": []}`,
			[]string{"zero", "parallelism", "0"}},
		{"negative parallelism",
			`{"name": "c", "vertices": [{"id": "neg", "parallelism": -3}], "edges": []}`,
			[]string{"neg", "parallelism"}},
		{"parallelism 1,000,001",
			`{"name": "c", "vertices": [{"id": "huge", "parallelism": 1000001}], "edges": []}`,
			[]string{"huge", "parallelism", "1000001"}},
		{"fractional parallelism",
			`{"name": "c", "vertices": [{"id": "half", "parallelism": 1.5}], "edges": []}`,
			[]string{"parallelism"}},
		{"missing parallelism",
			`{"name": "c", "vertices": [{"id": "p"}], "edges": []}`,
			[]string{"parallelism"}},
		{"forward edge with unequal parallelism",
			`{"name": "c", "vertices": [{"id": "narrow", "parallelism": 2}, {"id": "wide", "parallelism": 3}],
			  "edges": [{"source": "narrow", "target": "wide", "shipStrategy": "forward"}]}`,
			[]string{"forward", "narrow", "wide", "parallelism"}},
		{"unknown ship strategy",
			`{"name": "c", "vertices": [{"id": "a", "parallelism": 1}, {"id": "b", "parallelism": 1}],
			  "edges": [{"source": "a", "target": "b", "shipStrategy": "shuffle"}]}`,
			[]string{"shuffle", "forward", "rescale", "hash", "rebalance", "broadcast"}},
		{"missing ship strategy",
			`{"name": "c", "vertices": [{"id": "a", "parallelism": 1}, {"id": "b", "parallelism": 1}],
			  "edges": [{"source": "a", "target": "b"}]}`,
			[]string{"shipStrategy"}},
		{"unknown exchange",
			`{"name": "c", "vertices": [{"id": "a", "parallelism": 1}, {"id": "b", "parallelism": 1}],
			  "edges": [{"source": "a", "target": "b", "shipStrategy": "hash", "exchange": "batch"}]}`,
			[]string{"batch", "pipelined", "pipelined-bounded", "blocking"}},
		{"unknown vertex field",
			`{"name": "c", "vertices": [{"id": "a", "parallelism": 1, "paralelism": 4}], "edges": []}`,
			[]string{"paralelism"}},
		{"unknown edge field",
			`{"name": "c", "vertices": [{"id": "a", "parallelism": 1}, {"id": "b", "parallelism": 1}],
			  "edges": [{"source": "a", "target": "b", "shipStrategy": "hash", "partitioner": "x"}]}`,
			[]string{"partitioner"}},
		{"unknown top-level field",
			`{"name": "c", "vertex": [{"id": "a", "parallelism": 1}], "edges": []}`,
			[]string{"vertex"}},
		{"unknown resource field",
			`{"name": "c", "vertices": [{"id": "a", "parallelism": 1, "resources": {"cpu": 2}}], "edges": []}`,
			[]string{"cpu"}},
		{"negative memory",
			`{"name": "c", "vertices": [{"id": "a", "parallelism": 1, "resources": {"cpuMillis": 1, "memoryMB": -1}}], "edges": []}`,
			[]string{"memoryMB"}},
		{"negative extended resource",
			`{"name": "c", "vertices": [{"id": "a", "parallelism": 1, "resources": {"extended": {"gpu": -1}}}], "edges": []}`,
			[]string{"gpu"}},
		{"wrong type for bounded",
			`{"name": "c", "vertices": [{"id": "a", "parallelism": 1, "bounded": "yes"}], "edges": []}`,
			[]string{"bounded"}},
		{"malformed JSON", `{"name": "c", "vertices": [{"id": "a", "parallelism": 1}`, []string{"malformed"}},
		{"not an object", `[1, 2, 3]`, nil},
		{"trailing garbage", `{"name": "c", "vertices": [{"id": "a", "parallelism": 1}], "edges": []} {}`, nil},
		{"empty input", ``, []string{"empty"}},
		{"only whitespace", "  \n\t ", []string{"empty"}},
	}
	commands := [][]string{
		{"regions"},
		{"regions", "--format", "json"},
		{"check", "--slots", "4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "job.json", tc.job)
			for _, cmd := range commands {
				for _, source := range []string{"file", "stdin"} {
					args, stdin := append(append([]string(nil), cmd...), path), ""
					if source == "stdin" {
						args, stdin = append(append([]string(nil), cmd...), "-"), tc.job
					}
					res := execCLI(t, stdin, args...)
					assert.Equal(t, 2, res.code, "%v from %s: stdout %q, stderr %q", cmd, source, res.stdout, res.stderr)
					assert.Empty(t, res.stdout, "%v from %s", cmd, source)
					require.NotEmpty(t, res.stderr, "%v from %s", cmd, source)
					assert.NotContains(t, res.stderr, "panic")
					assert.Equal(t, 1, strings.Count(strings.TrimSpace(res.stderr), "\n")+1, "one line: %q", res.stderr)
					for _, s := range tc.contains {
						assert.Contains(t, res.stderr, s, "%v from %s", cmd, source)
					}
					if source == "file" {
						assert.Contains(t, res.stderr, "job.json", "the message names the file")
					}
				}
			}
		})
	}
}

// TestUsageErrors: wrong commands, flags and arguments end with exit code
// 2 and a message naming the problem (and the valid values where there
// are some).
func TestUsageErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.json")
	tests := []struct {
		name     string
		args     []string
		contains []string
	}{
		{"unknown mode", []string{"regions", "--mode", "streaming", flip119Path},
			[]string{"streaming", "all-blocking", "forward-pipelined-only", "pointwise-pipelined-only", "all-pipelined"}},
		{"unknown mode for check", []string{"check", "--mode", "eager", "--slots", "4", flip119Path},
			[]string{"eager", "all-blocking", "all-pipelined"}},
		{"empty mode", []string{"regions", "--mode", "", flip119Path}, []string{"mode"}},
		{"unknown format", []string{"regions", "--format", "yaml", flip119Path}, []string{"yaml", "text", "json", "dot"}},
		{"missing file", []string{"regions", missing}, []string{"missing.json"}},
		{"missing file for check", []string{"check", "--slots", "2", missing}, []string{"missing.json"}},
		{"directory instead of a file", []string{"regions", t.TempDir()}, nil},
		{"no job argument", []string{"regions"}, []string{"job"}},
		{"two job arguments", []string{"regions", flip119Path, flip119Path}, []string{"2"}},
		{"no job argument for check", []string{"check", "--slots", "4"}, []string{"job"}},
		{"unknown flag", []string{"regions", "--colour", "red", flip119Path}, []string{"--colour"}},
		{"unknown shorthand flag", []string{"regions", "-z", flip119Path}, []string{"z"}},
		{"flag without value", []string{"regions", flip119Path, "--mode"}, []string{"mode"}},
		{"unknown command", []string{"schedule", flip119Path}, []string{"schedule"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := execCLI(t, "", tc.args...)
			assert.Equal(t, 2, res.code, "stdout %q, stderr %q", res.stdout, res.stderr)
			assert.Empty(t, res.stdout)
			require.NotEmpty(t, res.stderr)
			for _, s := range tc.contains {
				assert.Contains(t, res.stderr, s)
			}
		})
	}
}

// TestHelpSucceeds: asking for help is not an error.
func TestHelpSucceeds(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"regions", "--help"}, {"check", "--help"}, {"help", "regions"}} {
		res := execCLI(t, "", args...)
		assert.Equal(t, 0, res.code, "%v: %s", args, res.stderr)
		assert.Contains(t, res.stdout, "Usage", "%v", args)
	}
}
