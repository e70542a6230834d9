package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A job file's "durationMs": 0 means 0 in a run of several jobs as in a
// run of the job alone: z's two regions finish at 0 ms beside y, not
// after the default second each.
func TestSimulateJobsZeroDurationMeansZero(t *testing.T) {
	const dir = "zero-duration-multijob"
	z, y := repro(dir, "z.json"), repro(dir, "y.json")
	alone := execCLI(t, "", "simulate", "--slots", "2", z)
	require.Equal(t, 0, alone.code, "stdout:\n%s\nstderr:\n%s", alone.stdout, alone.stderr)
	assert.Equal(t, "finished: all 2 tasks finished at 0 ms", lastLine(alone.stdout))
	for _, policy := range []string{"region", "eager"} {
		t.Run(policy, func(t *testing.T) {
			res := execCLI(t, "", "simulate", "--slots", "2", "--policy", policy, "--trace", "-", z, y)
			require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
			lines := jobLines(t, res.stderr) // the trace is on standard output
			assert.Equal(t, []string{"0 ms", "0 ms", "0 ms", "0 ms", "0 ms", "finished"}, lines["z"])
			assert.Equal(t, []string{"0 ms", "0 ms", "1000 ms", "0 ms", "1000 ms", "finished"}, lines["y"])
			verdict := lastLine(res.stderr)
			assert.True(t, strings.HasPrefix(verdict, "finished: all "), verdict)
			assert.True(t, strings.HasSuffix(verdict, " finished at 1000 ms"), verdict)
			for _, task := range []string{"a#0", "b#0"} {
				assert.Contains(t, res.stdout, `{"t": 0, "event": "finish", "job": "z", "task": "`+task+`"`)
			}
			assert.Equal(t, 0, strings.Count(res.stdout, `"t": 2000`), "nothing of z lasts a default second")
		})
	}
}
