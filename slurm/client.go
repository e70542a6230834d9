package slurm

import (
	"context"
	"io"
)

// slurmClient runs Slurm's commands for the Adapter. Every method returns a
// *CommandError on failure, wrapping ErrUnreachable when slurmctld did not
// answer (or the call timed out), ErrPermissionDenied or ErrRejected when
// Slurm refused.
type slurmClient interface {
	// submit submits req as a job named name and returns its id (of a
	// heterogeneous job: the leader's).
	submit(ctx context.Context, name string, req jobRequest) (JobID, error)
	// Cancel cancels job (with job 0: every job named name).
	Cancel(ctx context.Context, name string, job JobID) error
	// query returns the states of the jobs with these names, finished
	// ones included (while Slurm remembers them).
	query(ctx context.Context, names []string) ([]jobStatus, error)
	// partition describes the partition name ("" for the default one).
	partition(ctx context.Context, name string) (partition, error)
	// setPriority sets a job's priority, running the command as the user
	// principal ("" for the client's own identity).
	setPriority(ctx context.Context, principal string, job JobID, priority int64) error
	// runStep runs argv as a job step of one task in a granted slot and
	// waits until it ends or ctx is done (which stops it). A step that did
	// not start fails with ErrUnreachable or ErrStepRefused.
	runStep(ctx context.Context, p Placement, argv []string, stdout, stderr io.Writer) error
}
