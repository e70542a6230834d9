package multijob

import (
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/scheduler"
)

// SetPriority changes a job's priority at time now, if by may: the
// admission authorizes and audits it (admission.Queues.SetPriority), and
// its next decision, in Ready, follows it.
//
// Errors: a *scheduler.TimeError (nothing changes); the admission's
// *admission.RefusedError, audited, for a change by may not make, a
// priority out of range, a job never submitted (admission.ErrUnknownJob)
// or one that ended (admission.ErrInvalidTransition).
func (s *Scheduler) SetPriority(now time.Time, by admission.Principal, name string, priority int) error {
	if err := s.checkTime(now); err != nil {
		return err
	}
	s.advance(now)
	return s.c.SetPriority(now, by, name, priority)
}

// Kill ends a job at time now, if by may (authorized and audited like
// SetPriority): its scheduler is canceled (the next Ready lists its tasks
// to cancel), its slots and its driver's go back to the admission, and the
// Ready reports it Killed with the *admission.KilledError.
//
// Errors: as SetPriority; a refused kill changes nothing but the audit.
func (s *Scheduler) Kill(now time.Time, by admission.Principal, name string) error {
	if err := s.checkTime(now); err != nil {
		return err
	}
	s.advance(now)
	if err := s.c.Authorize(by, admission.ActionKill, name, 0); err != nil {
		return s.c.Kill(now, by, name) // refused again, and audited
	}
	j, ok := s.byName[name]
	if !ok || j.end != nil { // cannot be: the admission knows it, and it runs
		return s.c.Kill(now, by, name)
	}
	if j.sched != nil && j.sched.State() != scheduler.JobFinished && j.sched.State() != scheduler.JobFailed {
		// Its tasks stop and its slots go back through its pool first, then
		// the admission ends it (a port that ended takes no more messages).
		j.closing = true
		if err := j.sched.Cancel(now, &admission.KilledError{Job: name, By: by}); err != nil {
			s.log.Debug("cancel refused", zap.String("job", name), zap.Error(err))
		}
		s.after(now, j)
	}
	if err := s.c.Kill(now, by, name); err != nil {
		return err
	}
	s.end(now, j, Killed, j.port.Err())
	return nil
}
