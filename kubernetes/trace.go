package kubernetes

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// tracer turns what a Runner does into trace events (RunnerConfig.Trace),
// the events of a run on Slurm or in the simulator: a slot asked for a
// task (request), a bulk bound (one deploy per pod), a pod Succeeded or
// Failed (finish, fail), a pod deleted by a cancel (cancel), a slot given
// back (release). It also counts the bulks bound by job.
type tracer struct {
	inSlot map[slotpool.SlotID]slotHolder     // the job holding each slot (a node's slot is one job's at a time), by the last task attempt deployed in it
	shared map[string]map[scheduler.Task]bool // per job, the deployments into a slot of hybrid producers
	// asked holds each job's open requests: the attempt each task asked
	// for a slot with and was not deployed in (withdrawn when its region
	// restarts, the task asks again for another attempt, or its job ends).
	asked map[string]map[scheduler.TaskID]scheduler.Attempt
	bulks map[string]int
	// withdrawn counts the slots of reclaims withdrawn before their
	// timeout (admission.ReclaimWithdrawn).
	withdrawn int
	// restarts are the failovers of each job's scheduler, in order.
	restarts map[string][]Restart
}

// Restart is one failover of a job's scheduler: a task failed (or was the
// first one stopped in a slot lost or reclaimed) and its failover
// strategy restarted regions.
type Restart struct {
	// At is when the Runner applied it, since the start of the run.
	At time.Duration
	// Task is the failed task ("C#0"), Regions the regions restarted,
	// ascending.
	Task    string
	Regions []int
}

// newTracer returns a tracer of nothing yet.
func newTracer() tracer {
	return tracer{inSlot: map[slotpool.SlotID]slotHolder{}, shared: map[string]map[scheduler.Task]bool{}, bulks: map[string]int{},
		restarts: map[string][]Restart{}, asked: map[string]map[scheduler.TaskID]scheduler.Attempt{}}
}

// tracing reports whether the Runner traces.
func (r *Runner) tracing() bool { return r.cfg.Trace != nil }

// traceEvent emits one event of a task of job at now.
func (r *Runner) traceEvent(now time.Time, job string, k runfile.Kind, v scheduler.TaskID, slot int, attempt scheduler.Attempt) runfile.Event {
	ev := runfile.Event{At: now.Sub(r.cfg.Start), Kind: k, Slot: slot, Attempt: int(attempt)}
	if j, ok := r.jobs[job]; ok {
		ev.Task = j.tasks.TaskName(v)
		if rt, ok := j.tasks.(RegionTasks); ok {
			ev.Region = int(rt.Regions.RegionOf(v))
		}
	}
	if r.cfg.TraceJobs {
		ev.Job = job
	}
	return ev
}

// traceReady traces the requests of a Ready and notes its deployments
// into shared slots; its cancels and releases are traced as they are
// applied (traceCancel, traceRelease).
func (r *Runner) traceReady(now time.Time, rd multijob.Ready) {
	if !r.tracing() {
		return
	}
	for _, jr := range rd.Jobs {
		r.traceRestartWithdrawals(now, jr.Job, &jr.Ready)
		for _, req := range jr.Requests {
			for _, s := range req.Slots {
				for _, v := range s.Members {
					if req.Speculative { // an extra attempt: it withdraws nothing
						r.cfg.Trace(r.traceEvent(now, jr.Job, runfile.Request, v, runfile.NoSlot, req.Attempt))
						continue
					}
					r.traceRequest(now, jr.Job, v, req.Attempt)
				}
			}
		}
		r.traceEndedRequests(now, jr)
		for _, d := range jr.Deploy {
			if d.Shared {
				if r.tr.shared[jr.Job] == nil {
					r.tr.shared[jr.Job] = map[scheduler.Task]bool{}
				}
				r.tr.shared[jr.Job][scheduler.Task{Task: d.Task, Attempt: d.Attempt}] = true
			}
		}
	}
}

// traceRequest traces a task's request for a slot; an open request of
// another attempt of it (its region restarted before it was deployed)
// is withdrawn first, as in the simulator's trace.
func (r *Runner) traceRequest(now time.Time, job string, v scheduler.TaskID, attempt scheduler.Attempt) {
	open := r.tr.asked[job]
	if open == nil {
		open = map[scheduler.TaskID]scheduler.Attempt{}
		r.tr.asked[job] = open
	}
	if old, ok := open[v]; ok && old != attempt {
		r.cfg.Trace(r.traceEvent(now, job, runfile.Withdraw, v, runfile.NoSlot, old))
	}
	open[v] = attempt
	r.cfg.Trace(r.traceEvent(now, job, runfile.Request, v, runfile.NoSlot, attempt))
}

// traceRestartWithdrawals withdraws, in task order, the open requests of
// job's tasks whose regions restarted (as in the simulator's trace): a
// region that restarts while it waits for slots gives up its request at
// once, and asks again only once its inputs are complete again. Every
// request open now was made before this Ready, by an attempt the restart
// ended. Only tasks named by RegionTasks know their regions; other
// requests are withdrawn when they ask again.
func (r *Runner) traceRestartWithdrawals(now time.Time, job string, rd *scheduler.Ready) {
	open := r.tr.asked[job]
	if len(rd.Restarted) == 0 || len(open) == 0 {
		return
	}
	j, ok := r.jobs[job]
	if !ok {
		return
	}
	rt, ok := j.tasks.(RegionTasks)
	if !ok {
		return
	}
	for _, v := range slices.Sorted(maps.Keys(open)) {
		if rd.Restarts(rt.Regions.RegionOf(v)) {
			r.cfg.Trace(r.traceEvent(now, job, runfile.Withdraw, v, runfile.NoSlot, open[v]))
			delete(open, v)
		}
	}
}

// traceEndedRequests withdraws the requests of a Ready that a restart in
// the same Ready ended, as the simulator's trace does: a region that
// asked and restarted within one Ready (every input of an instant is
// applied before it) no longer waits, as its scheduler's status says,
// and asks again only once its inputs are complete again.
func (r *Runner) traceEndedRequests(now time.Time, jr multijob.JobReady) {
	open := r.tr.asked[jr.Job]
	if len(jr.Restarted) == 0 || len(open) == 0 {
		return
	}
	st, err := r.s.Status(jr.Job)
	if err != nil {
		return
	}
	for v, attempt := range jr.EndedTasks(st.Scheduler.Waiting) {
		if a, ok := open[v]; ok && a == attempt {
			r.cfg.Trace(r.traceEvent(now, jr.Job, runfile.Withdraw, v, runfile.NoSlot, a))
			delete(open, v)
		}
	}
}

// traceWithdrawals withdraws the open requests of a job that ended, in
// task order.
func (r *Runner) traceWithdrawals(now time.Time, job string) {
	open := r.tr.asked[job]
	if !r.tracing() || len(open) == 0 {
		return
	}
	for _, v := range slices.Sorted(maps.Keys(open)) {
		r.cfg.Trace(r.traceEvent(now, job, runfile.Withdraw, v, runfile.NoSlot, open[v]))
	}
	delete(r.tr.asked, job)
}

// noteRestarts records the failovers of a Ready's jobs.
func (r *Runner) noteRestarts(now time.Time, rd multijob.Ready) {
	for _, jr := range rd.Jobs {
		for _, rs := range jr.Restarted {
			x := Restart{At: now.Sub(r.cfg.Start), Task: fmt.Sprint(rs.Failed), Regions: make([]int, len(rs.Regions))}
			if j, ok := r.jobs[jr.Job]; ok {
				x.Task = j.tasks.TaskName(rs.Failed)
			}
			for i, id := range rs.Regions {
				x.Regions[i] = int(id)
			}
			r.tr.restarts[jr.Job] = append(r.tr.restarts[jr.Job], x)
		}
	}
}

// Restarts returns the failovers of job's scheduler, in order.
func (r *Runner) Restarts(job string) []Restart { return r.tr.restarts[job] }

// traceReclaims traces the reclaims of a Ready (before the cancels they
// cause, as in the simulator) and counts the slots of reclaims
// withdrawn.
func (r *Runner) traceReclaims(now time.Time, rd multijob.Ready) {
	for _, ev := range rd.Events {
		switch ev.Kind {
		case admission.Reclaimed:
			if r.tracing() {
				r.cfg.Trace(runfile.Event{At: now.Sub(r.cfg.Start), Kind: runfile.Reclaim, Job: ev.Job, Victim: ev.Victim, Slots: ev.Count,
					Reason: ev.Reason, Slot: runfile.NoSlot, Region: runfile.NoRegion})
			}
		case admission.ReclaimWithdrawn:
			r.tr.withdrawn += ev.Count
		}
	}
}

// WithdrawnSlots counts the slots of reclaims withdrawn before their
// timeout, their reason gone.
func (r *Runner) WithdrawnSlots() int { return r.tr.withdrawn }

// traceCancel traces the cancel of a task attempt whose pod the Runner
// deletes.
func (r *Runner) traceCancel(now time.Time, job string, p *trackedPod) {
	if r.tracing() {
		r.cfg.Trace(r.traceEvent(now, job, runfile.Cancel, p.ref.Task, int(p.slot), p.ref.Attempt))
	}
}

// traceLost traces the failure of a task attempt whose slot was lost
// (its node is gone): the Runner deletes its pod.
func (r *Runner) traceLost(now time.Time, job string, p *trackedPod) {
	if r.tracing() {
		r.cfg.Trace(r.traceEvent(now, job, runfile.Fail, p.ref.Task, int(p.slot), p.ref.Attempt))
	}
}

// traceRelease traces a slot a job gave back, named by the last task
// deployed in it.
func (r *Runner) traceRelease(now time.Time, job string, rel scheduler.Release) {
	h, ok := r.tr.inSlot[rel.Slot]
	if !ok || h.job != job {
		return
	}
	delete(r.tr.inSlot, rel.Slot)
	if r.tracing() {
		r.cfg.Trace(r.traceEvent(now, job, runfile.Release, h.last.Task, int(rel.Slot), rel.Attempt))
	}
}

// slotHolder is the job holding a slot, and the last task attempt
// deployed in it (a release names it).
type slotHolder struct {
	job  string
	last scheduler.Task
}

// traceTakenOver traces the release of slot s by the job that held it
// last, other than job ("": any): a slot revoked from a job (a
// preemption, its task canceled) is never released by it, it goes to
// another job, whose deploy into it follows the release, as in the
// simulator's trace; nor is a slot lost with its node.
func (r *Runner) traceTakenOver(now time.Time, job string, s slotpool.SlotID) {
	h, ok := r.tr.inSlot[s]
	if !ok || h.job == job {
		return
	}
	delete(r.tr.inSlot, s)
	if r.tracing() {
		r.cfg.Trace(r.traceEvent(now, h.job, runfile.Release, h.last.Task, int(s), h.last.Attempt))
	}
}

// traceBound traces the deploys of a bulk bound and counts it.
func (r *Runner) traceBound(now time.Time, b Bulk) {
	r.tr.bulks[b.Job]++
	for _, p := range b.Places {
		r.traceTakenOver(now, b.Job, p.Slot)
		r.tr.inSlot[p.Slot] = slotHolder{job: b.Job, last: scheduler.Task{Task: p.Ref.Task, Attempt: p.Ref.Attempt}}
		if !r.tracing() {
			continue
		}
		key := scheduler.Task{Task: p.Ref.Task, Attempt: p.Ref.Attempt}
		shared := r.tr.shared[b.Job][key]
		if shared { // its region asked the pool for nothing: traced as asking, served at once
			delete(r.tr.shared[b.Job], key)
			r.traceRequest(now, b.Job, p.Ref.Task, p.Ref.Attempt)
		}
		delete(r.tr.asked[b.Job], p.Ref.Task)
		ev := r.traceEvent(now, b.Job, runfile.Deploy, p.Ref.Task, int(p.Slot), p.Ref.Attempt)
		ev.Shared = shared
		r.cfg.Trace(ev)
	}
}

// traceTask traces a task's pod that Succeeded or Failed.
func (r *Runner) traceTask(now time.Time, p *trackedPod, ev TaskEvent) {
	if !r.tracing() {
		return
	}
	switch ev {
	case TaskFinished:
		r.cfg.Trace(r.traceEvent(now, p.ref.Job, runfile.Finish, p.ref.Task, int(p.slot), p.ref.Attempt))
	case TaskFailed:
		r.cfg.Trace(r.traceEvent(now, p.ref.Job, runfile.Fail, p.ref.Task, int(p.slot), p.ref.Attempt))
	}
}

// Bulks returns how many bulks of job were bound (each a region attempt's
// pods, bound all together).
func (r *Runner) Bulks(job string) int { return r.tr.bulks[job] }
