package scheduler

import (
	"errors"
	"fmt"
	"time"
)

// ErrCanceled is wrapped by the error of a job ended with Cancel.
var ErrCanceled = errors.New("scheduler: job canceled")

// CancelError is why a canceled job ended (Cancel's reason).
type CancelError struct {
	Reason error
}

// Error says the job was canceled and why.
func (e *CancelError) Error() string { return fmt.Sprintf("%v: %v", ErrCanceled, e.Reason) }

// Unwrap returns ErrCanceled and the reason.
func (e *CancelError) Unwrap() []error { return []error{ErrCanceled, e.Reason} }

// Cancel ends the job at time now (a kill, e.g. admission.Queues.Kill):
// every running task is canceled, waiting bulks are withdrawn and every
// slot goes back, as when a region fails; the job is failed with a
// *CancelError wrapping reason. The Ready says what to cancel and
// release.
//
// Errors: ErrNotRunning if the job already ended (nothing changes); a
// *TimeError if now is before an earlier call's time.
func (s *Scheduler) Cancel(now time.Time, reason error) error {
	if err := s.checkTime(now); err != nil {
		return err
	}
	if s.state == JobFinished || s.state == JobFailed {
		return ErrNotRunning
	}
	if reason == nil {
		reason = errors.New("canceled")
	}
	s.fail(now, &CancelError{Reason: reason})
	s.drain(now)
	return nil
}
