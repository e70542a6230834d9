package runcli

import "errors"

// The exit codes of the commands (docs/cli.md).
const (
	// ExitOK: every job finished, or was killed by the events file (or
	// the command did what it was asked).
	ExitOK = 0
	// ExitNegative: a negative verdict (a job failed, the run was
	// interrupted), printed once by the command.
	ExitNegative = 1
	// ExitBadInput: bad input or usage, or no cluster reachable.
	ExitBadInput = 2
)

// ExitError carries the exit code a command ends with.
type ExitError struct {
	// Code is the exit code: ExitNegative or ExitBadInput.
	Code int
	// Err is the cause, printed (but for a negative verdict) after the
	// command's path.
	Err error
}

// Error returns the message of the cause.
func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *ExitError) Unwrap() error { return e.Err }

// BadInput wraps err as bad input (ExitBadInput).
func BadInput(err error) error { return &ExitError{Code: ExitBadInput, Err: err} }

// Negative reports a negative verdict (ExitNegative). The command has
// already printed it, so nothing more is printed.
func Negative(verdict string) error {
	return &ExitError{Code: ExitNegative, Err: errors.New(verdict)}
}
