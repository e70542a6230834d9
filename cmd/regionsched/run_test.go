package main

// The run command without Slurm: its flags, its events file and how it
// prints the jobs' outcomes.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/runcli"
	"github.com/regionsched/regionsched/slurm"
)

// outcomesOf keeps how each job ended, and says what ran of it on
// Slurm's terms (the summary prints it on a line of its own).
func TestOutcomesOf(t *testing.T) {
	killed := &admission.KilledError{Job: "adhoc", By: admission.Principal{Name: "bob"}}
	out := outcomesOf([]slurm.JobResult{
		{Name: "etl", End: 1500 * time.Millisecond, FirstDeploy: 20 * time.Millisecond, Steps: 12, Allocations: []slurm.JobID{4, 5}},
		{Name: "adhoc", End: 900 * time.Millisecond, Err: killed, Steps: 1, Allocations: []slurm.JobID{6}},
	})
	assert.Equal(t, []runcli.Outcome{
		{Name: "etl", End: 1500 * time.Millisecond, Work: "12 task runs as Slurm steps in 2 allocations, all on their slot's node"},
		{Name: "adhoc", End: 900 * time.Millisecond, Err: killed, Work: "1 task run as Slurm steps in 1 allocation, all on their slot's node"},
	}, out)
}

func TestRunFlags(t *testing.T) {
	res := execCLI(t, "", "run", flip119Path)
	assert.Equal(t, exitBadInput, res.code)
	assert.Contains(t, res.stderr, "--slurm")
	res = execCLI(t, "", "run", "--slurm", "--duration-scale", "0", flip119Path)
	assert.Equal(t, exitBadInput, res.code)
	assert.Contains(t, res.stderr, "--duration-scale")
	res = execCLI(t, "", "run", "--slurm")
	assert.Equal(t, exitBadInput, res.code)
	res = execCLI(t, "", "run", "--slurm", "--slurm-conf", "/nonexistent/slurm.conf", "--timeout", "20s", flip119Path)
	assert.Equal(t, exitBadInput, res.code)
	assert.Contains(t, res.stderr, "--slurm-conf")
	for flag, value := range map[string]string{"--timeout": "-1s", "--idle-timeout": "-1s", "--time-limit": "-5m"} {
		res = execCLI(t, "", "run", "--slurm", flag, value, flip119Path)
		assert.Equal(t, exitBadInput, res.code, flag)
		assert.Contains(t, res.stderr, flag+" must be", flag)
	}
	res = execCLI(t, "", "run", "--slurm", "--timeout", "0s", flip119Path)
	assert.Equal(t, exitBadInput, res.code)
	assert.Contains(t, res.stderr, "--timeout must be positive")
}

func TestReadSlurmEvents(t *testing.T) {
	evs, err := readSlurmEvents(writeTemp(t, "e.jsonl", `{"t": 0, "event": "kill", "job": "a", "by": "b"}
{"t": 5, "event": "set-priority", "job": "a", "priority": 4294967293, "by": "b"}
`), []string{"a"})
	require.NoError(t, err)
	require.Len(t, evs, 2, "a kill is run too")
	assert.Equal(t, 4294967293, evs[1].Priority, "Slurm's range")
	for content, want := range map[string]string{
		`{"event": "set-priority", "job": "a", "priority": 1, "by": "b"}`:                  `line 1: field "t": missing`,
		`{"t": 1, "event": "set-priority", "job": "a", "by": "b"}`:                         `line 1: field "priority": missing`,
		`{"t": 1, "event": "set-priority", "priority": 5, "by": "b"}`:                      `line 1: field "job": missing`,
		`{"t": 1, "event": "set-priority", "job": "a", "priority": 5, "x": 1}`:             `line 1: field "x": unknown field: valid fields: t, event, job, priority, by`,
		`{"t": 1, "event": "set-priority", "job": "z", "priority": 5, "by": "b"}`:          `"z"`,
		`{"t": 1, "event": "set-priority", "job": "a", "priority": 4294967294, "by": "b"}`: `4294967293`,
	} {
		_, err := readSlurmEvents(writeTemp(t, "e.jsonl", content), []string{"a"})
		require.Error(t, err, content)
		assert.Contains(t, err.Error(), want)
	}
}
