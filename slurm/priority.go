package slurm

import "time"

// AuditRecord is one priority change asked of Slurm, applied or refused.
type AuditRecord struct {
	At time.Time
	// Principal is the user the change ran as.
	Principal string
	// Job is the Slurm job; RuntimeJob the job it allocates for
	// ("" from an Adapter).
	Job        JobID
	RuntimeJob string
	// Old is the priority last observed (0 if none yet), New the one
	// asked for.
	Old, New int64
	Accepted bool
	// Reason is Slurm's refusal, or the priority Slurm reports instead
	// ("" when accepted).
	Reason string
}

// Auditor receives every priority change of an Adapter, accepted or
// refused, after Slurm answered (a run's go to RunConfig.Audit). It is
// called from the caller's goroutine of Adapter.SetPriority and must not
// block for long. The in-process admission's audit sink can be wrapped
// into one.
type Auditor func(AuditRecord)
