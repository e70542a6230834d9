package admission

import (
	"errors"
	"fmt"
)

// JobState is where a job (YuniKorn's application) is in its life.
type JobState uint8

// The states of a job, after YuniKorn's application states. A job is
// New until the admission has looked at it; Accepted while it waits in its
// queue for its first grant; Starting from its first grant (its driver's
// slot, or its first region's slots) until its first region is fully
// deployed or the queue's starting timeout passes; Running then;
// Completing once the runtime says it finished, until its slots are back;
// Completed. Failing and Failed are the same for a job that failed;
// Rejected is a job that can never run in its queue.
const (
	JobNew JobState = iota
	JobAccepted
	JobStarting
	JobRunning
	JobCompleting
	JobCompleted
	JobFailing
	JobFailed
	JobRejected
)

var jobStateNames = [...]string{"new", "accepted", "starting", "running", "completing", "completed", "failing", "failed", "rejected"}

// String returns the lower-case name, e.g. "starting".
func (s JobState) String() string {
	if int(s) < len(jobStateNames) {
		return jobStateNames[s]
	}
	return fmt.Sprintf("JobState(%d)", uint8(s))
}

// Terminal reports whether the state is final.
func (s JobState) Terminal() bool { return s == JobCompleted || s == JobFailed || s == JobRejected }

// jobTransitions[from] is the set of states (a bit per state) a job may
// move to from `from`.
var jobTransitions = [...]uint16{
	JobNew:        1<<JobAccepted | 1<<JobRejected,
	JobAccepted:   1<<JobStarting | 1<<JobFailing | 1<<JobCompleting,
	JobStarting:   1<<JobRunning | 1<<JobFailing | 1<<JobCompleting,
	JobRunning:    1<<JobCompleting | 1<<JobFailing,
	JobCompleting: 1 << JobCompleted,
	JobCompleted:  0,
	JobFailing:    1 << JobFailed,
	JobFailed:     0,
	JobRejected:   0,
}

// CanMove reports whether a job in state from may move to state to.
func CanMove(from, to JobState) bool {
	return int(from) < len(jobTransitions) && int(to) < 16 && jobTransitions[from]&(1<<to) != 0
}

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalidTransition: a job state change its state does not allow.
	ErrInvalidTransition = errors.New("admission: invalid job state transition")
	// ErrUnknownJob: no job of that name or id.
	ErrUnknownJob = errors.New("admission: unknown job")
	// ErrDuplicateJob: a job of that name was already submitted.
	ErrDuplicateJob = errors.New("admission: duplicate job")
	// ErrUnknownQueue: a job names a queue that is not configured (and
	// Config.CreateQueues is off).
	ErrUnknownQueue = errors.New("admission: unknown queue")
	// ErrUnknownPolicy: a queue policy name that does not exist.
	ErrUnknownPolicy = errors.New("admission: unknown queue policy")
	// ErrBadLimit: a negative limit or timeout in a queue's configuration.
	ErrBadLimit = errors.New("admission: bad queue limit")
	// ErrBadQueueName: a queue name that is not "root" or "root." followed
	// by dot-separated non-empty parts, or one configured twice.
	ErrBadQueueName = errors.New("admission: bad queue name")
	// ErrRejected is wrapped by the reason of a job that can never run.
	ErrRejected = errors.New("admission: job rejected")
)

// TransitionError refuses a job state change.
type TransitionError struct {
	Job      string
	From, To JobState
}

// Error names the job and both states.
func (e *TransitionError) Error() string {
	return fmt.Sprintf("%v: job %q from %v to %v", ErrInvalidTransition, e.Job, e.From, e.To)
}

// Unwrap returns ErrInvalidTransition.
func (e *TransitionError) Unwrap() error { return ErrInvalidTransition }

// RejectedError says why a job can never run in its queue: its driver
// plus its largest region does not fit the queue's slots.
type RejectedError struct {
	Job    string
	Queue  string
	Reason string // e.g. "region 3 needs 6 slots at once with the driver; the queue has 4 slots: missing 2 slots"
}

// Error names the job, the queue and the reason.
func (e *RejectedError) Error() string {
	return fmt.Sprintf("%v: job %q in queue %s: %s", ErrRejected, e.Job, e.Queue, e.Reason)
}

// Unwrap returns ErrRejected.
func (e *RejectedError) Unwrap() error { return ErrRejected }

// ConfigError names a bad value of a queue's configuration.
type ConfigError struct {
	Queue string // the queue, e.g. "root.etl"
	Field string // e.g. "policy", "maxRunningJobs"
	Value string
	Err   error // ErrUnknownPolicy, ErrBadLimit, ...
}

// Error renders e.g. `admission: queue root.etl: policy "fast": unknown
// queue policy (valid: fifo, priority, fairshare, stateaware)`.
func (e *ConfigError) Error() string {
	msg := fmt.Sprintf("admission: queue %s: %s %q: %v", e.Queue, e.Field, e.Value, e.Err)
	if errors.Is(e.Err, ErrUnknownPolicy) {
		msg += " (valid: fifo, priority, fairshare, stateaware)"
	}
	return msg
}

// Unwrap returns the sentinel.
func (e *ConfigError) Unwrap() error { return e.Err }
