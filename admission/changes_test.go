package admission

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The authorization matrix: a user sets 1 ... 5000 on their own jobs and
// kills them; an admin sets 1 ... 10000 on any job and kills any; no role,
// another user's job, a user above 5000 and any priority outside 1 ...
// 10000 are refused with a *RefusedError naming the reason.
func TestAuthorizationMatrix(t *testing.T) {
	alice, bob, admin, nobody := Principal{"alice", RoleUser}, Principal{"bob", RoleUser}, Principal{"root", RoleAdmin}, Principal{Name: "eve"}
	for _, c := range []struct {
		by     Principal
		action Action
		prio   int
		ok     bool
		err    error
	}{
		{alice, ActionSetPriority, 1, true, nil},
		{alice, ActionSetPriority, 5000, true, nil},
		{alice, ActionSetPriority, 5001, false, ErrNotAuthorized},
		{alice, ActionSetPriority, 0, false, ErrBadPriority},
		{alice, ActionKill, 0, true, nil},
		{bob, ActionSetPriority, 10, false, ErrNotAuthorized},
		{bob, ActionKill, 0, false, ErrNotAuthorized},
		{admin, ActionSetPriority, 10000, true, nil},
		{admin, ActionSetPriority, 10001, false, ErrBadPriority},
		{admin, ActionKill, 0, true, nil},
		{nobody, ActionSetPriority, 10, false, ErrNotAuthorized},
		{nobody, ActionKill, 0, false, ErrNotAuthorized},
	} {
		t.Run(fmt.Sprintf("%s-%v-%d", c.by.Name, c.action, c.prio), func(t *testing.T) {
			err := authorize(c.by, c.action, "etl", "alice", c.prio)
			if c.ok {
				assert.NoError(t, err)
				return
			}
			var re *RefusedError
			require.ErrorAs(t, err, &re)
			assert.ErrorIs(t, err, c.err)
			assert.Equal(t, "etl", re.Job)
			assert.Contains(t, err.Error(), `job "etl" by `+c.by.Name)
		})
	}
	_, err := ParseRole("operator")
	assert.ErrorIs(t, err, ErrUnknownRole)
	r, err := ParseRole("Admin")
	require.NoError(t, err)
	assert.Equal(t, RoleAdmin, r)
}

// Fair share: raising a running job's priority gives it a larger share
// from the next decisions on.
func TestSetPriorityChangesFairShare(t *testing.T) {
	s, a, b := fairShareSim(t, 12)
	require.False(t, s.run(300*ms))
	a0, b0 := a.slotTime, b.slotTime
	require.False(t, s.run(1300*ms))
	before := float64(b.slotTime-b0) / float64(a.slotTime-a0)
	require.NoError(t, s.q.SetPriority(s.now, Principal{"root", RoleAdmin}, "one", 9000)) // one: 1000 -> 9000, three stays 3000
	require.False(t, s.run(1600*ms))
	a1, b1 := a.slotTime, b.slotTime
	require.False(t, s.run(2600*ms))
	after := float64(a.slotTime-a1) / float64(b.slotTime-b1)
	t.Logf("three:one before %.2f, one:three after %.2f", before, after)
	assert.InEpsilon(t, 3.0, before, 0.10)
	assert.InEpsilon(t, 3.0, after, 0.15, "one now has three times three's priority")
}

// A job submitted with a priority outside 1 ... 10000 is refused.
func TestSubmitPriorityRange(t *testing.T) {
	q, err := New(Config{Slots: clusterSlots(1)})
	require.NoError(t, err)
	for _, p := range []int{-1, 10001} {
		_, err := q.submit(t0, JobSpec{Name: fmt.Sprint("p", p), Priority: p})
		assert.ErrorIs(t, err, ErrBadPriority, "priority %d", p)
	}
}
