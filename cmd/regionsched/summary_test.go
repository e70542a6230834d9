package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// summaryLine returns the value of the summary line starting with label.
func summaryLine(t *testing.T, stdout, label string) string {
	t.Helper()
	for _, l := range strings.Split(stdout, "\n") {
		if rest, ok := strings.CutPrefix(l, label); ok {
			return strings.TrimSpace(rest)
		}
	}
	require.Failf(t, "summary line missing", "no line %q in\n%s", label, stdout)
	return ""
}

var percent = regexp.MustCompile(`^(\d+\.\d)% `)

func summaryPercent(t *testing.T, stdout, label string) float64 {
	t.Helper()
	m := percent.FindStringSubmatch(summaryLine(t, stdout, label))
	require.NotNil(t, m, "%s is a percentage", label)
	f, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return f
}

// The summary says what each number counts.
func TestSimulateSummaryWording(t *testing.T) {
	t.Run("a deadlock progresses only part of the time", func(t *testing.T) {
		res := execCLI(t, "", "simulate", "--mode", "all-pipelined", "--slots", "4", "--policy", "eager", "--ties", "seeded", flip119Path)
		require.Equal(t, 1, res.code, res.stdout)
		assert.Equal(t, "2000 ms of virtual time, until the deadlock", summaryLine(t, res.stdout, "makespan:"))
		// B#1 works 0-2 s, A#0 and A#1 0-1 s: 3 of 8 slot-seconds
		assert.Equal(t, "37.5% of slot time with work progressing", summaryLine(t, res.stdout, "slot utilization:"))
		assert.Equal(t, "62.5% of slot time held by tasks that could not progress", summaryLine(t, res.stdout, "held waiting:"))
		assert.Equal(t, "3 (task progress ends and slot-request timeouts handled); 21 trace events",
			summaryLine(t, res.stdout, "simulation steps:"))
		assert.NotContains(t, res.stdout, "events:            ")
	})
	t.Run("the trace event count is the trace's length", func(t *testing.T) {
		trace := filepath.Join(t.TempDir(), "t.jsonl")
		res := execCLI(t, "", "simulate", "--mode", "pointwise-pipelined-only", "--slots", "2", "--fail", "B#1@500", "--trace", trace, flip119Path)
		require.Equal(t, 0, res.code, res.stderr)
		lines := readTrace(t, trace)
		assert.Contains(t, summaryLine(t, res.stdout, "simulation steps:"), "; "+strconv.Itoa(len(lines))+" trace events")
		assert.InDelta(t, 100.0, summaryPercent(t, res.stdout, "slot utilization:")+summaryPercent(t, res.stdout, "held waiting:"), 0.11)
	})
	t.Run("one slot is singular", func(t *testing.T) {
		res := execCLI(t, "", "simulate", "--slots", "1", flip119Path)
		require.Equal(t, 0, res.code, res.stderr)
		first := strings.SplitN(res.stdout, "\n", 2)[0]
		assert.Contains(t, first, ", 1 slot, ")
		assert.NotContains(t, res.stdout, "1 slots")
		assert.Equal(t, "100.0% of slot time with work progressing", summaryLine(t, res.stdout, "slot utilization:"))
		assert.Equal(t, "0.0% of slot time held by tasks that could not progress", summaryLine(t, res.stdout, "held waiting:"))
	})
	t.Run("a failed job says failed once", func(t *testing.T) {
		res := execCLI(t, "", "simulate", "--mode", "all-pipelined", "--slots", "3", flip119Path)
		require.Equal(t, 1, res.code)
		assert.Contains(t, res.stdout, "\nfailed: region 0 {")
		assert.NotContains(t, res.stdout, "job failed")
		assert.NotContains(t, res.stdout, "failed: failed")
	})
}
