package scheduler

import (
	"errors"
	"fmt"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
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
	Slots   int    // how many slots the region needs at once
	Err     error
}

// Error names the region, what it needs and what is missing, e.g.
// "job failed: region 0 {A#0, ...} needs 4 slots at once; the cluster can
// never give them: missing 2 slots".
func (e *RegionError) Error() string {
	var nra *slotpool.NoResourceAvailableError
	if !errors.As(e.Err, &nra) {
		return fmt.Sprintf("%v: region %d %s: %v", ErrJobFailed, e.Region, e.Members, e.Err)
	}
	why := "the cluster can never give them"
	if !nra.Never {
		why = fmt.Sprintf("they did not become available within %v", nra.Timeout)
	}
	return fmt.Sprintf("%v: region %d %s needs %s at once; %s: missing %s", ErrJobFailed, e.Region, e.Members,
		resource.Count{Profile: resource.Unknown, N: e.Slots}.Describe(), why, resource.Assignment{Missing: nra.Missing}.MissingString())
}

// Unwrap returns the cause; errors.Is(err, ErrJobFailed) also holds.
func (e *RegionError) Unwrap() []error { return []error{ErrJobFailed, e.Err} }
