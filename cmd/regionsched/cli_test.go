package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadJobFiles: every kind of bad job file ends with exit code 2, no
// output, and a message on standard error naming the culprit (docs/job-file.md), from every command that reads a job, from a file or
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

// TestNegativeVerdictIsPrintedOnce: a negative verdict
// is printed once, on standard output (docs/cli.md), and nothing is
// added on standard error; in JSON mode standard output is only the JSON.
func TestNegativeVerdictIsPrintedOnce(t *testing.T) {
	t.Run("check text", func(t *testing.T) {
		res := execCLI(t, "", "check", "--mode", "all-pipelined", "--slots", "3", flip119Path)
		require.Equal(t, 1, res.code, res.stderr)
		assert.True(t, strings.HasPrefix(res.stdout, "not runnable:"), res.stdout)
		assert.Equal(t, 1, strings.Count(res.stdout, "\n"), "one line: %q", res.stdout)
		assert.Empty(t, res.stderr)
	})
	t.Run("check json", func(t *testing.T) {
		res := execCLI(t, "", "check", "--mode", "all-pipelined", "--slots", "3", "--format", "json", flip119Path)
		require.Equal(t, 1, res.code, res.stderr)
		var out checkOutput
		decodeStrict(t, res.stdout, &out)
		assert.False(t, out.Runnable)
		assert.NotContains(t, res.stdout, "not runnable:")
		assert.Empty(t, res.stderr)
	})
	for _, tc := range []struct {
		name, verdict string
		args          []string
	}{
		{"simulate deadlock", "deadlock:", []string{"--mode", "all-pipelined", "--slots", "4", "--policy", "eager"}},
		{"simulate failure", "failed:", []string{"--mode", "all-pipelined", "--slots", "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := execCLI(t, "", append(append([]string{"simulate"}, tc.args...), flip119Path)...)
			require.Equal(t, 1, res.code, res.stderr)
			lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
			assert.True(t, strings.HasPrefix(lines[len(lines)-1], tc.verdict), res.stdout)
			assert.Equal(t, 1, strings.Count(res.stdout+res.stderr, "\n"+tc.verdict), "once: stdout %q, stderr %q", res.stdout, res.stderr)
			assert.Empty(t, res.stderr)
		})
	}
}

// TestDashIsStandardOutput (item 8): "--trace -" and "--svg -" write to
// standard output instead of creating a file named "-"; the summary then
// goes to standard error, so standard output is only the trace or the
// picture.
func TestDashIsStandardOutput(t *testing.T) {
	job, err := filepath.Abs(flip119Path)
	require.NoError(t, err)
	t.Chdir(t.TempDir())
	t.Run("trace", func(t *testing.T) {
		res := execCLI(t, "", "simulate", "--mode", "pointwise-pipelined-only", "--slots", "2", "--trace", "-", job)
		require.Equal(t, 0, res.code, res.stderr)
		lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
		require.Greater(t, len(lines), 10)
		for _, line := range lines {
			var ev map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &ev), "every line of standard output is a trace event: %q", line)
			assert.Contains(t, ev, "event")
		}
		assert.Contains(t, res.stderr, "makespan:", "the summary is on standard error")
		assert.Contains(t, res.stderr, "\nfinished:")
	})
	t.Run("svg", func(t *testing.T) {
		res := execCLI(t, "", "simulate", "--slots", "2", "--svg", "-", job)
		require.Equal(t, 0, res.code, res.stderr)
		assert.Contains(t, res.stdout, "<svg")
		assert.True(t, strings.HasSuffix(strings.TrimSpace(res.stdout), "</svg>"), clip(res.stdout))
		assert.Contains(t, res.stderr, "makespan:")
	})
	t.Run("trace of a deadlock", func(t *testing.T) {
		res := execCLI(t, "", "simulate", "--mode", "all-pipelined", "--slots", "4", "--policy", "eager", "--trace", "-", job)
		require.Equal(t, 1, res.code, res.stderr)
		assert.NotContains(t, res.stdout, "deadlock:")
		assert.Equal(t, 1, strings.Count(res.stderr, "\ndeadlock:"), "the verdict once, with the summary: %q", res.stderr)
	})
	t.Run("trace to stdout, svg to a file", func(t *testing.T) {
		res := execCLI(t, "", "simulate", "--slots", "2", "--trace", "-", "--svg", "run.svg", job)
		require.Equal(t, 0, res.code, res.stderr)
		assert.FileExists(t, "run.svg")
		assert.True(t, strings.HasPrefix(res.stdout, "{"), clip(res.stdout))
	})
	t.Run("both to stdout", func(t *testing.T) {
		res := execCLI(t, "", "simulate", "--slots", "2", "--trace", "-", "--svg", "-", job)
		assert.Equal(t, 2, res.code)
		assert.Empty(t, res.stdout)
		assert.Contains(t, res.stderr, "standard output")
	})
	assert.NoFileExists(t, "-", "no file named -")
}

// TestMistypedCommand (item 10): a misspelt command is reported as such,
// with a suggestion, before the flags meant for it; every message has one
// "regionsched" prefix.
func TestMistypedCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulat", "--slots", "2", flip119Path}, "regionsched: unknown command simulat; did you mean simulate?"},
		{[]string{"--mode", "batch", "regoins", flip119Path}, "regionsched: unknown command regoins; did you mean regions?"},
		{[]string{"chek", "--slots=2", "--format", "json", flip119Path}, "regionsched: unknown command chek; did you mean check?"},
		{[]string{"schedule", flip119Path}, "regionsched: unknown command schedule; the commands are check, completion, leftovers, regions, run, simulate"},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			res := execCLI(t, "", tc.args...)
			assert.Equal(t, 2, res.code)
			assert.Empty(t, res.stdout)
			first, _, _ := strings.Cut(res.stderr, "\n")
			assert.Equal(t, tc.want, first)
			assert.NotContains(t, res.stderr, "unknown flag")
		})
	}
	for _, args := range [][]string{
		{"regions", "--colour", "red", flip119Path},
		{"simulate", "--slots", "2", "--seed", "x", flip119Path},
		{"check", "--slots", "2"},
		{"regions", "--format", "yaml", flip119Path},
		{"regions", filepath.Join(t.TempDir(), "missing.json")},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			res := execCLI(t, "", args...)
			assert.Equal(t, 2, res.code)
			first, _, _ := strings.Cut(res.stderr, "\n")
			assert.True(t, strings.HasPrefix(first, "regionsched "+args[0]+": "), first)
			assert.Equal(t, 1, strings.Count(first, "regionsched"), "one prefix: %q", first)
		})
	}
	t.Run("help and completion are commands", func(t *testing.T) {
		assert.Equal(t, 0, execCLI(t, "", "help", "simulate").code)
		assert.Equal(t, 0, execCLI(t, "", "completion", "bash").code)
	})
}

// TestVersion: --version prints the version stamped at build time, else
// the module version and the VCS revision from the build information.
func TestVersion(t *testing.T) {
	res := execCLI(t, "", "--version")
	require.Equal(t, 0, res.code, res.stderr)
	assert.True(t, strings.HasPrefix(res.stdout, "regionsched "), res.stdout)
	assert.Equal(t, 1, strings.Count(res.stdout, "\n"), res.stdout)
	assert.Empty(t, res.stderr)

	info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/regionsched/regionsched", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef"},
			{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	assert.Equal(t, "v1.2.3, revision 0123456789abcdef of 2026-01-02T03:04:05Z with uncommitted changes", buildVersion(info, true))
	info.Settings = info.Settings[:3]
	assert.Equal(t, "v1.2.3, revision 0123456789abcdef of 2026-01-02T03:04:05Z", buildVersion(info, true))
	assert.Equal(t, "(devel), revision unknown (no version stamped at build time, no VCS information in the build)", buildVersion(&debug.BuildInfo{}, true))
	assert.Equal(t, "(unknown version: no build information)", buildVersion(nil, false))

	// A stamped version wins; without one the build information tells.
	read := func() (*debug.BuildInfo, bool) { return info, true }
	assert.Equal(t, "v1.2.3-4-g0123456-dirty", versionText("v1.2.3-4-g0123456-dirty", read))
	assert.Equal(t, "v1.2.3, revision 0123456789abcdef of 2026-01-02T03:04:05Z", versionText("", read))
}

// The build stamps the version: what make build does, by hand.
func TestVersionStampedAtBuildTime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "regionsched")
	build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", "-X main.version=v9.9.9-test", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	assert.Equal(t, "regionsched v9.9.9-test\n", string(out))
}

// --slots has no default to show: it is required unless --cluster is given.
func TestSlotsFlagShowsNoDefault(t *testing.T) {
	for _, cmd := range []string{"check", "simulate"} {
		res := execCLI(t, "", cmd, "--help")
		require.Equal(t, 0, res.code, res.stderr)
		var line string
		for _, l := range strings.Split(res.stdout, "\n") {
			if strings.Contains(l, "--slots int") {
				line = l
			}
		}
		require.NotEmpty(t, line, res.stdout)
		assert.NotContains(t, line, "default", cmd)
		assert.Contains(t, line, "this or --cluster is required", cmd)
	}
	requireBadInput(t, execCLI(t, "", "check", "--slots", "many", flip119Path), `--slots: invalid value "many" (valid: an integer in 0 ... 1099511627776)`)
	requireBadInput(t, execCLI(t, "", "check", flip119Path), "the cluster is missing: give --slots N or --cluster FILE")
	res := execCLI(t, "", "check", "--slots", "4", flip119Path)
	assert.Equal(t, 0, res.code, res.stderr)
}

// TestFlinkModeNamesAndCaseInsensitiveValues (item 11): Flink's
// execution.batch-shuffle-mode names (the hybrid ones included),
// approximate recovery refused with the reason, and every value (--mode,
// --format, --policy, shipStrategy, exchange) case-insensitive, old
// spellings still working.
func TestFlinkModeNamesAndCaseInsensitiveValues(t *testing.T) {
	for spelling, canonical := range map[string]string{
		"ALL_EXCHANGES_BLOCKING": "all-blocking", "all_exchanges_blocking": "all-blocking", "ALL_EDGES_BLOCKING": "all-blocking", "batch": "all-blocking",
		"ALL_EXCHANGES_PIPELINED": "all-pipelined", "All_Exchanges_Pipelined": "all-pipelined", "pipelined": "all-pipelined",
		"POINTWISE_EDGES_PIPELINED": "pointwise-pipelined-only", "Forward-Pipelined-Only": "forward-pipelined-only",
		"ALL_EXCHANGES_HYBRID_FULL": "all-hybrid-full", "all_edges_hybrid_full": "all-hybrid-full", "All-Hybrid-Full": "all-hybrid-full",
		"all_exchanges_hybrid_selective": "all-hybrid-selective", "ALL-HYBRID-SELECTIVE": "all-hybrid-selective",
	} {
		t.Run(spelling, func(t *testing.T) {
			out := regionsJSON(t, "--mode", spelling, flip119Path)
			assert.Equal(t, canonical, out.Mode)
		})
	}
	t.Run("approximate", func(t *testing.T) {
		res := execCLI(t, "", "regions", "--mode", "ALL_EDGES_PIPELINED_APPROXIMATE", flip119Path)
		assert.Equal(t, 2, res.code)
		for _, s := range []string{"ALL_EDGES_PIPELINED_APPROXIMATE", "no equivalent", "ALL_EXCHANGES_HYBRID_FULL", "all-hybrid-selective", "all-blocking", "pointwise-pipelined-only"} {
			assert.Contains(t, res.stderr, s)
		}
	})
	t.Run("--format", func(t *testing.T) {
		for _, f := range []string{"JSON", "Json", " json"} {
			res := execCLI(t, "", "regions", "--format", f, flip119Path)
			require.Equal(t, 0, res.code, res.stderr)
			var out regionsOutput
			decodeStrict(t, res.stdout, &out)
		}
		assert.True(t, strings.HasPrefix(execCLI(t, "", "regions", "--format", "DOT", flip119Path).stdout, "strict digraph"))
		res := execCLI(t, "", "check", "--slots", "4", "--format", "JSON", flip119Path)
		require.Equal(t, 0, res.code, res.stderr)
		var out checkOutput
		decodeStrict(t, res.stdout, &out)
		for _, cmd := range [][]string{{"regions"}, {"check", "--slots", "4"}} {
			res := execCLI(t, "", append(cmd, "--format", "yaml", flip119Path)...)
			assert.Equal(t, 2, res.code)
			assert.Contains(t, res.stderr, `--format: unknown output format "yaml" (valid: text, json`)
		}
	})
	t.Run("--policy", func(t *testing.T) {
		lower := execCLI(t, "", "simulate", "--slots", "4", "--mode", "all-pipelined", "--policy", "eager", "--seed", "3", flip119Path)
		upper := execCLI(t, "", "simulate", "--slots", "4", "--mode", "all-pipelined", "--policy", "EAGER", "--seed", "3", flip119Path)
		assert.Equal(t, lower, upper)
		assert.Equal(t, 0, execCLI(t, "", "simulate", "--slots", "2", "--policy", "Region", flip119Path).code)
		res := execCLI(t, "", "simulate", "--slots", "2", "--policy", "Lazy", flip119Path)
		assert.Equal(t, 2, res.code)
		assert.Contains(t, res.stderr, `--policy: unknown scheduling policy "Lazy" (valid: region, eager)`)
	})
	t.Run("shipStrategy and exchange", func(t *testing.T) {
		job := func(ship1, ship2, exchange string) string {
			return `{"name": "j", "vertices": [{"id": "a", "parallelism": 2}, {"id": "b", "parallelism": 2}, {"id": "c", "parallelism": 3}],
			  "edges": [{"source": "a", "target": "b", "shipStrategy": "` + ship1 + `"},
			            {"source": "b", "target": "c", "shipStrategy": "` + ship2 + `", "exchange": "` + exchange + `"}]}`
		}
		want := execCLI(t, job("forward", "hash", "pipelined-bounded"), "regions", "--format", "json", "-")
		require.Equal(t, 0, want.code, want.stderr)
		got := execCLI(t, job("FORWARD", "Hash", "Pipelined-Bounded"), "regions", "--format", "json", "-")
		assert.Equal(t, want, got)
		bad := execCLI(t, job("forward", "Shuffle", "blocking"), "regions", "-")
		assert.Equal(t, 2, bad.code)
		assert.Contains(t, bad.stderr, "forward, rescale, hash, rebalance, broadcast")
		bad = execCLI(t, job("forward", "hash", "Batch"), "regions", "-")
		assert.Equal(t, 2, bad.code)
		assert.Contains(t, bad.stderr, "pipelined, pipelined-bounded, blocking")
	})
}

// TestREADMECallsTheBuiltBinary (item 12): the README's examples call the
// binary where make build puts it, and say how to put it on PATH.
func TestREADMECallsTheBuiltBinary(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(data)
	assert.True(t, strings.Contains(readme, "go install ./cmd/regionsched"), "the README says how to put regionsched on PATH")
	assert.True(t, strings.Contains(readme, "$ bin/regionsched "), "the README's examples call bin/regionsched")
	for i, line := range strings.Split(readme, "\n") {
		trimmed := strings.TrimSpace(line)
		assert.False(t, strings.HasPrefix(trimmed, "$ regionsched") || strings.HasPrefix(trimmed, "regionsched "),
			"README line %d calls regionsched, which is not on PATH after make build: %q", i+1, line)
	}
}

// TestFormatsAreDocumented (item 13): every command's help points at
// docs/job-file.md, which describes every field of the job file, the
// cluster file and the events file (docs/job-file.md), and
// whose examples are valid.
func TestFormatsAreDocumented(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"regions", "--help"}, {"check", "--help"}, {"simulate", "--help"}} {
		res := execCLI(t, "", args...)
		require.Equal(t, 0, res.code, res.stderr)
		assert.Contains(t, res.stdout, "docs/job-file.md", "%v", args)
	}
	data, err := os.ReadFile(filepath.Join("../..", formatsDoc))
	require.NoError(t, err, "the help points at a file that exists")
	doc := string(data)
	fields := []string{
		// job file (section 1)
		"name", "vertices", "edges", "id", "parallelism", "slotSharingGroup", "resources", "cpuMillis", "memoryMB",
		"extended", "durationMs", "bounded", "source", "target", "shipStrategy", "exchange",
		// job file (section 5)
		"submitAtMs", "queue", "user", "priority", "driver", "startupMs", "gang", "minSlots", "style", "timeoutMs",
		// cluster file (sections 4 and 5)
		"slots", "count", "queues", "queues[].name", "queues[].policy", "queues[].maxRunningJobs",
		"queues[].startingTimeoutMs", "queues[].reclaimTimeoutMs", "users", "users[].name", "users[].role",
		// events file (section 5)
		"t", "event", "job", "by",
	}
	for _, f := range fields {
		assert.Contains(t, doc, "| `"+f+"` |", "a table row documents %s", f)
	}
	for _, v := range []string{"forward", "rescale", "hash", "rebalance", "broadcast", "pipelined", "pipelined-bounded", "blocking",
		"fifo", "priority", "fairshare", "stateaware", "admin", "soft", "hard", "set-priority", "kill",
		"all-blocking", "forward-pipelined-only", "pointwise-pipelined-only", "all-pipelined", "ALL_EXCHANGES_HYBRID_FULL"} {
		assert.Contains(t, doc, "`"+v+"`", "value %s", v)
	}
	assert.Contains(t, doc, "## Events file\n")

	// Every JSON example is valid: job files decode, cluster files load.
	blocks := strings.Split(doc, "```json\n")[1:]
	require.GreaterOrEqual(t, len(blocks), 6)
	checked := 0
	for _, b := range blocks {
		b, _, _ = strings.Cut(b, "```")
		switch {
		case strings.Contains(b, `"vertices"`):
			res := execCLI(t, b, "regions", "-")
			assert.Equal(t, 0, res.code, "job example:\n%s\n%s", b, res.stderr)
			checked++
		case strings.HasPrefix(b, `{"slots"`):
			res := execCLI(t, "", "check", "--cluster", writeTemp(t, "cluster.json", b), flip119Path)
			assert.NotEqual(t, 2, res.code, "cluster example:\n%s\n%s", b, res.stderr)
			checked++
		case strings.HasPrefix(b, `"driver"`) || strings.HasPrefix(b, `"gang"`):
			job := `{"name": "j", "vertices": [{"id": "a", "parallelism": 1}], ` + strings.TrimSpace(b) + `}`
			res := execCLI(t, job, "regions", "-")
			assert.Equal(t, 0, res.code, "example:\n%s\n%s", b, res.stderr)
			checked++
		default: // JSON Lines
			for _, line := range strings.Split(strings.TrimSpace(b), "\n") {
				assert.True(t, json.Valid([]byte(line)), line)
			}
			checked++
		}
	}
	assert.Equal(t, len(blocks), checked)
}
