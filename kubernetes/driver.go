package kubernetes

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/regionsched/regionsched/slotpool"
)

// LabelDriver marks the pod of a job's driver (value "true"): the job
// master that holds a slot of its own from the admission until the job
// ends. It carries LabelRun and LabelJob like a task's pod, and no task,
// attempt or region.
const LabelDriver = "regionsched.io/driver"

// DriverTaskName is the AnnotationTaskName of a driver's pod, as the
// driver is named in traces.
const DriverTaskName = "driver"

// DriverPodName returns the name of the pod of a job's driver:
// "rs-<run>-<job label>-driver".
func DriverPodName(run, job string) string {
	return fmt.Sprintf("rs-%s-%s-driver", run, JobLabel(job))
}

// IsDriver reports whether a pod is the pod of a job's driver.
func IsDriver(pod *corev1.Pod) bool { return pod.Labels[LabelDriver] == "true" }

// DriverPod returns the pod of a job's driver in a slot, not bound: it
// requests the slot's profile, runs until it is deleted (it has no
// AnnotationCompleteAfter), and its environment names the run and the
// job (REGIONSCHED_TASK is "driver").
func (t *PodTemplate) DriverPod(run, job string, slot slotpool.Slot) *corev1.Pod {
	pod := t.Pod(Placement{Ref: TaskRef{Run: run, Job: job}, TaskName: DriverTaskName, Slot: slot.ID, Node: slot.Node, Requests: slot.Profile})
	pod.Name = DriverPodName(run, job)
	delete(pod.Labels, LabelTask)
	delete(pod.Labels, LabelAttempt)
	delete(pod.Labels, LabelRegion)
	pod.Labels[LabelDriver] = "true"
	env := pod.Spec.Containers[0].Env[:0]
	for _, e := range pod.Spec.Containers[0].Env {
		if e.Name != "REGIONSCHED_TASK_ID" && e.Name != "REGIONSCHED_ATTEMPT" {
			env = append(env, e)
		}
	}
	pod.Spec.Containers[0].Env = env
	return pod
}

// BindDriver creates the pod of a job's driver in its slot and binds it
// to the slot's node, or leaves nothing (as Bind does for a bulk of one):
// a *BulkError of the job, region 0, attempt 0 says what failed.
func (b *Binder) BindDriver(ctx context.Context, run, job string, slot slotpool.Slot) (*corev1.Pod, error) {
	bulk := Bulk{Job: job, Places: []Placement{{Ref: TaskRef{Run: run, Job: job}, TaskName: DriverTaskName, Slot: slot.ID, Node: slot.Node, Requests: slot.Profile}}}
	pods, err := b.bindPods(ctx, bulk, []*corev1.Pod{b.Template.DriverPod(run, job, slot)})
	if err != nil {
		return nil, err
	}
	return pods[0], nil
}
