package runcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/runfile"
)

// Flags are the flags every run on a cluster takes.
type Flags struct {
	// TraceFile is --trace ("": none, StdoutPath: standard output).
	TraceFile string
	// Scale is --duration-scale, the factor of every task's duration.
	Scale float64
	// Timeout is --timeout: the run is given up (and everything of it
	// deleted) after this long.
	Timeout time.Duration
	// Verbose is --verbose: warnings logged on standard error.
	Verbose bool
	// EventsFile and AuditFile are --events and --audit ("": none).
	EventsFile, AuditFile string
	// SVGFile is --svg ("": none, StdoutPath: standard output): the
	// timeline picture of the run, drawn from its trace.
	SVGFile string
	// ColorBy is --color-by: what the picture's colours stand for
	// (ParseColorBy).
	ColorBy string
}

// Add adds the flags to c: eventsHelp and auditHelp say what the events
// and the audit are on the backend.
func (f *Flags) Add(c *cobra.Command, eventsHelp, auditHelp string) {
	c.Flags().StringVar(&f.TraceFile, "trace", "", "write the trace as JSON Lines to FILE (- for standard output; the summary then goes to standard error)")
	c.Flags().Float64Var(&f.Scale, "duration-scale", 1, "multiply every task's durationMs by this factor (0 < f)")
	c.Flags().DurationVar(&f.Timeout, "timeout", 30*time.Minute, "give up (and cancel everything) after this long")
	SetValid(c.Flags(), "duration-scale", "a number more than 0")
	SetValid(c.Flags(), "timeout", "a duration of more than 0, such as 30m or 90s")
	c.Flags().BoolVar(&f.Verbose, "verbose", false, "log the admission's outages and refusals on standard error")
	c.Flags().StringVar(&f.EventsFile, "events", "", eventsHelp)
	c.Flags().StringVar(&f.AuditFile, "audit", "", auditHelp)
	c.Flags().StringVar(&f.SVGFile, "svg", "", "draw the timeline of the run, in real time, as SVG to FILE (- for standard output; the summary then goes to standard error)")
	c.Flags().StringVar(&f.ColorBy, "color-by", "auto", ColorByHelp)
}

// Backend is what runs the jobs on one kind of cluster.
type Backend struct {
	// Name names the cluster in the picture's title ("Slurm"); "" names
	// none.
	Name string
	// MaxPriority is the highest priority of the events file.
	MaxPriority int64
	// Mode is the exchange mode of the jobs' edges that pin none: the
	// summary of a run of one job counts its regions under it.
	Mode exchange.Mode
	// ClusterSlotIDs says that the trace's slot ids are the cluster's,
	// not numbered per job (summary.Accumulator.ClusterSlotIDs).
	ClusterSlotIDs bool
	// Check, if set, checks the backend's own flags before any file is
	// read; its error is bad input.
	Check func() error
	// Queues, if set, returns the queues of the run's own admission (the
	// cluster file's, none configured: nil), called after Check: a job
	// that names a queue with children is bad input naming its file, as
	// simulate says it. Unset: the cluster admits the jobs by itself.
	Queues func() []admission.QueueConfig
	// Prepare, if set, checks what needs the jobs, once the job files are
	// read and before the events file is; its error is bad input.
	Prepare func(jobs []runfile.Job) error
	// Run runs the jobs until every one ended or ctx is done (SIGINT,
	// SIGTERM, --timeout) and returns how each ended, in the order of the
	// jobs, and what the summary needs of the cluster; by then nothing of
	// the run may be left on the cluster. An error means nothing ran (bad
	// input, no cluster reachable).
	Run func(ctx context.Context, in Input) (Result, error)
	// Interrupted is the line printed after a run SIGINT or SIGTERM
	// ended: what was done about the cluster.
	Interrupted string
}

// Input is what Backend.Run gets.
type Input struct {
	Jobs []runfile.Job
	// Scale multiplies every task's duration (> 0).
	Scale float64
	// Timeout is --timeout (ctx ends then).
	Timeout time.Duration
	// Events are the priority changes and kills of --events, At since the
	// start of the run.
	Events []runfile.JobEvent
	// Trace receives the trace events (one at a time), At since the
	// start of the run.
	Trace func(runfile.Event)
	// Audit, nil without --audit, receives one line per priority change.
	Audit func(AuditLine)
	// Logger is nil without --verbose: the backend logs nothing then.
	Logger *zap.Logger
	// Summary is where the human-readable lines go as they happen.
	Summary io.Writer
	// Several says the run is one of several jobs in simulate's sense
	// (several job files, --events, --audit, --queue-policy or queues of
	// the backend): its summary has a line per job and every trace event
	// names its job, even with one job file.
	Several bool
}

// AuditLine is one line of --audit: a priority change asked, and whether
// the cluster (or the admission) applied it.
type AuditLine struct {
	// T is when the change was asked or judged, in ms since the start;
	// By who asked it, for job Job.
	T   int64  `json:"t"`
	By  string `json:"by"`
	Job string `json:"job"`
	// SlurmJob is the Slurm job changed (Slurm only).
	SlurmJob int64 `json:"slurmJob,omitempty"`
	// Old and New are the priorities before and as asked; Accepted
	// whether it was applied, and Reason why not.
	Old      int64  `json:"old"`
	New      int64  `json:"new"`
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason,omitempty"`
}

// Execute is the run command of a backend over its flags f: it reads the
// job files of args and the events file, starts the run on a context
// that SIGINT, SIGTERM and --timeout end, writes the trace and the audit,
// and prints the summary of simulate: one line per job (for several), the
// figures the trace events give, and the verdict.
func (f *Flags) Execute(c *cobra.Command, args []string, stdin io.Reader, b Backend) error {
	if !(f.Scale > 0) { // 0 is 1 to the backends: not a value to accept here
		return BadInput(fmt.Errorf("--duration-scale must be positive, not %v", f.Scale))
	}
	if f.Timeout <= 0 {
		return BadInput(fmt.Errorf("--timeout must be positive, not %v", f.Timeout))
	}
	color, err := ParseColorBy(f.ColorBy)
	if err != nil {
		return err
	}
	if f.TraceFile == StdoutPath && f.SVGFile == StdoutPath {
		return BadInput(errors.New("--trace - and --svg -: only one output can go to standard output"))
	}
	if b.Check != nil {
		if err := b.Check(); err != nil {
			return BadInput(err)
		}
	}
	jobs, err := LoadJobs(args, stdin)
	if err != nil {
		return err
	}
	if b.Prepare != nil {
		if err := b.Prepare(jobs); err != nil {
			return BadInput(err)
		}
	}
	if b.Queues != nil {
		if err := CheckJobQueues(args, jobs, b.Queues()); err != nil {
			return err
		}
	}
	in := Input{Jobs: jobs, Scale: f.Scale, Timeout: f.Timeout, Several: len(jobs) > 1 || f.EventsFile != "" || f.AuditFile != ""}
	if qp := c.Flags().Lookup("queue-policy"); qp != nil && qp.Changed {
		in.Several = true
	}
	if b.Queues != nil && len(b.Queues()) > 0 {
		in.Several = true
	}
	if f.EventsFile != "" {
		if in.Events, err = ReadEvents(f.EventsFile, JobNames(jobs), b.MaxPriority); err != nil {
			return BadInput(err)
		}
	}
	if f.Verbose {
		in.Logger = StderrLogger(c.ErrOrStderr())
	}
	// SIGINT and SIGTERM end the run: the backend deletes what the run
	// holds on the cluster before the command exits.
	sigCtx, stopSignals := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	ctx, cancel := context.WithTimeout(sigCtx, f.Timeout)
	defer cancel()
	if f.AuditFile != "" {
		file, err := os.Create(f.AuditFile)
		if err != nil {
			return BadInput(fmt.Errorf("cannot write %s: %w", f.AuditFile, err))
		}
		defer file.Close()
		enc := json.NewEncoder(file)
		var mu sync.Mutex
		in.Audit = func(l AuditLine) {
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(l)
		}
	}
	in.Summary = SummaryWriter(c, f.TraceFile, f.SVGFile)
	var pic *runPicture
	if f.SVGFile != "" {
		pic = newRunPicture(color, jobs)
		defer pic.rec.Close()
	}
	var res Result
	// The summary's figures come from the trace events, whether or not
	// they are written (--trace): every backend's the same way.
	acc := summary.NewAccumulator(JobNames(jobs), JobQueues(jobs))
	if b.ClusterSlotIDs {
		acc.ClusterSlotIDs()
	}
	write := func(w io.Writer) error {
		tw := runfile.NewTraceWriter(w)
		in.Trace = func(e runfile.Event) {
			tw.Event(e)
			acc.Event(e)
			if pic != nil {
				pic.event(e)
			}
		}
		var err error
		if res, err = b.Run(ctx, in); err != nil {
			return BadInput(err) // nothing ran: bad input, or no cluster reachable
		}
		return tw.Flush()
	}
	if f.TraceFile != "" {
		err = WriteOutput(c, f.TraceFile, write)
	} else {
		err = write(io.Discard)
	}
	if err != nil {
		return err
	}
	sum := newRunSummary(b, jobs, res, acc, in.Several)
	if pic != nil {
		if err := pic.write(c, f.SVGFile, b.Name, jobs, sum); err != nil {
			return err
		}
	}
	if sigCtx.Err() != nil {
		fmt.Fprintln(in.Summary, b.Interrupted)
	}
	return sum.print(in.Summary)
}

// Outcome is how one job of a run ended.
type Outcome struct {
	Name string
	// Err is nil when the job finished; an *admission.KilledError when
	// the events file killed it, an *admission.RejectedError when it was
	// rejected, Result.Deadlock when it never finished.
	Err error
	// End is when it ended, since the start of the run.
	End time.Duration
	// Work says what ran of the job, on the backend's terms: "12 task
	// runs as Slurm steps in 2 allocations, ..." ("": nothing to say).
	Work string
}

// Result is how a run on a cluster ended: what Backend.Run returns.
type Result struct {
	// Jobs are the jobs' outcomes, in the order of the jobs.
	Jobs []Outcome
	// Slots is the number of slots of the cluster the run had (the slot
	// time of the summary's figures is the run's time times Slots).
	Slots int
	// Admission says how the jobs were admitted, for the summary's first
	// line ("admission by Slurm", "queue policy fifo").
	Admission string
	// Queues are the queues configured, with their guarantees and
	// maximums (none when the cluster decides alone); a run with some is
	// summed up as a run of several jobs, as in simulate.
	Queues []admission.QueueConfig
	// DefaultPolicy is the policy of the queues the run's admission
	// creates, those the jobs name that Queues does not configure (when
	// Queues configures some).
	DefaultPolicy admission.Policy
	// WithdrawnSlots counts the slots of reclaims withdrawn before their
	// timeout (the trace has the reclaims, not their withdrawals).
	WithdrawnSlots int
	// Events say what became of each event of the events file (applied,
	// or refused and why), in the order they were applied.
	Events []summary.EventOutcome
	// Restarts are the failovers of the jobs' schedulers, in order, if
	// RestartsRecorded: the trace shows a failed task, but not which
	// regions its failover restarted, nor that a slot lost or reclaimed
	// restarted any (its tasks are cancelled, as are the other tasks its
	// failover stops). Without them the summary counts the trace's fail
	// events.
	Restarts         []summary.Restart
	RestartsRecorded bool
	// Deadlock, if not nil, says why the jobs that did not end never
	// would (its message the verdict: "deadlock: ..."); their Err is it.
	Deadlock error
}

// Count is "1 job", "2 jobs": n and the noun, plural when n is not 1.
func Count(n int, noun string) string { return plural.Count(n, noun) }

// StderrLogger logs warnings and above on w, one line each, without
// stack traces.
func StderrLogger(w io.Writer) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.StacktraceKey = ""
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(w), zap.WarnLevel)
	return zap.New(core)
}
