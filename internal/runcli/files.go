package runcli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// StdoutPath is the file name that means standard output for an output
// file (--trace, --svg).
const StdoutPath = "-"

// LoadJob reads and validates a job file; "-" is standard input. Every
// error is bad input naming the file.
func LoadJob(path string, stdin io.Reader) (*topology.JobGraph, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, BadInput(fmt.Errorf("job file: %w", err))
		}
		defer f.Close()
		r = f
	}
	g, err := topology.Decode(r)
	if err != nil {
		return nil, BadInput(fmt.Errorf("%s: %w", path, err))
	}
	return g, nil
}

// LoadJobs reads the job files of a run of several jobs. A job without a
// name is named after its file (JobNameOf); every error names the file.
func LoadJobs(paths []string, stdin io.Reader) ([]runfile.Job, error) {
	jobs := make([]runfile.Job, 0, len(paths))
	fileOf := map[string]string{}
	stdinUsed := false
	for _, path := range paths {
		if path == "-" && stdinUsed {
			return nil, BadInput(fmt.Errorf("- (standard input) is given twice as a job file: it can be read once"))
		}
		stdinUsed = stdinUsed || path == "-"
	}
	for _, path := range paths {
		g, err := LoadJob(path, stdin)
		if err != nil {
			return nil, err
		}
		name := g.Name()
		if name == "" {
			name = JobNameOf(path)
		}
		if other, dup := fileOf[name]; dup {
			return nil, BadInput(fmt.Errorf("job files %s and %s: both name the job %q; the jobs of a run need distinct names (field \"name\")", other, path, name))
		}
		fileOf[name] = path
		// Its submission fields (queue, user, priority, times) were
		// checked when the file was read.
		jobs = append(jobs, runfile.Job{Name: name, Job: g})
	}
	return jobs, nil
}

// JobNames lists the jobs' names, in order.
func JobNames(jobs []runfile.Job) []string {
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
	}
	return names
}

// JobNameOf names a job without a name after its file: "etl.json" is
// "etl", standard input "stdin".
func JobNameOf(path string) string {
	if path == "-" {
		return "stdin"
	}
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// ReadEvents reads the events file at path (runfile.ReadEvents) for the
// jobs named, priorities up to maxPriority: the error of a bad line is a
// *runfile.EventError naming the file, the line and the field.
func ReadEvents(path string, jobs []string, maxPriority int64) ([]runfile.JobEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--events: %w", err)
	}
	defer f.Close()
	evs, err := runfile.ReadEvents(f, path, jobs, maxPriority)
	var bad *runfile.EventError
	if err != nil && !errors.As(err, &bad) {
		return nil, fmt.Errorf("--events %s: %w", path, err)
	}
	return evs, err
}

// SummaryWriter is where a command's human-readable summary goes:
// standard output, unless one of outputs is StdoutPath, in which case it
// is standard error, so that standard output holds only that output.
func SummaryWriter(c *cobra.Command, outputs ...string) io.Writer {
	for _, o := range outputs {
		if o == StdoutPath {
			return c.ErrOrStderr()
		}
	}
	return c.OutOrStdout()
}

// WriteOutput writes an output file with write; StdoutPath is standard
// output.
func WriteOutput(c *cobra.Command, path string, write func(io.Writer) error) error {
	if path == StdoutPath {
		return write(c.OutOrStdout())
	}
	f, err := os.Create(path)
	if err != nil {
		return BadInput(fmt.Errorf("cannot write %s: %w", path, err))
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// JobQueueError is a job file whose "queue" names a queue with child
// queues (configured in the cluster file, or named by another job): jobs
// run in queues without children.
type JobQueueError struct {
	// Path is the job file.
	Path string
	// Err is the admission's *admission.ParentQueueError.
	Err *admission.ParentQueueError
}

// Error names the file, the field, the queue and its child.
func (e *JobQueueError) Error() string {
	return fmt.Sprintf("%s: job file field \"queue\": queue %s has the child queue %s and may not hold job %q: jobs run in queues without children (name one, e.g. %s)",
		e.Path, e.Err.Queue, e.Err.Child, e.Err.Job, e.Err.Child)
}

// Unwrap returns the admission's error (errors.Is admission.ErrParentQueue).
func (e *JobQueueError) Unwrap() error { return e.Err }

// CheckJobQueues refuses, as bad input naming the job file and its field
// "queue", jobs (read from paths, in order) one of which names a queue
// that has child queues among queues (the queues configured) or the
// queues the jobs name: jobs run in queues without children.
func CheckJobQueues(paths []string, jobs []runfile.Job, queues []admission.QueueConfig) error {
	names, jqs := make([]string, len(jobs)), make([]string, len(jobs))
	for i, j := range jobs {
		names[i], jqs[i] = j.Name, j.Job.Submission().Queue
	}
	err := admission.CheckJobQueues(queues, names, jqs)
	if err == nil {
		return nil
	}
	var pe *admission.ParentQueueError
	if errors.As(err, &pe) {
		for i, j := range jobs {
			if j.Name == pe.Job && i < len(paths) {
				return BadInput(&JobQueueError{Path: paths[i], Err: pe})
			}
		}
	}
	return BadInput(err)
}
