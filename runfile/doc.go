// Package runfile is the files of a run: its inputs and its output, as
// the command-line tool reads and writes them (docs/job-file.md,
// docs/cli.md), so that a library user can read and write them too.
//
// The inputs are the jobs of a run (Job: a named job graph whose
// submission gives its arrival, queue, user, priority, driver and gang),
// the cluster file (DecodeCluster; a Cluster gives the slots with
// Counts and SlotNodes, the admission's queues with QueueConfigs and the
// users' roles with Roles) and the events file (ReadEvents: priority
// changes and kills, each a JobEvent). The output is the trace: one
// Event per line of JSON Lines, written by TraceWriter (or WriteTrace)
// and read back by TraceReader (or ReadTrace); and how the run ended, a
// Verdict.
//
// Every decoder is strict: field names must match exactly and only once,
// no field may be null (an optional field is left out for its default; a
// required one given null is missing), numbers must be in range, nothing
// may follow a value, and an error
// names where the problem is (the JSON path of a field of a cluster file;
// the file, line, column and field of a line of an events file or a
// trace) and what the valid values are, in the words of the file, never
// of Go. The errors are a *ClusterError for a cluster file and an
// *EventError for a line of an events file or a trace (its kind matched
// with errors.Is: ErrEventJSON, ErrEventMissing, ErrEventRange, ...).
//
// Package simulator runs the jobs and hands the trace events over as
// they happen; package timeline draws them. Reading or writing the files
// needs neither.
package runfile
