package engine

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/scheduler"
)

// loop applies the Ready values of the job's own driver until the job
// finished (nil), failed (its *scheduler.RegionError), a task goroutine
// hit a fatal error, or ctx is done.
func (e *engine) loop(ctx context.Context, d *scheduler.Driver) error {
	for {
		select {
		case rd, ok := <-d.Ready():
			if !ok {
				if err := ctx.Err(); err != nil {
					return err
				}
				return scheduler.ErrStopped
			}
			if err := e.release(rd); err != nil {
				return err
			}
			if err := e.deploy(rd.Deploy); err != nil {
				return err
			}
			if ended, err := rd.Job.Ended(); ended {
				return err
			}
		case err := <-e.h.fatal:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release carries out the first half of a Ready, everything but Deploy:
// cancel first, then check the released slots, then delete the released
// partitions' files. (Files go before deploys, not after as the fields
// are ordered: a producer deployed again in the same Ready then rewrites
// its partition instead of losing it; no deployment can need a partition
// released with it.) Deploy comes after every job's release: a slot one
// job gives up may be deployed by another in the same Ready.
func (e *engine) release(rd scheduler.Ready) error {
	cause := map[scheduler.RegionID]string{}
	for _, r := range rd.Restarted {
		for _, reg := range r.Regions {
			cause[reg] = e.topo.VertexName(r.Failed) + " failed"
		}
	}
	for _, c := range rd.Cancel {
		e.cancel(c, cause)
	}
	for _, w := range rd.Won {
		if err := e.won(w); err != nil {
			return e.fail(err)
		}
	}
	e.h.mu.Lock()
	for _, r := range rd.Released {
		if err := e.h.slots.checkReleased(r.Slot); err != nil {
			e.h.mu.Unlock()
			return e.fail(err)
		}
	}
	e.h.mu.Unlock()
	for _, p := range rd.PartitionsReleased {
		e.released++
		delete(e.partitions, p)
		delete(e.hybrid, p)
		if err := os.RemoveAll(partitionDir(e.dir, p)); err != nil {
			return e.fail(err)
		}
	}
	return nil
}

// cancel stops a task attempt and waits for its goroutine to end, so that
// its slot is free before anything is deployed into it.
func (e *engine) cancel(c scheduler.Task, cause map[scheduler.RegionID]string) {
	a := e.runs[c.Task]
	if a == nil || a.attempt != c.Attempt {
		if a = e.spec.copyOf(c); a == nil {
			return
		}
	}
	a.cancel()
	<-a.done
	outcome := "canceled"
	if why, ok := cause[a.region]; ok {
		outcome += ": " + why
	}
	e.h.mu.Lock()
	e.timeline.end(runKey{a.region, a.attempt}, outcome, e.since())
	e.h.mu.Unlock()
}

// deploy starts the deployed tasks (the second half of a Ready): first every attempt is placed in its
// slot and registers the blocking and hybrid partitions it will write, then each is
// wired to its inputs and outputs and started (a region's tasks come in
// one Ready, so both ends of its channels exist by then).
func (e *engine) deploy(deps []scheduler.Deployment) error {
	started := make([]*attempt, 0, len(deps))
	for _, dep := range deps {
		if old := e.runs[dep.Task]; old != nil && !dep.Speculative {
			select {
			case <-old.done:
			default:
				if !old.reported.Load() {
					return e.fail(fmt.Errorf("scheduler deployed %s attempt %d while attempt %d still runs and was not canceled",
						old.name, dep.Attempt, old.attempt))
				}
				<-old.done // it finished or failed and is only reporting it
			}
		}
		a := e.newAttempt(dep)
		e.h.mu.Lock()
		err := e.h.slots.place(dep.Slot, occupant{job: e.job, task: a.task, name: a.name, vertex: a.vertex,
			group: e.cfg.Job.Vertex(a.vertex).SlotSharingGroup})
		if err == nil {
			e.timeline.deployed(runKey{a.region, a.attempt}, a.name, a.slot, e.since())
		}
		e.h.mu.Unlock()
		if err != nil {
			return e.fail(err)
		}
		for _, edge := range e.cfg.Job.OutEdges(a.vertex) {
			pt := e.topo.PartitionType(edge)
			p := e.topo.PartitionOf(edge, a.task)
			switch {
			case pt.IsHybrid():
				// Every attempt writes logs of its own; the region's
				// attempt's are the partition's (a speculative attempt
				// writes only results read once finished).
				hr := &hybridResult{attempt: a.attempt, logs: map[scheduler.TaskID]*hybridLog{}}
				cs := e.topo.Group(e.topo.ProducedGroup(edge, a.io.subtask)).Consumers
				for c := cs.Start; c < cs.End; c++ {
					hr.logs[scheduler.TaskID(c)] = &hybridLog{}
				}
				if a.hybrid == nil {
					a.hybrid = map[scheduler.PartitionID]*hybridResult{}
				}
				a.hybrid[p] = hr
				if !dep.Speculative {
					e.hybrid[p] = hr
				}
				if e.readsFinishedOnly(p) && a.pub == nil {
					if !dep.Speculative {
						e.pubs[a.task] = newPublished(a.attempt)
					}
					a.pub = e.pubs[a.task]
				}
			case !pt.IsPipelined() && !dep.Speculative:
				e.partitions[p] = &blockingResult{attempt: a.attempt, done: make(chan struct{})}
			}
		}
		if dep.Speculative {
			if a.hybrid != nil && a.pub == nil {
				return e.fail(fmt.Errorf("scheduler deployed a speculative attempt %d of %s, whose hybrid results are read live",
					a.attempt, a.name))
			}
			e.spec.add(a)
			started = append(started, a)
			continue
		}
		e.runs[dep.Task] = a
		started = append(started, a)
	}
	for _, a := range started {
		if err := e.wire(a); err != nil {
			return e.fail(err)
		}
	}
	for _, a := range started {
		e.h.wg.Add(1)
		go e.execute(a)
	}
	return nil
}

// report handles the driver's answer to a task's report: the ones a
// runtime sees when an attempt was canceled or the run ended are fine,
// anything else is fatal.
func (e *engine) report(a *attempt, what string, err error) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, scheduler.ErrStopped) ||
		errors.Is(err, scheduler.ErrNotRunning) || errors.Is(err, multijob.ErrStopped) || errors.Is(err, multijob.ErrJobEnded) {
		return
	}
	e.abort(fmt.Errorf("%s %s attempt %d: %w", what, a.name, a.attempt, err))
}
