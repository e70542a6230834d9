package kubernetes

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// RegionTasks is the JobTasks of a job's regions: its tasks' names
// ("vertex#subtask") and their vertices' durations (a vertex's
// durationMs in its job file).
type RegionTasks struct{ Regions *region.Regions }

// TaskName returns the task's "vertex#subtask".
func (t RegionTasks) TaskName(v scheduler.TaskID) string { return t.Regions.Topology().VertexName(v) }

// Duration returns the duration of the task's vertex.
func (t RegionTasks) Duration(v scheduler.TaskID) time.Duration {
	topo := t.Regions.Topology()
	return topo.Job().Vertex(topo.JobVertexOf(v)).Duration
}

var _ JobTasks = RegionTasks{}

// scaledTasks is a JobTasks whose durations are scale times those of
// tasks (a scale of 0 is 1).
type scaledTasks struct {
	tasks JobTasks
	scale float64
}

func (t scaledTasks) TaskName(v scheduler.TaskID) string { return t.tasks.TaskName(v) }

func (t scaledTasks) Duration(v scheduler.TaskID) time.Duration {
	d := t.tasks.Duration(v)
	if t.scale > 0 && t.scale != 1 {
		d = time.Duration(float64(d) * t.scale)
	}
	return d
}

// observePods reads the pods of the run and reports what changed of each
// task attempt the Runner waits on; it returns the pods by name.
func (r *Runner) observePods(ctx context.Context, now time.Time) (map[string]*corev1.Pod, error) {
	list, err := r.cfg.Client.CoreV1().Pods(r.cfg.Template.namespace()).List(ctx, metav1.ListOptions{LabelSelector: RunSelector(r.cfg.Run)})
	if err != nil {
		return nil, err
	}
	seen := make(map[string]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		seen[list.Items[i].Name] = &list.Items[i]
	}
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
		}
	}
	return seen, nil
}

// report tells the job's scheduler a task event of a pod.
func (r *Runner) report(now time.Time, p *trackedPod, ev TaskEvent) {
	p.reported = ev
	var err error
	switch ev {
	case TaskRunning:
		err = r.s.TaskRunning(now, p.ref.Job, p.ref.Task, p.ref.Attempt)
	case TaskFinished:
		err = r.s.TaskFinished(now, p.ref.Job, p.ref.Task, p.ref.Attempt)
	case TaskFailed:
		err = r.s.TaskFailed(now, p.ref.Job, p.ref.Task, p.ref.Attempt)
	}
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

// apply applies a Ready: cancels first, then ends, then deployments.
func (r *Runner) apply(ctx context.Context, now time.Time, rd multijob.Ready) error {
	for _, jr := range rd.Jobs {
		for _, c := range jr.Cancel {
			name := PodName(TaskRef{Run: r.cfg.Run, Job: jr.Job, Task: c.Task, Attempt: c.Attempt})
			if p, ok := r.pods[name]; ok && !p.ours {
				p.ours = true
				r.deletePod(name)
			}
		}
		for _, rel := range jr.Released {
			delete(r.owner, rel.Slot)
		}
	}
	for _, end := range rd.Ended {
		if j, ok := r.jobs[end.Job]; ok {
			j.ended = true
			r.stopDriver(j)
		}
		r.ends = append(r.ends, end)
		r.log.Info("job ended", zap.String("job", end.Job), zap.Stringer("outcome", end.Outcome), zap.Error(end.Err))
	}
	for _, jr := range rd.Jobs {
		if len(jr.Deploy) == 0 {
			continue
		}
		j := r.jobs[jr.Job]
		bulks, err := PlanBulks(r.cfg.Run, jr.Job, jr.Deploy, r.inv.Slot, j.tasks)
		if err != nil {
			// A slot the inventory lost since the grant: the job hears
			// of it as lost.
			r.log.Info("deployment on a lost slot", zap.String("job", jr.Job), zap.Error(err))
			for _, d := range jr.Deploy {
				if _, ok := r.inv.Slot(d.Slot); !ok {
					r.owner[d.Slot] = jr.Job
					r.slotLost(now, jr.Job, d.Slot)
				}
			}
			continue
		}
		for _, b := range bulks {
			r.bind(ctx, now, b)
		}
	}
	for _, ev := range rd.Events {
		if ev.Kind == admission.DriverGranted {
			r.startDriver(ctx, now, ev.Job, ev.Slot)
		}
	}
	return ctx.Err()
}

// bind binds one bulk; one that cannot be bound loses its slots.
func (r *Runner) bind(ctx context.Context, now time.Time, b Bulk) {
	key := [3]int64{int64(r.jobIndex(b.Job)), int64(b.Region), int64(b.Attempt)}
	for _, s := range b.Slots() {
		r.owner[s] = b.Job
	}
	pods, err := r.binder.Bind(ctx, b)
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
