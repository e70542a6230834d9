package multijob

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// TestDriverThenStartJob: a job with a driver asks for nothing before
// StartJob; the admission grants the driver's slot first (an event), and
// once the runtime says the driver is up, its regions ask and deploy.
func TestDriverThenStartJob(t *testing.T) {
	s := fairShare(t, 3)
	driver := resource.Unknown
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "spark", Driver: &driver}, Regions: pipelinedJob(t, 2)}))
	assert.ErrorIs(t, s.StartJob(t0, "spark"), ErrNoDriverSlot, "not granted before the decision")
	rd := s.Ready()
	assert.Empty(t, rd.Jobs)
	assert.Equal(t, []string{"spark: new -> accepted", "spark: accepted -> starting", "spark: driver in slot 0"}, events(rd))
	st, err := s.Status("spark")
	require.NoError(t, err)
	assert.True(t, st.HasDriverSlot)
	assert.False(t, st.Started)

	require.NoError(t, s.StartJob(ms(1000), "spark"))
	assert.ErrorIs(t, s.StartJob(ms(1000), "spark"), ErrAlreadyStarted)
	rd = s.Ready()
	assert.Equal(t, map[string]int{"spark": 4}, deploys(rd))
	assert.Equal(t, []scheduler.SlotID{1, 2}, slotsOf(rd, "spark"))
	assert.Equal(t, []string{"spark: starting -> running"}, events(rd))

	finishAll(t, s, ms(2000), rd, "spark")
	rd = s.Ready()
	require.Len(t, rd.Ended, 1)
	assert.Equal(t, Finished, rd.Ended[0].Outcome)
	st, err = s.Status("spark")
	require.NoError(t, err)
	assert.False(t, st.HasDriverSlot, "the driver's slot is back")
	assert.Zero(t, st.Granted)
}

// TestRejected: a job whose largest region and driver can never fit the
// cluster is no Go error: the next Ready reports it rejected, naming the
// region, and it holds nothing back.
func TestRejected(t *testing.T) {
	s := fairShare(t, 2)
	driver := resource.Unknown
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "wide", Driver: &driver}, Regions: pipelinedJob(t, 2)}))
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "small"}, Regions: pipelinedJob(t, 2)}))
	rd := s.Ready()
	require.Len(t, rd.Ended, 1)
	end := rd.Ended[0]
	assert.Equal(t, "wide", end.Job)
	assert.Equal(t, Rejected, end.Outcome)
	var rj *admission.RejectedError
	require.ErrorAs(t, end.Err, &rj)
	assert.Contains(t, rj.Reason, "region 0 {")
	assert.Contains(t, events(rd), "wide: new -> rejected")
	assert.Equal(t, map[string]int{"small": 4}, deploys(rd))
	assert.ErrorIs(t, s.StartJob(ms(1), "wide"), ErrJobEnded)
	st, err := s.Status("wide")
	require.NoError(t, err)
	assert.Equal(t, admission.JobRejected, st.Admission)
	assert.Equal(t, scheduler.Status{}, st.Scheduler)
}

// TestHardGangTimeout: a hard gang that cannot be reserved in time fails
// its job when the admission's timer fires (Tick at NextDeadline).
func TestHardGangTimeout(t *testing.T) {
	s := fairShare(t, 2)
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "first"}, Regions: pipelinedJob(t, 2)}))
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "gang", Gang: &admission.Gang{MinSlots: 2, Hard: true, Timeout: time.Second}}, Regions: pipelinedJob(t, 2)}))
	rd := s.Ready()
	require.Equal(t, map[string]int{"first": 4}, deploys(rd))
	assert.Equal(t, ms(1000), rd.Deadline)
	at, ok := s.NextDeadline()
	require.True(t, ok)
	require.NoError(t, s.Tick(at))
	rd = s.Ready()
	require.Len(t, rd.Ended, 1)
	assert.Equal(t, "gang", rd.Ended[0].Job)
	assert.Equal(t, Failed, rd.Ended[0].Outcome)
	assert.ErrorIs(t, rd.Ended[0].Err, admission.ErrGangTimeout)
	assert.True(t, rd.Deadline.IsZero())
}

// TestBadInput: every refused input returns a typed error naming the
// job, changes nothing and panics on nothing.
func TestBadInput(t *testing.T) {
	s, err := New(Config{Admission: admission.Config{Slots: cluster(2)}})
	require.NoError(t, err)
	require.NoError(t, s.Submit(ms(5), JobSpec{JobSpec: admission.JobSpec{Name: "a"}, Regions: pipelinedJob(t, 2)}))
	rd := s.Ready()
	require.Equal(t, map[string]int{"a": 4}, deploys(rd))
	dep := jobReady(rd, "a").Deploy[0]

	submits := map[string]struct {
		spec JobSpec
		err  error
	}{
		"no name":       {JobSpec{Regions: pipelinedJob(t, 1)}, ErrBadSpec},
		"no regions":    {JobSpec{JobSpec: admission.JobSpec{Name: "b"}}, ErrBadSpec},
		"gang of 0":     {JobSpec{JobSpec: admission.JobSpec{Name: "b", Gang: &admission.Gang{}}, Regions: pipelinedJob(t, 1)}, ErrBadSpec},
		"duplicate":     {JobSpec{JobSpec: admission.JobSpec{Name: "a"}, Regions: pipelinedJob(t, 1)}, ErrDuplicateJob},
		"unknown queue": {JobSpec{JobSpec: admission.JobSpec{Name: "b", Queue: "root.etl"}, Regions: pipelinedJob(t, 1)}, admission.ErrUnknownQueue},
		"bad priority":  {JobSpec{JobSpec: admission.JobSpec{Name: "b", Priority: 20000}, Regions: pipelinedJob(t, 1)}, admission.ErrBadPriority},
		"largest set":   {JobSpec{JobSpec: admission.JobSpec{Name: "b", LargestName: "r0"}, Regions: pipelinedJob(t, 1)}, ErrBadSpec},
	}
	for name, c := range submits {
		err := s.Submit(ms(6), c.spec)
		assert.ErrorIs(t, err, c.err, name)
		var je *JobError
		if assert.ErrorAs(t, err, &je, name) {
			assert.Equal(t, c.spec.Name, je.Job, name)
			assert.Equal(t, "submit", je.Op, name)
		}
	}
	var te *scheduler.TimeError
	assert.ErrorAs(t, s.Submit(ms(4), JobSpec{JobSpec: admission.JobSpec{Name: "b"}, Regions: pipelinedJob(t, 1)}), &te)
	assert.ErrorAs(t, s.TaskFinished(ms(4), "a", dep.Task, dep.Attempt), &te)
	assert.ErrorAs(t, s.Tick(ms(4)), &te)

	for name, err := range map[string]error{
		"finished":  s.TaskFinished(ms(6), "nightly", dep.Task, dep.Attempt),
		"running":   s.TaskRunning(ms(6), "nightly", dep.Task, dep.Attempt),
		"failed":    s.TaskFailed(ms(6), "nightly", dep.Task, dep.Attempt),
		"slot lost": s.SlotLost(ms(6), "nightly", 0),
		"start":     s.StartJob(ms(6), "nightly"),
		"status": func() error {
			_, err := s.Status("nightly")
			return err
		}(),
	} {
		assert.ErrorIs(t, err, ErrUnknownJob, name)
		var je *JobError
		if assert.ErrorAs(t, err, &je, name) {
			assert.Equal(t, "nightly", je.Job, name)
		}
	}
	var oe *scheduler.OpError
	assert.ErrorAs(t, s.TaskFinished(ms(6), "a", 999, 0), &oe, "the job's scheduler's error")
	assert.ErrorIs(t, s.StartJob(ms(6), "a"), ErrAlreadyStarted)

	assert.Equal(t, []string{"a"}, s.Jobs())
	rd = s.Ready()
	assert.True(t, rd.Empty(), "nothing changed: %+v", rd)
	st, err := s.Status("a")
	require.NoError(t, err)
	assert.Equal(t, 2, st.Granted)
	assert.Equal(t, scheduler.JobRunning, st.Scheduler.State)
}

// TestFailedInItsScheduler: with Config.Timeout, a region that waits
// longer fails its job in its scheduler: the job is reported failed with
// the scheduler's *RegionError, and the admission is told.
func TestFailedInItsScheduler(t *testing.T) {
	s, err := New(Config{Admission: admission.Config{Slots: cluster(2)}, Jobs: scheduler.Config{Pool: slotpool.Config{Timeout: time.Second}}})
	require.NoError(t, err)
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "a"}, Regions: pipelinedJob(t, 2)}))
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "b"}, Regions: pipelinedJob(t, 2)}))
	rd := s.Ready()
	require.Equal(t, map[string]int{"a": 4}, deploys(rd))
	assert.Equal(t, ms(1000), rd.Deadline, "b's region waits for a second at most")
	require.NoError(t, s.Tick(ms(1000)))
	rd = s.Ready()
	require.Len(t, rd.Ended, 1)
	assert.Equal(t, "b", rd.Ended[0].Job)
	assert.Equal(t, Failed, rd.Ended[0].Outcome)
	var re *scheduler.RegionError
	require.ErrorAs(t, rd.Ended[0].Err, &re)
	st, err := s.Status("b")
	require.NoError(t, err)
	assert.Equal(t, admission.JobFailed, st.Admission)
}

// New refuses a Config.Jobs that sets what the Scheduler sets for each
// job, naming the field.
func TestNewRefusesJobsFieldsItSets(t *testing.T) {
	slots := admission.Config{Slots: cluster(1)}
	for field, jobs := range map[string]scheduler.Config{
		"Jobs.Admission":         {Admission: &admission.StaticCluster{}},
		"Jobs.ExternalAdmission": {ExternalAdmission: true},
		"Jobs.Speculation":       {Speculation: scheduler.DefaultSpeculation()},
		"Jobs.Logger":            {Logger: zap.NewNop()},
	} {
		_, err := New(Config{Admission: slots, Jobs: jobs})
		assert.ErrorIs(t, err, ErrBadConfig, field)
		var ce *ConfigError
		if assert.ErrorAs(t, err, &ce, field) {
			assert.Equal(t, field, ce.Field)
		}
	}
	_, err := New(Config{Admission: slots, Jobs: scheduler.Config{SelectiveShare: 2}})
	assert.Error(t, err, "a selective share out of range")
	_, err = New(Config{Admission: slots, Jobs: scheduler.Config{SelectiveShare: 0.5, DisableHybridSlotSharing: true,
		Pool: slotpool.Config{Timeout: time.Second, IdleTimeout: time.Second}}})
	assert.NoError(t, err)
}
