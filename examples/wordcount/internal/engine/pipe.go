package engine

import (
	"context"

	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// pipeCapacity bounds a pipelined channel (records): a producer whose
// consumer does not read stalls once that many are in flight.
const pipeCapacity = 16

// item is one element of a pipelined channel: a record, or the
// end-of-stream marker of one producer.
type item struct {
	rec Record
	eos bool
}

// pipeKey names the channel of one pipelined edge into one consumer
// subtask; every producer of the consumer's partition group writes to it.
type pipeKey struct {
	edge     topology.JobEdgeID
	consumer scheduler.TaskID
}

// pipe is the channel of a pipeKey for one attempt of the region holding
// both ends.
type pipe struct {
	attempt scheduler.Attempt
	ch      chan item
}

// pipeFor returns the channel of a pipelined edge into consumer for a
// region attempt, creating it (and forgetting the previous attempt's) on
// first use. Called by the Ready loop only.
func (e *engine) pipeFor(edge topology.JobEdgeID, consumer scheduler.TaskID, attempt scheduler.Attempt) chan item {
	k := pipeKey{edge: edge, consumer: consumer}
	if p, ok := e.pipes[k]; ok && p.attempt == attempt {
		return p.ch
	}
	ch := make(chan item, pipeCapacity)
	e.pipes[k] = &pipe{attempt: attempt, ch: ch}
	return ch
}

// pipeTarget is a producer's end of a pipelined channel.
type pipeTarget struct{ ch chan<- item }

func (p pipeTarget) send(ctx context.Context, rec Record) error {
	select {
	case p.ch <- item{rec: rec}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (p pipeTarget) close(ctx context.Context) error {
	select {
	case p.ch <- item{eos: true}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// discard does nothing: a restart replaces the channel, and what was in it
// goes with it.
func (p pipeTarget) discard() {}

// pipeInput is a consumer's end of a pipelined channel: it ends after one
// end-of-stream marker from each producer.
type pipeInput struct {
	ch        <-chan item
	producers int
}

func (p pipeInput) read(ctx context.Context, out chan<- Record) error {
	for ended := 0; ended < p.producers; {
		select {
		case it := <-p.ch:
			if it.eos {
				ended++
				continue
			}
			select {
			case out <- it.rec:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}
