package simulator_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// Result.JobEvents says what became of every event, in order: applied
// (with the old priority) or refused and why, a job that has not arrived
// yet included; every refusal is audited with the same reason.
func TestRunJobsReportsEventOutcomes(t *testing.T) {
	sub := func(user string, prio int, at time.Duration) topology.Submission {
		s := topology.DefaultSubmission()
		s.User, s.Priority, s.SubmitAt = user, prio, at
		return s
	}
	etl := bigRegionJob(t, "etl", 1, sub("alice", 3000, 0))
	adhoc := bigRegionJob(t, "adhoc", 1, sub("bob", 5000, time.Second))
	var audit []admission.AuditRecord
	res, _, err := simulator.RunJobs(simulator.JobsConfig{
		Jobs: []runfile.Job{etl, adhoc}, Mode: exchange.AllBlocking, Cluster: []resource.Count{{Profile: resource.Unknown, N: 2}},
		Users: map[string]admission.Role{"alice": admission.RoleAdmin, "bob": admission.RoleUser},
		Events: []runfile.JobEvent{
			{At: 100 * time.Millisecond, Action: admission.ActionSetPriority, Job: "etl", Priority: 6000, By: "bob"},
			{At: 500 * time.Millisecond, Action: admission.ActionKill, Job: "adhoc", By: "bob"},
			{At: 700 * time.Millisecond, Action: admission.ActionSetPriority, Job: "etl", Priority: 9000, By: "alice"},
		},
		Audit: auditFunc(func(r admission.AuditRecord) { audit = append(audit, r) }),
	})
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	var lines []string
	for _, o := range res.JobEvents {
		lines = append(lines, o.String())
	}
	assert.Equal(t, []string{
		"event 100 ms: bob set-priority etl -> 6000: refused: role user may change only their own jobs; the job is alice's",
		"event 500 ms: bob kill adhoc: refused: the job has not arrived yet (it arrives at 1000 ms)",
		"event 700 ms: alice set-priority etl 3000 -> 9000: applied",
	}, lines)
	require.Len(t, audit, 3)
	assert.Equal(t, "the job has not arrived yet (it arrives at 1000 ms)", audit[1].Reason)
	assert.False(t, audit[1].Accepted)
	assert.True(t, audit[2].Accepted)
}

// The eager baseline has no admission: every event is refused at its
// time, last in its instant, with a refused trace event and an audit
// record (the job's priority its old one), and says why.
func TestEagerRunJobsRefusesEvents(t *testing.T) {
	job := bigRegionJob(t, "j", 1, topology.DefaultSubmission())
	var audit []admission.AuditRecord
	var refused []runfile.Event
	last := time.Duration(-1)
	res, _, err := simulator.RunJobs(simulator.JobsConfig{Jobs: []runfile.Job{job}, Mode: exchange.AllBlocking, Policy: simulator.EagerPolicy,
		Cluster: []resource.Count{{Profile: resource.Unknown, N: 2}},
		Users:   map[string]admission.Role{"alice": admission.RoleAdmin},
		Events: []runfile.JobEvent{
			{At: time.Hour, Action: admission.ActionKill, Job: "j", By: "alice"},
			{At: time.Second, Action: admission.ActionSetPriority, Job: "j", Priority: 9000, By: "alice"},
		},
		OnEvent: func(e runfile.Event) {
			require.GreaterOrEqual(t, e.At, last, "the trace in time order")
			last = e.At
			if e.Kind == runfile.Refused {
				refused = append(refused, e)
			}
		},
		Audit: auditFunc(func(r admission.AuditRecord) { audit = append(audit, r) })})
	require.NoError(t, err)
	require.Len(t, res.JobEvents, 2)
	assert.Equal(t, "event 1000 ms: alice set-priority j -> 9000: refused: the eager baseline has no admission to apply it", res.JobEvents[0].String())
	assert.Equal(t, "event 3600000 ms: alice kill j: refused: the eager baseline has no admission to apply it", res.JobEvents[1].String())
	require.Len(t, refused, 2)
	assert.Equal(t, time.Second, refused[0].At)
	assert.Equal(t, "set-priority: the eager baseline has no admission to apply it", refused[0].Reason)
	assert.Equal(t, time.Hour, refused[1].At)
	require.Len(t, audit, 2)
	assert.False(t, audit[0].Accepted)
	assert.Equal(t, admission.DefaultPriority, audit[0].Old)
	assert.Equal(t, 9000, audit[0].New)
	assert.Equal(t, admission.ActionKill, audit[1].Action)
	assert.Contains(t, res.Reason, "finished at 2000 ms", "the jobs' end, not the last event's")
}

// auditFunc is an admission.AuditSink calling a function.
type auditFunc func(admission.AuditRecord)

func (f auditFunc) Audit(r admission.AuditRecord) error {
	f(r)
	return nil
}

// Drivers' slot time is DriverHeld, not HeldWaiting; a job's first deploy
// is its first task's, not its driver's.
func TestRunJobsDriverTimeIsItsOwn(t *testing.T) {
	res, per, err := simulator.RunJobs(simulator.JobsConfig{Jobs: floodJobs(t), Mode: exchange.AllBlocking,
		Cluster: []resource.Count{{Profile: resource.Unknown, N: 4}}, Queues: []admission.QueueConfig{{Name: "root.default", Policy: admission.StateAware}}})
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	// four drivers, each held 4000 ms of 16000 ms on 4 slots
	assert.InDelta(t, 0.25, res.DriverHeld, 1e-9)
	assert.InDelta(t, 0.0, res.HeldWaiting, 1e-9)
	assert.InDelta(t, res.Utilization, res.WorkUtilization+res.HeldWaiting+res.DriverHeld, 1e-9)
	assert.Equal(t, time.Second, per[0].FirstDeploy, "the driver starts at 0 ms, the first task after its 1000 ms startup")
	assert.Equal(t, "finished: all 4 jobs finished at 16000 ms", res.Reason)
}

// The verdict's time is when the last job ended, not the last event.
func TestRunJobsFinishedAtTheLastJobsEnd(t *testing.T) {
	job := bigRegionJob(t, "j", 1, topology.DefaultSubmission()) // ends at 2000 ms
	res, _, err := simulator.RunJobs(simulator.JobsConfig{Jobs: []runfile.Job{job}, Mode: exchange.AllBlocking,
		Cluster: []resource.Count{{Profile: resource.Unknown, N: 1}},
		Events:  []runfile.JobEvent{{At: time.Minute, Action: admission.ActionKill, Job: "j", By: "nobody"}}})
	require.NoError(t, err)
	assert.Equal(t, time.Minute, res.Makespan)
	assert.Equal(t, "finished: the only job finished at 2000 ms", res.Reason)
	require.Len(t, res.JobEvents, 1)
	assert.False(t, res.JobEvents[0].Applied)
}
