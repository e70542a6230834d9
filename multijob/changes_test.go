package multijob

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/scheduler"
)

// audit keeps the audit records.
type audit struct{ records []admission.AuditRecord }

func (a *audit) Audit(r admission.AuditRecord) error {
	a.records = append(a.records, r)
	return nil
}

var (
	alice = admission.Principal{Name: "alice", Role: admission.RoleUser}
	bob   = admission.Principal{Name: "bob", Role: admission.RoleUser}
	root  = admission.Principal{Name: "root", Role: admission.RoleAdmin}
)

// fifo returns a Scheduler over n slots with a fifo root.default queue
// and the audit records.
func fifo(t *testing.T, n int) (*Scheduler, *audit) {
	t.Helper()
	a := &audit{}
	s, err := New(Config{Admission: admission.Config{Slots: cluster(n), Audit: a}})
	require.NoError(t, err)
	return s, a
}

// TestKill: a user may not kill another's job (refused, audited, nothing
// changes); an admin may: the job's tasks are canceled, it is reported
// killed, and its slots go to the job waiting behind it in the same
// Ready. A killed job takes no more reports and cannot be killed again.
func TestKill(t *testing.T) {
	s, a := fifo(t, 4)
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "etl", User: "alice"}, Regions: blockingJob(t, 4)}))
	// (Later: jobs submitted at the same instant would go by name.)
	require.NoError(t, s.Submit(ms(1), JobSpec{JobSpec: admission.JobSpec{Name: "adhoc", User: "bob"}, Regions: blockingJob(t, 4)}))
	rd := s.Ready()
	require.Equal(t, map[string]int{"etl": 4}, deploys(rd))
	etl := jobReady(rd, "etl").Deploy

	err := s.Kill(ms(1), bob, "etl")
	var re *admission.RefusedError
	require.ErrorAs(t, err, &re)
	assert.ErrorIs(t, err, admission.ErrNotAuthorized)
	assert.Equal(t, "etl", re.Job)
	rd = s.Ready()
	assert.True(t, rd.Empty(), "a refused kill changes nothing: %+v", rd)

	require.NoError(t, s.Kill(ms(2), root, "etl"))
	rd = s.Ready()
	got := jobReady(rd, "etl")
	assert.Len(t, got.Cancel, 4)
	require.NotNil(t, got.Job)
	assert.Equal(t, scheduler.JobFailed, got.Job.State)
	require.Len(t, rd.Ended, 1)
	assert.Equal(t, Killed, rd.Ended[0].Outcome)
	var ke *admission.KilledError
	require.ErrorAs(t, rd.Ended[0].Err, &ke)
	assert.Equal(t, root, ke.By)
	assert.Equal(t, map[string]int{"adhoc": 4}, deploys(rd), "the killed job's slots, in the same Ready")
	assert.Contains(t, events(rd), "etl: failing -> failed")

	err = s.TaskFinished(ms(3), "etl", etl[0].Task, etl[0].Attempt)
	var je *JobError
	require.ErrorAs(t, err, &je)
	assert.Equal(t, "etl", je.Job)
	assert.ErrorIs(t, err, ErrJobEnded)
	assert.ErrorIs(t, s.Kill(ms(3), root, "etl"), admission.ErrInvalidTransition)

	require.Len(t, a.records, 3)
	assert.False(t, a.records[0].Accepted)
	assert.True(t, a.records[1].Accepted)
	assert.False(t, a.records[2].Accepted)
	st, err := s.Status("etl")
	require.NoError(t, err)
	assert.Equal(t, admission.JobFailed, st.Admission)
	assert.Zero(t, st.Granted)
}

// TestKillBeforeStart: a job whose driver waits for its slot is killed:
// nothing of it ran, it is reported killed and its driver's ask is gone.
func TestKillBeforeStart(t *testing.T) {
	s, _ := fifo(t, 2)
	driver := scheduler.Slot{}.Profile
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "first"}, Regions: pipelinedJob(t, 2)}))
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "second", User: "alice", Driver: &driver}, Regions: blockingJob(t, 1)}))
	rd := s.Ready()
	require.Equal(t, map[string]int{"first": 4}, deploys(rd))
	require.NoError(t, s.Kill(ms(1), alice, "second"))
	rd = s.Ready()
	require.Len(t, rd.Ended, 1)
	assert.Equal(t, JobEnd{Job: "second", Outcome: Killed, Err: rd.Ended[0].Err, At: ms(1)}, rd.Ended[0])
	assert.Empty(t, jobReady(rd, "second").Cancel)
}

// TestSetPriority: refused changes (another's job, a user's ceiling, a
// job never submitted) change nothing and are audited; an accepted one
// reorders the waiting jobs at the next decision.
func TestSetPriority(t *testing.T) {
	a := &audit{}
	s, err := New(Config{Admission: admission.Config{Slots: cluster(2), DefaultPolicy: admission.Priority, Audit: a}})
	require.NoError(t, err)
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "first"}, Regions: pipelinedJob(t, 2)}))
	rd := s.Ready()
	require.Equal(t, map[string]int{"first": 4}, deploys(rd))
	first := jobReady(rd, "first").Deploy
	require.NoError(t, s.Submit(ms(1), JobSpec{JobSpec: admission.JobSpec{Name: "etl", User: "alice", Priority: 1000}, Regions: pipelinedJob(t, 2)}))
	require.NoError(t, s.Submit(ms(1), JobSpec{JobSpec: admission.JobSpec{Name: "adhoc", User: "bob", Priority: 2000}, Regions: pipelinedJob(t, 2)}))

	assert.ErrorIs(t, s.SetPriority(ms(2), bob, "etl", 3000), admission.ErrNotAuthorized)
	assert.ErrorIs(t, s.SetPriority(ms(2), alice, "etl", 6000), admission.ErrNotAuthorized)
	assert.ErrorIs(t, s.SetPriority(ms(2), root, "nightly", 3000), admission.ErrUnknownJob)
	require.NoError(t, s.SetPriority(ms(2), alice, "etl", 3000))
	rd = s.Ready()
	assert.Empty(t, deploys(rd))

	finishAll(t, s, ms(3), Ready{Jobs: []JobReady{{Job: "first", Ready: scheduler.Ready{Deploy: first}}}}, "first")
	rd = s.Ready()
	assert.Equal(t, map[string]int{"etl": 4}, deploys(rd), "raised above adhoc")
	require.Len(t, a.records, 4)
	assert.Equal(t, []bool{false, false, false, true}, []bool{a.records[0].Accepted, a.records[1].Accepted, a.records[2].Accepted, a.records[3].Accepted})
}
