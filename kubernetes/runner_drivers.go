package kubernetes

import (
	"context"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/slotpool"
)

// driverPod is the pod of a job's driver.
type driverPod struct {
	name string
	slot slotpool.SlotID
	// runningAt is when the Runner first saw the pod Running (zero: not
	// yet); up says the job was started.
	runningAt time.Time
	up        bool
	// bound: its pod was bound (and traced as deployed).
	bound bool
	// gone: the driver is no more (its pod deleted by someone else,
	// Failed, or not bound; or its job ended and its pod was deleted):
	// the Runner no longer follows it. lost says why, when it went before
	// its job ended.
	gone bool
	lost string
	// deleted: its pod was deleted (its job ended).
	deleted bool
}

// startup returns how long a job's driver takes to come up.
func (r *Runner) startup(job string) time.Duration {
	if r.cfg.DriverStartup != nil {
		return r.cfg.DriverStartup(job)
	}
	return DefaultDriverStartup
}

// DefaultDriverStartup is a driver's startup when RunnerConfig.DriverStartup
// is nil: a job file's default startupMs.
const DefaultDriverStartup = time.Second

// startDriver binds the pod of a job's driver in the slot the admission
// granted it. A driver that cannot be bound is lost (driverLost): its job
// fails.
func (r *Runner) startDriver(ctx context.Context, now time.Time, job string, slot slotpool.SlotID) {
	j, ok := r.jobs[job]
	if !ok || j.ended || j.driver != nil {
		return
	}
	j.driver = &driverPod{name: DriverPodName(r.cfg.Run, job), slot: slot}
	s, ok := r.inv.Slot(slot)
	if !ok {
		r.driverLost(now, j, "its slot was lost before its pod was bound")
		return
	}
	if _, err := r.binder.BindDriver(ctx, r.cfg.Run, job, s); err != nil {
		r.driverLost(now, j, "its pod could not be bound: "+err.Error())
		return
	}
	j.driver.bound = true
	r.log.Info("driver bound", zap.String("job", job), zap.String("node", s.Node), zap.Time("at", now))
	r.traceDriver(now, job, runfile.Deploy, slot)
}

// driverLost tells the admission that a job's driver is gone
// (multijob.Scheduler.DriverLost): the job fails with an
// *admission.DriverLostError naming the driver and why, and the next
// Ready ends it (its pods deleted, its slots back). A driver is not
// started again in its place: what it knew of its job is gone with it.
func (r *Runner) driverLost(now time.Time, j *runJob, why string) {
	d := j.driver
	d.gone, d.lost = true, why
	r.log.Warn("driver lost: its job fails", zap.String("job", j.spec.Name), zap.String("why", why))
	if err := r.s.DriverLost(now, j.spec.Name, why); err != nil {
		r.log.Debug("driver loss refused", zap.String("job", j.spec.Name), zap.Error(err))
	}
}

// traceDriver traces an event of a job's driver, as the simulator does:
// the task runfile.DriverTask of no region, in its slot.
func (r *Runner) traceDriver(now time.Time, job string, k runfile.Kind, slot slotpool.SlotID) {
	if !r.tracing() {
		return
	}
	ev := runfile.Event{At: now.Sub(r.cfg.Start), Kind: k, Task: runfile.DriverTask, Region: runfile.NoRegion, Slot: int(slot)}
	if r.cfg.TraceJobs {
		ev.Job = job
	}
	r.cfg.Trace(ev)
}

// observeDrivers follows the drivers' pods: a driver whose pod has run
// for its startup time starts its job; a driver whose pod was deleted by
// someone else, or ended (Failed, or Succeeded: a driver runs until its
// job ends), is lost, before or after its job started (driverLost).
func (r *Runner) observeDrivers(now time.Time, seen map[string]*corev1.Pod) {
	for _, name := range r.order {
		j := r.jobs[name]
		d := j.driver
		if j.ended || d == nil || d.gone {
			continue
		}
		pod, ok := seen[d.name]
		switch {
		case !ok:
			r.driverLost(now, j, "its pod "+d.name+" was deleted")
			continue
		case pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded:
			r.driverLost(now, j, "its pod "+d.name+" "+string(pod.Status.Phase)+reasonOf(pod))
			continue
		case d.up || pod.Status.Phase != corev1.PodRunning:
			continue
		}
		if d.runningAt.IsZero() {
			d.runningAt = now
		}
		if now.Sub(d.runningAt) < r.startup(name) {
			continue
		}
		d.up = true
		if err := r.s.StartJob(now, name); err != nil {
			r.log.Debug("start refused", zap.String("job", name), zap.Error(err))
		}
	}
}

// stopDriver deletes the pod of an ended job's driver (a lost driver's
// too: a pod that Failed is still there), traced as the driver's finish,
// or its failure if it was lost, and its slot's release.
func (r *Runner) stopDriver(now time.Time, j *runJob) {
	d := j.driver
	if d == nil || d.deleted {
		return
	}
	d.gone, d.deleted = true, true
	if !d.bound {
		return
	}
	r.deletePod(d.name)
	end := runfile.Finish
	if d.lost != "" {
		end = runfile.Fail
	}
	r.traceDriver(now, j.spec.Name, end, d.slot)
	r.traceDriver(now, j.spec.Name, runfile.Release, d.slot)
}

// reasonOf is ": " and the reason a pod's status gives, if any.
func reasonOf(pod *corev1.Pod) string {
	if pod.Status.Reason == "" {
		return ""
	}
	return ": " + pod.Status.Reason
}

// driverStarting reports whether some job's driver is on its way up.
func (r *Runner) driverStarting() bool {
	for _, j := range r.jobs {
		if d := j.driver; !j.ended && d != nil && !d.up && !d.gone {
			return true
		}
	}
	return false
}
