package scheduler

import (
	"errors"
	"fmt"

	"github.com/regionsched/regionsched/region"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotRunning means the call needs a started job that has not ended.
	ErrNotRunning = errors.New("scheduler: job is not running")
	// ErrAlreadyStarted means Start was called twice.
	ErrAlreadyStarted = errors.New("scheduler: job already started")
	// ErrJobFailed is wrapped by the error of a job that failed.
	ErrJobFailed = errors.New("job failed")
)

// RegionError is why a job failed: a region could not be served (its bulk
// failed with a slotpool.NoResourceAvailableError, which Err wraps).
type RegionError struct {
	Region  region.ID
	Members string // "{A#0, B#0, ...}"
	Err     error
}

// Error names the region and the cause.
func (e *RegionError) Error() string {
	return fmt.Sprintf("%v: region %d %s: %v", ErrJobFailed, e.Region, e.Members, e.Err)
}

// Unwrap returns the cause; errors.Is(err, ErrJobFailed) also holds.
func (e *RegionError) Unwrap() []error { return []error{ErrJobFailed, e.Err} }
