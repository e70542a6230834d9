package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlagValuesThatDoNotParseNameTheValidValues: a value that a flag of
// any command does not take (a word for a number, a negative seed, a
// duration without a unit, "maybe" for a switch) is bad input (exit 2)
// whose message names the flag, the value and the values the flag takes,
// never the parser's own message (strconv's, time's). Every numeric,
// duration and switch flag of every command is tried.
func TestFlagValuesThatDoNotParseNameTheValidValues(t *testing.T) {
	root := newRootCommand(strings.NewReader(""))
	root.InitDefaultHelpFlag()
	tried := map[string]bool{}
	for _, c := range root.Commands() {
		c.InitDefaultHelpFlag()
		c.Flags().VisitAll(func(f *pflag.Flag) {
			bad := map[string][]string{
				"bool": {"maybe", "2"}, "int": {"x", "1.5"}, "uint64": {"x", "-1", "18446744073709551616"},
				"float64": {"x", "1/2"}, "duration": {"5", "x"},
			}[f.Value.Type()]
			if bad == nil {
				return
			}
			tried[c.Name()+" --"+f.Name] = true
			for _, v := range bad {
				args := []string{c.Name(), fmt.Sprintf("--%s=%s", f.Name, v), "job.json"}
				res := execCLI(t, "", args...)
				assert.Equal(t, 2, res.code, "%v: %s", args, res.stderr)
				assert.True(t, strings.HasPrefix(res.stderr, fmt.Sprintf("regionsched %s: --%s: invalid value %q (valid: ", c.Name(), f.Name, v)),
					"%v: %s", args, res.stderr)
				for _, raw := range []string{"strconv", "time:", "invalid syntax", "invalid argument"} {
					assert.NotContains(t, res.stderr, raw, "%v", args)
				}
			}
		})
	}
	for _, want := range []string{"simulate --seed", "simulate --slots", "simulate --selective-share", "simulate --hybrid-slot-sharing",
		"simulate --stragglers", "simulate --straggler-factor", "simulate --speculation", "simulate --speculation-check-interval",
		"simulate --speculation-max-concurrent-executions", "check --slots", "run --timeout", "run --duration-scale", "run --idle-timeout",
		"run --time-limit", "run --verbose", "leftovers --cancel"} {
		assert.True(t, tried[want], "%s was not tried", want)
	}
}

// TestFlagValueMessages: the messages of a value a flag does not take,
// as a user sees them.
func TestFlagValueMessages(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--slots", "1", "--seed", "-1", "job.json"},
			`regionsched simulate: --seed: invalid value "-1" (valid: an integer in 0 ... 18446744073709551615)`},
		{[]string{"simulate", "--slots", "1", "--hybrid-slot-sharing=maybe", "job.json"},
			`regionsched simulate: --hybrid-slot-sharing: invalid value "maybe" (valid: true or false)`},
		{[]string{"check", "--slots", "two", "job.json"},
			`regionsched check: --slots: invalid value "two" (valid: an integer in 0 ... 1099511627776)`},
		{[]string{"simulate", "--slots", "1", "--selective-share", "half", "job.json"},
			`regionsched simulate: --selective-share: invalid value "half" (valid: a number more than 0 and at most 1)`},
		{[]string{"simulate", "--slots", "1", "--straggler-factor", "x", "job.json"},
			`regionsched simulate: --straggler-factor: invalid value "x" (valid: a number in 1 ... 1000)`},
		{[]string{"simulate", "--slots", "1", "--speculation-check-interval", "100", "job.json"},
			`regionsched simulate: --speculation-check-interval: invalid value "100" (valid: a duration of more than 0, such as 1s or 100ms)`},
		{[]string{"run", "--slurm", "--timeout", "30", "job.json"},
			`regionsched run: --timeout: invalid value "30" (valid: a duration of more than 0, such as 30m or 90s)`},
		{[]string{"run", "--slurm", "--queue-partition", "etl", "job.json"},
			`regionsched run: --queue-partition: invalid value "etl" (valid: QUEUE=PARTITION pairs, repeatable or comma-separated)`},
	} {
		res := execCLI(t, "", tc.args...)
		require.Equal(t, 2, res.code, "%v: %s", tc.args, res.stderr)
		assert.Equal(t, tc.want+"\n", res.stderr, "%v", tc.args)
	}
	// A flag whose own message lists the valid values keeps it.
	res := execCLI(t, "", "regions", "--mode", "fast", "job.json")
	require.Equal(t, 2, res.code)
	assert.True(t, strings.HasPrefix(res.stderr, `regionsched regions: --mode: unknown global data exchange mode "fast" (valid: all-blocking, `), res.stderr)
}
