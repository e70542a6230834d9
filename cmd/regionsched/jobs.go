package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/runcli"
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
	if err := checkJobQueues(jobs, queues); err != nil {
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
	if implicit := implicitQueues(jobs, queues); len(implicit) > 0 && r.policy != simulator.EagerPolicy {
		fmt.Fprintf(out, "not in the cluster file's queues, so created with --queue-policy %s: %s\n", r.queuePolicy, strings.Join(implicit, ", "))
	}
	for _, j := range per {
		fmt.Fprintln(out, jobLine(j))
	}
	for _, ev := range res.JobEvents {
		fmt.Fprintln(out, ev)
	}
	fmt.Fprintf(out, "makespan:          %d ms of virtual time, until the last event\n", res.Makespan.Milliseconds())
	fmt.Fprintf(out, "slot utilization:  %.1f%% of slot time with work progressing\n", 100*res.WorkUtilization)
	fmt.Fprintf(out, "held waiting:      %.1f%% of slot time held by tasks that could not progress\n", 100*res.HeldWaiting)
	if hasDrivers(jobs) {
		fmt.Fprintf(out, "drivers:           %.1f%% of slot time held by job drivers\n", 100*res.DriverHeld)
	}
	fmt.Fprintf(out, "%s %s%s\n", pad(deployedLabel(r.policy), 18), count(res.RegionsScheduled, "deployment"), sharedText(res))
	fmt.Fprintf(out, "restarts:          %d (regions restarted: %d)\n", res.Failovers, res.RegionRestarts)
	if r.spec != nil {
		printSpeculation(out, r.spec, res, without)
		printJobsWithout(out, per, perWithout)
	}
	if res.Reclaims > 0 {
		fmt.Fprintf(out, "reclaims:          %d (slots reclaimed: %d, withdrawn before the timeout: %d)\n", res.Reclaims, res.ReclaimedSlots, res.WithdrawnSlots)
	}
	printQueues(out, res.Queues)
	fmt.Fprintln(out, res.Reason)
	if !res.Verdict.OK() {
		return negative(res.Reason)
	}
	return nil
}

// printQueues prints, when queues are tenants (one has a guarantee or a
// maximum, or several held slots), one line per queue that has capacities
// or held slots: its guarantee, its maximum, the most slots it held at
// once and its share of the cluster's slot time.
func printQueues(out io.Writer, queues []simulator.QueueStat) {
	tenants, used := false, 0
	for i, q := range queues {
		tenants = tenants || q.Guaranteed > 0 || q.Max > 0
		parent := i+1 < len(queues) && strings.HasPrefix(queues[i+1].Name, q.Name+".") // (by name: its children follow it)
		if q.Peak > 0 && !parent {
			used++
		}
	}
	if !tenants && used < 2 {
		return
	}
	for _, q := range queues {
		if q.Peak == 0 && q.Guaranteed == 0 && q.Max == 0 {
			continue
		}
		maxText := "unlimited"
		if q.Max > 0 {
			maxText = fmt.Sprint(q.Max)
		}
		fmt.Fprintf(out, "queue %s: guaranteed %d, max %s, peak %s, %.1f%% of slot time\n", q.Name, q.Guaranteed, maxText, count(q.Peak, "slot"), 100*q.Share)
	}
}

// checkJobQueues refuses a run in which a job names a queue that has
// child queues (configured, or named by other jobs): jobs run in queues
// without children.
func checkJobQueues(jobs []runfile.Job, queues []admission.QueueConfig) error {
	names, jqs := make([]string, len(jobs)), make([]string, len(jobs))
	for i, j := range jobs {
		names[i], jqs[i] = j.Name, j.Job.Submission().Queue
	}
	if err := admission.CheckJobQueues(queues, names, jqs); err != nil {
		return badInput(err)
	}
	return nil
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

// implicitQueues lists, in order of first use, the queues jobs name that
// the cluster file's queues do not configure, when it configures some:
// the admission creates them with the default policy.
func implicitQueues(jobs []runfile.Job, queues []admission.QueueConfig) []string {
	if len(queues) == 0 {
		return nil
	}
	var out []string
	for _, j := range jobs {
		q := j.Job.Submission().Queue
		if q == "" {
			q = "root.default" // where a job that names no queue goes
		}
		if !slices.ContainsFunc(queues, func(c admission.QueueConfig) bool { return c.Name == q }) && !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out
}

// admissionText says how the jobs were admitted, for the summary.
func (r *jobsRun) admissionText(queues []admission.QueueConfig) string {
	if r.policy == simulator.EagerPolicy {
		return "no admission (every task asks for its own slot)"
	}
	if len(queues) == 0 {
		return "queue policy " + r.queuePolicy.String()
	}
	// The queues of the cluster file with their own policies and
	// capacities; the others (created for jobs naming them) take
	// --queue-policy.
	parts := make([]string, len(queues))
	for i, q := range queues {
		parts[i] = q.Name + " " + q.Policy.String()
		if q.GuaranteedSlots > 0 {
			parts[i] += fmt.Sprintf(" guaranteed %d", q.GuaranteedSlots)
		}
		if q.MaxSlots > 0 {
			parts[i] += fmt.Sprintf(" max %d", q.MaxSlots)
		}
	}
	return fmt.Sprintf("queues %s, any other queue %s", strings.Join(parts, ", "), r.queuePolicy)
}

func deployedLabel(p simulator.Policy) string {
	if p == simulator.EagerPolicy {
		return "tasks deployed:"
	}
	return "regions scheduled:"
}

func pad(s string, n int) string { return s + strings.Repeat(" ", max(0, n-len(s))) }

// millis writes a virtual time in ms, or "-" for one that never came (a
// negative time).
func millis(t time.Duration) string {
	if t < 0 {
		return "-"
	}
	return fmt.Sprintf("%d ms", t.Milliseconds())
}

// jobLine is a job's line of the summary (docs/job-file.md): its name,
// when it was submitted, first deployed and ended, its wait and makespan,
// and how it ended.
// A job that failed or was rejected did not finish: its finished and
// makespan are "-", and the outcome says when it ended.
func jobLine(j simulator.JobResult) string {
	finished, makespan := millis(j.Finished), millis(j.Makespan())
	if j.Verdict != runfile.Finished {
		finished, makespan = "-", "-"
	}
	return fmt.Sprintf("job %q: submitted %s, first deploy %s, finished %s, wait %s, makespan %s; %s",
		j.Name, millis(j.Submitted), millis(j.FirstDeploy), finished, millis(j.Wait()), makespan, jobOutcome(j))
}

// jobOutcome says how a job ended: "finished", its failure or rejection
// and when ("rejected at 0 ms: ..."), "running: ..." for a stream that
// runs on, or "never finished" and the admission state it was stuck in.
func jobOutcome(j simulator.JobResult) string {
	switch j.Verdict {
	case runfile.Finished:
		return "finished"
	case runfile.Deadlock:
		if j.State != admission.JobNew { // eager runs have no admission state
			return fmt.Sprintf("never finished (deadlock; stuck %s)", j.State)
		}
		return "never finished (deadlock)"
	}
	what, why, ok := strings.Cut(j.Reason, ": ") // "failed: ..." or "rejected: ..."
	if !ok || j.Finished < 0 {
		return cmp.Or(j.Reason, j.Verdict.String())
	}
	return fmt.Sprintf("%s at %s: %s", what, millis(j.Finished), why)
}

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
