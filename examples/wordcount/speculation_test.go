package main

import (
	"regexp"
	"strings"
	"testing"
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
