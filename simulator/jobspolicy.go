package simulator

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// What a jobTimer event does.
const (
	jobSubmit uint32 = iota // the job arrives (its submitAtMs)
	jobStart                // its driver's startup time is over: its regions may ask
	jobEvent                // an event of the events file (task: its index)
)

// driverTask is the task name of a driver in traces (SPEC.md section 5).
const driverTask = "driver"

// jobRun is one job of a multi-job run.
type jobRun struct {
	i           int
	rp          *regionPolicy // from its arrival
	port        *admission.Port
	submitted   time.Duration
	firstDeploy time.Duration
	finished    time.Duration
	driverSlot  int32 // -1: none
	arrived     bool  // submitted to the admission
	deployed    bool  // the admission was told its first region deployed
	ended       bool
	killing     bool // its scheduler is being canceled for a kill
	verdict     Verdict
	reason      string
}

// jobsPolicy runs several jobs, each with its own scheduler (a
// regionPolicy), on one cluster shared through a Queues admission. It
// carries the admission's decisions between the jobs: a slot one job's
// pool gives back may be granted to another in the same step.
type jobsPolicy struct {
	e    *engine
	set  *jobSet
	cfg  JobsConfig
	q    *admission.Queues
	runs []*jobRun
	// byID finds a run by its admission job id (ids follow the order of
	// arrival, not of the jobs given).
	byID map[admission.JobID]*jobRun
}

func newJobsPolicy(e *engine, cfg JobsConfig, set *jobSet) (*jobsPolicy, error) {
	// The admission hands out the modelled slots, and judges the jobs
	// against the cluster as configured (see jobsExtraSlots).
	q, err := admission.New(admission.Config{Slots: e.poolSlots(), Cluster: e.cfg.Cluster, Matching: cfg.Matching, Queues: cfg.Queues,
		DefaultPolicy: cfg.DefaultPolicy, CreateQueues: true, Logger: e.log.Named("admission"), Audit: cfg.Audit})
	if err != nil {
		return nil, err
	}
	p := &jobsPolicy{e: e, set: set, cfg: cfg, q: q, byID: map[admission.JobID]*jobRun{}}
	for i := range cfg.Jobs {
		p.runs = append(p.runs, &jobRun{i: i, firstDeploy: -1, finished: -1, driverSlot: -1})
	}
	return p, nil
}

func (p *jobsPolicy) at() time.Time { return p.e.at() }

func (p *jobsPolicy) start() {
	// Jobs arriving at the same time arrive in the order given (the
	// order of the job files): their tie-breaker is their index.
	for i, j := range p.cfg.Jobs {
		p.e.model.cal.add(timed{at: j.Job.Submission().SubmitAt, order: uint64(i), kind: jobTimer, task: int32(i), version: jobSubmit})
	}
	// Events at the same time apply in the order given, after the jobs
	// arriving then.
	for i, ev := range p.cfg.Events {
		p.e.model.cal.add(timed{at: ev.At, order: uint64(len(p.cfg.Jobs) + i), kind: jobTimer, task: int32(i), version: jobEvent})
	}
}

// apply carries out an event of the events file: authorized by the
// admission (and audited there), refused with a Refused trace event. A
// kill cancels the job's scheduler first (its tasks stop, its slots go
// back), then ends it in the admission.
func (p *jobsPolicy) apply(ev JobEvent) {
	by := admission.Principal{Name: ev.By, Role: p.cfg.Users[ev.By]}
	var err error
	switch ev.Action {
	case admission.ActionSetPriority:
		err = p.q.SetPriority(p.at(), by, ev.Job, ev.Priority)
	case admission.ActionKill:
		if p.q.Authorize(by, admission.ActionKill, ev.Job, 0) != nil {
			err = p.q.Kill(p.at(), by, ev.Job) // refused, and audited
			break
		}
		var r *jobRun
		for _, o := range p.runs {
			if p.cfg.Jobs[o.i].Name == ev.Job {
				r = o
			}
		}
		reason := fmt.Sprintf("killed: by %s", ev.By)
		if r.rp != nil && !r.ended {
			r.killing = true
			r.rp.input("kill", r.rp.sched.Cancel(r.rp.at(), errors.New(reason)))
		}
		if !r.ended {
			p.end(r, Killed, reason)
		}
		err = p.q.Kill(p.at(), by, ev.Job)
	}
	if err != nil {
		var re *admission.RefusedError
		why := err.Error()
		if errors.As(err, &re) {
			why = re.Reason
		}
		p.e.emit(Event{At: p.e.now(), Kind: Refused, Job: ev.Job, By: ev.By, Reason: fmt.Sprintf("%s: %s", ev.Action, why), Slot: NoSlot, Region: NoRegion})
	}
}

// fire handles a jobTimer event.
func (p *jobsPolicy) fire(i int32, what uint32) {
	if what == jobEvent {
		p.apply(p.cfg.Events[i])
		p.pump()
		return
	}
	r := p.runs[i]
	if what == jobSubmit && r.arrived {
		return // it arrived with another job of the same time
	}
	switch what {
	case jobSubmit:
		// Every job arriving now arrives together, so that they compete
		// in policy order.
		at := p.cfg.Jobs[i].Job.Submission().SubmitAt
		p.q.Batch(func() {
			for _, o := range p.runs {
				if !o.arrived && p.cfg.Jobs[o.i].Job.Submission().SubmitAt == at {
					o.arrived = true
					p.submit(o)
				}
			}
		})
	case jobStart:
		if !r.ended {
			r.rp.input("starting the job", r.rp.sched.Start(r.rp.at()))
		}
	}
	p.pump()
}

// submit hands a job to the admission and gives it its scheduler.
func (p *jobsPolicy) submit(r *jobRun) {
	job := p.cfg.Jobs[r.i]
	sub := job.Job.Submission()
	rs := p.set.regions[r.i].ForCluster(p.e.cfg.Cluster, p.cfg.Matching)
	spec := admission.JobSpec{Name: job.Name, Queue: sub.Queue, User: sub.User, Priority: sub.Priority}
	if sub.Driver != nil {
		d := sub.Driver.Resources
		spec.Driver = &d
	}
	if g := sub.Gang; g != nil {
		spec.Gang = &admission.Gang{MinSlots: g.MinSlots, Hard: g.Hard, Timeout: g.Timeout}
		if g.Timeout == 0 {
			spec.Gang.Timeout = admission.NoGangWait // timeoutMs: 0, not the default
		}
		if g.MinSlots == 0 {
			// Capped at the cluster as configured: a default never
			// rejects a job that runs region by region.
			spec.Gang.MinSlots = rs.GangMinSlots(sub.Driver != nil, p.e.clusterSize)
		}
	}
	largest := 0
	for reg := range rs.NumRegions() {
		if rs.SlotCount(region.ID(reg)) > rs.SlotCount(region.ID(largest)) {
			largest = reg
		}
	}
	var profiles []resource.Profile
	for _, s := range rs.Slots(region.ID(largest)) {
		profiles = append(profiles, s.Profile)
	}
	spec.Largest = resource.Tally(profiles)
	spec.LargestName = fmt.Sprintf("region %d %s", largest, rs.MemberNames(region.ID(largest), 4))
	r.submitted = p.e.now()
	port, err := p.q.Submit(p.at(), spec)
	if err != nil {
		p.end(r, Failed, fmt.Sprintf("failed: %v", err))
		return
	}
	r.port = port
	p.byID[port.ID()] = r
	if port.State() == admission.JobRejected {
		p.end(r, Failed, fmt.Sprintf("rejected: %v", port.Err()))
		return
	}
	timeout := p.cfg.Timeout
	if timeout == 0 {
		// The admission decides who waits; a wait nobody can end is
		// reported as a deadlock, not as timeouts 5 minutes later.
		timeout = slotpool.NoTimeout
	}
	r.rp = &regionPolicy{e: p.e, rs: rs, off: p.set.offsets[r.i], sched: p.e.store.scheduler(rs, scheduler.Config{
		Pool: slotpool.Config{Matching: p.cfg.Matching, Timeout: timeout,
			// Slots a job does not use go back to the admission at once,
			// for the other jobs.
			IdleTimeout: time.Nanosecond, ReturnFreed: true},
		Admission: port,
		Logger:    p.e.log.Named(job.Name),
	})}
	r.rp.onReady = func(rd scheduler.Ready) { p.ready(r, rd) }
	r.rp.input("admission", r.rp.sched.Admit(r.rp.at())) // the capacity message
	if sub.Driver == nil {
		r.rp.input("starting the job", r.rp.sched.Start(r.rp.at()))
	}
}

// ready follows one job's Ready: its first deployed region ends its
// starting; its end frees its driver and tells the admission.
func (p *jobsPolicy) ready(r *jobRun, rd scheduler.Ready) {
	if len(rd.Deploy) > 0 {
		if r.firstDeploy < 0 {
			r.firstDeploy = p.e.now()
		}
		if !r.deployed {
			r.deployed = true
			r.port.Deployed(p.at())
		}
	}
	if rd.Job == nil {
		return
	}
	switch rd.Job.State {
	case scheduler.JobFinished:
		p.end(r, Finished, "")
	case scheduler.JobFailed:
		if r.killing {
			return // apply ends it, as killed
		}
		p.end(r, Failed, failedReason(rd.Job.Err))
	}
}

// end records a job's end, frees its driver's slot and tells the
// admission.
func (p *jobsPolicy) end(r *jobRun, v Verdict, reason string) {
	if r.ended {
		return
	}
	r.ended, r.verdict, r.reason, r.finished = true, v, reason, p.e.now()
	if r.driverSlot >= 0 {
		p.e.vacateDriver(r.i, r.driverSlot)
		r.driverSlot = -1
	}
	if r.port == nil || r.port.State().Terminal() || v == Killed {
		return // (a killed job is ended in the admission by Kill)
	}
	var err error
	if v == Finished {
		err = r.port.Finished(p.at())
	} else {
		err = r.port.Failed(p.at(), fmt.Errorf("%s", reason))
	}
	if err != nil {
		p.e.log.Debug("admission refused the end of a job", zap.Error(err))
	}
}

// pump carries the admission's decisions to every job until quiet:
// drivers granted are deployed (their jobs start after the startup
// time), and a job whose port has messages (grants, reclaims) takes them.
func (p *jobsPolicy) pump() {
	for {
		progressed := false
		for _, ev := range p.q.Events() {
			if ev.Kind == admission.StateChanged && ev.To == admission.JobFailed {
				// the admission ended it (a hard gang that timed out):
				// nothing of it runs, its scheduler is dropped
				if r := p.byID[ev.ID]; !r.ended {
					p.end(r, Failed, failedReason(r.port.Err()))
					progressed = true
				}
				continue
			}
			if ev.Kind != admission.DriverGranted {
				continue
			}
			r := p.byID[ev.ID]
			r.driverSlot = int32(ev.Slot)
			if r.firstDeploy < 0 {
				r.firstDeploy = p.e.now()
			}
			p.e.occupyDriver(r.i, r.driverSlot)
			startup := p.cfg.Jobs[r.i].Job.Submission().Driver.Startup
			p.e.model.cal.add(timed{at: p.e.now() + startup, order: p.e.model.cal.nextOrder(), kind: jobTimer, task: int32(r.i), version: jobStart})
			progressed = true
		}
		for _, r := range p.runs {
			if r.rp != nil && !r.ended && r.port.Pending() {
				r.rp.input("admission", r.rp.sched.Admit(r.rp.at()))
				progressed = true
			}
		}
		if !progressed {
			return
		}
	}
}

// run returns the job of a union task.
func (p *jobsPolicy) run(v int32) *jobRun {
	i, _ := p.set.of(v)
	return p.runs[i]
}

func (p *jobsPolicy) finished(v int32) {
	if r := p.run(v); r.rp != nil && !r.ended {
		r.rp.finished(v)
	}
	p.pump()
}

func (p *jobsPolicy) failed(v, slot int32) {
	if r := p.run(v); r.rp != nil && !r.ended {
		r.rp.failed(v, slot)
	}
	p.pump()
}

func (p *jobsPolicy) afterEvent() { p.pump() }

func (p *jobsPolicy) tick() {
	now := p.e.now()
	for _, r := range p.runs {
		if r.rp == nil || r.ended {
			continue
		}
		if t, ok := r.rp.nextDeadline(); ok && t <= now {
			r.rp.tick()
		}
	}
	p.q.Tick(p.at())
	p.pump()
}

func (p *jobsPolicy) nextDeadline() (time.Duration, bool) {
	var at time.Duration
	ok := false
	for _, r := range p.runs {
		if r.rp == nil || r.ended {
			continue
		}
		if t, tok := r.rp.nextDeadline(); tok && (!ok || t < at) {
			at, ok = t, true
		}
	}
	if t, tok := p.q.NextDeadline(); tok && (!ok || t.Sub(epoch) < at) {
		at, ok = t.Sub(epoch), true
	}
	return at, ok
}

// stopped never ends a multi-job run early: a failed job leaves the
// others running.
func (p *jobsPolicy) stopped() (error, bool) { return nil, false }

func (p *jobsPolicy) waitingForSlots() []int32 {
	var out []int32
	for _, r := range p.runs {
		if r.rp != nil && !r.ended {
			out = append(out, r.rp.waitingForSlots()...)
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
	for _, r := range p.runs {
		if r.rp == nil {
			continue
		}
		s := r.rp.sched.Status().Stats
		res.RegionsScheduled += s.RegionsDeployed
		res.Failovers += s.Failovers
		res.RegionRestarts += s.RegionRestarts
		res.Restarts = append(res.Restarts, r.rp.restarts...)
	}
}

// result sets the verdict of a multi-job run: finished if every job
// finished; deadlock if some job never ended and is not a stream (naming
// the tasks and drivers holding slots while waiting, the tasks waiting
// for slots and the jobs waiting for their drivers' slots); failed if
// every job ended or streams and some failed or was rejected; running
// (Steady), as for one job, if the jobs that never end are streams fully
// deployed and every other job finished (or was killed).
func (p *jobsPolicy) result(r *Result) {
	e := p.e
	now := e.now()
	waitingTasks := e.model.waiting()
	var stuck, failed, streams []string
	unbounded, consumers := 0, 0
	for _, run := range p.runs {
		name := p.cfg.Jobs[run.i].Name
		if !run.ended {
			if u, c, ok := e.streaming(run.i, waitingTasks); ok && run.rp != nil {
				// A stream never finishes: it runs on, it is not stuck.
				run.verdict, run.reason = Steady, steadyReason(u, c)
				streams, unbounded, consumers = append(streams, name), unbounded+u, consumers+c
				continue
			}
		}
		switch {
		case !run.ended:
			stuck = append(stuck, name)
		case run.verdict != Finished && run.verdict != Killed:
			failed = append(failed, fmt.Sprintf("%s %s", name, run.reason))
		}
	}
	switch {
	case len(stuck) > 0:
		var holding []string
		for _, run := range p.runs {
			if !run.ended && run.verdict != Steady && run.driverSlot >= 0 {
				holding = append(holding, p.cfg.Jobs[run.i].Name+":"+driverTask)
			}
		}
		holding = append(holding, e.names(waitingTasks)...)
		waiting := e.names(p.waitingForSlots())
		var noDriver []string
		for _, run := range p.runs {
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
				parts = append(parts, fmt.Sprintf("%s can never start: a blocking result %s %s is never complete",
					listNames(r.Blocked, 12), verb(len(r.Blocked), "it", "they"), verb(len(r.Blocked), "reads", "read")))
			}
		}
		r.Verdict = Deadlock
		r.Holding, r.Waiting = holding, waiting
		r.Reason = fmt.Sprintf("deadlock: at %d ms jobs %s never finish: %s", now.Milliseconds(), listNames(stuck, 12), strings.Join(parts, "; "))
		for _, run := range p.runs {
			if !run.ended && run.verdict != Steady {
				run.verdict, run.reason = Deadlock, "never finished"
			}
		}
	case len(failed) > 0:
		r.Verdict = Failed
		r.Reason = fmt.Sprintf("failed: %d of %d jobs: %s", len(failed), len(p.runs), strings.Join(failed, "; "))
	default:
		var killed []string
		for _, run := range p.runs {
			if run.verdict == Killed {
				killed = append(killed, p.cfg.Jobs[run.i].Name)
			}
		}
		ended := len(p.runs) - len(streams)
		r.Verdict = Finished
		r.Reason = fmt.Sprintf("finished: all %d jobs finished at %d ms", len(p.runs), now.Milliseconds())
		if len(streams) > 0 {
			r.Verdict = Steady
			r.Reason = fmt.Sprintf("%s (%s %s); %d of %d jobs finished at %d ms", steadyReason(unbounded, consumers),
				verb(len(streams), "stream", "streams"), listNames(streams, 12), ended-len(killed), len(p.runs), now.Milliseconds())
		} else if len(killed) > 0 {
			r.Reason = fmt.Sprintf("finished: %d of %d jobs finished at %d ms", ended-len(killed), len(p.runs), now.Milliseconds())
		}
		if len(killed) > 0 {
			r.Reason += fmt.Sprintf(", %s killed", listNames(killed, 12))
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
			// The eager baseline ignores submission times: every job is
			// there at 0 ms; it finished with its last task, or runs on
			// if it is a stream fully deployed.
			ej := e.eagerJobs[i]
			out[i].Submitted, out[i].FirstDeploy, out[i].Verdict = 0, ej.firstDeploy, Finished
			for v := e.set.offsets[i]; v < e.set.offsets[i+1]; v++ {
				if e.model.tasks[v].phase != finished {
					out[i].Verdict, out[i].Reason = Deadlock, "never finished"
					if waitingTasks == nil {
						waitingTasks = e.model.waiting()
					}
					if u, c, ok := e.streaming(i, waitingTasks); ok {
						out[i].Verdict, out[i].Reason = Steady, steadyReason(u, c)
					}
					break
				}
			}
			if out[i].Verdict == Finished {
				out[i].Finished = ej.lastFinish
			}
			continue
		}
		run := e.jobs.runs[i]
		out[i].Verdict, out[i].Reason, out[i].FirstDeploy = run.verdict, run.reason, run.firstDeploy
		if run.ended {
			out[i].Finished = run.finished
		}
		if run.port != nil {
			out[i].State = run.port.State()
		}
	}
	return out
}

// appendSchedulers appends the schedulers of the jobs that were
// submitted to scheds (for the next run, see storage).
func (p *jobsPolicy) appendSchedulers(scheds []*scheduler.Scheduler) []*scheduler.Scheduler {
	for _, r := range p.runs {
		if r.rp != nil {
			scheds = append(scheds, r.rp.sched)
		}
	}
	return scheds
}
