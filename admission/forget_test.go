package admission

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/slotpool"
)

// Forget drops only ended jobs; afterwards the name is unknown to every
// input, free for a new job, and the job's id is not given again.
func TestForget(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(2)})
	require.NoError(t, err)
	assert.ErrorIs(t, q.Forget("etl"), ErrUnknownJob)

	p, err := q.Submit(t0, JobSpec{Name: "etl"})
	require.NoError(t, err)
	err = q.Forget("etl")
	require.ErrorIs(t, err, ErrJobNotEnded)
	assert.Contains(t, err.Error(), `job "etl" is accepted`)

	admin := Principal{Name: "root", Role: RoleAdmin}
	require.NoError(t, q.Kill(t0.Add(ms), admin, "etl"))
	require.NoError(t, q.Forget("etl"))
	assert.Empty(t, q.Pending(), "a job forgotten is no longer pending (its capacity message was)")
	assert.Empty(t, p.Ready(), "nor are its messages kept")
	assert.ErrorIs(t, q.Forget("etl"), ErrUnknownJob)
	assert.ErrorIs(t, q.SetPriority(t0.Add(ms), admin, "etl", 10), ErrUnknownJob)
	assert.ErrorIs(t, q.Kill(t0.Add(ms), admin, "etl"), ErrUnknownJob)
	assert.Error(t, p.Handle(t0.Add(ms), slotpool.AskRelease{ID: 1}), "the old port refuses every message")
	require.NoError(t, q.checkInvariants())

	p2, err := q.Submit(t0.Add(2*ms), JobSpec{Name: "etl"})
	require.NoError(t, err, "the name is free again")
	assert.NotEqual(t, p.ID(), p2.ID(), "a new id")
	assert.Equal(t, JobAccepted, p2.State())
	require.NoError(t, q.checkInvariants())
}

// TestPropertyForgetChangesNothing: over random queue trees and job
// mixes, forgetting every job as soon as it ended changes no decision
// about the others (the same events, step by step), the invariants hold
// after every step, and at the end the admission keeps no job.
func TestPropertyForgetChangesNothing(t *testing.T) {
	for seed := *treeFirst; seed < *treeFirst+uint64(*treeMixes); seed++ {
		keep := randomTreeMixLimited(t, seed, FIFO, Priority, FairShare, StateAware)
		require.True(t, keep.run(0), "seed %d", seed)

		s := randomTreeMixLimited(t, seed, FIFO, Priority, FairShare, StateAware)
		forgotten := map[string]bool{}
		s.onStep = func() {
			for _, j := range s.jobs {
				if j.port == nil || forgotten[j.name] || !j.port.State().Terminal() || j.port.Pending() {
					continue
				}
				require.NoError(t, s.q.Forget(j.name), "seed %d: job %s", seed, j.name)
				forgotten[j.name] = true
			}
		}
		require.True(t, s.run(0), "seed %d: jobs did not finish: %v\n%s", seed, s.states(), s.tail(20))
		require.Equal(t, keep.log, s.log, "seed %d: forgetting ended jobs changed what happened to the others", seed)
		assert.Len(t, forgotten, len(s.jobs), "seed %d", seed)
		assert.Empty(t, s.q.byName, "seed %d", seed)
		for _, j := range s.q.jobs {
			assert.Nil(t, j, "seed %d", seed)
		}
	}
}

// TestForgetKeepsNothing: an admission that forgets every job once it
// ended keeps nothing of them but their ids, whatever the policy and the
// number of jobs it ran.
func TestForgetKeepsNothing(t *testing.T) {
	for _, policy := range []Policy{FIFO, Priority, FairShare, StateAware} {
		t.Run(policy.String(), func(t *testing.T) {
			q, err := New(Config{Slots: clusterSlots(2), DefaultPolicy: policy})
			require.NoError(t, err)
			now := t0
			for i := range 300 {
				name := fmt.Sprintf("job%d", i%3)
				p, err := q.Submit(now, JobSpec{Name: name, Priority: 1 + i%7})
				require.NoError(t, err, "job %d", i)
				q.Decide(now)
				now = now.Add(ms)
				require.NoError(t, p.Finished(now), "job %d", i)
				q.Decide(now)
				require.NoError(t, q.Forget(name), "job %d", i)
				require.NoError(t, q.checkInvariants(), "job %d", i)
			}
			assert.Empty(t, q.byName)
			assert.Empty(t, q.Pending())
			assert.Len(t, q.jobs, 300, "an id per job, never given again")
			for _, j := range q.jobs {
				assert.Nil(t, j)
			}
			for _, qu := range q.qorder {
				assert.Zero(t, qu.order.Len(), qu.cfg.Name)
				assert.Zero(t, qu.holders.Len(), qu.cfg.Name)
				assert.Empty(t, qu.reservers, qu.cfg.Name)
				assert.Empty(t, qu.startingJobs, qu.cfg.Name)
				assert.Empty(t, qu.jobs, qu.cfg.Name)
				assert.Empty(t, qu.claimants, qu.cfg.Name)
				for prio, n := range qu.prios {
					assert.Zero(t, n, "%s: priority %d", qu.cfg.Name, prio)
				}
			}
		})
	}
}
