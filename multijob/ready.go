package multijob

import (
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/scheduler"
)

// Ready is everything the Scheduler asks of the runtime, and tells an
// observer, since the previous Ready: the admission's decision over the
// inputs in between, and what the jobs' schedulers made of it.
//
// The slices of a Ready (Jobs, Events, Ended, and the slices of each job's
// scheduler.Ready) are valid until the next call of Scheduler.Ready, and
// read-only; copy what you keep (Clone copies it all).
//
// A slot one job gives up may go to another in the same Ready, so apply it
// in this order: every job's Cancel (and PartitionsReleased); the drivers
// of the Ended jobs stop; then every job's Deploy; then the drivers of the
// admission.DriverGranted events start (StartJob once each is up).
type Ready struct {
	// Jobs lists, in submission order, the jobs whose schedulers have
	// something for the runtime: each job's scheduler.Ready.
	Jobs []JobReady
	// Events are the admission's events, in order: state changes (with
	// rejections), drivers granted, placeholders released, and whatever
	// else the admission reports.
	Events []admission.Event
	// Ended lists the jobs that ended, in the order they ended: finished,
	// failed, killed or rejected, and why. An ended job's slots are back
	// with the admission; its driver (if any) is to be stopped.
	Ended []JobEnd
	// Deadline is when Tick next has work to do, as of this Ready; the
	// zero time if none.
	Deadline time.Time
}

// Empty reports whether rd has nothing for the runtime (the deadline
// aside).
func (rd *Ready) Empty() bool {
	return len(rd.Jobs) == 0 && len(rd.Events) == 0 && len(rd.Ended) == 0
}

// Clone returns a copy of rd whose slices are the caller's, valid after
// the next call of Ready (each job's Ready is a scheduler.Ready.Clone).
func (rd Ready) Clone() Ready {
	c := rd
	c.Jobs = slices.Clone(rd.Jobs)
	for i := range c.Jobs {
		c.Jobs[i].Ready = c.Jobs[i].Ready.Clone()
	}
	c.Events = slices.Clone(rd.Events)
	c.Ended = slices.Clone(rd.Ended)
	return c
}

// JobReady is one job's scheduler.Ready, tagged with the job's name. Its
// task, region and slot ids are the job's own (the slot ids are the
// admission's).
type JobReady struct {
	// Job names the job.
	Job string
	// Ready is what its scheduler asks of the runtime.
	scheduler.Ready
}

// Outcome says how a job ended.
type Outcome uint8

// The ways a job ends.
const (
	// Finished: every region of the job finished.
	Finished Outcome = iota + 1
	// Failed: a region could not be served (a *scheduler.RegionError), or
	// the admission failed the job (a hard gang that timed out: an
	// *admission.GangTimeoutError).
	Failed
	// Killed: Kill ended it (an *admission.KilledError).
	Killed
	// Rejected: it can never run in its queue (an *admission.RejectedError).
	Rejected
)

var outcomeNames = [...]string{"", "finished", "failed", "killed", "rejected"}

// String returns "finished", "failed", "killed" or "rejected".
func (o Outcome) String() string {
	if o > 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// JobEnd is how a job ended: Err is nil if it finished, else why.
type JobEnd struct {
	// Job names the job.
	Job string
	// Outcome says how it ended.
	Outcome Outcome
	// Err is why it did not finish: a *scheduler.RegionError, an
	// *admission.GangTimeoutError, an *admission.KilledError or an
	// *admission.RejectedError; nil if it finished.
	Err error
	// At is the time of the input that ended it.
	At time.Time
}

// Ready decides and hands out what accumulated since the previous call.
// Call it once every input of an instant is in (in real time, once per
// turn of the loop: Driver does): the admission grants by its queues'
// policies over everything waiting, the jobs' pools take the grants (their
// regions deploy), the jobs that finished or failed are told to the
// admission, and it decides again until nothing moves. It never fails;
// its time is the latest input's. What it returns is valid until the next
// call (see Ready).
func (s *Scheduler) Ready() Ready {
	now := s.now
	for {
		s.c.Decide(now)
		progressed := false
		for _, ev := range s.c.Events() {
			s.events = append(s.events, ev)
			progressed = s.onEvent(now, ev) || progressed
		}
		for _, id := range s.c.Pending() {
			j := s.byID[id]
			if j == nil || j.end != nil || !j.port.Pending() {
				continue
			}
			if err := j.sched.Admit(now); err != nil {
				s.log.Warn("a job's scheduler refused the admission's messages", zap.String("job", j.spec.Name), zap.Error(err))
			}
			s.after(now, j)
			progressed = true
		}
		if !progressed || s.decisionCut(now) {
			break
		}
	}
	// The lists handed out by the previous call are no longer read: they
	// collect the next Ready. Each job's scheduler.Ready is asked for once
	// per call (a job is in dirty once), so it stays valid until the next.
	rd := Ready{Events: s.events, Ended: s.ended, Jobs: s.spare.Jobs[:0]}
	s.events, s.ended = clearEmpty(s.spare.Events), clearEmpty(s.spare.Ended)
	clear(s.spare.Jobs)
	slices.SortFunc(s.dirty, func(a, b *job) int { return a.idx - b.idx })
	for _, j := range s.dirty {
		j.dirty = false
		if j.sched != nil && j.sched.HasReady() {
			rd.Jobs = append(rd.Jobs, JobReady{Job: j.spec.Name, Ready: j.sched.Ready()})
		}
	}
	clear(s.dirty)
	s.dirty = s.dirty[:0]
	s.spare = rd
	rd.Jobs, rd.Events, rd.Ended = nilIfEmpty(rd.Jobs), nilIfEmpty(rd.Events), nilIfEmpty(rd.Ended)
	if t, ok := s.NextDeadline(); ok {
		rd.Deadline = t
	}
	return rd
}

// decisionCut reports whether the admission left the rest of the instant
// to the next Ready: it granted a driver whose job starts at once
// (admission.JobSpec.StartAtOnce), and decides the rest once the runtime
// started the job (StartJob) and its first regions ask. Its deadline is
// then the instant itself (any other deadline due fired in Decide).
func (s *Scheduler) decisionCut(now time.Time) bool {
	t, ok := s.c.NextDeadline()
	return ok && !t.After(now)
}

// onEvent follows an event of the admission; it reports whether the
// admission has to decide again.
func (s *Scheduler) onEvent(now time.Time, ev admission.Event) bool {
	j := s.byID[ev.ID]
	if j == nil || j.end != nil || ev.Kind != admission.StateChanged || !ev.To.Terminal() {
		return false
	}
	// The admission ended a job that runs (a hard gang that timed out):
	// whatever of it holds slots stops.
	err := j.port.Err()
	if j.sched != nil && len(j.sched.Status().Deployed) > 0 {
		j.closing = true
		if cerr := j.sched.Cancel(now, err); cerr != nil {
			s.log.Debug("cancel refused", zap.String("job", j.spec.Name), zap.Error(cerr))
		}
	}
	s.end(now, j, Failed, err)
	return true
}

// clearEmpty returns l emptied, its entries zeroed (it keeps nothing
// alive).
func clearEmpty[T any](l []T) []T {
	clear(l)
	return l[:0]
}

// nilIfEmpty returns l, or nil if it is empty: an empty list of a Ready
// is nil, as in a Ready built by hand.
func nilIfEmpty[T any](l []T) []T {
	if len(l) == 0 {
		return nil
	}
	return l
}
