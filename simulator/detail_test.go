package simulator_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// decodeJob reads a job file given as a string.
func decodeJob(t *testing.T, text string) runfile.Job {
	t.Helper()
	g, err := topology.Decode(strings.NewReader(text))
	require.NoError(t, err)
	return runfile.Job{Name: g.Name(), Job: g}
}

// detailRun runs jobs with Detail and returns the events OnEvent got and
// the result.
func detailRun(t *testing.T, cfg simulator.JobsConfig) ([]runfile.Event, *simulator.Result) {
	t.Helper()
	var got []runfile.Event
	cfg.Detail, cfg.Record = true, true
	cfg.OnEvent = func(e runfile.Event) { got = append(got, e) }
	res, _, err := simulator.RunJobs(cfg)
	require.NoError(t, err)
	return got, res
}

// only keeps the events of the kinds given.
func only(events []runfile.Event, kinds ...runfile.Kind) []runfile.Event {
	var out []runfile.Event
	for _, e := range events {
		for _, k := range kinds {
			if e.Kind == k {
				out = append(out, e)
			}
		}
	}
	return out
}

// With Detail, OnEvent also gets when tasks make progress, and nothing
// of it is recorded, counted or written to a trace. In FLIP-119's example
// run all-pipelined by the eager policy, B#0 and B#1 hold their slots
// from 0 ms without ever making progress (their consumers never all get
// slots): no Progress, whereas A's tasks progress from 0 ms to their end.
func TestDetailProgress(t *testing.T) {
	var got []runfile.Event
	cfg := simulator.Config{Regions: region.FromJob(flip119(t), exchange.AllPipelined), Cluster: slots(4), Policy: simulator.EagerPolicy,
		Seed: 1, Record: true, Detail: true, OnEvent: func(e runfile.Event) { got = append(got, e) }}
	res, err := simulator.Run(cfg)
	require.NoError(t, err)
	require.Equal(t, runfile.Deadlock, res.Verdict)
	assert.Len(t, res.Events, res.TraceEvents, "only trace events are recorded and counted")
	for _, e := range res.Events {
		assert.True(t, e.Kind.Traced(), "%+v", e)
	}
	progress := only(got, runfile.Progress, runfile.Stall)
	assert.Len(t, got, res.TraceEvents+len(progress))
	var tasks []string
	for _, e := range progress {
		tasks = append(tasks, e.Kind.String()+" "+e.Task+" @"+e.At.String())
		assert.NotEqual(t, runfile.NoSlot, e.Slot)
	}
	assert.Equal(t, []string{"progress A#1 @0s", "progress A#0 @0s", "stall A#1 @1s", "stall A#0 @1s"}, tasks)

	var trace bytes.Buffer
	require.NoError(t, runfile.WriteTrace(&trace, got))
	assert.NotContains(t, trace.String(), "progress")
	assert.NotContains(t, trace.String(), "stall")
	assert.Equal(t, res.TraceEvents, strings.Count(trace.String(), "\n"))
}

// A gang's placeholders are kept for it from its reservation until a
// task of its takes one and the rest go back (replaced): Reserve and
// Unreserve name the job, the slot and why ("gang"). Without Detail
// nothing of it reaches OnEvent.
func TestDetailGangPlaceholders(t *testing.T) {
	jobs := []runfile.Job{
		decodeJob(t, `{"name":"gang","driver":{"startupMs":1000},"gang":{"minSlots":8,"style":"hard","timeoutMs":5000},"vertices":[{"id":"x","parallelism":1,"durationMs":1000}]}`),
		decodeJob(t, `{"name":"wide","submitAtMs":100,"vertices":[{"id":"x","parallelism":5,"durationMs":1000}]}`),
	}
	got, _ := detailRun(t, simulator.JobsConfig{Jobs: jobs, Cluster: slots(10)})
	reserves := only(got, runfile.Reserve)
	unreserves := only(got, runfile.Unreserve)
	require.Len(t, reserves, 7, "8 slots, the driver's included")
	require.Len(t, unreserves, 7)
	kept := map[int]bool{}
	for _, e := range reserves {
		assert.Equal(t, time.Duration(0), e.At)
		assert.Equal(t, "gang", e.Job)
		assert.Equal(t, "gang", e.Reason)
		kept[e.Slot] = true
	}
	for _, e := range unreserves {
		assert.Equal(t, time.Second, e.At, "the gang's task takes one at 1000 ms, the others go back")
		assert.True(t, kept[e.Slot], "slot %d", e.Slot)
	}

	var plain []runfile.Event
	_, _, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Cluster: slots(10), OnEvent: func(e runfile.Event) { plain = append(plain, e) }})
	require.NoError(t, err)
	for _, e := range plain {
		assert.True(t, e.Kind.Traced(), "%+v", e)
	}
}

// An accepted priority change or kill is a Change (who, what); a refused
// one stays a Refused trace event.
func TestDetailChanges(t *testing.T) {
	jobs := []runfile.Job{
		decodeJob(t, `{"name":"a","vertices":[{"id":"x","parallelism":1,"durationMs":3000}]}`),
		decodeJob(t, `{"name":"b","vertices":[{"id":"x","parallelism":1,"durationMs":3000}]}`),
	}
	got, res := detailRun(t, simulator.JobsConfig{Jobs: jobs, Cluster: slots(2),
		Users: map[string]admission.Role{"alice": admission.RoleAdmin},
		Events: []runfile.JobEvent{
			{At: 500 * time.Millisecond, Action: admission.ActionSetPriority, Job: "a", Priority: 7, By: "alice"},
			{At: time.Second, Action: admission.ActionKill, Job: "b", By: "alice"},
			{At: time.Second, Action: admission.ActionKill, Job: "a", By: "mallory"},
		}})
	changes := only(got, runfile.Change, runfile.Refused)
	require.Len(t, changes, 3, "%+v", changes)
	assert.Equal(t, runfile.Event{At: 500 * time.Millisecond, Kind: runfile.Change, Job: "a", By: "alice", Reason: "priority 7", Slot: runfile.NoSlot, Region: runfile.NoRegion}, changes[0])
	assert.Equal(t, runfile.Event{At: time.Second, Kind: runfile.Change, Job: "b", By: "alice", Reason: "kill", Slot: runfile.NoSlot, Region: runfile.NoRegion}, changes[1])
	assert.Equal(t, runfile.Refused, changes[2].Kind)
	assert.Len(t, only(res.Events, runfile.Change), 0, "not recorded")
	var trace bytes.Buffer
	require.NoError(t, runfile.WriteTrace(&trace, res.Events))
	requireReadBack(t, trace.Bytes(), res.Events)
}
