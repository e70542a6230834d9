package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// attempt is one run of one task: a goroutine with its own context.
type attempt struct {
	task    scheduler.TaskID
	name    string
	vertex  topology.JobVertexID
	attempt scheduler.Attempt
	region  scheduler.RegionID
	slot    scheduler.SlotID

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine ended

	op     operator
	io     *taskIO
	clock  clock.Clock
	inputs []input
	// reported is set once the attempt finished or failed and is about
	// to tell the scheduler.
	reported atomic.Bool
	// speculative: a speculative attempt beside the task's attempt;
	// slowFor holds a straggler back once its work is done (Config.Slow).
	speculative bool
	slowFor     time.Duration
	// hybrid holds the hybrid result partitions it writes, its own logs
	// (Ready loop, before it starts); pub, if its results are read only
	// once finished, is where it hands them in once its finish was
	// accepted.
	hybrid map[scheduler.PartitionID]*hybridResult
	pub    *published
}

// input is one source of a task's records: a pipelined channel or the
// blocking files of one edge.
type input interface {
	read(ctx context.Context, out chan<- Record) error
}

// newAttempt makes the attempt of a deployment (not started yet).
func (e *engine) newAttempt(dep scheduler.Deployment) *attempt {
	jv := e.topo.JobVertexOf(dep.Task)
	ctx, cancel := context.WithCancel(e.h.ctx)
	a := &attempt{
		clock:       e.h.clk,
		task:        dep.Task,
		name:        e.topo.VertexName(dep.Task),
		vertex:      jv,
		attempt:     dep.Attempt,
		region:      dep.Region,
		slot:        dep.Slot,
		ctx:         ctx,
		cancel:      cancel,
		done:        make(chan struct{}),
		op:          e.ops[jv],
		speculative: dep.Speculative,
		io: &taskIO{
			subtask:     e.topo.SubtaskIndex(dep.Task),
			parallelism: e.cfg.Job.Vertex(jv).Parallelism,
		},
	}
	if !dep.Speculative {
		a.slowFor = e.spec.straggles(dep.Task)
	}
	if f, ok := e.failPending[dep.Task]; ok && !dep.Speculative {
		delete(e.failPending, dep.Task) // only the first attempt fails
		if f.timed {
			a.io.failTimed, a.io.failAfterTime, a.io.clock = true, f.after, e.h.clk
		} else {
			a.io.failAfter = e.cfg.FailAfter
		}
	}
	return a
}

// execute is the goroutine of an attempt: it reports the task running,
// runs the operator, and then either puts its outputs in place and reports
// it finished, or drops them and reports it failed; a canceled attempt
// just drops them.
func (e *engine) execute(a *attempt) {
	defer e.h.wg.Done()
	defer close(a.done)
	a.io.started = e.h.clk.Now()
	e.report(a, "running", e.rep.TaskRunning(a.ctx, a.task, a.attempt))
	err := a.run()
	key := runKey{a.region, a.attempt}
	e.h.mu.Lock()
	e.h.slots.leave(a.slot, e.job, a.task)
	switch {
	case a.ctx.Err() != nil: // canceled: the loop records it
	case err == nil:
		if a.io.result != nil {
			if e.cfg.Speculation.Enabled {
				e.spec.finished(a, *a.io.result)
			}
			if prev, ok := e.outputs[a.task]; !a.speculative && (!ok || prev.attempt <= a.attempt) {
				e.outputs[a.task] = taskOutput{attempt: a.attempt, records: *a.io.result}
			}
		}
		e.timeline.finished(key, e.since())
	case errors.Is(err, ErrInjected):
		e.timeline.end(key, "failed: "+a.name, e.since())
	}
	e.h.mu.Unlock()
	switch {
	case a.ctx.Err() != nil:
	case err == nil:
		a.reported.Store(true)
		if a.pub != nil {
			a.pub.reporting.Lock() // until its results are handed in: the first accepted finish is the first handed in
		}
		err := e.rep.TaskFinished(a.ctx, a.task, a.attempt)
		if err == nil {
			for _, o := range a.io.outs {
				o.seal() // the consumers reading its hybrid results may end now
			}
			if a.pub != nil {
				a.pub.finished(a.attempt, a.hybrid)
			}
		}
		if a.pub != nil {
			a.pub.reporting.Unlock()
		}
		e.report(a, "finished", err)
	case errors.Is(err, ErrInjected):
		a.reported.Store(true)
		e.report(a, "failed", e.rep.TaskFailed(a.ctx, a.task, a.attempt))
	default:
		e.abort(fmt.Errorf("%s attempt %d: %w", a.name, a.attempt, err))
	}
}

// run runs the operator over the merged inputs and finishes the outputs;
// on any error (or cancellation) it drops them.
func (a *attempt) run() (err error) {
	ctx, cancel := context.WithCancelCause(a.ctx)
	var readers sync.WaitGroup
	defer func() {
		cancel(nil)
		readers.Wait()
		if err != nil {
			for _, o := range a.io.outs {
				o.discard()
			}
		}
	}()
	for _, o := range a.io.outs {
		if err := o.open(); err != nil {
			return err
		}
	}
	if len(a.inputs) > 0 {
		in := make(chan Record, pipeCapacity)
		a.io.in = in
		var open sync.WaitGroup
		for _, src := range a.inputs {
			open.Add(1)
			readers.Add(1)
			go func() {
				defer readers.Done()
				defer open.Done()
				if err := src.read(ctx, in); err != nil {
					cancel(err)
				}
			}()
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			open.Wait()
			close(in)
		}()
	}
	if a.io.result != nil {
		*a.io.result = (*a.io.result)[:0]
	}
	if err := a.op(ctx, a.io); err != nil {
		return err
	}
	if a.io.failArmed() { // a source that emitted fewer records than FailAfter, or ended before its time
		return ErrInjected
	}
	if a.slowFor > 0 { // a straggler: its work is done, its finish comes late
		select {
		case <-a.clock.After(a.slowFor):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	for _, o := range a.io.outs {
		if err := o.finish(ctx); err != nil {
			return err
		}
	}
	return nil
}
