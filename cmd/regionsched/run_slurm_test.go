package main

// regionsched run --slurm against a running slurmctld
// (scripts/slurm-up.sh): skipped when there is none, failed when
// REGIONSCHED_SLURM=require. Tasks sleep a tenth of their durationMs.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/slurmtest"
)

func TestSlurmRunCommand(t *testing.T) {
	conf := slurmtest.Require(t)
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	svg := filepath.Join(t.TempDir(), "run.svg")
	if os.Geteuid() != 0 {
		slurmtest.Missing(t, "needs root to submit as nobody (runuser)")
	}
	// The allocations are nobody's (--user nobody); the job runs for about
	// 10 s, so that every change is asked and audited while it runs (a
	// Slurm job's next change waits for the audit of the one before). A
	// job starts at about
	// 4.29e9: nobody may lower its own job's priority (Slurm applies it,
	// though scontrol exits 1: "not persistent"), not raise it; root may.
	events := writeTemp(t, "events.jsonl", `{"t": 100, "event": "set-priority", "job": "flip119-example", "priority": 4294967293, "by": "nobody"}
{"t": 200, "event": "set-priority", "job": "flip119-example", "priority": 100000, "by": "nobody"}
{"t": 600, "event": "set-priority", "job": "flip119-example", "priority": 12345, "by": "root"}
`)
	res := execCLI(t, "", "run", "--slurm", "--slurm-conf", conf, "--user", "nobody", "--mode", "pointwise-pipelined-only", "--duration-scale", "0.5",
		"--trace", trace, "--events", events, "--audit", audit, "--svg", svg, "--color-by", "queue", flip119Path)
	require.Equal(t, exitOK, res.code, res.stderr)
	// An events file: simulate's summary of several jobs, its figures from
	// the trace, Slurm's facts on a line of their own.
	assert.Regexp(t, `(?m)^run \S+: allocations tagged regionsched-run=\S+, time limit`, res.stdout)
	assert.Regexp(t, `(?m)^1 job on Slurm: mode pointwise-pipelined-only, policy region, admission by Slurm, 16 slots$`, res.stdout)
	assert.Regexp(t, `(?m)^job "flip119-example": submitted 0 ms, first deploy \d+ ms, finished \d+ ms, wait \d+ ms, makespan \d+ ms; finished$`, res.stdout)
	assert.Regexp(t, `(?m)^slurm: job flip119-example: 12 task runs as Slurm steps in \d+ allocations?, all on their slot's node$`, res.stdout)
	assert.Regexp(t, `(?m)^makespan:          \d+ ms of real time, until the last event$`, res.stdout)
	assert.Regexp(t, `(?m)^slot utilization:  \d+\.\d% of slot time with work progressing$`, res.stdout)
	assert.Regexp(t, `(?m)^held waiting:      \d+\.\d% of slot time held with no task in it$`, res.stdout)
	assert.Regexp(t, `(?m)^regions scheduled: \d+ deployments$`, res.stdout)
	assert.Contains(t, res.stdout, "\nrestarts:          0 (regions restarted: 0)\n")
	assert.Regexp(t, `finished: the only job finished at \d+ ms\n$`, res.stdout)
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	kinds := map[string]int{}
	for _, l := range lines {
		var ev struct {
			T     int64  `json:"t"`
			Event string `json:"event"`
			Task  string `json:"task"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		kinds[ev.Event]++
	}
	assert.Equal(t, 12, kinds["request"])
	assert.Equal(t, 12, kinds["deploy"])
	assert.Equal(t, 12, kinds["finish"])
	assert.Positive(t, kinds["release"])
	// the picture of the run, coloured by the job's queue: root.default
	data, err = os.ReadFile(svg)
	require.NoError(t, err)
	texts, _ := svgTexts(t, string(data))
	assert.Equal(t, "colour = queue:", colourTitle(t, texts))
	assert.Contains(t, texts, "root.default")
	assert.Contains(t, texts, "1 job on Slurm")
	assert.Equal(t, 12, strings.Count(string(data), "<title>flip119-example:"), "a bar per task, named with its job")

	data, err = os.ReadFile(audit)
	require.NoError(t, err)
	byWhom := map[string][]auditLine{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var a auditLine
		require.NoError(t, json.Unmarshal([]byte(l), &a), l)
		byWhom[a.By] = append(byWhom[a.By], a)
	}
	var raise, lower int
	for _, a := range byWhom["nobody"] {
		assert.Positive(t, a.SlurmJob)
		switch a.New {
		case 4294967293:
			raise++
			assert.False(t, a.Accepted, "nobody may not raise: %+v", a)
			assert.Contains(t, a.Reason, "permission denied", "%+v", a)
		case 100000:
			lower++
			assert.True(t, a.Accepted, "nobody may lower its own job, whatever scontrol's exit status: %+v", a)
		}
	}
	assert.Positive(t, raise, "audited: %s", data)
	assert.Positive(t, lower, "audited: %s", data)
	require.NotEmpty(t, byWhom["root"], "audited: %s", data)
	applied := 0
	for _, a := range byWhom["root"] {
		assert.Equal(t, int64(12345), a.New)
		if a.Accepted {
			applied++
		} else {
			// An allocation that ended between the poll and scontrol.
			assert.Contains(t, a.Reason, "finished", "root's change is refused only for an allocation gone: %+v", a)
		}
	}
	assert.Positive(t, applied, "root may: %s", data)
	slurmtest.NoLiveJobs(t, conf, "rs-")
}
