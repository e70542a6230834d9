package multijob

import (
	"errors"
	"fmt"
)

// Error messages start with "multijob: ". An error of a layer below (the
// admission's, a job's scheduler's) comes wrapped in a *JobError naming
// the job and the input; errors.Is and errors.As still reach the lower
// layer's sentinels and struct types through it (admission.ErrUnknownQueue,
// *scheduler.OpError, ...). A time before an earlier input's is refused
// with a *scheduler.TimeError, as a job's scheduler refuses it.

// Sentinel errors, matched with errors.Is.
var (
	// ErrUnknownJob means no job of that name was submitted.
	ErrUnknownJob = errors.New("multijob: unknown job")
	// ErrDuplicateJob means a job of that name was submitted already.
	ErrDuplicateJob = errors.New("multijob: duplicate job")
	// ErrBadSpec means a JobSpec that cannot be submitted (no name, no
	// regions, a bad gang).
	ErrBadSpec = errors.New("multijob: bad job spec")
	// ErrBadConfig means a Config that New refuses (a *ConfigError names
	// the field).
	ErrBadConfig = errors.New("multijob: bad config")
	// ErrJobEnded means the job finished, failed, was killed or rejected:
	// it takes no more reports.
	ErrJobEnded = errors.New("multijob: job ended")
	// ErrAlreadyStarted means StartJob for a job that started (a job
	// without a driver starts when it is submitted).
	ErrAlreadyStarted = errors.New("multijob: job already started")
	// ErrNoDriverSlot means StartJob for a job whose driver has no slot
	// yet: the admission grants it first (an admission.DriverGranted
	// event), then the runtime deploys the driver and starts the job.
	ErrNoDriverSlot = errors.New("multijob: the job's driver has no slot yet")
	// ErrStopped means the Driver was stopped (or its context canceled).
	ErrStopped = errors.New("multijob: driver stopped")
	// ErrSpeculationCluster means a JobSpec with speculation on, submitted
	// to a Scheduler over a Cluster that does not grant speculative asks
	// (admission.GrantsSpeculative; a Slurm cluster, Config.Cluster): such
	// a cluster decides who gets a slot by itself and cannot tell whether
	// a regular ask of another job waits for it, so no speculative
	// attempt could be granted one without perhaps taking it from a
	// waiting region.
	ErrSpeculationCluster = errors.New("multijob: speculation needs a cluster that grants speculative asks, such as the in-process admission (Config.Admission): this one cannot tell whether a regular ask waits for a slot")
)

// JobError is an input about one job that was refused. Nothing changed.
type JobError struct {
	// Op names the input: "submit", "start", "task-finished", ...
	Op string
	// Job names the job.
	Job string
	// Err is why: a sentinel of this package or a lower layer's error.
	Err error
}

// Error renders e.g. `multijob: task-finished job "etl": multijob: job
// ended`.
func (e *JobError) Error() string {
	return fmt.Sprintf("multijob: %s job %q: %v", e.Op, e.Job, e.Err)
}

// Unwrap returns the cause.
func (e *JobError) Unwrap() error { return e.Err }

// ConfigError is a Config that New refuses: Field names the culprit
// ("Jobs.Admission"), Err says why (wrapping ErrBadConfig). Nothing was
// created.
type ConfigError struct {
	Field string
	Err   error
}

// Error renders e.g. `multijob: config Jobs.Logger: multijob: bad config:
// each job logs to Config.Logger.Named(its name)`.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("multijob: config %s: %v", e.Field, e.Err)
}

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }
