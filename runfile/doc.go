// Package runfile is the files of a run: its inputs and its output, as
// the command-line tool reads and writes them (docs/job-file.md,
// docs/cli.md) and as a library user can read and write them too.
//
// The inputs are the jobs of a run (Job: a named job graph whose
// submission gives its arrival, queue, user, priority, driver and gang),
// the cluster file (DecodeCluster: the slots, the queues and the users)
// and the events file (ReadEvents: priority changes and kills at their
// times, JobEvent). The output is the trace: one Event per line of JSON
// Lines, written by TraceWriter (or WriteTrace) and read back by
// ReadTrace, and the Verdict of the run.
//
// Every decoder is strict: field names must match exactly and only once,
// numbers must be in range, nothing may follow a value, and an error
// names where the problem is (the JSON path of a field of the cluster
// file; the line, column and field of an events or trace file) and what
// the valid values are, in the words of the file, never of Go. Errors
// are of the types ClusterError, EventError and TraceError, matched with
// errors.As, and EventError's kinds with errors.Is.
//
// Package simulator runs the jobs and hands the trace events over as
// they happen; package timeline draws them. Neither is needed to read or
// write the files.
package runfile
