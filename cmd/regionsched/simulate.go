package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/timeline"
	"github.com/regionsched/regionsched/topology"
)

func newSimulateCommand(stdin io.Reader, mode *modeFlag) *cobra.Command {
	var (
		policyName string
		seed       uint64
		tiesName   string
		traceFile  string
		svgFile    string
		fails      []string
		queuePol   string
		eventsFile string
		auditFile  string
		share      float64
	)
	c := &cobra.Command{
		Use:   "simulate [--mode M] (--slots N | --cluster CLUSTER) [--policy region|eager] [--queue-policy P] [--seed S] [--ties order|seeded] [--trace FILE] [--svg FILE] [--fail ID#i@MS ...] [--stragglers P] [--speculation ...] JOB [JOB ...]",
		Short: "Run one job, or several jobs on one cluster, in virtual time on the example executor",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badInput(fmt.Errorf("expected at least 1 job file argument (a path or - for standard input), got 0"))
			}
			return nil
		},
	}
	cluster := addClusterFlags(c)
	spec := addSpeculationFlags(c)
	c.Flags().StringVar(&policyName, "policy", "region", "scheduling policy: region (the library) or eager (the baseline without regions and bulks); case-insensitive")
	c.Flags().Uint64Var(&seed, "seed", 1, "seed for the offer of slots, the eager policy's grants and, with --ties seeded, the order of simultaneous events (sweep seeds with --ties seeded to try different interleavings)")
	c.Flags().StringVar(&tiesName, "ties", "order", "order of simultaneous events (the tasks of a wave ending together): order (as scheduled: of the tasks ending together, the one whose end was scheduled first, usually the one deployed first) or seeded (an order the seed draws: each seed tries another interleaving); case-insensitive")
	c.Flags().StringVar(&traceFile, "trace", "", "write the trace as JSON Lines to FILE (- for standard output; the summary then goes to standard error)")
	c.Flags().StringVar(&svgFile, "svg", "", "draw the timeline as SVG to FILE (- for standard output; the summary then goes to standard error)")
	c.Flags().StringArrayVar(&fails, "fail", nil, "make the first attempt of subtask ID#i fail after MS ms of progress (ID#i@MS, repeatable; one job only)")
	c.Flags().StringVar(&queuePol, "queue-policy", "fifo", "several jobs: the policy of every queue the cluster file does not configure: fifo, priority, fairshare (or fair) or stateaware; case-insensitive. With one job file it runs that job through the admission too")
	c.Flags().StringVar(&eventsFile, "events", "", "several jobs: priority changes and kills applied at their times, JSON Lines (see docs/job-file.md)")
	c.Flags().StringVar(&auditFile, "audit", "", "several jobs: write one JSON line per priority change or kill, accepted or refused, to FILE")
	c.Flags().Float64Var(&share, "selective-share", scheduler.DefaultSelectiveShare, "selective hybrid exchanges (all-hybrid-selective, or edges pinned to hybrid-selective): the share of a consumer's producers that must have finished before it starts, more than 0 and at most 1")
	var sharing bool
	c.Flags().BoolVar(&sharing, "hybrid-slot-sharing", true, "region policy: a consumer of hybrid results whose producers run goes into their slots when every slot it needs finds one there (--hybrid-slot-sharing=false: it asks for slots of its own)")
	c.RunE = func(c *cobra.Command, args []string) error {
		if err := scheduler.CheckSelectiveShare(share); err != nil {
			return badInput(fmt.Errorf("--selective-share: %w", err))
		}
		policy, err := parsePolicy(policyName)
		if err != nil {
			return err
		}
		queuePolicy, err := parseQueuePolicy(queuePol)
		if err != nil {
			return err
		}
		ties, err := parseTies(tiesName)
		if err != nil {
			return err
		}
		if err := checkOutputs(traceFile, svgFile); err != nil {
			return err
		}
		slots, cf, err := cluster.loadFile(c)
		if err != nil {
			return err
		}
		// Several job files, --queue-policy or queues in the cluster file:
		// the jobs go through the queue-level admission (docs/job-file.md;
		// 5). One job file alone runs as in section 4.
		if len(args) > 1 || c.Flags().Changed("queue-policy") || (cf != nil && len(cf.Queues) > 0) || eventsFile != "" || auditFile != "" {
			if len(fails) > 0 {
				return badInput(fmt.Errorf("--fail: not supported with several jobs (or --queue-policy, or queues in the cluster file) yet; failures are injected into a run of one job"))
			}
			return simulateJobs(c, &jobsRun{mode: mode.mode, share: share, noSharing: !sharing, policy: policy, queuePolicy: queuePolicy, seed: seed, ties: ties, traceFile: traceFile,
				svgFile: svgFile, slots: slots, cluster: cf, clusterPath: cluster.cluster, eventsFile: eventsFile, auditFile: auditFile, spec: spec}, args, stdin)
		}
		job, err := loadJob(args[0], stdin)
		if err != nil {
			return err
		}
		rs := region.FromJob(job, mode.mode)
		cfg := simulator.Config{Regions: rs, Cluster: slots, Policy: policy, Seed: seed, Ties: ties, SelectiveShare: share,
			DisableHybridSlotSharing: !sharing, SlotNodes: slotNodes(cf)}
		if err := spec.apply(c, &cfg); err != nil {
			return err
		}
		for _, f := range fails {
			failure, err := simulator.ParseFailure(rs.Topology(), f)
			if err != nil {
				return badInput(fmt.Errorf("--fail: %w", err))
			}
			cfg.Failures = append(cfg.Failures, failure)
		}
		pic := newPicture(svgFile)
		defer pic.Close()
		var res, without *simulator.Result
		err = streamRun(c, traceFile, pic, func(onEvent func(runfile.Event)) error {
			cfg.OnEvent, cfg.Detail = onEvent, pic != nil
			var err error
			if res, without, err = spec.run(cfg); err != nil {
				return badInput(err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if pic != nil {
			tl := timeline.Timeline{
				Title: fmt.Sprintf("%s — %s, %s policy, %s", job.Name(), mode.mode, policy, count(res.Slots, "slot")),
				Subtitle: fmt.Sprintf("makespan %d ms; slot time: %.0f%% with work progressing, %.0f%% held while waiting; %s%s, %s", res.Makespan.Milliseconds(),
					100*res.WorkUtilization, 100*res.HeldWaiting, count(res.RegionsScheduled, deployUnit(policy)), sharedText(res), count(res.Failovers, "restart")),
				Slots: timelineRows(res, pic), Regions: rs.NumRegions(), Makespan: res.Makespan,
				Verdict: res.Verdict, Reason: res.Reason, Progress: true,
			}
			if res.Verdict == runfile.Steady {
				tl.Subtitle = streamSubtitle(res) + fmt.Sprintf("; %s, %s", count(res.RegionsScheduled, deployUnit(policy)), count(res.Failovers, "restart"))
			}
			if policy == simulator.EagerPolicy { // no regions: colour by job vertex
				tl.ColorBy = timeline.ColorByVertex
			}
			if err := writePicture(c, svgFile, pic, tl); err != nil {
				return err
			}
		}
		out := summaryWriter(c, traceFile, svgFile)
		modeText := mode.mode.String()
		if hasSelective(rs) {
			modeText += fmt.Sprintf(" (selective share %v)", share)
		}
		fmt.Fprintf(out, "job %q: mode %s, policy %s, %s, %s\n", job.Name(), modeText, policy, count(res.Slots, "slot"), seedText(seed, ties))
		fmt.Fprintf(out, "makespan:          %d ms of virtual time, until the last event\n", res.Makespan.Milliseconds())
		fmt.Fprintf(out, "slot utilization:  %.1f%% of slot time with work progressing\n", 100*res.WorkUtilization)
		fmt.Fprintf(out, "held waiting:      %.1f%% of slot time held by tasks that could not progress\n", 100*res.HeldWaiting)
		if policy == simulator.EagerPolicy {
			fmt.Fprintf(out, "tasks deployed:    %s of %s\n", count(res.RegionsScheduled, "deployment"), count(rs.Topology().NumExecutionVertices(), "task"))
		} else {
			fmt.Fprintf(out, "regions scheduled: %s of %s%s\n", count(res.RegionsScheduled, "deployment"), count(rs.NumRegions(), "region"), sharedText(res))
		}
		fmt.Fprintf(out, "restarts:          %d (regions restarted: %d)\n", res.Failovers, res.RegionRestarts)
		for _, r := range res.Restarts {
			fmt.Fprintf(out, "  at %d ms %s failed: restarted %s %s\n", r.At.Milliseconds(), r.Task, noun(len(r.Regions), "region", "regions"), idRanges(r.Regions))
		}
		printSpeculation(out, spec, res, without)
		fmt.Fprintf(out, "simulation steps:  %d (task progress ends and slot-request timeouts handled); %s\n",
			res.Processed, count(res.TraceEvents, "trace event"))
		fmt.Fprintln(out, res.Reason)
		if !res.Verdict.OK() {
			return negative(res.Reason)
		}
		return nil
	}
	return c
}

// hasSelective reports whether the job has a selective hybrid edge.
func hasSelective(rs *region.Regions) bool {
	t := rs.Topology()
	for e := range topology.JobEdgeID(t.Job().NumEdges()) {
		if t.PartitionType(e) == exchange.HybridSelective {
			return true
		}
	}
	return false
}

// streamSubtitle is the picture's subtitle for a run that ends with a
// stream running on: there is no makespan, and the slot time until the
// last event says little of a stream. The picture draws the stream for
// timeline.StreamWindow after the last event.
func streamSubtitle(res *simulator.Result) string {
	s := fmt.Sprintf("a stream runs on: no makespan; the last event at %d ms, drawn to %d ms", res.Makespan.Milliseconds(),
		(res.Makespan + timeline.StreamWindow).Milliseconds())
	if res.Makespan > 0 {
		s += fmt.Sprintf("; slot time until the last event: %.0f%% with work progressing, %.0f%% held while waiting", 100*res.WorkUtilization, 100*res.HeldWaiting)
	}
	return s
}

// count renders "1 restart" or "3 restarts": every count the command
// prints agrees with its noun.
//
// countOf is count for a noun whose plural is not made with an s: "1
// execution vertex", "12 execution vertices"; noun is the form for n
// things without the number: "region 0", "regions 0-3".
var (
	count   = plural.Count
	countOf = plural.CountOf
	noun    = plural.Of
)

func deployUnit(p simulator.Policy) string {
	if p == simulator.EagerPolicy {
		return "task deployment"
	}
	return "region deployment"
}

// maxTimelineRows bounds the rows of the picture: a bigger cluster is drawn
// with the slots its tasks used.
const maxTimelineRows = 200

func timelineRows(res *simulator.Result, pic *timeline.Recorder) int {
	if res.Slots <= maxTimelineRows {
		return res.Slots
	}
	return pic.Slots()
}

// newPicture returns the recorder of the --svg picture, nil without one.
func newPicture(svgFile string) *timeline.Recorder {
	if svgFile == "" {
		return nil
	}
	return timeline.NewRecorder()
}

// streamRun runs a simulation with its events streamed as they happen: to
// the --trace file as JSON Lines and to the picture's recorder (pic, nil
// without --svg), which also gets the events only pictures use (the run
// is to set Config.Detail when pic is not nil). Nothing keeps the trace,
// so memory does not grow with it. run does the simulation with the
// OnEvent given (nil when nobody listens).
func streamRun(c *cobra.Command, traceFile string, pic *timeline.Recorder, run func(onEvent func(runfile.Event)) error) error {
	var onEvent func(runfile.Event)
	if pic != nil {
		onEvent = pic.Event
	}
	if traceFile == "" {
		return run(onEvent)
	}
	return writeOutput(c, traceFile, func(w io.Writer) error {
		tw := runfile.NewTraceWriter(w)
		onEvent := tw.Event
		if pic != nil {
			onEvent = func(e runfile.Event) {
				tw.Event(e) // trace events only: it leaves out those only pictures use
				pic.Event(e)
			}
		}
		if err := run(onEvent); err != nil {
			return err
		}
		return tw.Flush()
	})
}

// writePicture draws the recorded run to the --svg file and removes the
// recorder's temporary file.
func writePicture(c *cobra.Command, svgFile string, pic *timeline.Recorder, tl timeline.Timeline) error {
	if err := writeOutput(c, svgFile, func(w io.Writer) error { return pic.WriteSVG(w, tl) }); err != nil {
		return err
	}
	return pic.Close()
}

// sharedText says how many region deployments went into their hybrid
// producers' slots ("" if none).
func sharedText(res *simulator.Result) string {
	if res.RegionsShared == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d into their hybrid producers' slots)", res.RegionsShared)
}
