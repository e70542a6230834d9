// Package timeline draws the run of a simulator (package simulator) as an
// SVG picture from its trace events (package runfile): slots on the
// vertical axis, virtual time on the horizontal one, one bar per task
// attempt from its deploy to its finish, failure or cancellation,
// coloured by pipelined region, job vertex, job or the job's queue, with
// the requests that wait for a slot, the admission's marks and, for a
// deadlock, what every slot holds when nothing can move any more. Runs of
// more than a few thousand task attempts are drawn as slot use over time
// per group of slots, at a size that does not grow with the run.
//
// WriteSVG draws a Timeline from the events of a run that recorded its
// trace (simulator.Config.Record). A Recorder draws the same picture from
// the events handed to simulator.Config.OnEvent as they happen, without
// keeping the trace.
//
// The picture depends only on the Timeline (and the events, in order):
// the same run draws the same bytes.
package timeline
