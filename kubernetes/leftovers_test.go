package kubernetes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/regionsched/regionsched/scheduler"
)

// TestFinished: the pods of a run that Succeeded are its record of the
// task attempts that finished; the latest attempt of a task wins, and
// pods of other runs, pods still running and strangers count for nothing.
func TestFinished(t *testing.T) {
	tmpl := PodTemplate{}
	pod := func(run, job string, task scheduler.TaskID, attempt scheduler.Attempt, phase corev1.PodPhase) corev1.Pod {
		p := tmpl.Pod(Placement{Ref: TaskRef{Run: run, Job: job, Task: task, Attempt: attempt}})
		p.Status.Phase = phase
		return *p
	}
	pods := []corev1.Pod{
		pod("r1", "etl", 0, 0, corev1.PodSucceeded),
		pod("r1", "etl", 1, 0, corev1.PodFailed),
		pod("r1", "etl", 1, 1, corev1.PodSucceeded),
		pod("r1", "etl", 0, 2, corev1.PodSucceeded),
		pod("r1", "etl", 2, 0, corev1.PodRunning),
		pod("r1", "ml", 5, 0, corev1.PodSucceeded),
		pod("r2", "etl", 3, 0, corev1.PodSucceeded),
	}
	pods = append(pods, loadPods(t, "pods.json")...) // strangers, and a pod of r1 Running
	assert.Equal(t, map[string]map[scheduler.TaskID]scheduler.Attempt{
		"etl": {0: 2, 1: 1},
		"ml":  {5: 0},
	}, Finished(pods, "r1"))
}
