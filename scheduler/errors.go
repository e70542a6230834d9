package scheduler

import (
	"errors"
	"fmt"
	"time"

	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// Error messages of the library start with the name of the package that
// returns them ("scheduler: ", "strategy: ", "slotpool: "). An error of a
// layer below that the scheduler returns comes wrapped in an *OpError,
// which names the input; errors.Is and errors.As still reach the lower
// layer's sentinels and struct types through it (for example
// ErrInvalidTransition, *slotpool.SlotError). A report of an attempt a
// restart replaced is no error: it is ignored.

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotRunning means the call needs a started job that has not ended.
	ErrNotRunning = errors.New("scheduler: job is not running")
	// ErrAlreadyStarted means Start was called twice.
	ErrAlreadyStarted = errors.New("scheduler: job already started")
	// ErrJobFailed is wrapped by the error of a job that failed.
	ErrJobFailed = errors.New("scheduler: job failed")
	// ErrTimeWentBackwards is wrapped by a *TimeError.
	ErrTimeWentBackwards = errors.New("scheduler: time went backwards")
	// ErrStopped means the Driver was stopped (or its context canceled).
	ErrStopped = errors.New("scheduler: driver stopped")
	// ErrInvalidConfig is wrapped by a *ConfigError.
	ErrInvalidConfig = errors.New("scheduler: invalid config")
)

// ConfigError is a Config that Config.Validate refuses: a setting that
// contradicts the others or is out of range.
type ConfigError struct {
	// Field names the setting that contradicts the others, e.g.
	// "ExternalAdmission".
	Field string
	// Reason says why.
	Reason string
}

// Error renders e.g. "scheduler: invalid config: Pool.ReturnFreed: freed
// slots go back to an admission, and there is none".
func (e *ConfigError) Error() string {
	return fmt.Sprintf("%v: %s: %s", ErrInvalidConfig, e.Field, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// TimeError refuses an input whose time is before the time of an earlier
// input: a scheduler's clock never goes back. Nothing changed.
type TimeError struct {
	Now  time.Time // the time given
	Last time.Time // the latest time seen before
}

// Error says by how much, e.g. "scheduler: time went backwards: 250ms
// before the previous input".
func (e *TimeError) Error() string {
	return fmt.Sprintf("%v: %v before the previous input", ErrTimeWentBackwards, e.Last.Sub(e.Now))
}

// Unwrap returns ErrTimeWentBackwards.
func (e *TimeError) Unwrap() error { return ErrTimeWentBackwards }

// RegionError is why a job failed: a region could not be served (its bulk
// failed with a slotpool.NoResourceAvailableError, which Err wraps).
type RegionError struct {
	Region  region.ID
	Members string // "{A#0, B#0, ...}"
	Slots   int    // how many slots the region needs at once
	Err     error
}

// Error is ErrJobFailed's text followed by Reason, e.g. "scheduler: job
// failed: region 0 {A#0, ...} needs 4 slots at once; the cluster can never
// give them: missing 2 slots".
func (e *RegionError) Error() string { return fmt.Sprintf("%v: %s", ErrJobFailed, e.Reason()) }

// Reason names the region, what it needs and what is missing, without a
// prefix (for a verdict line).
func (e *RegionError) Reason() string {
	var nra *slotpool.NoResourceAvailableError
	if !errors.As(e.Err, &nra) {
		return fmt.Sprintf("region %d %s: %v", e.Region, e.Members, e.Err)
	}
	why := "the cluster can never give " + plural.Of(e.Slots, "it", "them")
	if !nra.Never {
		why = fmt.Sprintf("%s not become available within %v", plural.Of(e.Slots, "it did", "they did"), nra.Timeout)
	}
	return fmt.Sprintf("region %d %s needs %s at once; %s: missing %s", e.Region, e.Members,
		resource.Count{Profile: resource.Unknown, N: e.Slots}.Describe(), why, resource.Assignment{Missing: nra.Missing}.MissingString())
}

// Unwrap returns the cause; errors.Is(err, ErrJobFailed) also holds.
func (e *RegionError) Unwrap() []error { return []error{ErrJobFailed, e.Err} }

// OpError is an input that a layer below the scheduler refused. Nothing
// changed.
type OpError struct {
	// Op names the input: "offer", "task-finished", "slot-lost", ...
	Op string
	// Task names the task the input was about ("A#0"), if any.
	Task string
	// Err is the lower layer's error.
	Err error
}

// Error renders e.g. "scheduler: task-finished A#0: strategy: invalid
// execution state transition ...".
func (e *OpError) Error() string {
	if e.Task != "" {
		return fmt.Sprintf("scheduler: %s %s: %v", e.Op, e.Task, e.Err)
	}
	return fmt.Sprintf("scheduler: %s: %v", e.Op, e.Err)
}

// Unwrap returns the lower layer's error.
func (e *OpError) Unwrap() error { return e.Err }

// wrap wraps a lower layer's error in an *OpError (nil stays nil).
func (s *Scheduler) wrap(op string, v TaskID, err error) error {
	if err == nil {
		return nil
	}
	oe := &OpError{Op: op, Err: ownError(err)}
	if v >= 0 && int(v) < s.rs.Topology().NumExecutionVertices() {
		oe.Task = s.rs.Topology().VertexName(v)
	}
	return oe
}

// JobState is where the job is.
type JobState uint8

// The states of a job.
const (
	JobCreated  JobState = iota // Start not called yet
	JobRunning                  // started, not every region finished
	JobFinished                 // every region finished
	JobFailed                   // a region could not be served (see Err)
)

var jobStateNames = [...]string{"created", "running", "finished", "failed"}

// String returns "created", "running", "finished" or "failed".
func (s JobState) String() string {
	if int(s) < len(jobStateNames) {
		return jobStateNames[s]
	}
	return fmt.Sprintf("JobState(%d)", uint8(s))
}
