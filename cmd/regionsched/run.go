package main

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

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/slurm"
)

// The run command runs job files for real on a Slurm cluster with
// slurm.Run (every region's bulk an allocation, every task a job step in
// its slot's allocation, on its slot's node, that sleeps for the vertex's
// durationMs): it parses the flags, reads the files and prints.

func newRunCommand(stdin io.Reader, mode *modeFlag) *cobra.Command {
	o := &runOptions{}
	c := &cobra.Command{
		Use:   "run --slurm [--mode M] [--partition P] [--queue-partition Q=P ...] [--trace FILE] JOB [JOB ...]",
		Short: "Run jobs for real on a Slurm cluster: every region's bulk an allocation, every task a job step",
		Long: `run executes job files on a Slurm cluster (the one SLURM_CONF names, or --slurm-conf).
The jobs share the cluster through the multi-job scheduler with Slurm as its admission:
each job has its own scheduler, every region's bulk becomes one all-or-nothing Slurm job
that holds an allocation, and every task runs as a step in its slot's allocation on its
slot's node (srun --overlap), sleeping for its vertex's durationMs (times
--duration-scale). Slurm decides who gets the cluster; a job starts at its submitAtMs,
and its queue picks the partition (--queue-partition, else --partition). One poller
serves the whole run: one squeue per poll whatever the number of jobs.

Nothing is left behind: SIGINT and SIGTERM cancel every allocation of the run before
run exits; every allocation has a Slurm time limit (--time-limit), so that Slurm ends
it even after a SIGKILL; and every allocation is tagged with the run (sbatch --comment),
so that "regionsched leftovers --slurm" finds and cancels what a dead run left.

What Slurm does is said as it happens: one line when the controller stops answering and
one when it is back (with the outage's length), an allocation pending for more than 5 s
with Slurm's reason, and a summary of the outages at the end. A region that can no
longer fit (its partition's nodes drained or down) fails its job at once, naming the
nodes. The trace (--trace) has the format of simulate --trace, in real milliseconds since
the start.

Exit codes: 0 every job finished, 1 a job failed or was killed (the message says which
and why) or the run was interrupted, 2 bad input or no Slurm reachable.

` + formatsHelp,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badInput(fmt.Errorf("expected at least 1 job file argument (a path or - for standard input), got 0"))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&o.useSlurm, "slurm", false, "run on Slurm (the only backend so far; required)")
	c.Flags().StringVar(&o.cfg.Partition, "partition", "", "Slurm partition to allocate in when the job's queue is not mapped (default: the cluster's default partition)")
	c.Flags().StringToStringVar(&o.cfg.Partitions, "queue-partition", nil, "map a job file's queue to a Slurm partition: QUEUE=PARTITION (repeatable, or comma-separated)")
	c.Flags().StringVar(&o.conf, "slurm-conf", "", "slurm.conf of the cluster (default: $SLURM_CONF, or Slurm's own default)")
	c.Flags().StringVar(&o.user, "user", "", "submit the allocations and steps as this user (runuser; needs root)")
	c.Flags().StringVar(&o.traceFile, "trace", "", "write the trace as JSON Lines to FILE (- for standard output; the summary then goes to standard error)")
	c.Flags().Float64Var(&o.cfg.Scale, "duration-scale", 1, "multiply every task's durationMs by this factor (0 < f)")
	c.Flags().DurationVar(&o.cfg.IdleTimeout, "idle-timeout", 500*time.Millisecond, "give a slot nobody needs back to Slurm after this long (its allocation ends with its last slot)")
	c.Flags().DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up (and cancel everything) after this long")
	c.Flags().BoolVar(&o.logRequests, "verbose", false, "log the admission's outages and refusals on standard error")
	c.Flags().StringVar(&o.eventsFile, "events", "", "priority changes and kills, JSON Lines (the events file of simulate; t in real ms): a set-priority runs scontrol as its \"by\" user on the job's Slurm jobs, so Slurm decides; a kill cancels the job")
	c.Flags().StringVar(&o.auditFile, "audit", "", "write one JSON line per priority change, applied or refused by Slurm (judged by the priority Slurm reports afterwards)")
	c.Flags().DurationVar(&o.cfg.TimeLimit, "time-limit", 0, "Slurm time limit of every allocation, so that Slurm ends what a runner killed with SIGKILL leaves (default: --timeout plus a minute)")
	c.RunE = func(c *cobra.Command, args []string) error { return o.run(c, args, stdin, mode.mode) }
	return c
}

// runOptions are the flags of the run command.
type runOptions struct {
	useSlurm    bool
	cfg         slurm.RunConfig
	conf, user  string
	traceFile   string
	timeout     time.Duration
	logRequests bool
	eventsFile  string
	auditFile   string
}

// run runs the job files of args on Slurm and prints how each job ended.
func (o *runOptions) run(c *cobra.Command, args []string, stdin io.Reader, mode exchange.Mode) error {
	if !o.useSlurm {
		return badInput(errors.New("run needs a backend: --slurm (simulate runs in virtual time)"))
	}
	if !(o.cfg.Scale > 0) { // 0 is 1 to Run: not a value to accept here
		return badInput(fmt.Errorf("--duration-scale must be positive, not %v", o.cfg.Scale))
	}
	if o.cfg.TimeLimit < 0 {
		return badInput(fmt.Errorf("--time-limit must be at least 0, not %v", o.cfg.TimeLimit))
	}
	if o.cfg.TimeLimit == 0 {
		o.cfg.TimeLimit = o.timeout + time.Minute
	}
	jobs, err := (&jobsRun{}).loadJobs(args, stdin)
	if err != nil {
		return err
	}
	if o.conf != "" {
		if _, err := os.Stat(o.conf); err != nil {
			return badInput(fmt.Errorf("--slurm-conf: %w", err))
		}
	}
	if o.eventsFile != "" {
		evs, err := readSlurmEvents(o.eventsFile, jobNames(jobs))
		if err != nil {
			return badInput(err)
		}
		o.cfg.Events = evs
	}
	o.cfg.Mode = mode
	o.cfg.Client = &slurm.ExecClient{Conf: o.conf, User: o.user}
	if o.logRequests {
		o.cfg.Logger = stderrLogger(c.ErrOrStderr())
	}
	o.cfg.RunID = slurm.NewRunID()
	// SIGINT and SIGTERM end the run: every allocation is cancelled
	// before the command exits.
	sigCtx, stopSignals := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	ctx, cancel := context.WithTimeout(sigCtx, o.timeout)
	defer cancel()
	if o.auditFile != "" {
		f, err := os.Create(o.auditFile)
		if err != nil {
			return badInput(fmt.Errorf("cannot write %s: %w", o.auditFile, err))
		}
		defer f.Close()
		enc := json.NewEncoder(f)
		o.cfg.Audit = func(job string, at time.Duration, rec slurm.AuditRecord) {
			_ = enc.Encode(auditLine{T: at.Milliseconds(), By: rec.Principal, Job: job, SlurmJob: int64(rec.Job),
				Old: rec.Old, New: rec.New, Accepted: rec.Accepted, Reason: strings.TrimSpace(rec.Reason)})
		}
	}
	sum := summaryWriter(c, o.traceFile)
	notes := &noticePrinter{w: sum}
	o.cfg.Notify = notes.print
	fmt.Fprintf(sum, "run %s: allocations tagged %s, time limit %s (regionsched leftovers --slurm finds them)\n",
		o.cfg.RunID, slurm.Tag(o.cfg.RunID), o.cfg.TimeLimit)
	var res slurm.Result
	write := func(w io.Writer) error {
		tw := runfile.NewTraceWriter(w)
		o.cfg.Trace = tw.Event
		var err error
		if res, err = slurm.Run(ctx, o.cfg, jobs...); err != nil {
			return badInput(err) // nothing ran: bad input, or no Slurm reachable
		}
		return tw.Flush()
	}
	if o.traceFile != "" {
		err = writeOutput(c, o.traceFile, write)
	} else {
		err = write(io.Discard)
	}
	if err != nil {
		return err
	}
	notes.summary()
	if sigCtx.Err() != nil {
		fmt.Fprintln(sum, "interrupted: every allocation of the run was cancelled")
	}
	return printOutcomes(sum, res.Jobs)
}

// stderrLogger logs warnings and above on w, one line each, without
// stack traces.
func stderrLogger(w io.Writer) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.StacktraceKey = ""
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(w), zap.WarnLevel)
	return zap.New(core)
}

// noticePrinter prints the poller's notices as they come, one line each:
// an outage when it begins and when it ends (with its length), an
// allocation that waits (with Slurm's reason); and a summary of the
// outages at the end.
type noticePrinter struct {
	mu      sync.Mutex
	w       io.Writer
	outages []time.Duration
	open    bool
}

// print prints one notice.
func (n *noticePrinter) print(nt slurm.Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch nt.Kind {
	case slurm.OutageBegan:
		n.open = true
		fmt.Fprintf(n.w, "slurm: controller unreachable (%s); retrying\n", slurmMessage(nt.Err))
	case slurm.OutageEnded:
		n.open = false
		n.outages = append(n.outages, nt.Duration)
		fmt.Fprintf(n.w, "slurm: controller answering again after %s (%s failed meanwhile)\n", roundMs(nt.Duration), count(nt.Failures, "command"))
	case slurm.Waiting:
		reason := nt.Wait.Reason
		if reason == "" {
			reason = "no reason given"
		}
		fmt.Fprintf(n.w, "slurm: job %s: allocation %s (Slurm job %d) pending for %s: %s\n", nt.Job, nt.Wait.Name, nt.Wait.Job, roundMs(nt.Duration), reason)
	}
}

// slurmMessage is what a failed Slurm command said (the last line of its
// standard error), or the error itself.
func slurmMessage(err error) string {
	var ce *slurm.CommandError
	if errors.As(err, &ce) {
		if msg := strings.TrimSpace(ce.Stderr); msg != "" {
			lines := strings.Split(msg, "\n")
			last := strings.TrimSpace(lines[len(lines)-1])
			if strings.HasPrefix(last, ce.Command+":") {
				return last
			}
			return ce.Command + ": " + last
		}
		return ce.Command + ": no answer in time"
	}
	return err.Error()
}

// summary prints the outages of the run, if any.
func (n *noticePrinter) summary() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.outages) == 0 && !n.open {
		return
	}
	var total time.Duration
	for _, d := range n.outages {
		total += d
	}
	line := fmt.Sprintf("slurm outages: %d, %s in all", len(n.outages), roundMs(total))
	if n.open {
		line += "; the last one had not ended"
	}
	fmt.Fprintln(n.w, line)
}

// roundMs rounds a duration to milliseconds for printing.
func roundMs(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// printOutcomes writes one line per job and the verdict; a failed job is
// a negative verdict.
func printOutcomes(w io.Writer, outcomes []slurm.JobResult) error {
	var failed []string
	for _, o := range outcomes {
		if o.Err != nil {
			fmt.Fprintf(w, "job %s: failed after %s: %v\n", o.Name, runMillis(o.End), o.Err)
			failed = append(failed, o.Name)
			continue
		}
		fmt.Fprintf(w, "job %s: finished at %s (first deploy %s): %s as Slurm steps in %s, all on their slot's node; %s\n",
			o.Name, runMillis(o.End), runMillis(o.FirstDeploy), count(o.Steps, "task run"), count(len(o.Allocations), "allocation"), count(o.Stats.Failovers, "failover"))
	}
	if len(failed) > 0 {
		verdict := fmt.Sprintf("failed: %s", strings.Join(failed, ", "))
		fmt.Fprintln(w, verdict)
		return negative(verdict)
	}
	fmt.Fprintln(w, "finished: every job")
	return nil
}

// runMillis formats a duration as whole milliseconds.
func runMillis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

// auditLine is one line of --audit.
type auditLine struct {
	T        int64  `json:"t"`
	By       string `json:"by"`
	Job      string `json:"job"`
	SlurmJob int64  `json:"slurmJob"`
	Old      int64  `json:"old"`
	New      int64  `json:"new"`
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason,omitempty"`
}

// readSlurmEvents reads the events file of a run on Slurm: the events
// file of simulate, with Slurm's priority range (1 ... 4294967293) and
// the run's job names.
func readSlurmEvents(path string, jobs []string) ([]runfile.JobEvent, error) {
	return readEventsFor(path, jobs, slurm.MaxPriority)
}
