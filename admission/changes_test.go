package admission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

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

// The scenario: in this time order a user raises their own job
// above 5000 (refused), an admin raises it (accepted), a user changes
// another user's job (refused). The audit has exactly those three records,
// accepted false/true/false, in time order; the jobs all finish; the
// raised job, pending behind the other under priority, goes first.
func TestSetPriorityAuditAndOrder(t *testing.T) {
	var audit bytes.Buffer
	s := newSim(t, Config{Slots: clusterSlots(1), Queues: []QueueConfig{{Name: "root.default", Policy: Priority}},
		Audit: NewJSONLinesAudit(&audit, t0)}, simConfig{checks: true, record: true})
	s.add(JobSpec{Name: "running", User: "carol"}, 0, []int{1}, []time.Duration{100 * ms}, 1, 0)
	s.add(JobSpec{Name: "mine", User: "bob", Priority: 3000}, 1*ms, []int{1}, []time.Duration{10 * ms}, 1, 0)
	s.add(JobSpec{Name: "theirs", User: "carol", Priority: 4000}, 1*ms, []int{1}, []time.Duration{10 * ms}, 1, 0)
	require.False(t, s.run(10*ms))
	bob, alice := Principal{"bob", RoleUser}, Principal{"alice", RoleAdmin}
	assert.ErrorIs(t, s.q.SetPriority(t0.Add(20*ms), bob, "mine", 6000), ErrNotAuthorized)
	require.NoError(t, s.q.SetPriority(t0.Add(30*ms), alice, "mine", 9000))
	assert.ErrorIs(t, s.q.SetPriority(t0.Add(40*ms), bob, "theirs", 100), ErrNotAuthorized)
	require.True(t, s.run(0), s.tail(20))
	assert.Less(t, s.byName["mine"].firstDeploy, s.byName["theirs"].firstDeploy, "raised above the other pending job")

	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	require.Len(t, lines, 3, audit.String())
	var recs []auditLine
	for _, l := range lines {
		var r auditLine
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		recs = append(recs, r)
	}
	assert.Equal(t, []bool{false, true, false}, []bool{recs[0].Accepted, recs[1].Accepted, recs[2].Accepted})
	assert.Equal(t, []int64{20, 30, 40}, []int64{recs[0].T, recs[1].T, recs[2].T})
	assert.Equal(t, 3000, *recs[0].Old)
	assert.Equal(t, 6000, *recs[0].New)
	assert.Contains(t, recs[0].Reason, "1 ... 5000")
	assert.Equal(t, "alice", recs[1].By)
	assert.Equal(t, "admin", recs[1].Role)
	assert.Contains(t, recs[2].Reason, "their own jobs")
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

// Kill: the job's slots go back at once, it fails with a *KilledError,
// the others finish; a kill by someone else's user is refused and audited.
func TestKill(t *testing.T) {
	var audit bytes.Buffer
	s := newSim(t, Config{Slots: clusterSlots(2), Audit: NewJSONLinesAudit(&audit, t0)}, simConfig{checks: true, record: true})
	s.add(JobSpec{Name: "adhoc", User: "bob"}, 0, []int{2, 2}, uniform(2, time.Second), 1, 0)
	s.add(JobSpec{Name: "etl", User: "alice"}, 0, []int{2}, uniform(1, 10*ms), 1, 0)
	require.False(t, s.run(50*ms))
	assert.ErrorIs(t, s.q.Kill(s.now, Principal{"alice", RoleUser}, "adhoc"), ErrNotAuthorized)
	require.NoError(t, s.q.Kill(s.now, Principal{"bob", RoleUser}, "adhoc"))
	p := s.byName["adhoc"].port
	assert.Equal(t, JobFailed, p.State())
	var ke *KilledError
	require.ErrorAs(t, p.Err(), &ke)
	assert.Equal(t, "bob", ke.By.Name)
	assert.Zero(t, p.Granted())
	s.byName["adhoc"].done = true // the runtime cancels its tasks
	require.True(t, s.run(0), s.tail(20))
	assert.Equal(t, JobCompleted, s.byName["etl"].port.State())
	assert.Equal(t, 2, strings.Count(audit.String(), "\n"))
	assert.Contains(t, audit.String(), `"action":"kill"`)
	assert.ErrorIs(t, s.q.Kill(s.now, Principal{"bob", RoleUser}, "adhoc"), ErrInvalidTransition, "already ended")
	assert.ErrorIs(t, s.q.Kill(s.now, Principal{"bob", RoleUser}, "nope"), ErrUnknownJob)
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
