package kubernetes

import "time"

// Changes returns a channel that receives a value when the informers'
// caches changed in a way a Step acts on (a pod of the run changed phase
// or was deleted; a node, or the room pods not of the run take on it,
// changed) since the last value was received: a loop steps the Runner
// then (Run coalesces the changes of a short window into one Step).
// Heartbeats and the creation of the Runner's own pods do not count.
func (r *Runner) Changes() <-chan struct{} { return r.view.wake }

// NextWake returns, after a Step at now, when the Runner needs its next
// Step even if the caches do not change: at once if the last Step left
// some of the scheduler's decisions to apply, the scheduler's next
// timeout (multijob.Scheduler.NextDeadline), or the end of a driver's
// startup (a driver's pod Running for its startup starts its job); false
// if nothing is due.
func (r *Runner) NextWake(now time.Time) (time.Time, bool) {
	if !r.quiet {
		return now, true
	}
	at, ok := r.s.NextDeadline()
	for _, name := range r.order {
		j := r.jobs[name]
		d := j.driver
		if j.ended || d == nil || d.up || d.gone || d.runningAt.IsZero() {
			continue
		}
		if t := d.runningAt.Add(r.startup(name)); !ok || t.Before(at) {
			at, ok = t, true
		}
	}
	return at, ok
}
