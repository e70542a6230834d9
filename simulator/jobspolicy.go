package simulator

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// What a jobTimer event does.
const (
	jobSubmit uint32 = iota // the job arrives (its submitAtMs)
	jobStart                // its driver's startup time is over: its regions may ask
	jobEvent                // an event of the events file (task: its index)
)

// jobRun is one job of a multi-job run.
type jobRun struct {
	i           int
	rp          *regionPolicy // from its arrival: applies its Ready values
	port        *jobPort      // from its arrival
	submitted   time.Duration
	firstDeploy time.Duration
	finished    time.Duration
	driverSlot  int32 // -1: none
	ended       bool
	verdict     runfile.Verdict
	reason      string
	speculation scheduler.SpeculationStats // as of the run's end
}

// jobPort reads a submitted job's state in the admission.
type jobPort struct {
	m    *multijob.Scheduler
	name string
}

// State returns the job's state in the admission.
func (p *jobPort) State() admission.JobState {
	st, _ := p.m.Status(p.name)
	return st.Admission
}

// jobsPolicy runs several jobs on one cluster through a
// multijob.Scheduler: a scheduler per job behind the admission they
// share. Every input of an instant (arrivals, task ends, events, timeouts)
// goes in as it happens; when the instant is over (endInstant) the
// admission decides over all of it, and the Ready is applied: a slot one
// job gives back may be granted to another in the same step.
type jobsPolicy struct {
	e      *engine
	set    *jobSet
	cfg    JobsConfig
	m      *multijob.Scheduler
	runs   []*jobRun
	byName map[string]*jobRun
	// busy: inputs were given since the last decision.
	busy bool
	// outcomes are what became of the events applied so far; audited
	// collects the admission's audit records of the event being applied.
	outcomes []EventOutcome
	audited  []admission.AuditRecord
	// reclaims counts the reclaims (one per claimant and victim at a
	// time), reclaimed the slots they took, withdrawn those left to their
	// jobs before the timeout.
	reclaims, reclaimed, withdrawn int
	// kept is the slots the admission kept for jobs as of the last
	// decision, by slot, and keptOrder the same in the admission's order
	// (Config.Detail only); keptNow is keptChanged's scratch.
	kept               map[int32]admission.KeptSlot
	keptOrder, keptNow []admission.KeptSlot
	// queues tracks what each queue holds over time (queuestats.go).
	queues queueTrack
}

func newJobsPolicy(e *engine, cfg JobsConfig, set *jobSet) (*jobsPolicy, error) {
	p := &jobsPolicy{e: e, set: set, cfg: cfg, byName: map[string]*jobRun{}}
	m, err := multijob.New(multijob.Config{
		// The admission hands out the modelled slots, and judges the jobs
		// against the cluster as configured (see jobsExtraSlots).
		Admission: admission.Config{Slots: e.poolSlots(), Cluster: e.cfg.Cluster, Matching: cfg.Matching, Queues: cfg.Queues,
			DefaultPolicy: cfg.DefaultPolicy, CreateQueues: true, Logger: e.log.Named("admission"), Audit: p},
		Jobs: scheduler.Config{
			// The admission decides who waits; a wait nobody can end is
			// reported as a deadlock, not as timeouts 5 minutes later
			// (0: none).
			Pool:                     slotpool.Config{Timeout: cfg.Timeout},
			SelectiveShare:           cfg.SelectiveShare,
			DisableHybridSlotSharing: cfg.DisableHybridSlotSharing,
		},
		Logger: e.log,
	})
	if err != nil {
		return nil, err
	}
	p.m = m
	for i, j := range cfg.Jobs {
		r := &jobRun{i: i, firstDeploy: -1, finished: -1, driverSlot: -1}
		p.runs = append(p.runs, r)
		p.byName[j.Name] = r
	}
	return p, nil
}

func (p *jobsPolicy) at() time.Time { return p.e.at() }

func (p *jobsPolicy) start() {
	// Jobs arriving at the same time are handed to the admission in the
	// order given, first in their instant (their tie-breaker is their
	// index); the admission orders them by its policy, ties by name.
	for i, j := range p.cfg.Jobs {
		p.e.model.cal.add(timed{at: j.Job.Submission().SubmitAt, order: uint64(i), kind: jobTimer, task: int32(i), version: jobSubmit})
	}
	// Events at the same time apply in the order given, last in their
	// instant: after the jobs arriving and the tasks ending then (see
	// eventsOrder), so an event finds a job that ends at its instant
	// ended, and is refused; but, as every input of the instant, before
	// the admission decides over it: tasks of no duration that its
	// decision starts end after the event.
	for i, ev := range p.cfg.Events {
		p.e.model.cal.add(timed{at: ev.At, order: eventsOrder - uint64(len(p.cfg.Events)) + uint64(i), kind: jobTimer, task: int32(i), version: jobEvent})
	}
}

// eventsOrder bounds the tie-breakers of the events of the events file
// from above: they are the largest of their instant, even with seeded
// ties (calendar.nextOrder), whose random tie-breakers reach theirs with a
// chance of (lines of the events file) in 2^64.
const eventsOrder = math.MaxUint64

// apply carries out an event of the events file: authorized by the
// admission (and audited there), refused with a Refused trace event. A
// kill cancels the job's tasks and ends it when the instant is over. An
// event for a job that has not arrived yet, or that never reached the
// admission, is refused here, with the same trace event and audit record.
// Either way the outcome is recorded for the Result.
func (p *jobsPolicy) apply(ev runfile.JobEvent) {
	by := admission.Principal{Name: ev.By, Role: p.cfg.Users[ev.By]}
	out := EventOutcome{JobEvent: ev}
	if r := p.byName[ev.Job]; r.port == nil {
		out.Reason = fmt.Sprintf("the job has not arrived yet (it arrives at %d ms)", p.cfg.Jobs[r.i].Job.Submission().SubmitAt.Milliseconds())
		if r.ended {
			out.Reason = fmt.Sprintf("the job has ended (%s at %d ms)", r.verdict, r.finished.Milliseconds())
		}
		rec := admission.AuditRecord{At: p.at(), By: by, Action: ev.Action, Job: ev.Job, Reason: out.Reason}
		if ev.Action == admission.ActionSetPriority {
			rec.Old, rec.New = filePriority(p.cfg.Jobs[r.i]), ev.Priority
		}
		if err := p.forward(rec); err != nil {
			p.e.log.Warn("audit sink failed", zap.Error(err))
		}
		p.refuse(out)
		return
	}
	p.audited = p.audited[:0]
	var err error
	switch ev.Action {
	case admission.ActionSetPriority:
		err = p.m.SetPriority(p.at(), by, ev.Job, ev.Priority)
	case admission.ActionKill:
		err = p.m.Kill(p.at(), by, ev.Job)
	}
	if err == nil {
		out.Applied = true
		if len(p.audited) > 0 {
			out.Old = p.audited[0].Old
		}
		p.outcomes = append(p.outcomes, out)
		what := "kill"
		if ev.Action == admission.ActionSetPriority {
			what = fmt.Sprintf("priority %d", ev.Priority)
		}
		p.e.emitDetail(runfile.Event{At: p.e.now(), Kind: runfile.Change, Job: ev.Job, By: ev.By, Reason: what, Slot: runfile.NoSlot, Region: runfile.NoRegion})
		return
	}
	var re *admission.RefusedError
	out.Reason = err.Error()
	if errors.As(err, &re) {
		out.Reason = re.Reason
	}
	p.refuse(out)
}

// refuse records a refused event and traces it.
func (p *jobsPolicy) refuse(out EventOutcome) {
	p.outcomes = append(p.outcomes, out)
	p.e.emit(runfile.Event{At: p.e.now(), Kind: runfile.Refused, Job: out.Job, By: out.By, Reason: fmt.Sprintf("%s: %s", out.Action, out.Reason), Slot: runfile.NoSlot, Region: runfile.NoRegion})
}

// Audit receives the admission's audit records: it keeps those of the
// event being applied (for its outcome) and hands every one on to
// JobsConfig.Audit.
func (p *jobsPolicy) Audit(rec admission.AuditRecord) error {
	p.audited = append(p.audited, rec)
	return p.forward(rec)
}

// forward hands an audit record to JobsConfig.Audit, if set.
func (p *jobsPolicy) forward(rec admission.AuditRecord) error {
	if p.cfg.Audit == nil {
		return nil
	}
	return p.cfg.Audit.Audit(rec)
}

// fire handles a jobTimer event. Jobs arriving at the same time compete
// in policy order: the admission decides once the instant is over.
func (p *jobsPolicy) fire(i int32, what uint32) {
	p.busy = true
	if what == jobEvent {
		p.apply(p.cfg.Events[i])
		return
	}
	r := p.runs[i]
	switch what {
	case jobSubmit:
		p.submit(r)
	case jobStart:
		if !r.ended {
			p.refused("starting the job", p.m.StartJob(p.at(), p.cfg.Jobs[i].Name))
		}
	}
}

// refused logs an input the scheduler refused (a report about a job that
// ended in this instant).
func (p *jobsPolicy) refused(what string, err error) {
	if err != nil {
		p.e.log.Debug(what+" refused", zap.Error(err))
	}
}

// submit hands a job to the multi-job scheduler.
func (p *jobsPolicy) submit(r *jobRun) {
	job := p.cfg.Jobs[r.i]
	sub := job.Job.Submission()
	rs := p.set.regions[r.i].ForCluster(p.e.cfg.Cluster, p.cfg.Matching)
	spec := multijob.JobSpec{JobSpec: admission.JobSpec{Name: job.Name, Queue: sub.Queue, User: sub.User, Priority: sub.Priority}, Regions: rs}
	if p.cfg.Speculation.ValidateJob(rs) == nil {
		spec.Speculation = p.cfg.Speculation // a job none of whose tasks may be speculated runs without it
	}
	if sub.Driver != nil {
		d := sub.Driver.Resources
		spec.Driver = &d
		spec.StartAtOnce = sub.Driver.Startup == 0 // (started at the instant of its grant: jobsReady)
	}
	if g := sub.Gang; g != nil {
		spec.Gang = &admission.Gang{MinSlots: g.MinSlots, Hard: g.Hard, Timeout: g.Timeout}
		if g.Timeout == 0 {
			spec.Gang.Timeout = admission.NoGangWait // timeoutMs: 0, not the default
		}
		if g.MinSlots == 0 {
			// Capped at the cluster as configured and at the queue's
			// maxSlots: a default never rejects a job that runs region
			// by region.
			limit := p.e.clusterSize
			if m := admission.MaxSlotsOf(p.cfg.Queues, sub.Queue); m > 0 {
				limit = min(limit, m)
			}
			spec.Gang.MinSlots = rs.GangMinSlots(sub.Driver != nil, limit)
		}
	}
	r.submitted = p.e.now()
	if err := p.m.Submit(p.at(), spec); err != nil {
		var je *multijob.JobError
		if errors.As(err, &je) {
			err = je.Err
		}
		p.end(r, runfile.Failed, fmt.Sprintf("failed: %v", err))
		return
	}
	r.port = &jobPort{m: p.m, name: job.Name}
	r.rp = &regionPolicy{e: p.e, rs: rs, off: p.set.offsets[r.i], waiting: func() []scheduler.RegionID {
		st, err := p.m.Status(job.Name)
		if err != nil {
			return nil
		}
		return st.Scheduler.Waiting
	}}
}

// end records a job's end and frees its driver's slot.
func (p *jobsPolicy) end(r *jobRun, v runfile.Verdict, reason string) {
	if r.ended {
		return
	}
	r.ended, r.verdict, r.reason, r.finished = true, v, reason, p.e.now()
	if r.rp != nil {
		r.rp.withdrawAsks()
	}
	if r.driverSlot >= 0 {
		p.e.vacateDriver(r.i, r.driverSlot, v == runfile.Finished)
		r.driverSlot = -1
	}
}

// task returns the job of a union task, its name and the task's local id
// and attempt, for a report.
func (p *jobsPolicy) task(v int32) (*jobRun, string, topology.ExecutionVertexID, scheduler.Attempt) {
	i, local := p.set.of(v)
	return p.runs[i], p.cfg.Jobs[i].Name, local, scheduler.Attempt(p.e.model.runs[v].attempt)
}

func (p *jobsPolicy) finished(v int32) {
	if r, name, local, attempt := p.task(v); r.rp != nil && !r.ended {
		p.busy = true
		p.refused("finish report", p.m.TaskFinished(p.at(), name, local, attempt))
	}
}

func (p *jobsPolicy) failed(v, _ int32) {
	if r, name, local, attempt := p.task(v); r.rp != nil && !r.ended {
		p.busy = true
		p.refused("failure report", p.m.TaskFailed(p.at(), name, local, attempt))
	}
}

func (p *jobsPolicy) afterEvent() {}

func (p *jobsPolicy) tick() {
	p.busy = true
	p.refused("tick", p.m.Tick(p.at()))
}

func (p *jobsPolicy) nextDeadline() (time.Duration, bool) {
	t, ok := p.m.NextDeadline()
	if !ok {
		return 0, false
	}
	at := t.Sub(epoch)
	if at >= endOfTime {
		// Beyond what virtual time holds (a timeout of about 292 years
		// after something): it never comes.
		return 0, false
	}
	if p.busy && at <= p.e.now() {
		// Due now and given to the scheduler already: the admission's
		// timers fire with the instant's decision (endInstant), after
		// which the deadline is armed again.
		return 0, false
	}
	return at, true
}

// stopped never ends a multi-job run early: a failed job leaves the
// others running.
func (p *jobsPolicy) stopped() (error, bool) { return nil, false }

func (p *jobsPolicy) waitingForSlots() []int32 {
	var out []int32
	for _, r := range p.runs {
		if r.rp == nil || r.ended {
			continue
		}
		st, _ := p.m.Status(p.cfg.Jobs[r.i].Name)
		for _, reg := range st.Scheduler.Waiting {
			for _, v := range r.rp.rs.Members(reg) {
				out = append(out, r.rp.off+int32(v))
			}
		}
	}
	return out
}

func (p *jobsPolicy) done() bool {
	for _, r := range p.runs {
		if !r.ended {
			return false
		}
	}
	return true
}

func (p *jobsPolicy) stats(res *Result) {
	res.Reclaims, res.ReclaimedSlots, res.WithdrawnSlots = p.reclaims, p.reclaimed, p.withdrawn
	res.Queues = p.queueStats(res.Makespan, res.Slots)
	res.JobEvents = p.outcomes
	var spec scheduler.SpeculationStats
	for _, r := range p.runs {
		if r.rp == nil {
			continue
		}
		st, _ := p.m.Status(p.cfg.Jobs[r.i].Name)
		s := st.Scheduler.Stats
		res.RegionsScheduled += s.RegionsDeployed
		res.RegionsShared += s.RegionsShared
		res.Failovers += s.Failovers
		res.RegionRestarts += s.RegionRestarts
		res.Restarts = append(res.Restarts, r.rp.restarts...)
		spec.Requested += st.Speculation.Requested
		spec.Started += st.Speculation.Started
		spec.Won += st.Speculation.Won
		r.speculation = st.Speculation
	}
	res.Speculation = p.e.speculationSummary(spec)
}

// result sets the verdict of a multi-job run: finished if every job
// finished; deadlock if some job never ended and is not a stream (naming
// the tasks and drivers holding slots while waiting, the tasks waiting
// for slots and the jobs waiting for their drivers' slots, then the jobs
// that failed or were rejected, as a failed run names them); failed if
// every job ended or streams and some failed or was rejected; running
// (Steady), as for one job, if the jobs that never end are streams fully
// deployed and every other job finished (or was killed). It names jobs,
// and the tasks of jobs, in the order of the jobs' names
// (summary.CompareNames), whatever the order of the job files.
func (p *jobsPolicy) result(r *Result) {
	e := p.e
	now := e.now()
	waitingTasks := e.model.waiting()
	var stuck, failed, streams []string
	unbounded, consumers := 0, 0
	runs := slices.SortedStableFunc(slices.Values(p.runs), func(a, b *jobRun) int {
		return summary.CompareNames(p.cfg.Jobs[a.i].Name, p.cfg.Jobs[b.i].Name)
	})
	for _, run := range runs {
		name := p.cfg.Jobs[run.i].Name
		if !run.ended {
			if u, c, ok := e.streaming(run.i, waitingTasks); ok && run.rp != nil {
				// A stream never finishes: it runs on, it is not stuck.
				run.verdict, run.reason = runfile.Steady, steadyReason(u, c)
				streams, unbounded, consumers = append(streams, name), unbounded+u, consumers+c
				continue
			}
		}
		switch {
		case !run.ended:
			stuck = append(stuck, name)
		case run.verdict != runfile.Finished && run.verdict != runfile.Killed:
			failed = append(failed, fmt.Sprintf("%s %s", name, run.reason))
		}
	}
	switch {
	case len(stuck) > 0:
		var holding []string
		for _, run := range runs {
			if !run.ended && run.verdict != runfile.Steady && run.driverSlot >= 0 {
				holding = append(holding, p.cfg.Jobs[run.i].Name+":"+runfile.DriverTask)
			}
		}
		tasks := e.names(waitingTasks)
		summary.SortByJob(tasks)
		holding = append(holding, tasks...)
		waiting := e.names(p.waitingForSlots())
		summary.SortByJob(waiting)
		var noDriver []string
		for _, run := range runs {
			if !run.ended && run.port != nil && run.driverSlot < 0 && p.cfg.Jobs[run.i].Job.Submission().Driver != nil {
				noDriver = append(noDriver, p.cfg.Jobs[run.i].Name)
			}
		}
		var parts []string
		if len(holding) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s slots while waiting", listNames(holding, 12), verb(len(holding), "holds", "hold")))
		}
		if len(waiting) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s for a slot", listNames(waiting, 12), verb(len(waiting), "waits", "wait")))
		}
		if len(noDriver) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s for a driver's slot", listNames(noDriver, 12), verb(len(noDriver), "waits", "wait")))
		}
		if len(parts) == 0 { // nothing is stuck on slots
			if r.Blocked = p.blocked(); len(r.Blocked) > 0 {
				parts = append(parts, fmt.Sprintf("%s can never start: a result %s %s (blocking, or selective hybrid from another region) is never complete",
					listNames(r.Blocked, 12), verb(len(r.Blocked), "it", "they"), verb(len(r.Blocked), "reads", "read")))
			}
		}
		r.Verdict = runfile.Deadlock
		r.Holding, r.Waiting = holding, waiting
		r.Reason = summary.WithFailed(fmt.Sprintf("deadlock: at %d ms %s %s %s: %s", now.Milliseconds(), verb(len(stuck), "job", "jobs"), listNames(stuck, 12),
			verb(len(stuck), "never finishes", "never finish"), strings.Join(parts, "; ")), failed, len(p.runs))
		for _, run := range runs {
			if !run.ended && run.verdict != runfile.Steady {
				run.verdict, run.reason = runfile.Deadlock, "never finished"
			}
		}
	case len(failed) > 0:
		r.Verdict = runfile.Failed
		r.Reason = summary.Failed(failed, len(p.runs))
	default:
		var killed []string
		// The jobs that finished, and when the last of them did (not when
		// the run's last timer or event was).
		finished, last := 0, time.Duration(-1)
		for _, run := range runs {
			switch {
			case run.verdict == runfile.Killed:
				killed = append(killed, fmt.Sprintf("%s killed at %d ms", p.cfg.Jobs[run.i].Name, run.finished.Milliseconds()))
			case run.ended && run.verdict == runfile.Finished:
				finished, last = finished+1, max(last, run.finished)
			}
		}
		at := ""
		if last >= 0 {
			at = fmt.Sprintf(" at %d ms", last.Milliseconds())
		}
		r.Verdict = runfile.Finished
		r.Reason = fmt.Sprintf("finished: %s finished%s", allOf(len(p.runs), "job"), at)
		if len(streams) > 0 {
			r.Verdict = runfile.Steady
			r.Reason = fmt.Sprintf("%s (%s %s); %d of %s finished%s", steadyReason(unbounded, consumers),
				verb(len(streams), "stream", "streams"), listNames(streams, 12), finished, count(len(p.runs), "job"), at)
		} else if len(killed) > 0 {
			r.Reason = fmt.Sprintf("finished: %d of %s finished%s", finished, count(len(p.runs), "job"), at)
		}
		if len(killed) > 0 {
			r.Reason += ", " + listNames(killed, 12)
		}
	}
}

// jobResults reports each job.
func (e *engine) jobResults() []JobResult {
	out := make([]JobResult, len(e.set.jobs))
	var waitingTasks []int32 // eager: the tasks holding slots while waiting, once needed
	for i, j := range e.set.jobs {
		out[i] = JobResult{Name: j.Name, Submitted: j.Job.Submission().SubmitAt, FirstDeploy: -1, Finished: -1}
		if e.jobs == nil { // eager: no admission; a job finished if its tasks did
			// It finished with its last task, or runs on if it is a
			// stream fully deployed.
			ej := e.eagerJobs[i]
			out[i].FirstDeploy, out[i].Verdict = ej.firstDeploy, runfile.Finished
			for v := e.set.offsets[i]; v < e.set.offsets[i+1]; v++ {
				if e.model.tasks[v].phase != finished {
					out[i].Verdict, out[i].Reason = runfile.Deadlock, "never finished"
					if waitingTasks == nil {
						waitingTasks = e.model.waiting()
					}
					if u, c, ok := e.streaming(i, waitingTasks); ok {
						out[i].Verdict, out[i].Reason = runfile.Steady, steadyReason(u, c)
					}
					break
				}
			}
			if out[i].Verdict == runfile.Finished {
				out[i].Finished = ej.lastFinish
			}
			continue
		}
		run := e.jobs.runs[i]
		out[i].Verdict, out[i].Reason, out[i].FirstDeploy = run.verdict, run.reason, run.firstDeploy
		out[i].SpeculativeStarted, out[i].SpeculativeWon = run.speculation.Started, run.speculation.Won
		if run.ended {
			out[i].Finished = run.finished
		}
		if run.port != nil {
			out[i].State = run.port.State()
		}
	}
	return out
}
