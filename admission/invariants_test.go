package admission

import (
	"testing"

	"github.com/regionsched/regionsched/resource"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckInvariantsFindsViolations: CheckInvariants passes on a
// consistent admission and names what is wrong in a broken one.
func TestCheckInvariantsFindsViolations(t *testing.T) {
	setup := func(t *testing.T) (*Queues, *port, *port) {
		q, err := New(Config{Slots: clusterSlots(4), Queues: defaultQueue})
		require.NoError(t, err)
		a, err := q.submit(t0, JobSpec{Name: "a"})
		require.NoError(t, err)
		ask(t, a, t0, 1, 3)
		b, err := q.submit(t0, JobSpec{Name: "b"})
		require.NoError(t, err)
		ask(t, b, t0, 1, 2)
		require.NoError(t, q.checkInvariants(), "a holds 3 of 4 slots, b waits for 2")
		return q, a, b
	}
	for name, c := range map[string]struct {
		breakIt func(q *Queues)
		want    string
	}{
		"free counter": {func(q *Queues) { q.nFree++ }, "nFree says"},
		"slot in two places": {func(q *Queues) {
			a := q.jobs[0]
			a.held = append(a.held, a.held[0])
		}, "is in two places"},
		"granted count": {func(q *Queues) { q.jobs[0].granted++ }, "is counted 4 slots but owns 3"},
		"idle slot beside a waiting job": {func(q *Queues) {
			idx := q.jobs[0].held[0]
			q.unhold(q.jobs[0], idx)
			q.addGranted(q.jobs[0], -1)
			q.updateHolder(q.jobs[0])
			q.put(idx) // b's ask of 2 now fits the free slots, undecided
		}, "while job b"},
		"reservation for a claim that cannot complete": {func(q *Queues) {
			b := q.jobs[1]
			q.reserveFor(b, q.take(q.slots[q.free[0][0]].profile, 1)[0]) // 1 of the 2 it lacks, nothing coming
		}, "which they cannot complete"},
	} {
		t.Run(name, func(t *testing.T) {
			q, _, _ := setup(t)
			c.breakIt(q)
			err := q.checkInvariants()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestCheckInvariantsFindsBrokenReclaimAndDriverRules: CheckInvariants
// names a reclaim made for a job its queue held back earlier in the
// instant, a reclaim for a driver whose first regions never fit beside
// the other drivers.
func TestCheckInvariantsFindsBrokenReclaimAndDriverRules(t *testing.T) {
	drv := small
	t.Run("reclaim after being held back in the instant", func(t *testing.T) {
		q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue})
		require.NoError(t, err)
		a, err := q.submit(t0, JobSpec{Name: "a"})
		require.NoError(t, err)
		ask(t, a, t0, 1, 1)
		require.NoError(t, q.checkInvariants())
		j := q.jobs[0]
		q.markHeldBack(j)
		q.stamp++
		j.reclaimAt, j.reclaimed, j.reclaimStamp = t0, true, q.stamp
		err = q.checkInvariants()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "job a reclaimed slots")
		assert.Contains(t, err.Error(), "held it back earlier in that instant")
	})
	t.Run("reclaim for a driver that cannot progress", func(t *testing.T) {
		q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue})
		require.NoError(t, err)
		_, err = q.submit(t0, JobSpec{Name: "low", Driver: &drv, Start: []resource.Count{{Profile: resource.Unknown, N: 1}}})
		require.NoError(t, err)
		_, err = q.submit(t0, JobSpec{Name: "high", Driver: &drv, Start: []resource.Count{{Profile: resource.Unknown, N: 1}}})
		require.NoError(t, err)
		q.Decide(t0)
		require.NoError(t, q.checkInvariants(), "two drivers on two slots: nobody reclaimed")
		high := q.jobs[1]
		q.stamp++
		high.reclaimAt, high.reclaimed, high.driverReclaim, high.reclaimStamp = t0, true, true, q.stamp
		err = q.checkInvariants()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "job high reclaimed slots for its driver")
		assert.Contains(t, err.Error(), "never fit beside the other jobs' drivers")
	})
}

// TestCheckInvariantsFindsADriverThatTookAnInstantsSlot: CheckInvariants
// names a driver granted, while its first regions could not follow, a
// slot that a request waiting then would have been served with, the
// other slot being freed by the same instant's input; not one whose
// other slot came back later as the answer to a reclaim, nor one given
// back by a job the admission asked a slot of at that instant.
func TestCheckInvariantsFindsADriverThatTookAnInstantsSlot(t *testing.T) {
	drv := small
	for _, tc := range []struct {
		name  string
		input bool // the other slot comes free by an input of the instant
		// askedBack: the admission asked a slot of its job back at this
		// instant: the release answers that (a Reclaim, a bulk stopped by
		// a Revoke), whatever it looks like.
		askedBack bool
	}{
		{"the other slot freed by an input of the instant", true, false},
		{"the other slot back as a reclaim's answer", false, false},
		{"the other slot given back by a job asked for a slot at this instant", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := New(Config{Slots: clusterSlots(2), Queues: defaultQueue})
			require.NoError(t, err)
			a, err := q.submit(t0, JobSpec{Name: "a"})
			require.NoError(t, err)
			ask(t, a, t0, 1, 2)
			q.Decide(t0)
			now := t0.Add(ms)
			_, err = q.submit(now, JobSpec{Name: "d", Driver: &drv, Start: []resource.Count{{Profile: resource.Unknown, N: 2}}})
			require.NoError(t, err)
			b, err := q.submit(now, JobSpec{Name: "b"})
			require.NoError(t, err)
			ask(t, b, now, 1, 2)
			// One slot of a's comes back, the driver takes it (the other
			// is still a's), then a's other slot comes back.
			held := q.jobs[0].held
			first, second := held[0], held[1]
			q.now = now
			q.release(q.jobs[0], first)
			d := q.jobs[1]
			require.True(t, q.serve(d), "the driver takes the one free slot (nothing it could yield to)")
			require.True(t, d.hasSlot)
			if tc.askedBack {
				q.jobs[0].askedBackAt = now
			}
			q.release(q.jobs[0], second)
			if !tc.input {
				q.slots[second].freedInput = false
			}
			err = q.checkDriversDecided()
			if !tc.input || tc.askedBack {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "the driver of job d took slot")
			assert.Contains(t, err.Error(), "job b waits for ask 1")
		})
	}
}
