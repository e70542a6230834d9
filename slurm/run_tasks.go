package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// apply carries out one Ready (every job's cancels, releases and
// requests, then the ends, then the deploys) and returns how many jobs
// ended.
func (r *runner) apply(ctx context.Context, rd multijob.Ready) int {
	for _, jrd := range rd.Jobs {
		jr := r.jobs[jrd.Job]
		r.noteRestarts(jr, jrd.Restarted)
		for _, c := range jrd.Cancel {
			if t := jr.running[c.Task]; t != nil && t.attempt == c.Attempt {
				t.cancel()
				<-t.done
				delete(jr.running, c.Task)
				r.event(jrd.Job, jr, runfile.Cancel, c.Task, int(t.slot), c.Attempt)
			}
		}
		for _, rel := range jrd.Released {
			if v, ok := jr.inSlot[rel.Slot]; ok {
				r.event(jrd.Job, jr, runfile.Release, v, int(rel.Slot), rel.Attempt)
				delete(jr.inSlot, rel.Slot)
			}
		}
		// The requests after the cancels and releases, as in the
		// simulator's trace.
		r.withdrawRestarted(jrd.Job, jr, jrd.Restarted)
		for _, req := range jrd.Requests {
			for _, s := range req.Slots {
				for _, v := range s.Members {
					r.request(jrd.Job, jr, v, req.Attempt, req.Speculative)
				}
			}
		}
		if len(jrd.Restarted) > 0 && len(jr.asked) > 0 {
			if st, err := r.d.Status(ctx, jrd.Job); err == nil {
				r.withdrawEnded(jrd.Job, jr, &jrd.Ready, st.Scheduler.Waiting)
			}
		}
	}
	ended := 0
	for _, end := range rd.Ended {
		jr := r.jobs[end.Job]
		if jr == nil || jr.ended {
			continue
		}
		ended++
		jr.ended = true
		r.withdrawAll(end.Job, jr)
		for v, t := range jr.running {
			t.cancel()
			<-t.done
			delete(jr.running, v)
		}
		if st, err := r.d.Status(ctx, end.Job); err == nil {
			jr.out.Stats = st.Scheduler.Stats
		}
		r.mu.Lock()
		jr.out.Err, jr.out.End = end.Err, r.since()
		r.mu.Unlock()
	}
	var refs []slotRef
	for _, jrd := range rd.Jobs {
		for _, dep := range jrd.Deploy {
			refs = append(refs, slotRef{Job: jrd.Job, Slot: dep.Slot})
		}
	}
	if len(refs) == 0 {
		return ended
	}
	places, ok := r.pl.deployPlacements(ctx, refs)
	if !ok {
		if ctx.Err() == nil {
			r.abort(fmt.Errorf("looking up the slots to deploy in: %w", multijob.ErrStopped))
		}
		return ended
	}
	for _, jrd := range rd.Jobs {
		jr := r.jobs[jrd.Job]
		for _, dep := range jrd.Deploy {
			p, ok := places[slotRef{Job: jrd.Job, Slot: dep.Slot}]
			if !ok {
				if ctx.Err() == nil {
					r.abort(fmt.Errorf("job %s: slot %d of %s has no Slurm allocation", jrd.Job, dep.Slot, jr.rs.Topology().VertexName(dep.Task)))
				}
				return ended
			}
			r.deploy(ctx, jrd.Job, jr, dep, p)
		}
	}
	return ended
}

// noteRestarts records a job's failovers.
func (r *runner) noteRestarts(jr *jobRun, restarted []scheduler.Restart) {
	if len(restarted) == 0 {
		return
	}
	at := r.since()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range restarted {
		x := Restart{At: at, Task: jr.rs.Topology().VertexName(rs.Failed), Regions: make([]int, len(rs.Regions))}
		for i, id := range rs.Regions {
			x.Regions[i] = int(id)
		}
		jr.out.Restarts = append(jr.out.Restarts, x)
	}
}

// deploy starts one task as a step in its slot's allocation, at p (the
// slot may have been released since the scheduler decided the
// deployment: a later Ready cancels the task).
func (r *runner) deploy(ctx context.Context, job string, jr *jobRun, dep scheduler.Deployment, p slotPlacement) {
	name := jr.rs.Topology().VertexName(dep.Task)
	if old := jr.running[dep.Task]; old != nil {
		<-old.done // it finished or failed and is reporting it
	}
	tctx, cancel := context.WithCancel(ctx)
	t := &taskRun{attempt: dep.Attempt, slot: dep.Slot, cancel: cancel, done: make(chan struct{})}
	jr.running[dep.Task] = t
	jr.inSlot[dep.Slot] = dep.Task
	r.mu.Lock()
	delete(jr.finished, dep.Task)
	if jr.out.Steps == 0 {
		jr.out.FirstDeploy = r.since()
	}
	jr.out.Steps++
	jr.allocs[p.Job] = true
	r.mu.Unlock()
	delete(jr.asked, dep.Task)
	if dep.Shared { // its region asked the pool for nothing: traced as asking, served at once
		r.event(job, jr, runfile.Request, dep.Task, runfile.NoSlot, dep.Attempt)
	}
	ev := r.taskEvent(job, jr, runfile.Deploy, dep.Task, int(dep.Slot), dep.Attempt)
	ev.Shared = dep.Shared
	r.trace(ev)
	if r.cfg.onDeploy != nil {
		r.cfg.onDeploy(job, name, p)
	}
	r.wg.Add(1)
	go r.execute(tctx, job, jr, dep, p, t)
}

// request traces a task's request for a slot. An open request of another
// attempt of it (its region restarted before it was deployed) is
// withdrawn first; a speculative attempt's request withdraws nothing and
// stays out of the open requests.
func (r *runner) request(job string, jr *jobRun, v scheduler.TaskID, attempt scheduler.Attempt, speculative bool) {
	if !speculative {
		if old, ok := jr.asked[v]; ok && old != attempt {
			r.event(job, jr, runfile.Withdraw, v, runfile.NoSlot, old)
		}
		jr.asked[v] = attempt
	}
	r.event(job, jr, runfile.Request, v, runfile.NoSlot, attempt)
}

// withdrawRestarted withdraws, in task order, the open requests of the
// tasks of restarted regions: a region that restarts while it waits for
// slots gives up its request at once, and asks again only once its
// inputs are complete again. Every request open now was made before
// this Ready, by an attempt the restart ended.
func (r *runner) withdrawRestarted(job string, jr *jobRun, restarted []scheduler.Restart) {
	for _, rs := range restarted {
		for _, reg := range rs.Regions {
			if len(jr.asked) == 0 {
				return
			}
			for _, v := range jr.rs.Members(reg) {
				if a, ok := jr.asked[v]; ok {
					r.event(job, jr, runfile.Withdraw, v, runfile.NoSlot, a)
					delete(jr.asked, v)
				}
			}
		}
	}
}

// withdrawEnded withdraws the requests of rd that a restart in rd ended,
// right after them, as the simulator's trace does: a region that asked
// and restarted within one Ready (every input of an instant is applied
// before it) no longer waits, and asks again only once its inputs are
// complete again. waiting lists the job's regions that wait for slots
// (its status, read after rd): a region that waits again by then has
// asked for another attempt, whose request withdraws the old one.
func (r *runner) withdrawEnded(job string, jr *jobRun, rd *scheduler.Ready, waiting []scheduler.RegionID) {
	for v, attempt := range rd.EndedTasks(waiting) {
		if a, ok := jr.asked[v]; ok && a == attempt {
			r.event(job, jr, runfile.Withdraw, v, runfile.NoSlot, a)
			delete(jr.asked, v)
		}
	}
}

// withdrawAll withdraws, in task order, the open requests of a job that
// ended.
func (r *runner) withdrawAll(job string, jr *jobRun) {
	for _, v := range slices.Sorted(maps.Keys(jr.asked)) {
		r.event(job, jr, runfile.Withdraw, v, runfile.NoSlot, jr.asked[v])
	}
	clear(jr.asked)
}

// event traces one event of a task.
func (r *runner) event(job string, jr *jobRun, k runfile.Kind, v scheduler.TaskID, slot int, attempt scheduler.Attempt) {
	r.trace(r.taskEvent(job, jr, k, v, slot, attempt))
}

// taskEvent is a trace event of a task.
func (r *runner) taskEvent(job string, jr *jobRun, k runfile.Kind, v scheduler.TaskID, slot int, attempt scheduler.Attempt) runfile.Event {
	ev := runfile.Event{At: r.since(), Kind: k, Task: jr.rs.Topology().VertexName(v), Region: int(jr.rs.RegionOf(v)), Slot: slot, Attempt: int(attempt)}
	if r.multi {
		ev.Job = job
	}
	return ev
}

// stepRefusedLimit is how long a task retries a step Slurm refuses to
// start before the task fails.
const stepRefusedLimit = 30 * time.Second

// execute runs one task attempt as a Slurm step on its slot's node and
// reports it. A step refused because slurmctld is unreachable is retried
// with backoff (it did not run); any other failure fails the task.
func (r *runner) execute(ctx context.Context, job string, jr *jobRun, dep scheduler.Deployment, p slotPlacement, t *taskRun) {
	defer r.wg.Done()
	defer close(t.done)
	topo := jr.rs.Topology()
	name := topo.VertexName(dep.Task)
	if err := r.d.TaskRunning(ctx, job, dep.Task, dep.Attempt); err != nil {
		r.report(job, name, "running", err)
		return
	}
	dur := time.Duration(float64(topo.Job().Vertex(topo.JobVertexOf(dep.Task)).Duration) * r.cfg.Scale)
	argv := stepArgv(r.cfg.Command, job, name, dur)
	backoff := 100 * time.Millisecond
	var refusedSince time.Time
	for {
		var out bytes.Buffer
		err := r.cfg.client.runStep(ctx, p, argv, &out, nil)
		if ctx.Err() != nil {
			return // canceled: the scheduler knows
		}
		if err == nil {
			if node, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n"); p.Node != "" && node != p.Node {
				r.abort(fmt.Errorf("job %s: task %s ran on node %q, its slot %d is on %q", job, name, node, dep.Slot, p.Node))
				return
			}
			if !r.waitHybridProducers(ctx, jr, dep.Task) {
				return // canceled while it waited
			}
			r.event(job, jr, runfile.Finish, dep.Task, int(dep.Slot), dep.Attempt)
			err := r.d.TaskFinished(ctx, job, dep.Task, dep.Attempt)
			if err == nil {
				r.mu.Lock()
				jr.finished[dep.Task] = true
				r.mu.Unlock()
			}
			r.report(job, name, "finished", err)
			r.pl.Poke()
			return
		}
		// A step that did not start is tried again: while slurmctld is
		// unreachable, and for a while when Slurm refuses it (right after
		// a controller restart it does for seconds; if the allocation is
		// gone, the admission revokes the slot and the task is canceled).
		refused := errors.Is(err, ErrStepRefused)
		if refused && refusedSince.IsZero() {
			refusedSince = r.clk.Now()
		}
		if errors.Is(err, ErrUnreachable) || (refused && r.clk.Since(refusedSince) < stepRefusedLimit) {
			r.cfg.Logger.Info("step not started, retrying", zap.String("job", job), zap.String("task", name), zap.String("error", err.Error()))
			select {
			case <-r.clk.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		r.cfg.Logger.Info("step failed", zap.String("job", job), zap.String("task", name), zap.String("error", err.Error()))
		r.event(job, jr, runfile.Fail, dep.Task, int(dep.Slot), dep.Attempt)
		r.report(job, name, "failed", r.d.TaskFailed(ctx, job, dep.Task, dep.Attempt))
		r.pl.Poke()
		return
	}
}

// waitHybridProducers waits, holding the task's slot, until the scheduler
// accepted the finish of every producer of a hybrid result task v reads: a
// consumer reads until its producers wrote their last record, and the
// scheduler refuses a finish before theirs (strategy.ErrEarlyFinish). It
// returns false if ctx ended first (the task was canceled).
func (r *runner) waitHybridProducers(ctx context.Context, jr *jobRun, v scheduler.TaskID) bool {
	topo := jr.rs.Topology()
	jv := topo.JobVertexOf(v)
	var producers []topology.Range
	for _, e := range topo.Job().InEdges(jv) {
		if topo.PartitionType(e).IsHybrid() {
			producers = append(producers, topo.GroupOnEdge(e, topo.ConsumedGroup(e, topo.SubtaskIndex(v))).Producers)
		}
	}
	wait := 5 * time.Millisecond
	for {
		done := true
		r.mu.Lock()
		for _, ps := range producers {
			for p := ps.Start; p < ps.End && done; p++ {
				done = jr.finished[scheduler.TaskID(p)]
			}
		}
		r.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-r.clk.After(wait):
		case <-ctx.Done():
			return false
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// report handles the driver's answer to a task's report: the ones seen
// when an attempt was canceled, its job ended or the run ended are fine,
// anything else ends the run.
func (r *runner) report(job, task, what string, err error) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, multijob.ErrStopped) ||
		errors.Is(err, scheduler.ErrNotRunning) || errors.Is(err, multijob.ErrJobEnded) {
		return
	}
	r.abort(fmt.Errorf("job %s: %s %s: %w", job, what, task, err))
}

// stepArgv is the command line of a task's step: it prints the node it
// runs on (checked against the slot's), then runs the task's command,
// by default a sleep for the task's duration.
func stepArgv(command func(job, task string, d time.Duration) []string, job, task string, d time.Duration) []string {
	argv := []string{"/bin/sh", "-c", `echo "$SLURMD_NODENAME"; exec "$@"`, "step"}
	if command != nil {
		return append(argv, command(job, task, d)...)
	}
	return append(argv, "sleep", strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
}
