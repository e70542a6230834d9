package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/runcli"
	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/timeline"
	"github.com/regionsched/regionsched/topology"
)

// parseQueuePolicy parses --queue-policy case-insensitively ("fair" is
// fairshare).
func parseQueuePolicy(s string) (admission.Policy, error) {
	p, err := admission.ParsePolicy(s)
	if err != nil {
		return 0, badInput(&flagValueError{flag: "queue-policy", what: "queue policy", value: s, valid: runfile.QueuePolicies(), err: err})
	}
	return p, nil
}

// jobsRun is a run of several jobs (docs/job-file.md): what the flags
// and the cluster file say.
type jobsRun struct {
	mode        exchange.Mode
	share       float64 // the selective share of hybrid inputs
	noSharing   bool    // --hybrid-slot-sharing=false
	policy      simulator.Policy
	queuePolicy admission.Policy
	seed        uint64
	ties        simulator.TieOrder
	traceFile   string
	svgFile     string
	color       runcli.ColorBy // --color-by
	slots       []resource.Count
	cluster     *runfile.Cluster // nil for --slots
	clusterPath string
	eventsFile  string // --events
	auditFile   string // --audit
	spec        *speculationFlags
}

// queues maps the cluster file's queues to the admission's; a queue
// without a policy takes --queue-policy.
func (r *jobsRun) queues() ([]admission.QueueConfig, error) {
	if r.cluster == nil {
		return nil, nil
	}
	qs, err := r.cluster.QueueConfigs(r.queuePolicy)
	if err != nil {
		return nil, badInput(fmt.Errorf("cluster file %s: %w", r.clusterPath, err))
	}
	return qs, nil
}

// users maps the cluster file's users to their roles (none without a
// cluster file: every change is refused).
func (r *jobsRun) users() (map[string]admission.Role, error) {
	if r.cluster == nil {
		return map[string]admission.Role{}, nil
	}
	roles, err := r.cluster.Roles()
	if err != nil {
		return nil, badInput(fmt.Errorf("cluster file %s: %w", r.clusterPath, err))
	}
	return roles, nil
}

// loadJobs reads the job files of a run of several jobs. A job without a
// name is named after its file; every error names the file.
func (r *jobsRun) loadJobs(paths []string, stdin io.Reader) ([]runfile.Job, error) {
	return runcli.LoadJobs(paths, stdin)
}

// jobNames lists the jobs' names, in order.
func jobNames(jobs []runfile.Job) []string { return runcli.JobNames(jobs) }

// simulateJobs runs several job files on one cluster behind the
// queue-level admission and prints one line per job and the verdict.
func simulateJobs(c *cobra.Command, r *jobsRun, paths []string, stdin io.Reader) error {
	queues, err := r.queues()
	if err != nil {
		return err
	}
	jobs, err := r.loadJobs(paths, stdin)
	if err != nil {
		return err
	}
	if err := runcli.CheckJobQueues(paths, jobs, queues); err != nil {
		return err
	}
	cfg := simulator.JobsConfig{Jobs: jobs, Mode: r.mode, SelectiveShare: r.share, DisableHybridSlotSharing: r.noSharing, Cluster: r.slots, Queues: queues, DefaultPolicy: r.queuePolicy,
		Policy: r.policy, Seed: r.seed, Ties: r.ties, SlotNodes: slotNodes(r.cluster)}
	if err := r.applySpeculation(c, &cfg); err != nil {
		return err
	}
	if cfg.Users, err = r.users(); err != nil {
		return err
	}
	if r.eventsFile != "" {
		if cfg.Events, err = readEventsFor(r.eventsFile, jobNames(jobs), topology.MaxPriority); err != nil {
			return badInput(err)
		}
	}
	var audit *bufio.Writer // flushed after the run: a write error is reported, not lost
	if r.auditFile != "" {
		f, err := os.Create(r.auditFile)
		if err != nil {
			return badInput(fmt.Errorf("--audit: %w", err))
		}
		defer f.Close()
		audit = bufio.NewWriter(f)
		defer audit.Flush() // what a failed run recorded; after a successful run, a no-op
		cfg.Audit = admission.NewJSONLinesAudit(audit, simulator.Epoch)
	}
	pic := newPicture(r.svgFile)
	defer pic.Close()
	var (
		res, without    *simulator.Result
		per, perWithout []simulator.JobResult
	)
	err = streamRun(c, r.traceFile, recorderEvent(pic), func(onEvent func(runfile.Event)) error {
		cfg.OnEvent, cfg.Detail = onEvent, pic != nil
		var err error
		if cfg.Speculation.Enabled {
			res, per, without, perWithout, err = simulator.CompareJobsSpeculation(cfg)
		} else {
			res, per, err = simulator.RunJobs(cfg)
		}
		if err != nil {
			return badInput(err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if pic != nil {
		if err := writePicture(c, r.svgFile, pic, r.timeline(res, jobs, per, queues, pic, hasDrivers(jobs))); err != nil {
			return err
		}
	}
	if audit != nil {
		if err := audit.Flush(); err != nil {
			return fmt.Errorf("--audit %s: %w", r.auditFile, err)
		}
	}
	out := summaryWriter(c, r.traceFile, r.svgFile)
	fmt.Fprintf(out, "%s: mode %s, policy %s, %s, %s, %s\n", count(len(jobs), "job"), r.mode, r.policy, r.admissionText(queues), count(res.Slots, "slot"), seedText(r.seed, r.ties))
	if implicit := summary.ImplicitQueues(jobQueueNames(jobs), queues); len(implicit) > 0 && r.policy != simulator.EagerPolicy {
		fmt.Fprintln(out, summary.ImplicitQueuesLine(r.queuePolicy, implicit))
	}
	for _, j := range per {
		fmt.Fprintln(out, summary.JobLine(summaryJob(j)))
	}
	for _, ev := range res.JobEvents {
		fmt.Fprintln(out, summary.EventLine(eventOutcome(ev)))
	}
	fmt.Fprintln(out, makespanLine(res))
	fmt.Fprintln(out, summary.UtilizationLine(res.WorkUtilization))
	fmt.Fprintln(out, summary.HeldWaitingLine(res.HeldWaiting))
	if hasDrivers(jobs) {
		fmt.Fprintln(out, summary.DriversLine(res.DriverHeld))
	}
	if r.policy == simulator.EagerPolicy {
		fmt.Fprintln(out, summary.EagerDeployedLine(res.RegionsScheduled, count(numTasks(jobs), "task")))
	} else {
		fmt.Fprintln(out, summary.DeployedLine("regions scheduled:", res.RegionsScheduled, "", res.RegionsShared))
	}
	fmt.Fprintln(out, summary.RestartsLine(res.Failovers, res.RegionRestarts))
	if r.spec != nil {
		printSpeculation(out, r.spec, res, without)
		printJobsWithout(out, per, perWithout)
	}
	if res.Reclaims > 0 {
		fmt.Fprintln(out, summary.ReclaimsLine(res.Reclaims, res.ReclaimedSlots, res.WithdrawnSlots))
	}
	summary.PrintQueues(out, summaryQueues(res.Queues))
	fmt.Fprintln(out, res.Reason)
	if !res.Verdict.OK() {
		return negative(res.Reason)
	}
	return nil
}

// summaryQueues are the queues of a run for its summary.
func summaryQueues(queues []simulator.QueueStat) []summary.Queue {
	out := make([]summary.Queue, len(queues))
	for i, q := range queues {
		out[i] = summary.Queue{Name: q.Name, Guaranteed: q.Guaranteed, Max: q.Max, Peak: q.Peak, Share: q.Share}
	}
	return out
}

// summaryJob is a job of a run for its line of the summary.
func summaryJob(j simulator.JobResult) summary.Job {
	return summary.Job{Name: j.Name, State: j.State, Verdict: j.Verdict, Reason: j.Reason, Submitted: j.Submitted, FirstDeploy: j.FirstDeploy, Finished: j.Finished}
}

// eventOutcome is what became of an event of the events file, for its
// line of the summary.
func eventOutcome(o simulator.EventOutcome) summary.EventOutcome {
	return summary.EventOutcome{At: o.At, By: o.By, Action: o.Action, Job: o.Job, Priority: o.Priority, Old: o.Old, Applied: o.Applied, Reason: o.Reason}
}

// jobQueueNames lists the queue each job's file names ("" for none), in
// order.
func jobQueueNames(jobs []runfile.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Job.Submission().Queue
	}
	return out
}

// numTasks counts the tasks (subtasks) of the jobs.
func numTasks(jobs []runfile.Job) int {
	n := 0
	for _, j := range jobs {
		n += j.Job.NumSubtasks()
	}
	return n
}

// hasDrivers reports whether a job of the run has a driver.
func hasDrivers(jobs []runfile.Job) bool {
	for _, j := range jobs {
		if j.Job.Submission().Driver != nil {
			return true
		}
	}
	return false
}

// admissionText says how the jobs were admitted, for the summary.
func (r *jobsRun) admissionText(queues []admission.QueueConfig) string {
	if r.policy == simulator.EagerPolicy {
		return "no admission (every task asks for its own slot)"
	}
	return summary.AdmissionText(queues, r.queuePolicy)
}

// millis writes a virtual time in ms, or "-" for one that never came (a
// negative time).
func millis(t time.Duration) string { return summary.Millis(t) }

// timeline is the picture of a run of several jobs (drawn from pic): one
// row per slot, one colour per job unless --color-by says otherwise,
// drivers hatched (drivers: some job has one); its title says how the
// jobs were admitted as the summary does (admissionText).
func (r *jobsRun) timeline(res *simulator.Result, jobs []runfile.Job, per []simulator.JobResult, queues []admission.QueueConfig, pic *timeline.Recorder, drivers bool) timeline.Timeline {
	names := make([]string, len(per))
	var waits []string
	for i, j := range per {
		names[i] = j.Name
		switch {
		case j.FirstDeploy < 0:
			waits = append(waits, j.Name+" never ran a task")
		case j.Verdict == runfile.Steady: // a stream
			waits = append(waits, fmt.Sprintf("%s waited %s, still running", j.Name, millis(j.Wait())))
		case j.Finished < 0:
			waits = append(waits, fmt.Sprintf("%s waited %s, never finished", j.Name, millis(j.Wait())))
		default:
			waits = append(waits, fmt.Sprintf("%s waited %s, makespan %s", j.Name, millis(j.Wait()), millis(j.Makespan())))
		}
	}
	subtitle := fmt.Sprintf("makespan %d ms; slot time: %.0f%% with work progressing, %.0f%% held while waiting",
		res.Makespan.Milliseconds(), 100*res.WorkUtilization, 100*res.HeldWaiting)
	if drivers {
		subtitle += fmt.Sprintf(", %.0f%% held by drivers", 100*res.DriverHeld)
	}
	if res.Verdict == runfile.Steady {
		subtitle = streamSubtitle(res)
	}
	if len(per) <= 12 {
		subtitle += "; " + strings.Join(waits, "; ")
	}
	tl := timeline.Timeline{
		Title:    fmt.Sprintf("%s — %s, %s policy, %s, %s", count(len(per), "job"), r.mode, r.policy, r.admissionText(queues), count(res.Slots, "slot")),
		Subtitle: subtitle,
		Slots:    timelineRows(res, pic), Makespan: res.Makespan,
		Verdict: res.Verdict, Reason: res.Reason, ColorBy: timeline.ColorByJob, Jobs: names, Progress: true,
	}
	r.color.Apply(&tl, jobs)
	return tl
}

// applySpeculation checks the flags of speculation and stragglers and
// sets them in cfg, as for one job.
func (r *jobsRun) applySpeculation(c *cobra.Command, cfg *simulator.JobsConfig) error {
	if r.spec == nil {
		return nil
	}
	one := simulator.Config{Policy: cfg.Policy}
	if err := r.spec.apply(c, &one); err != nil {
		return err
	}
	cfg.Stragglers, cfg.StragglerFactor, cfg.Speculation = one.Stragglers, one.StragglerFactor, one.Speculation
	return nil
}

// printJobsWithout writes, per job, its speculative attempts and its
// makespan with speculation and without it (nothing without the second
// run).
func printJobsWithout(out io.Writer, with, without []simulator.JobResult) {
	if without == nil {
		return
	}
	for i, j := range with {
		fmt.Fprintf(out, "  job %q: %s, %d won; makespan %s with speculation, %s without\n", j.Name,
			count(j.SpeculativeStarted, "speculative attempt"), j.SpeculativeWon, makespanText(j), makespanText(without[i]))
	}
}

// makespanText renders a job's makespan, "-" if it did not finish.
func makespanText(j simulator.JobResult) string {
	if j.Verdict != runfile.Finished {
		return "-"
	}
	return millis(j.Makespan())
}
