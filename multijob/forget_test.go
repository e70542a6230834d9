package multijob

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
)

// TestForget: a job is forgotten only once a Ready handed out its end;
// afterwards every input naming it fails with ErrUnknownJob, and its name
// runs a new job.
func TestForget(t *testing.T) {
	s := fairShare(t, 4)
	spec := JobSpec{JobSpec: admission.JobSpec{Name: "etl"}, Regions: pipelinedJob(t, 2)}
	assert.ErrorIs(t, s.Forget("etl"), ErrUnknownJob)
	require.NoError(t, s.Submit(t0, spec))
	assert.ErrorIs(t, s.Forget("etl"), ErrJobNotEnded, "running")
	rd := s.Ready()
	require.Equal(t, map[string]int{"etl": 4}, deploys(rd))
	finishAll(t, s, ms(1000), rd, "etl")
	err := s.Forget("etl")
	require.ErrorIs(t, err, ErrJobNotEnded, "ended, its end not handed out yet")
	assert.EqualError(t, err, `multijob: forget job "etl": multijob: job not ended, or its end not handed out by Ready yet`)
	rd = s.Ready()
	require.Len(t, rd.Ended, 1)
	require.NoError(t, s.Forget("etl"))

	assert.ErrorIs(t, s.Forget("etl"), ErrUnknownJob)
	_, err = s.Status("etl")
	assert.ErrorIs(t, err, ErrUnknownJob)
	assert.Empty(t, s.Jobs())
	assert.Nil(t, s.Regions("etl"))
	assert.ErrorIs(t, s.StartJob(ms(1000), "etl"), ErrUnknownJob)
	assert.ErrorIs(t, s.Kill(ms(1000), admission.Principal{Name: "root", Role: admission.RoleAdmin}, "etl"), admission.ErrUnknownJob)

	require.NoError(t, s.Submit(ms(2000), spec), "the name is free again")
	rd = s.Ready()
	require.Equal(t, map[string]int{"etl": 4}, deploys(rd), "and runs a new job")
	finishAll(t, s, ms(3000), rd, "etl")
	rd = s.Ready()
	require.Len(t, rd.Ended, 1)
	assert.Equal(t, Finished, rd.Ended[0].Outcome)
}

// TestForgetKilled: a killed job's end, with the cancels of its tasks,
// comes in the next Ready; it is forgotten after that.
func TestForgetKilled(t *testing.T) {
	s := fairShare(t, 4)
	require.NoError(t, s.Submit(t0, JobSpec{JobSpec: admission.JobSpec{Name: "adhoc"}, Regions: pipelinedJob(t, 2)}))
	require.Equal(t, map[string]int{"adhoc": 4}, deploys(s.Ready()))
	require.NoError(t, s.Kill(ms(10), admission.Principal{Name: "root", Role: admission.RoleAdmin}, "adhoc"))
	assert.ErrorIs(t, s.Forget("adhoc"), ErrJobNotEnded)
	rd := s.Ready()
	require.Len(t, rd.Ended, 1)
	assert.Len(t, jobReady(rd, "adhoc").Cancel, 4, "the cancels came with the end")
	require.NoError(t, s.Forget("adhoc"))
}

// TestForgetKeepsMemoryFlat: a long-lived Scheduler that forgets every job
// once it ended keeps nothing of them, whatever the number of jobs it ran.
func TestForgetKeepsMemoryFlat(t *testing.T) {
	s := fairShare(t, 4)
	now := 0
	for i := range 500 {
		name := fmt.Sprintf("job%d", i%7) // names come back
		require.NoError(t, s.Submit(ms(now), JobSpec{JobSpec: admission.JobSpec{Name: name}, Regions: pipelinedJob(t, 2)}))
		rd := s.Ready()
		now += 10
		finishAll(t, s, ms(now), rd, name)
		rd = s.Ready()
		require.Len(t, rd.Ended, 1, "job %d", i)
		require.NoError(t, s.Forget(name), "job %d", i)
	}
	assert.Empty(t, s.jobs)
	assert.Empty(t, s.byName)
	assert.Empty(t, s.byID)
	assert.Empty(t, s.dirty)
	assert.Empty(t, s.Admission().Pending())
	err := s.Admission().SetPriority(ms(now), admission.Principal{Name: "root", Role: admission.RoleAdmin}, "job0", 10)
	assert.ErrorIs(t, err, admission.ErrUnknownJob, "the admission forgot them too")
}
