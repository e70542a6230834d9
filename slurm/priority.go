package slurm

import "time"

// AuditRecord is one priority change asked of Slurm, applied or refused.
type AuditRecord struct {
	At time.Time
	// Principal is the user the change ran as.
	Principal string
	// Job is the Slurm job (0 for a change never asked of Slurm: the job
	// ended first); RuntimeJob the job it allocates for ("" if none).
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

// auditor receives every priority change of an adapter or a
// slurmCluster, accepted or refused, after Slurm answered (a run's go to
// RunConfig.Audit). It is called from the goroutine that asked for the
// change and must not block for long.
type auditor func(AuditRecord)
