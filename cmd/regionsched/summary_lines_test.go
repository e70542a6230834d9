package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
)

// The summary's event and restart lines (package summary, which run
// prints too) say what the simulator's own descriptions say.
func TestSummaryLinesAreTheSimulators(t *testing.T) {
	for _, o := range []simulator.EventOutcome{
		{JobEvent: runfile.JobEvent{At: 2200 * time.Millisecond, By: "alice", Action: admission.ActionSetPriority, Job: "urgent", Priority: 9500}, Old: 500, Applied: true},
		{JobEvent: runfile.JobEvent{At: 100 * time.Millisecond, By: "bob", Action: admission.ActionSetPriority, Job: "etl", Priority: 6000}, Reason: "role user may change only their own jobs"},
		{JobEvent: runfile.JobEvent{At: 3000 * time.Millisecond, By: "mallory", Action: admission.ActionKill, Job: "low"}, Reason: "no role"},
		{JobEvent: runfile.JobEvent{At: 1500 * time.Millisecond, By: "alice", Action: admission.ActionKill, Job: "low"}, Applied: true},
	} {
		assert.Equal(t, o.String(), summary.EventLine(eventOutcome(o)))
	}
	assert.Equal(t, "  at 1500 ms B#1 failed: restarted regions 1-5, 7",
		summary.RestartLine(summaryRestart(simulator.Restart{At: 1500 * time.Millisecond, Task: "B#1", Regions: []region.ID{1, 2, 3, 4, 5, 7}})))
}

// Under --policy eager the summary's regions line says that no region
// was scheduled, and what was deployed instead: one job or several.
func TestEagerRegionsLine(t *testing.T) {
	res := execCLI(t, "", "simulate", "--slots", "4", "--policy", "eager", flip119Path)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, "none (eager: 12 deployments of 12 tasks, one by one)", summaryLine(t, res.stdout, "regions scheduled:"))
	assert.NotContains(t, res.stdout, "tasks deployed:")
	res = execCLI(t, "", "simulate", "--slots", "4", "--policy", "eager", flip119Path, "../../examples/jobs/etl-join.json")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, "none (eager: 49 deployments of 49 tasks, one by one)", summaryLine(t, res.stdout, "regions scheduled:"))
	res = execCLI(t, "", "simulate", "--slots", "4", flip119Path, "../../examples/jobs/etl-join.json")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Regexp(t, `^\d+ deployments$`, summaryLine(t, res.stdout, "regions scheduled:"))
}
