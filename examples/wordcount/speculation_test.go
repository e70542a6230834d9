package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpeculationOutputIsTheNormalRuns: counter#1's first attempt is a
// straggler held back for a minute; with speculation a second attempt
// runs beside it, finishes first and wins, the straggler is canceled, and
// the output is byte for byte that of a run without either, for every
// sink-facing result (the top 10 and all words).
func TestSpeculationOutputIsTheNormalRuns(t *testing.T) {
	for _, top := range []string{"10", "0"} {
		code, normal, errOut := runCLI(t, "--slots", "4", "--top", top)
		if code != 0 {
			t.Fatalf("normal run: exit %d: %s", code, errOut)
		}
		code, out, errOut := runCLI(t, "--slots", "4", "--top", top, "--speculation",
			"--speculation-baseline-lower-bound", "100ms", "--speculation-check-interval", "10ms", "--slow", "counter#1@1m")
		if code != 0 {
			t.Fatalf("speculative run: exit %d: %s", code, errOut)
		}
		if out != normal {
			t.Fatalf("--top %s: the speculative run printed\n%s\nthe normal run\n%s", top, out, normal)
		}
		// counter#1's region: attempt 0 canceled, attempt 1 finished.
		if !regexp.MustCompile(`(?m)^7 +0 +\S+ +\S+ +canceled +\[\d\] +counter#1$`).MatchString(errOut) ||
			!regexp.MustCompile(`(?m)^7 +1 +\S+ +\S+ +finished +\[\d\] +counter#1$`).MatchString(errOut) {
			t.Fatalf("no race in the timeline:\n%s", errOut)
		}
	}
}

// TestHybridFullSpeculationOutputIsTheNormalRuns: in all-hybrid-full
// mode every task is a region of its own and may be speculated, those
// that write hybrid results included (every task but the sink). The
// first attempt of a slow one (a tokenizer, a counter) is held back for a
// minute once its work is done; a speculative attempt runs beside it,
// writing hybrid logs of its own, finishes first and wins, the straggler
// is canceled, and the consumers, which read the slow task's results
// only from the winner once finished, print byte for byte the output of
// the all-blocking run.
func TestHybridFullSpeculationOutputIsTheNormalRuns(t *testing.T) {
	code, normal, errOut := runCLI(t, "--slots", "4", "--top", "0")
	require.Zero(t, code, errOut)
	for _, tc := range []struct {
		slow   string
		region int
	}{
		{"counter#1", 7},   // hybrid input and output
		{"tokenizer#1", 3}, // hybrid input and output, four consumers
	} {
		code, out, errOut := runCLI(t, "--slots", "40", "--top", "0", "--mode", "all-hybrid-full", "--speculation",
			"--speculation-baseline-lower-bound", "100ms", "--speculation-check-interval", "10ms", "--slow", tc.slow+"@1m")
		require.Zero(t, code, "%s: %s", tc.slow, errOut)
		assert.Equal(t, normal, out, "%s: the output of the all-blocking run", tc.slow)
		// The slow task's region: attempt 0 canceled, the speculative
		// attempt 1 finished.
		assert.Regexp(t, fmt.Sprintf(`(?m)^%d +0 +\S+ +\S+ +canceled +\[\d+\] +%s$`, tc.region, tc.slow), errOut, "the straggler was canceled")
		assert.Regexp(t, fmt.Sprintf(`(?m)^%d +1 +\S+ +\S+ +finished +\[\d+\] +%s$`, tc.region, tc.slow), errOut, "its speculative attempt won")
	}
}

func TestSpeculationFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--slow", "counter#1"}, `--slow "counter#1": the form is ID#i@DURATION`},
		{[]string{"--slow", "counter#9@1s"}, `--slow "counter#9@1s"`},
		{[]string{"--slow", "counter#1@fast"}, `"fast" is not a positive Go duration`},
		{[]string{"--speculation", "--speculation-check-interval", "0s"}, "--speculation-check-interval 0s: must be more than 0"},
		{[]string{"--jobs", "2", "--speculation"}, "--speculation and --slow run one job, not --jobs 2"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
