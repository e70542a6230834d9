// Package summary writes the summary a run of jobs ends with, the same
// lines whether the jobs ran in virtual time (regionsched simulate) or on
// a cluster (regionsched run --slurm, --kubernetes): one line per job,
// the figures (makespan, slot utilization, held waiting, drivers, region
// deployments, restarts, reclaims, queues) and the verdict.
//
// The simulator computes its figures itself; a run on a cluster computes
// them with an Accumulator from the trace events it produces, so that the
// figures mean the same on every backend (docs/cli.md says how each one
// is measured on a real run).
//
// It depends on the files of a run (package runfile) and the admission's
// types only: the command and the runners' front end (package runcli)
// both import it, and it imports neither.
package summary
