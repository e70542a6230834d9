package timeline

import (
	"io"

	"github.com/regionsched/regionsched/runfile"
)

// Recorder draws the picture of a run from its events streamed
// one at a time, without keeping the trace: give its Event method as
// simulator.Config.OnEvent (or simulator.JobsConfig.OnEvent), then call
// WriteSVG with the Timeline of the result, and Close.
//
// The picture is the one WriteSVG draws from the recorded events. While
// the run could still be drawn one bar per task attempt (at most 3,000
// attempts on at most 120 slots) the recorder keeps its events; once it
// is certain to get the aggregated view it keeps only what that view
// needs: one entry per slot and per waiting request, the names of the job
// vertices and jobs, and, since the time axis is known only at the end,
// the steps of slot use in a temporary file (in os.TempDir, about 15
// bytes per slot holding and per request that waited). Memory then stays
// flat however long the run.
type Recorder struct {
	events  []runfile.Event // while the detailed view is possible
	deploys int
	slots   int // the largest slot id named, plus 1
	stats   colorStats
	marks   markSet     // the admission's lane (the aggregated view's)
	agg     *aggregator // once aggregated
	spool   *opSpool
	err     error
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{} }

// Event takes the next event of the run (in time order). After an error
// (the temporary file) it takes nothing more; WriteSVG returns the error.
func (r *Recorder) Event(e runfile.Event) {
	if r.err != nil {
		return
	}
	r.slots = max(r.slots, e.Slot+1)
	if e.Kind == runfile.Deploy {
		r.deploys++
	}
	r.stats.observe(e)
	if r.agg != nil {
		r.marks.observe(e)
		r.agg.observe(e)
		return
	}
	r.events = append(r.events, e)
	if aggregated(r.deploys, r.slots) {
		r.startAggregating()
	}
}

// startAggregating turns the events kept so far into the steps of the
// aggregated view and drops them.
func (r *Recorder) startAggregating() {
	r.spool, r.err = newOpSpool()
	if r.err != nil {
		return
	}
	r.agg = newAggregator(&r.stats, r.spool.put)
	for _, e := range r.events {
		r.marks.observe(e)
		r.agg.observe(e)
	}
	r.events = nil
}

// Slots is the number of slots the events named so far: the largest slot
// id plus 1.
func (r *Recorder) Slots() int { return r.slots }

// WriteSVG draws the run as WriteSVG draws tl with the events recorded
// (tl.Events is ignored).
func (r *Recorder) WriteSVG(w io.Writer, tl Timeline) error {
	if r.err != nil {
		return r.err
	}
	if r.agg == nil {
		tl.Events = r.events
		return WriteSVG(w, tl)
	}
	tl.Events = nil
	tl.Slots = max(tl.Slots, r.slots)
	pic, err := newPicture(tl, &r.stats)
	if err != nil {
		return err
	}
	pic.marks = r.marks
	if err := pic.aggregate(aggSource{agg: r.agg, replay: r.spool.replay}); err != nil {
		return err
	}
	return pic.write(w)
}

// Close removes the temporary file, if any. It may be called more than
// once, and on a nil recorder.
func (r *Recorder) Close() error {
	if r == nil || r.spool == nil {
		return nil
	}
	err := r.spool.close()
	r.spool = nil
	return err
}
