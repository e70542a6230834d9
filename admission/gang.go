package admission

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/resource"
)

// Gang reserves slots for a job all at once before anything of it runs
// (YuniKorn's gang scheduling with placeholders).
type Gang struct {
	// MinSlots is how many slots to reserve, the driver's included
	// (region.Regions.GangMinSlots derives it from the job).
	MinSlots int
	// Profile is the profile of each placeholder; Unknown (the zero
	// value) takes any slot. A request of the job uses a placeholder only
	// if the placeholder's slot serves it.
	Profile resource.Profile
	// Hard fails the job when the reservation times out; otherwise (soft)
	// the job falls back to normal admission, after a requeue backoff.
	Hard bool
	// Timeout is how long the reservation may take, from the job's
	// submission (its arrival); 0 means DefaultGangTimeout, NoGangWait
	// that the gang is reserved at the job's arrival or times out at once.
	Timeout time.Duration
}

// DefaultGangTimeout is the reservation timeout of a gang that sets none
// (YuniKorn's default of 15 minutes).
const DefaultGangTimeout = 15 * time.Minute

// NoGangWait is the Timeout of a gang that does not wait for its slots
// (a job file's "timeoutMs": 0): it is reserved by the decision of the
// instant the job arrives, or its timer fires at that same instant (the
// runtime calls Tick at NextDeadline, which is then the arrival): a hard
// gang fails its job, a soft one falls back to normal admission at once,
// without the requeue backoff (it never held a claim that could thrash
// its queue). A gang reserved at arrival keeps, like any other, only the
// placeholders its job swapped for real tasks when its timer fires.
const NoGangWait time.Duration = -1

// Backoff is the requeue backoff of soft gangs that timed out (Kueue's
// lesson: a job that timed out must not thrash its queue): the n-th
// timeout of a job makes it wait Base * 2^(n-1), at most Cap, before it
// competes again.
type Backoff struct {
	Base, Cap time.Duration
}

// DefaultBackoff is used when Config.Backoff is zero.
var DefaultBackoff = Backoff{Base: 10 * time.Second, Cap: 10 * time.Minute}

// delay is the wait after the n-th timeout (n >= 1).
func (b Backoff) delay(n int) time.Duration {
	d := b.Base
	for i := 1; i < n && d < b.Cap; i++ {
		d *= 2
	}
	return min(d, b.Cap)
}

// ErrGangTimeout is wrapped by GangTimeoutError.
var ErrGangTimeout = errors.New("admission: gang reservation timed out")

// GangTimeoutError is why a job with a hard gang failed: its slots could
// not be reserved in time.
type GangTimeoutError struct {
	Job      string
	MinSlots int
	Timeout  time.Duration
}

// Error names the job and the gang.
func (e *GangTimeoutError) Error() string {
	if e.Timeout == 0 {
		return fmt.Sprintf("admission: job %q: its gang of %s could not be reserved at its arrival (hard gang with timeout 0): timed out", e.Job, plural.Count(e.MinSlots, "slot"))
	}
	return fmt.Sprintf("admission: job %q: its gang of %s could not be reserved within %v (hard gang): timed out", e.Job, plural.Count(e.MinSlots, "slot"), e.Timeout)
}

// Unwrap returns ErrGangTimeout.
func (e *GangTimeoutError) Unwrap() error { return ErrGangTimeout }

// gangWaits reports whether j still waits for its gang reservation.
func (j *job) gangWaits() bool { return j.spec.Gang != nil && !j.gangDone }

// gangNeed is what j's gang reservation asks for.
func (j *job) gangNeed() []resource.Count {
	return []resource.Count{{Profile: j.spec.Gang.Profile, N: j.spec.Gang.MinSlots}}
}

// gangStartFits reports whether j's driver, once its gang is reserved,
// could start: with its first regions it fits the room its queues'
// maxima leave (startFitsRoom; the placeholders come out of that room).
// A gang reserved when it does not would hold its placeholders idle
// while the driver waits for room that the jobs beside it, kept from
// the placeholders' slots, may never give back.
func (q *Queues) gangStartFits(j *job) bool {
	return !j.driver || j.hasSlot || q.startFitsRoom(j)
}

// reserveGang takes j's whole gang from the slots j may have (free ones
// and those its claim reserved) as placeholders, or nothing; it reports
// whether it did.
func (q *Queues) reserveGang(j *job) bool {
	need := j.gangNeed()
	avail, prof := q.availableTo(j, need)
	a := q.assign(need, avail)
	if !a.Complete() {
		return false
	}
	for _, pair := range a.Pairs {
		for _, idx := range q.takeFor(j, prof[pair.Slot], pair.N) {
			s := &q.slots[idx]
			s.state, s.owner, s.claimant = slotPlaceholder, j.id, noJob
			j.placeholders = append(j.placeholders, idx)
			q.addGranted(j, 1)
			q.nPlaceholders++
			q.pin(idx, 1)
		}
	}
	q.dropClaim(j)
	j.gangDone = true
	q.firstGrant(j)
	if q.debug {
		q.log.Debug("gang reserved", zap.String("job", j.spec.Name), zap.Int("slots", len(j.placeholders)))
	}
	return true
}

// releasePlaceholders gives back j's unused placeholders.
func (q *Queues) releasePlaceholders(j *job, why string) {
	if len(j.placeholders) == 0 {
		return
	}
	if q.debug {
		q.log.Debug("placeholders released", zap.String("job", j.spec.Name), zap.Int("slots", len(j.placeholders)), zap.String("why", why))
	}
	q.event(Event{At: q.now, Job: j.spec.Name, ID: j.id, Kind: PlaceholdersReleased,
		Reason: fmt.Sprintf("%s: %s", plural.Count(len(j.placeholders), "placeholder"), why)})
	for _, idx := range j.placeholders {
		q.pin(idx, -1)
		q.put(idx)
		q.addGranted(j, -1)
	}
	q.nPlaceholders -= len(j.placeholders)
	j.placeholders = j.placeholders[:0]
	q.stamp++
	j.placeholdersStamp = q.stamp
	q.unpark(j)
	q.unreserved = true // other jobs may use them in this pass
}

// gangTimers fires the gang timeouts due at now: an unreserved hard gang
// fails its job, an unreserved soft one falls back to normal admission
// after the requeue backoff; a reserved gang's unused placeholders go
// back; a job whose backoff is over competes again. It reports whether
// anything changed. It visits only the jobs with a gang (Queues.gangJobs),
// and forgets those with nothing left to time.
func (q *Queues) gangTimers(now time.Time) bool {
	changed := false
	for _, j := range q.gangJobs {
		if !j.notBefore.IsZero() && !now.Before(j.notBefore) {
			j.notBefore = time.Time{} // its backoff is over: it competes again
			changed = true
		}
		g := j.spec.Gang
		if g == nil || j.state.Terminal() || j.gangExpired || now.Before(j.gangDeadline) {
			continue
		}
		j.gangExpired = true
		q.stamp++
		j.gangStamp = q.stamp
		changed = true
		switch {
		case j.gangDone:
			q.releasePlaceholders(j, "gang timeout")
		case g.Hard:
			q.end(now, j, &GangTimeoutError{Job: j.spec.Name, MinSlots: g.MinSlots, Timeout: j.gangDeadline.Sub(j.submit)})
		case g.Timeout == NoGangWait:
			j.gangDone = true // it never waited: normal admission at once
			q.dropClaim(j)
			q.updateOrder(j) // the smallest grant it may take is its smallest ask now, not its gang
			if q.debug {
				q.log.Debug("soft gang not reservable at arrival: normal admission", zap.String("job", j.spec.Name))
			}
		default:
			j.gangDone = true
			j.timeouts++
			j.notBefore = now.Add(q.backoff.delay(j.timeouts))
			q.dropClaim(j)
			q.updateOrder(j)
			if q.debug {
				q.log.Debug("soft gang timed out: normal admission after the backoff", zap.String("job", j.spec.Name), zap.Time("from", j.notBefore))
			}
		}
	}
	q.gangJobs = slices.DeleteFunc(q.gangJobs, func(j *job) bool {
		return j.state.Terminal() || (j.gangExpired && j.notBefore.IsZero())
	})
	return changed
}

// nextGangTimer returns the earliest gang timeout or backoff end.
func (q *Queues) nextGangTimer() (at time.Time, ok bool) {
	for _, j := range q.gangJobs {
		if j.state.Terminal() {
			continue
		}
		if j.spec.Gang != nil && !j.gangExpired && (!ok || j.gangDeadline.Before(at)) {
			at, ok = j.gangDeadline, true
		}
		if !j.notBefore.IsZero() && j.notBefore.After(q.now) && (!ok || j.notBefore.Before(at)) {
			at, ok = j.notBefore, true
		}
	}
	return at, ok
}

// checkPlaceholders reports (once per ask) an ask of j that none of its
// placeholders can serve while it has some: a request larger than its
// gang's placeholders.
func (q *Queues) checkPlaceholders(j *job, a *jobAsk) {
	if len(j.placeholders) == 0 || a.mismatchReported {
		return
	}
	ph := q.profiles[q.slots[j.placeholders[0]].profile]
	for _, c := range a.left {
		if c.N > 0 && !q.cfg.Matching.Serves(ph, c.Profile) {
			a.mismatchReported = true
			why := fmt.Sprintf("ask %d needs %s, larger than its placeholders %v", a.id, c.Describe(), ph)
			q.log.Warn("placeholder size mismatch", zap.String("job", j.spec.Name), zap.String("why", why))
			q.event(Event{At: q.now, Job: j.spec.Name, ID: j.id, Kind: PlaceholderMismatch, Reason: why})
			return
		}
	}
}
