package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/runcli"
	"github.com/regionsched/regionsched/internal/summary"
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
		Use:   "run (--slurm | --kubernetes) [--mode M] [--partition P] [--queue-partition Q=P ...] [--trace FILE] [--svg FILE] [--color-by C] JOB [JOB ...]",
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
with Slurm's reason, and a summary of the outages at the end. The run ends with the summary
of simulate (one line per job for several, makespan, slot utilization, held waiting, regions
scheduled, restarts, reclaims, queues and the verdict), its figures measured on the run's
trace events in real time (docs/cli.md defines them). A region that can no
longer fit (its partition's nodes drained or down) fails its job at once, naming the
nodes. The trace (--trace) has the format of simulate --trace, in real milliseconds since
the start; --svg draws it as simulate --svg does, coloured by job (by region for one
job) or as --color-by says: region, vertex, job or queue.

With --kubernetes, the jobs run as pods on a Kubernetes cluster instead: regionsched runs
the program regionsched-kubernetes (beside it, or on PATH) with the same arguments, and
"regionsched run --kubernetes --help" shows that program's flags.

Exit codes: 0 every job finished (or was killed by the events file), 1 a job failed (the
message says which and why) or the run was interrupted, 2 bad input or no Slurm reachable.

` + formatsHelp,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badInput(fmt.Errorf("expected at least 1 job file argument (a path or - for standard input), got 0"))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&o.useSlurm, "slurm", false, "run on Slurm (this or --kubernetes is required)")
	c.Flags().Bool("kubernetes", false, "run on Kubernetes: runs "+kubernetesProgram+" (beside this program, or on PATH) with the same arguments; see its run --help")
	c.Flags().StringVar(&o.cfg.Partition, "partition", "", "Slurm partition to allocate in when the job's queue is not mapped (default: the cluster's default partition)")
	c.Flags().StringToStringVar(&o.cfg.Partitions, "queue-partition", nil, "map a job file's queue to a Slurm partition: QUEUE=PARTITION (repeatable, or comma-separated)")
	c.Flags().StringVar(&o.conf, "slurm-conf", "", "slurm.conf of the cluster (default: $SLURM_CONF, or Slurm's own default)")
	c.Flags().StringVar(&o.user, "user", "", "submit the allocations and steps as this user (runuser; needs root)")
	o.flags.Add(c, "priority changes and kills, JSON Lines (the events file of simulate; t in real ms): a set-priority runs scontrol as its \"by\" user on the job's Slurm jobs, so Slurm decides; a kill cancels the job",
		"write one JSON line per priority change, applied or refused by Slurm (judged by the priority Slurm reports afterwards)")
	c.Flags().DurationVar(&o.cfg.IdleTimeout, "idle-timeout", 500*time.Millisecond, "give a slot nobody needs back to Slurm after this long (its allocation ends with its last slot)")
	c.Flags().DurationVar(&o.cfg.TimeLimit, "time-limit", 0, "Slurm time limit of every allocation, so that Slurm ends what a runner killed with SIGKILL leaves (default: --timeout plus a minute)")
	runcli.SetValid(c.Flags(), "queue-partition", "QUEUE=PARTITION pairs, repeatable or comma-separated")
	runcli.SetValid(c.Flags(), "idle-timeout", "a duration of 0 or more, such as 500ms or 0")
	runcli.SetValid(c.Flags(), "time-limit", "a duration of 0 or more, such as 2h (0: --timeout plus a minute)")
	c.RunE = func(c *cobra.Command, args []string) error { return o.run(c, args, stdin, mode.mode) }
	return c
}

// runOptions are the flags of the run command.
type runOptions struct {
	useSlurm   bool
	cfg        slurm.RunConfig
	conf, user string
	flags      runcli.Flags
}

// run runs the job files of args on Slurm and prints how each job ended.
func (o *runOptions) run(c *cobra.Command, args []string, stdin io.Reader, mode exchange.Mode) error {
	if !o.useSlurm {
		return badInput(errors.New("run needs a backend: --slurm or --kubernetes (simulate runs in virtual time)"))
	}
	return o.flags.Execute(c, args, stdin, runcli.Backend{
		Name:        "Slurm",
		MaxPriority: slurm.MaxPriority,
		Mode:        mode,
		Check: func() error {
			if o.cfg.TimeLimit < 0 {
				return fmt.Errorf("--time-limit must be at least 0, not %v", o.cfg.TimeLimit)
			}
			if o.cfg.IdleTimeout < 0 {
				return fmt.Errorf("--idle-timeout must be at least 0, not %v", o.cfg.IdleTimeout)
			}
			if o.cfg.TimeLimit == 0 {
				o.cfg.TimeLimit = o.flags.Timeout + min(time.Minute, math.MaxInt64-o.flags.Timeout)
			}
			return nil
		},
		Prepare: func([]runfile.Job) error {
			if o.conf != "" {
				if _, err := os.Stat(o.conf); err != nil {
					return fmt.Errorf("--slurm-conf: %w", err)
				}
			}
			return nil
		},
		Run: func(ctx context.Context, in runcli.Input) (runcli.Result, error) {
			return o.runSlurm(ctx, in, mode)
		},
		Interrupted: "interrupted: every allocation of the run was cancelled",
	})
}

// runSlurm runs the jobs with slurm.Run, printing its notices as they come.
func (o *runOptions) runSlurm(ctx context.Context, in runcli.Input, mode exchange.Mode) (runcli.Result, error) {
	cfg := o.cfg
	cfg.Mode, cfg.Scale, cfg.Events, cfg.Trace, cfg.NameJobs = mode, in.Scale, in.Events, in.Trace, in.Several
	cfg.Client = &slurm.ExecClient{Conf: o.conf, User: o.user}
	if in.Logger != nil {
		cfg.Logger = in.Logger
	}
	cfg.RunID = slurm.NewRunID()
	if in.Audit != nil {
		cfg.Audit = func(job string, at time.Duration, rec slurm.AuditRecord) {
			in.Audit(auditLine{T: at.Milliseconds(), By: rec.Principal, Job: job, SlurmJob: int64(rec.Job),
				Old: rec.Old, New: rec.New, Accepted: rec.Accepted, Reason: strings.TrimSpace(rec.Reason)})
		}
	}
	notes := &noticePrinter{w: in.Summary}
	cfg.Notify = notes.print
	// (Slurm counts time limits in whole minutes: the request rounds up.)
	fmt.Fprintf(in.Summary, "run %s: allocations tagged %s, time limit %s (regionsched leftovers --slurm finds them)\n",
		cfg.RunID, slurm.Tag(cfg.RunID), slurm.RoundTimeLimit(cfg.TimeLimit))
	res, err := slurm.Run(ctx, cfg, in.Jobs...)
	if err != nil {
		return runcli.Result{}, err
	}
	notes.summary()
	out := runcli.Result{Jobs: outcomesOf(res.Jobs), Slots: res.Slots, Admission: "admission by Slurm", RestartsRecorded: true}
	for _, ev := range res.Events {
		out.Events = append(out.Events, summary.EventOutcome{At: ev.At, By: ev.By, Action: ev.Action, Job: ev.Job, Priority: ev.Priority,
			Old: int(ev.Old), Applied: ev.Applied, Reason: ev.Reason})
	}
	for _, j := range res.Jobs {
		for _, r := range j.Restarts {
			out.Restarts = append(out.Restarts, summary.Restart{Job: j.Name, At: r.At, Task: r.Task, Regions: r.Regions})
		}
	}
	// The jobs' failovers in the order they happened.
	slices.SortStableFunc(out.Restarts, func(a, b summary.Restart) int { return cmp.Compare(a.At, b.At) })
	return out, nil
}

// stderrLogger logs warnings and above on w, one line each, without
// stack traces.
func stderrLogger(w io.Writer) *zap.Logger { return runcli.StderrLogger(w) }

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

// outcomesOf says how the jobs of a run on Slurm ended, with what ran of
// each on Slurm's terms.
func outcomesOf(jobs []slurm.JobResult) []runcli.Outcome {
	out := make([]runcli.Outcome, len(jobs))
	for i, o := range jobs {
		out[i] = runcli.Outcome{Name: o.Name, Err: o.Err, End: o.End,
			Work: fmt.Sprintf("%s as Slurm steps in %s, all on their slot's node",
				count(o.Steps, "task run"), count(len(o.Allocations), "allocation"))}
	}
	return out
}

// auditLine is one line of --audit.
type auditLine = runcli.AuditLine

// readSlurmEvents reads the events file of a run on Slurm: the events
// file of simulate, with Slurm's priority range (1 ... 4294967293) and
// the run's job names.
func readSlurmEvents(path string, jobs []string) ([]runfile.JobEvent, error) {
	return readEventsFor(path, jobs, slurm.MaxPriority)
}
