package kubernetes

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// RegionTasks is the JobTasks of a job's regions: its tasks' names
// ("vertex#subtask") and their vertices' durations (a vertex's
// durationMs in its job file), times Scale (0 means 1).
type RegionTasks struct {
	Regions *region.Regions
	Scale   float64
}

// TaskName returns the task's "vertex#subtask".
func (t RegionTasks) TaskName(v scheduler.TaskID) string { return t.Regions.Topology().VertexName(v) }

// Duration returns the duration of the task's vertex.
func (t RegionTasks) Duration(v scheduler.TaskID) time.Duration {
	topo := t.Regions.Topology()
	return scaled(topo.Job().Vertex(topo.JobVertexOf(v)).Duration, t.Scale)
}

// scaled returns d times scale (0 means 1).
func scaled(d time.Duration, scale float64) time.Duration {
	if scale > 0 {
		d = time.Duration(float64(d) * scale)
	}
	return d
}

var _ JobTasks = RegionTasks{}

// observePods reads the pods of the run and reports what changed of each
// task attempt the Runner waits on; it returns the pods it waits on
// (tasks' and drivers') by name. It reads them from the cache
// of the run's pods; a pod the cache does not have is looked up on the
// API server (lookUp): bound since the cache last heard (a pod just
// bound is not lost), or deleted. A pod the Runner deleted is forgotten
// once the cache has it no more.
func (r *Runner) observePods(ctx context.Context, now time.Time) (map[string]*corev1.Pod, error) {
	seen := make(map[string]*corev1.Pod, len(r.pods))
	var missing []string
	look := func(name string) {
		if pod, ok := r.view.runPod(name); ok {
			seen[name] = pod
		} else {
			missing = append(missing, name)
		}
	}
	for name, p := range r.pods {
		if !p.ours {
			look(name)
		} else if pod, ok := r.view.runPod(name); ok {
			seen[name] = pod
		}
	}
	for _, j := range r.jobs {
		if d := j.driver; !j.ended && d != nil && !d.gone {
			look(d.name)
		}
	}
	if err := r.lookUp(ctx, missing, seen); err != nil {
		return nil, err
	}
	var early []string // finishes refused as early
	for name, p := range r.pods {
		pod, ok := seen[name]
		if p.ours {
			// Deleted by the Runner: nothing more to hear of it.
			if !ok {
				delete(r.pods, name)
			}
			continue
		}
		var ev TaskEvent
		switch {
		case ok && Rejected(pod) && p.reported < TaskRunning:
			r.log.Info("pod rejected by its node: its bulk goes", zap.String("pod", name), zap.String("reason", pod.Status.Reason))
			r.failBulk(now, p.bulk)
			continue
		case ok:
			p.last = pod
			ev = EventOf(pod)
		default:
			ev = EventOfDeleted(p.last)
		}
		if ev > p.reported {
			r.report(now, p, ev)
		}
		if p.reported >= TaskFinished {
			// Ended: the pod stays (the record of what the task did)
			// until the run ends, but there is nothing more to hear.
			delete(r.pods, name)
		} else if ev == TaskFinished {
			early = append(early, name)
		}
	}
	r.retryEarly(now, early)
	return seen, nil
}

// retryEarly tells again the finishes the scheduler refused as early in
// this look (a consumer of a hybrid result whose producer's finish came
// later in the same look), for as long as one of them is taken: the
// order of one look's pods does not decide.
func (r *Runner) retryEarly(now time.Time, early []string) {
	for progress := true; progress; {
		progress = false
		for _, name := range early {
			p, ok := r.pods[name]
			if !ok {
				continue
			}
			r.report(now, p, TaskFinished)
			if p.reported >= TaskFinished {
				delete(r.pods, name)
				progress = true
			}
		}
	}
}

// lookUp gets the pods named, a few at once, and adds those that exist to
// seen (a pod not found was deleted).
func (r *Runner) lookUp(ctx context.Context, names []string, seen map[string]*corev1.Pod) error {
	api := r.cfg.Client.CoreV1().Pods(r.cfg.Template.namespace())
	got := make([]*corev1.Pod, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, DefaultBindParallel)
	var wg sync.WaitGroup
	for i, name := range names {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			pod, err := api.Get(ctx, name, metav1.GetOptions{})
			switch {
			case err == nil:
				got[i] = pod
			case !apierrors.IsNotFound(err):
				errs[i] = err
			}
		})
	}
	wg.Wait()
	for i, pod := range got {
		if pod != nil {
			seen[names[i]] = pod
		}
	}
	return errors.Join(errs...)
}

// report tells the job's scheduler a task event of a pod. A finish the
// scheduler refuses because the task reads a hybrid result whose
// producers have not finished yet (scheduler.ErrEarlyFinish: a consumer
// reads until its producers wrote their last record) is told again at
// the next look.
func (r *Runner) report(now time.Time, p *trackedPod, ev TaskEvent) {
	var err error
	switch ev {
	case TaskRunning:
		err = r.s.TaskRunning(now, p.ref.Job, p.ref.Task, p.ref.Attempt)
	case TaskFinished:
		err = r.s.TaskFinished(now, p.ref.Job, p.ref.Task, p.ref.Attempt)
		if errors.Is(err, scheduler.ErrEarlyFinish) {
			if p.reported < TaskRunning {
				r.report(now, p, TaskRunning)
			}
			return
		}
	case TaskFailed:
		err = r.s.TaskFailed(now, p.ref.Job, p.ref.Task, p.ref.Attempt)
	}
	p.reported = ev
	r.traceTask(now, p, ev)
	if err != nil {
		r.log.Debug("task event refused", zap.Stringer("task", p.ref), zap.Stringer("event", ev), zap.Error(err))
	}
}

// failBulk deletes every pod of a bulk and tells its job the bulk's slots
// are lost.
func (r *Runner) failBulk(now time.Time, bulk [3]int64) {
	var job string
	slots := map[slotpool.SlotID]bool{}
	for name, p := range r.pods {
		if p.bulk == bulk {
			job = p.ref.Job
			slots[p.slot] = true
			if !p.ours {
				p.ours = true
				r.deletePod(name)
			}
		}
	}
	for s := range slots {
		if r.owner[s] == job {
			r.slotLost(now, job, s)
		}
	}
}

// apply applies a Ready: the jobs that finished first (each ended with
// its last task, an input of the instant: its driver leaves before the
// decision's events), then the reclaims and cancels, the other ends, and
// the deployments.
func (r *Runner) apply(ctx context.Context, now time.Time, rd multijob.Ready) error {
	for _, end := range rd.Ended {
		if end.Outcome == multijob.Finished {
			r.endJob(now, end.Job)
		}
	}
	r.traceReclaims(now, rd)
	r.noteRestarts(now, rd)
	for _, jr := range rd.Jobs {
		for _, c := range jr.Cancel {
			name := PodName(TaskRef{Run: r.cfg.Run, Job: jr.Job, Task: c.Task, Attempt: c.Attempt})
			if p, ok := r.pods[name]; ok && !p.ours {
				r.traceCancel(now, jr.Job, p)
				p.ours = true
				r.deletePod(name)
			}
		}
		for _, rel := range jr.Released {
			r.traceRelease(now, jr.Job, rel)
			delete(r.owner, rel.Slot)
		}
	}
	r.traceReady(now, rd) // the requests, after the cancels and releases, as in the simulator's trace
	for _, end := range rd.Ended {
		if end.Outcome != multijob.Finished {
			r.endJob(now, end.Job)
		}
		r.ends = append(r.ends, end)
		r.log.Info("job ended", zap.String("job", end.Job), zap.Stringer("outcome", end.Outcome), zap.Error(end.Err))
	}
	var bulks []Bulk
	for _, jr := range rd.Jobs {
		if len(jr.Deploy) == 0 {
			continue
		}
		j := r.jobs[jr.Job]
		deploys := r.onKnownSlots(now, jr.Job, jr.Deploy)
		jb, err := PlanBulks(r.cfg.Run, jr.Job, deploys, r.inv.Slot, j.tasks)
		if err != nil { // cannot happen: every slot of deploys is known
			r.log.Warn("deployments not placed", zap.String("job", jr.Job), zap.Error(err))
			continue
		}
		bulks = append(bulks, jb...)
	}
	r.bindAll(ctx, now, bulks)
	for _, ev := range rd.Events {
		if ev.Kind == admission.DriverGranted {
			r.startDriver(ctx, now, ev.Job, ev.Slot)
		}
	}
	return ctx.Err()
}

// endJob ends a job of a Ready: its open requests are withdrawn and its
// driver stops.
func (r *Runner) endJob(now time.Time, job string) {
	r.traceWithdrawals(now, job)
	if j, ok := r.jobs[job]; ok {
		j.ended = true
		r.stopDriver(now, j)
	}
}

// onKnownSlots returns the deployments of a job whose region attempts
// have every slot in the inventory. A region attempt placed in a slot
// the inventory lost since the grant is not bound at all: the job hears
// of the slot as lost (its region fails over), and the region's other
// tasks are canceled by its restart.
func (r *Runner) onKnownSlots(now time.Time, job string, deploys []scheduler.Deployment) []scheduler.Deployment {
	bad := map[[2]int64]bool{}
	for _, d := range deploys {
		if _, ok := r.inv.Slot(d.Slot); !ok {
			bad[[2]int64{int64(d.Region), int64(d.Attempt)}] = true
		}
	}
	if len(bad) == 0 {
		return deploys
	}
	out := make([]scheduler.Deployment, 0, len(deploys))
	for _, d := range deploys {
		if !bad[[2]int64{int64(d.Region), int64(d.Attempt)}] {
			out = append(out, d)
			continue
		}
		if _, ok := r.inv.Slot(d.Slot); !ok {
			r.log.Info("deployment on a lost slot", zap.String("job", job), zap.Int64("slot", int64(d.Slot)), zap.Int64("region", int64(d.Region)))
			r.owner[d.Slot] = job
			r.slotLost(now, job, d.Slot)
		}
	}
	return out
}

// bindAll binds the bulks of one Ready, up to RunnerConfig.BindParallel
// at once (each bulk all-or-nothing, independently of the others), then
// records each outcome in order: the pods of a bulk bound are tracked, the
// slots of one that could not be bound are lost.
func (r *Runner) bindAll(ctx context.Context, now time.Time, bulks []Bulk) {
	type outcome struct {
		pods []*corev1.Pod
		err  error
	}
	out := make([]outcome, len(bulks))
	par := r.cfg.BindParallel
	if par <= 0 {
		par = DefaultBindParallel
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range bulks {
		for _, s := range bulks[i].Slots() {
			r.owner[s] = bulks[i].Job
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			pods, err := r.binder.Bind(ctx, bulks[i])
			out[i] = outcome{pods, err}
		})
	}
	wg.Wait()
	for i, b := range bulks {
		r.bound(now, b, out[i].pods, out[i].err)
	}
}

// bound records how binding a bulk ended: its pods tracked, or its slots
// lost.
func (r *Runner) bound(now time.Time, b Bulk, pods []*corev1.Pod, err error) {
	key := [3]int64{int64(r.jobIndex(b.Job)), int64(b.Region), int64(b.Attempt)}
	if err != nil {
		var be *BulkError
		if errors.As(err, &be) && be.Cleanup != nil {
			r.log.Warn("bulk not cleaned up: its pods are leftovers of the run", zap.Error(err))
		}
		r.log.Info("bulk not bound: its slots are lost", zap.Error(err))
		for _, s := range b.Slots() {
			r.slotLost(now, b.Job, s)
		}
		return
	}
	for i, pod := range pods {
		r.pods[pod.Name] = &trackedPod{ref: b.Places[i].Ref, slot: b.Places[i].Slot, bulk: key, last: pod}
	}
	r.traceBound(now, b)
}

// jobIndex is the job's place in submission order.
func (r *Runner) jobIndex(job string) int {
	for i, n := range r.order {
		if n == job {
			return i
		}
	}
	return -1
}
