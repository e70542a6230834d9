package runcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/plural"
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
	// Check, if set, checks the backend's own flags before any file is
	// read; its error is bad input.
	Check func() error
	// Prepare, if set, checks what needs the jobs, once the job files are
	// read and before the events file is; its error is bad input.
	Prepare func(jobs []runfile.Job) error
	// Run runs the jobs until every one ended or ctx is done (SIGINT,
	// SIGTERM, --timeout) and returns how each ended, in the order of the
	// jobs; by then nothing of the run may be left on the cluster. An
	// error means nothing ran (bad input, no cluster reachable).
	Run func(ctx context.Context, in Input) ([]Outcome, error)
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
// and prints the jobs' outcomes and the verdict (PrintOutcomes).
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
	in := Input{Jobs: jobs, Scale: f.Scale, Timeout: f.Timeout}
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
	var outcomes []Outcome
	write := func(w io.Writer) error {
		tw := runfile.NewTraceWriter(w)
		in.Trace = tw.Event
		if pic != nil {
			in.Trace = func(e runfile.Event) {
				tw.Event(e)
				pic.event(e)
			}
		}
		var err error
		if outcomes, err = b.Run(ctx, in); err != nil {
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
	if pic != nil {
		if err := pic.write(c, f.SVGFile, b.Name, jobs, outcomes); err != nil {
			return err
		}
	}
	if sigCtx.Err() != nil {
		fmt.Fprintln(in.Summary, b.Interrupted)
	}
	return PrintOutcomes(in.Summary, outcomes)
}

// Outcome is how one job of a run ended.
type Outcome struct {
	Name string
	// Err is nil when the job finished.
	Err error
	// FirstDeploy is when its first task started and End when it ended,
	// since the start of the run.
	FirstDeploy, End time.Duration
	// Work says what ran of a finished job, on the backend's terms:
	// "12 task runs as Slurm steps in 2 allocations, ...".
	Work string
}

// PrintOutcomes writes one line per job and the verdict; a failed job is
// a negative verdict. A job killed by the events file (an
// *admission.KilledError) ended as asked, as in simulate: it is no
// failure of the run.
func PrintOutcomes(w io.Writer, outcomes []Outcome) error {
	failed := false
	for _, o := range outcomes {
		if ke := (*admission.KilledError)(nil); errors.As(o.Err, &ke) {
			fmt.Fprintf(w, "job %s: killed at %s: by %s\n", o.Name, Millis(o.End), ke.By.Name)
			continue
		}
		if o.Err != nil {
			fmt.Fprintf(w, "job %s: failed after %s: %v\n", o.Name, Millis(o.End), o.Err)
			failed = true
			continue
		}
		fmt.Fprintf(w, "job %s: finished at %s (first deploy %s): %s\n", o.Name, Millis(o.End), Millis(o.FirstDeploy), o.Work)
	}
	verdict := verdictLine(outcomes)
	fmt.Fprintln(w, verdict)
	if failed {
		return Negative(verdict)
	}
	return nil
}

// verdictLine is the verdict of a run: "finished: every job" (and the
// jobs killed, if any), or "failed: " and the jobs that failed.
func verdictLine(outcomes []Outcome) string {
	var failed, killed []string
	for _, o := range outcomes {
		switch {
		case errors.As(o.Err, new(*admission.KilledError)): // (as PrintOutcomes)
			killed = append(killed, o.Name)
		case o.Err != nil:
			failed = append(failed, o.Name)
		}
	}
	if len(failed) > 0 {
		return "failed: " + strings.Join(failed, ", ")
	}
	if len(killed) > 0 {
		return "finished: every job but the killed " + strings.Join(killed, ", ")
	}
	return "finished: every job"
}

// Millis formats a duration as whole milliseconds: "1500ms".
func Millis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

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
