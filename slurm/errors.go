package slurm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/regionsched/regionsched/slotpool"
)

// The sentinel errors; the struct errors below wrap them (errors.Is).
var (
	// ErrTooLarge: an ask needs more than the partition could ever hold.
	ErrTooLarge = errors.New("larger than the partition")
	// ErrUnreachable: slurmctld did not answer (it is down, or the call
	// timed out).
	ErrUnreachable = errors.New("slurm controller unreachable")
	// ErrPermissionDenied: Slurm refused a change to the caller.
	ErrPermissionDenied = errors.New("permission denied by slurm")
	// ErrRejected: Slurm refused a request for another reason (its message
	// says why).
	ErrRejected = errors.New("rejected by slurm")
	// ErrStepRefused: Slurm did not start a job step ("Unable to create
	// step"): the allocation is gone, or busy for a moment (right after a
	// controller restart, 22.05 refuses steps for a few seconds with
	// "Memory required by task is not available").
	ErrStepRefused = errors.New("step not started by slurm")
	// ErrBadOutput: a command's output could not be read.
	ErrBadOutput = errors.New("unreadable slurm output")
	// ErrUnknownJob: the job is not one of this admission's.
	ErrUnknownJob = errors.New("unknown job")
	// ErrBadConfig: a configuration value is invalid.
	ErrBadConfig = errors.New("invalid configuration")
)

// TooLargeError says which ask cannot fit which partition, and why.
type TooLargeError struct {
	Ask slotpool.AskID
	// Region names what asked, when known ("region 0 A, B"): then the
	// error names it instead of the ask.
	Region    string
	Partition string
	// Need and Have describe the resource that is short ("17 CPUs" and
	// "16 CPUs", "a slot of 8 CPUs" and "nodes of at most 4 CPUs").
	Need, Have string
	// Unavailable lists the partition's nodes that could not count, as
	// NAME (STATE): drained, down or failed ones.
	Unavailable []string
}

// Error names the ask, the partition, what is short and the nodes out
// of service.
func (e *TooLargeError) Error() string {
	out := ""
	if len(e.Unavailable) > 0 {
		out = " (out of service: " + strings.Join(e.Unavailable, ", ") + ")"
	}
	what := fmt.Sprintf("ask %d", e.Ask)
	if e.Region != "" {
		what = e.Region
	}
	return fmt.Sprintf("slurm: %s needs %s, partition %q has %s%s: %v", what, e.Need, e.Partition, e.Have, out, ErrTooLarge)
}

// Unwrap returns ErrTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// CommandError is a Slurm command that failed: its name and arguments,
// what it wrote on standard error, and the cause (ErrUnreachable,
// ErrPermissionDenied, ErrRejected, ErrBadOutput, or the process error).
type CommandError struct {
	Command string
	Args    []string
	Stderr  string
	Err     error
}

// Error names the command, its arguments and Slurm's message.
func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("slurm: %s %s: %v (%s)", e.Command, strings.Join(e.Args, " "), e.Err, msg)
}

// Unwrap returns the cause.
func (e *CommandError) Unwrap() error { return e.Err }

// OutageError is what the Adapter reports while slurmctld is unreachable:
// what it was doing, since when, how many attempts failed, and the last
// error (which wraps ErrUnreachable).
type OutageError struct {
	Op       string
	Attempts int
	Err      error
}

// Error names the operation and how many attempts failed.
func (e *OutageError) Error() string {
	return fmt.Sprintf("slurm: %s failed %d times, retrying with backoff: %v", e.Op, e.Attempts, e.Err)
}

// Unwrap returns the last error.
func (e *OutageError) Unwrap() error { return e.Err }

// PriorityError is a priority change Slurm refused: who asked, for which
// job, and Slurm's answer (wrapping ErrPermissionDenied when it is a
// matter of rights).
type PriorityError struct {
	Principal string
	Job       JobID
	Priority  int64
	Err       error
}

// Error names who asked, the job and the priority.
func (e *PriorityError) Error() string {
	return fmt.Sprintf("slurm: %s may not set the priority of job %d to %d: %v", e.Principal, e.Job, e.Priority, e.Err)
}

// Unwrap returns the cause.
func (e *PriorityError) Unwrap() error { return e.Err }

// ConfigError names an invalid configuration field.
type ConfigError struct {
	Field, Value, Why string
}

// Error names the field and why its value is invalid.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("slurm: %s %q: %s: %v", e.Field, e.Value, e.Why, ErrBadConfig)
}

// Unwrap returns ErrBadConfig.
func (e *ConfigError) Unwrap() error { return ErrBadConfig }

// classify maps a Slurm command's standard error to a cause. Slurm's
// messages are stable across versions for these cases.
func classify(stderr string) error {
	s := strings.ToLower(stderr)
	switch {
	case strings.Contains(s, "unable to contact slurm controller"),
		strings.Contains(s, "socket timed out"),
		strings.Contains(s, "connection refused"),
		strings.Contains(s, "slurm backup controller in standby mode"):
		return ErrUnreachable
	case strings.Contains(s, "access/permission denied"),
		strings.Contains(s, "invalid user id"),
		strings.Contains(s, "not persistent"), // an ordinary user's priority change (22.05)
		strings.Contains(s, "permission denied"):
		return ErrPermissionDenied
	}
	return ErrRejected
}
