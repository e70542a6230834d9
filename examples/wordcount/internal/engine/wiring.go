package engine

import (
	"fmt"

	"github.com/regionsched/regionsched/scheduler"
)

// wire connects an attempt to its data, from the execution topology's
// partition groups: on each out-edge, the consumer subtasks of the group
// its partition belongs to; on each in-edge, the producer subtasks of the
// group it reads (the pointwise ranges of the topology, or every subtask of
// an all-to-all edge). A pipelined edge gets the channels of the region
// attempt; a blocking edge gets files; a hybrid edge the logs of its
// producers' current attempts. Called by the Ready loop, after every
// attempt of the Ready registered its blocking and hybrid partitions.
func (e *engine) wire(a *attempt) error {
	job := e.cfg.Job
	sub := a.io.subtask
	if len(job.OutEdges(a.vertex)) == 0 {
		a.io.result = new([]Record)
	}
	for _, ei := range job.OutEdges(a.vertex) {
		edge := ei
		g := e.topo.Group(e.topo.ProducedGroup(edge, sub))
		o := &output{ship: job.Edge(edge).ShipStrategy, next: sub, attempt: a.attempt}
		pipelined := e.topo.PartitionType(edge).IsPipelined()
		p := e.topo.PartitionOf(edge, a.task)
		if hr := a.hybrid[p]; hr != nil {
			for c := g.Consumers.Start; c < g.Consumers.End; c++ {
				l := hr.logs[scheduler.TaskID(c)]
				o.logs = append(o.logs, l)
				o.targets = append(o.targets, logTarget{log: l})
			}
			a.io.outs = append(a.io.outs, o)
			continue
		}
		if !pipelined {
			o.partition = e.partitions[p]
			if a.speculative { // its own, until it wins
				o.partition = e.spec.partition(a, p)
			}
		}
		for c := g.Consumers.Start; c < g.Consumers.End; c++ {
			consumer := scheduler.TaskID(c)
			if !pipelined {
				o.paths = append(o.paths, dataFile(e.dir, p, consumer))
				continue
			}
			if err := e.sameRegion(a, consumer); err != nil {
				return err
			}
			o.targets = append(o.targets, pipeTarget{ch: e.pipeFor(edge, consumer, a.attempt)})
		}
		a.io.outs = append(a.io.outs, o)
	}
	for _, ei := range job.InEdges(a.vertex) {
		edge := ei
		g := e.topo.Group(e.topo.ConsumedGroup(edge, sub))
		if e.topo.PartitionType(edge).IsPipelined() {
			for v := g.Producers.Start; v < g.Producers.End; v++ {
				if err := e.sameRegion(a, scheduler.TaskID(v)); err != nil {
					return err
				}
			}
			a.inputs = append(a.inputs, pipeInput{ch: e.pipeFor(edge, a.task, a.attempt), producers: g.Producers.Len()})
			continue
		}
		if e.topo.PartitionType(edge).IsHybrid() {
			var in logInput
			for v := g.Producers.Start; v < g.Producers.End; v++ {
				p := e.topo.PartitionOf(edge, scheduler.TaskID(v))
				hr := e.hybrid[p]
				if hr == nil {
					return fmt.Errorf("scheduler deployed %s before its hybrid producer %s (partition %d), or after that was released",
						a.name, e.topo.VertexName(scheduler.TaskID(v)), p)
				}
				if e.readsFinishedOnly(p) { // the winner's log, once sealed
					in.logs = append(in.logs, finishedRef{pub: e.pubs[scheduler.TaskID(v)], p: p, consumer: a.task})
					continue
				}
				in.logs = append(in.logs, hr.logs[a.task])
			}
			a.inputs = append(a.inputs, in)
			continue
		}
		var in fileInput
		for v := g.Producers.Start; v < g.Producers.End; v++ {
			p := e.topo.PartitionOf(edge, scheduler.TaskID(v))
			res := e.partitions[p]
			if res == nil {
				return fmt.Errorf("scheduler deployed %s before %s produced its input (partition %d), or after that was released",
					a.name, e.topo.VertexName(scheduler.TaskID(v)), p)
			}
			in.files = append(in.files, fileRef{path: dataFile(e.dir, p, a.task), result: res})
		}
		a.inputs = append(a.inputs, in)
	}
	return nil
}

// sameRegion checks that the other end of a pipelined edge is in the
// attempt's region (pipelined edges never cross regions), so that both
// ends share the region's attempt and channels.
func (e *engine) sameRegion(a *attempt, other scheduler.TaskID) error {
	if r := e.rs.RegionOf(other); r != a.region {
		return fmt.Errorf("pipelined edge between %s (region %d) and %s (region %d) crosses regions",
			a.name, a.region, e.topo.VertexName(other), r)
	}
	return nil
}
