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
	// gone: the pod is no more (deleted by someone else, Failed, or its
	// bind failed): the driver will never come up.
	gone bool
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
// granted it. A driver that cannot be bound stays down: its job waits
// (and a run with nothing else to do reports a deadlock naming it).
func (r *Runner) startDriver(ctx context.Context, now time.Time, job string, slot slotpool.SlotID) {
	j, ok := r.jobs[job]
	if !ok || j.ended || j.driver != nil {
		return
	}
	j.driver = &driverPod{name: DriverPodName(r.cfg.Run, job), slot: slot}
	s, ok := r.inv.Slot(slot)
	if !ok {
		r.log.Warn("driver granted a lost slot: it does not start", zap.String("job", job), zap.Int64("slot", int64(slot)))
		j.driver.gone = true
		return
	}
	if _, err := r.binder.BindDriver(ctx, r.cfg.Run, job, s); err != nil {
		r.log.Warn("driver not bound: it does not start", zap.String("job", job), zap.Error(err))
		j.driver.gone = true
		return
	}
	r.log.Info("driver bound", zap.String("job", job), zap.String("node", s.Node), zap.Time("at", now))
	r.traceDriver(now, job, runfile.Deploy, slot)
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
// for its startup time starts its job.
func (r *Runner) observeDrivers(now time.Time, seen map[string]*corev1.Pod) {
	for _, name := range r.order {
		j := r.jobs[name]
		d := j.driver
		if j.ended || d == nil || d.up || d.gone {
			continue
		}
		pod, ok := seen[d.name]
		switch {
		case !ok || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded:
			r.log.Warn("driver's pod ended before its job started", zap.String("job", name), zap.Bool("deleted", !ok))
			d.gone = true
			continue
		case pod.Status.Phase != corev1.PodRunning:
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

// stopDriver deletes the pod of an ended job's driver, traced as the
// driver's finish and its slot's release.
func (r *Runner) stopDriver(now time.Time, j *runJob) {
	if d := j.driver; d != nil && !d.gone {
		d.gone = true
		r.deletePod(d.name)
		r.traceDriver(now, j.spec.Name, runfile.Finish, d.slot)
		r.traceDriver(now, j.spec.Name, runfile.Release, d.slot)
	}
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
