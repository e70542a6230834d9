package kubernetes

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regionsched/regionsched/scheduler"
)

// Leftover is a pod of a run: what a runner that died may have left.
type Leftover struct {
	Ref   TaskRef
	Pod   string
	Node  string
	Phase corev1.PodPhase
}

// Leftovers lists the pods of a run in namespace ns (of every run if run
// is ""), sorted by run, job, task and attempt. A driver's pod is listed
// with its run and job and a zero task, as is, with the run its label
// names, a pod whose labels make no sense.
func Leftovers(ctx context.Context, c kubernetes.Interface, ns, run string) ([]Leftover, error) {
	list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: RunSelector(run)})
	if err != nil {
		return nil, err
	}
	return leftoversOf(list.Items), nil
}

// leftoversOf is Leftovers over listed pods.
func leftoversOf(pods []corev1.Pod) []Leftover {
	out := make([]Leftover, 0, len(pods))
	for i := range pods {
		p := &pods[i]
		ref, err := RefOf(p)
		switch {
		case err != nil && IsDriver(p):
			ref = TaskRef{Run: p.Labels[LabelRun], Job: p.Annotations[AnnotationJob]}
		case err != nil:
			ref = TaskRef{Run: p.Labels[LabelRun]}
		}
		out = append(out, Leftover{Ref: ref, Pod: p.Name, Node: p.Spec.NodeName, Phase: p.Status.Phase})
	}
	slices.SortFunc(out, func(a, b Leftover) int {
		return cmp.Or(cmp.Compare(a.Ref.Run, b.Ref.Run), cmp.Compare(a.Ref.Job, b.Ref.Job),
			cmp.Compare(a.Ref.Task, b.Ref.Task), cmp.Compare(a.Ref.Attempt, b.Ref.Attempt), cmp.Compare(a.Pod, b.Pod))
	})
	return out
}

// DeleteRun deletes every pod of a run in namespace ns (grace period 0):
// what a kill, the end of a runner, or the cleanup of a dead runner's
// leftovers does. It returns how many pods it deleted; run must not be
// "" (a *RunError).
func DeleteRun(ctx context.Context, c kubernetes.Interface, ns, run string) (int, error) {
	if err := CheckRun(run); err != nil {
		return 0, err
	}
	left, err := Leftovers(ctx, c, ns, run)
	if err != nil {
		return 0, err
	}
	errs := make([]error, len(left))
	sem := make(chan struct{}, deleteParallel)
	var wg sync.WaitGroup
	for i, l := range left {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = DeletePod(ctx, c, ns, l.Pod)
		})
	}
	wg.Wait()
	n := 0
	for _, err := range errs {
		if err == nil {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// deleteParallel is how many pods DeleteRun deletes at once.
const deleteParallel = 16

// Finished reads, from the pods of a run, which task attempts finished:
// for each job, its tasks whose pod Succeeded, each with the latest
// attempt that did. It is the record a runner that starts again after
// the death of an earlier one reads to know what not to redo. Pods not of
// run, or whose labels make no sense, are skipped.
func Finished(pods []corev1.Pod, run string) map[string]map[scheduler.TaskID]scheduler.Attempt {
	out := map[string]map[scheduler.TaskID]scheduler.Attempt{}
	for i := range pods {
		p := &pods[i]
		ref, err := RefOf(p)
		if err != nil || ref.Run != run || p.Status.Phase != corev1.PodSucceeded {
			continue
		}
		if out[ref.Job] == nil {
			out[ref.Job] = map[scheduler.TaskID]scheduler.Attempt{}
		}
		if a, ok := out[ref.Job][ref.Task]; !ok || ref.Attempt > a {
			out[ref.Job][ref.Task] = ref.Attempt
		}
	}
	return out
}
