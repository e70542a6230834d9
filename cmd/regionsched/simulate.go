package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/internal/runcli"
	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/timeline"
	"github.com/regionsched/regionsched/topology"
)

// newSimulateCommand is the simulate command: it runs one job, or several
// jobs through the admission, in virtual time (the flags in simulateFlags).
func newSimulateCommand(stdin io.Reader, mode *modeFlag) *cobra.Command {
	f := &simulateFlags{mode: mode}
	c := &cobra.Command{
		Use:   "simulate [--mode M] (--slots N | --cluster CLUSTER) [--policy region|eager] [--queue-policy P] [--seed S] [--ties order|seeded] [--trace FILE] [--svg FILE] [--color-by C] [--fail ID#i@MS ...] [--stragglers P] [--speculation ...] JOB [JOB ...]",
		Short: "Run one job, or several jobs on one cluster, in virtual time on the example executor",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badInput(fmt.Errorf("expected at least 1 job file argument (a path or - for standard input), got 0"))
			}
			return nil
		},
	}
	f.register(c)
	c.RunE = func(c *cobra.Command, args []string) error { return f.run(c, args, stdin) }
	return c
}

// simulateFlags are the flags of the simulate command.
type simulateFlags struct {
	mode       *modeFlag // --mode, a flag of the root command
	cluster    *clusterFlags
	spec       *speculationFlags
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
	sharing    bool
	colorBy    string
}

// register adds the flags of the simulate command to c.
func (f *simulateFlags) register(c *cobra.Command) {
	f.cluster = addClusterFlags(c)
	f.spec = addSpeculationFlags(c)
	c.Flags().StringVar(&f.policyName, "policy", "region", "scheduling policy: region (the library) or eager (the baseline without regions and bulks); case-insensitive")
	c.Flags().Uint64Var(&f.seed, "seed", 1, "seed for the offer of slots, the eager policy's grants and, with --ties seeded, the order of simultaneous events (sweep seeds with --ties seeded to try different interleavings)")
	c.Flags().StringVar(&f.tiesName, "ties", "order", "order of simultaneous events (the tasks of a wave ending together): order (as scheduled: of the tasks ending together, the one whose end was scheduled first, usually the one deployed first) or seeded (an order the seed draws: each seed tries another interleaving); case-insensitive")
	c.Flags().StringVar(&f.traceFile, "trace", "", "write the trace as JSON Lines to FILE (- for standard output; the summary then goes to standard error)")
	c.Flags().StringVar(&f.svgFile, "svg", "", "draw the timeline as SVG to FILE (- for standard output; the summary then goes to standard error)")
	c.Flags().StringVar(&f.colorBy, "color-by", "auto", runcli.ColorByHelp)
	c.Flags().StringArrayVar(&f.fails, "fail", nil, "make the first attempt of subtask ID#i fail after MS ms of progress (ID#i@MS, repeatable; one job only)")
	c.Flags().StringVar(&f.queuePol, "queue-policy", "fifo", "several jobs: the policy of every queue the cluster file does not configure: fifo, priority, fairshare (or fair) or stateaware; case-insensitive. With one job file it runs that job through the admission too")
	c.Flags().StringVar(&f.eventsFile, "events", "", "several jobs: priority changes and kills applied at their times, JSON Lines (see docs/job-file.md)")
	c.Flags().StringVar(&f.auditFile, "audit", "", "several jobs: write one JSON line per priority change or kill, accepted or refused, to FILE")
	c.Flags().Float64Var(&f.share, "selective-share", scheduler.DefaultSelectiveShare, "selective hybrid exchanges (all-hybrid-selective, or edges pinned to hybrid-selective): the share of a consumer's producers that must have finished before it starts, more than 0 and at most 1")
	runcli.SetValid(c.Flags(), "seed", "an integer in 0 ... 18446744073709551615")
	runcli.SetValid(c.Flags(), "selective-share", "a number more than 0 and at most 1")
	c.Flags().BoolVar(&f.sharing, "hybrid-slot-sharing", true, "region policy: a consumer of hybrid results whose producers run goes into their slots when every slot it needs finds one there (--hybrid-slot-sharing=false: it asks for slots of its own)")
}

// simulateSetup is what the flags of the simulate command say, parsed
// and checked.
type simulateSetup struct {
	policy      simulator.Policy
	queuePolicy admission.Policy
	ties        simulator.TieOrder
	slots       []resource.Count
	cluster     *runfile.Cluster // nil for --slots
	color       runcli.ColorBy   // --color-by
}

// parse parses and checks the flags, and loads the cluster file.
func (f *simulateFlags) parse(c *cobra.Command) (simulateSetup, error) {
	var s simulateSetup
	if err := scheduler.ValidateSelectiveShare(f.share); err != nil {
		return s, badInput(fmt.Errorf("--selective-share: %w", err))
	}
	var err error
	if s.policy, err = parsePolicy(f.policyName); err != nil {
		return s, err
	}
	if s.queuePolicy, err = parseQueuePolicy(f.queuePol); err != nil {
		return s, err
	}
	if s.ties, err = parseTies(f.tiesName); err != nil {
		return s, err
	}
	if s.color, err = runcli.ParseColorBy(f.colorBy); err != nil {
		return s, err
	}
	if err := checkOutputs(f.traceFile, f.svgFile); err != nil {
		return s, err
	}
	s.slots, s.cluster, err = f.cluster.loadFile(c)
	return s, err
}

// run is the simulate command: the jobs of the job files args run through
// the admission, or one job alone.
func (f *simulateFlags) run(c *cobra.Command, args []string, stdin io.Reader) error {
	s, err := f.parse(c)
	if err != nil {
		return err
	}
	cf := s.cluster
	// Several job files, --queue-policy or queues in the cluster file:
	// the jobs go through the queue-level admission (docs/job-file.md;
	// 5). One job file alone runs as in section 4.
	if len(args) > 1 || c.Flags().Changed("queue-policy") || (cf != nil && len(cf.Queues) > 0) || f.eventsFile != "" || f.auditFile != "" {
		if len(f.fails) > 0 {
			return badInput(fmt.Errorf("--fail: not supported with several jobs (or --queue-policy, or queues in the cluster file) yet; failures are injected into a run of one job"))
		}
		return simulateJobs(c, &jobsRun{mode: f.mode.mode, share: f.share, noSharing: !f.sharing, policy: s.policy, queuePolicy: s.queuePolicy, seed: f.seed, ties: s.ties, traceFile: f.traceFile,
			svgFile: f.svgFile, color: s.color, slots: s.slots, cluster: cf, clusterPath: f.cluster.cluster, eventsFile: f.eventsFile, auditFile: f.auditFile, spec: f.spec}, args, stdin)
	}
	return f.runJob(c, s, args[0], stdin)
}

// config is the simulator's configuration of a run of one job's regions
// rs: the flags' knobs, speculation and the failures to inject.
func (f *simulateFlags) config(c *cobra.Command, s simulateSetup, rs *region.Regions) (simulator.Config, error) {
	cfg := simulator.Config{Regions: rs, Cluster: s.slots, Policy: s.policy, Seed: f.seed, Ties: s.ties, SelectiveShare: f.share,
		DisableHybridSlotSharing: !f.sharing, SlotNodes: slotNodes(s.cluster)}
	if err := f.spec.apply(c, &cfg); err != nil {
		return cfg, err
	}
	for _, fl := range f.fails {
		failure, err := simulator.ParseFailure(rs.Topology(), fl)
		if err != nil {
			return cfg, badInput(fmt.Errorf("--fail: %w", err))
		}
		cfg.Failures = append(cfg.Failures, failure)
	}
	return cfg, nil
}

// runJob runs the job of the job file path alone, streams its trace and
// picture to the --trace and --svg files, and prints its summary.
func (f *simulateFlags) runJob(c *cobra.Command, s simulateSetup, path string, stdin io.Reader) error {
	job, err := loadJob(path, stdin)
	if err != nil {
		return err
	}
	rs := region.FromJob(job, f.mode.mode)
	cfg, err := f.config(c, s, rs)
	if err != nil {
		return err
	}
	pic := newPicture(f.svgFile)
	defer pic.Close()
	name := job.Name()
	if name == "" {
		name = runcli.JobNameOf(path)
	}
	picEvent := recorderEvent(pic)
	if picEvent != nil && s.color.ByJob() { // the picture names the job, as for several
		picEvent = runcli.NameJob(name, picEvent)
	}
	var res, without *simulator.Result
	err = streamRun(c, f.traceFile, picEvent, func(onEvent func(runfile.Event)) error {
		cfg.OnEvent, cfg.Detail = onEvent, pic != nil
		var err error
		if res, without, err = f.spec.run(cfg); err != nil {
			return badInput(err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if pic != nil {
		tl := f.jobTimeline(job, rs, s.policy, res, pic)
		if s.color.ByJob() {
			tl.Jobs = []string{name}
		}
		s.color.Apply(&tl, []runfile.Job{{Name: name, Job: job}})
		if err := writePicture(c, f.svgFile, pic, tl); err != nil {
			return err
		}
	}
	f.printJobSummary(summaryWriter(c, f.traceFile, f.svgFile), job, rs, s, res, without)
	if !res.Verdict.OK() {
		return negative(res.Reason)
	}
	return nil
}

// jobTimeline is the picture of a run of one job.
func (f *simulateFlags) jobTimeline(job *topology.JobGraph, rs *region.Regions, policy simulator.Policy, res *simulator.Result, pic *timeline.Recorder) timeline.Timeline {
	tl := timeline.Timeline{
		Title: fmt.Sprintf("%s — %s, %s policy, %s", job.Name(), f.mode.mode, policy, count(res.Slots, "slot")),
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
	return tl
}

// printJobSummary prints the summary of a run of one job to out, its
// verdict last.
func (f *simulateFlags) printJobSummary(out io.Writer, job *topology.JobGraph, rs *region.Regions, s simulateSetup, res, without *simulator.Result) {
	policy := s.policy
	modeText := f.mode.mode.String()
	if hasSelective(rs) {
		modeText += fmt.Sprintf(" (selective share %v)", f.share)
	}
	fmt.Fprintf(out, "job %q: mode %s, policy %s, %s, %s\n", job.Name(), modeText, policy, count(res.Slots, "slot"), seedText(f.seed, s.ties))
	fmt.Fprintln(out, makespanLine(res))
	fmt.Fprintln(out, summary.UtilizationLine(res.WorkUtilization))
	fmt.Fprintln(out, summary.HeldWaitingLine(res.HeldWaiting))
	if policy == simulator.EagerPolicy {
		fmt.Fprintln(out, summary.EagerDeployedLine(res.RegionsScheduled, count(rs.Topology().NumExecutionVertices(), "task")))
	} else {
		fmt.Fprintln(out, summary.DeployedLine("regions scheduled:", res.RegionsScheduled, count(rs.NumRegions(), "region"), res.RegionsShared))
	}
	fmt.Fprintln(out, summary.RestartsLine(res.Failovers, res.RegionRestarts))
	for _, r := range res.Restarts {
		fmt.Fprintln(out, summary.RestartLine(summaryRestart(r)))
	}
	printSpeculation(out, f.spec, res, without)
	fmt.Fprintf(out, "simulation steps:  %d (task progress ends and slot-request timeouts handled); %s\n",
		res.Processed, count(res.TraceEvents, "trace event"))
	fmt.Fprintln(out, res.Reason)
}

// summaryRestart is a failover of a run for its line of the summary.
func summaryRestart(r simulator.Restart) summary.Restart {
	regions := make([]int, len(r.Regions))
	for i, id := range r.Regions {
		regions[i] = int(id)
	}
	return summary.Restart{At: r.At, Task: r.Task, Regions: regions}
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
// execution vertex", "12 execution vertices".
var (
	count   = plural.Count
	countOf = plural.CountOf
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

// recorderEvent is the function handing events to the picture's
// recorder, nil without one.
func recorderEvent(pic *timeline.Recorder) func(runfile.Event) {
	if pic == nil {
		return nil
	}
	return pic.Event
}

// streamRun runs a simulation with its events streamed as they happen: to
// the --trace file as JSON Lines and to the picture (pic, the recorder's
// Event or a function handing it events; nil without --svg), which also
// gets the events only pictures use (the run is to set Config.Detail when
// pic is not nil). Nothing keeps the trace, so memory does not grow with
// it. run does the simulation with the OnEvent given (nil when nobody
// listens).
func streamRun(c *cobra.Command, traceFile string, pic func(runfile.Event), run func(onEvent func(runfile.Event)) error) error {
	if traceFile == "" {
		return run(pic)
	}
	return writeOutput(c, traceFile, func(w io.Writer) error {
		tw := runfile.NewTraceWriter(w)
		onEvent := tw.Event
		if pic != nil {
			onEvent = func(e runfile.Event) {
				tw.Event(e) // trace events only: it leaves out those only pictures use
				pic(e)
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

// makespanLine is the summary's makespan line of a simulated run: until
// the last event, or until the deadlock.
func makespanLine(res *simulator.Result) string {
	if res.Verdict == runfile.Deadlock {
		return summary.DeadlockMakespanLine(res.Makespan, summary.VirtualTime)
	}
	return summary.MakespanLine(res.Makespan, summary.VirtualTime)
}
