package kubernetes

import (
	corev1 "k8s.io/api/core/v1"
)

// TaskEvent is what a pod's phase says of its task attempt.
type TaskEvent uint8

// The task events.
const (
	// NoEvent: the pod is pending (created, bound, not yet running).
	NoEvent TaskEvent = iota
	// TaskRunning: the pod runs (phase Running).
	TaskRunning
	// TaskFinished: the pod Succeeded.
	TaskFinished
	// TaskFailed: the pod Failed, or it was deleted by someone else before
	// it Succeeded.
	TaskFailed
)

var taskEventNames = [...]string{"none", "running", "finished", "failed"}

// String returns "none", "running", "finished" or "failed".
func (e TaskEvent) String() string {
	if int(e) < len(taskEventNames) {
		return taskEventNames[e]
	}
	return "TaskEvent(?)"
}

// EventOf returns the event a pod's phase stands for: Running -> running,
// Succeeded -> finished, Failed -> failed; Pending and Unknown (a node
// out of touch, which the node's loss settles) -> none.
func EventOf(pod *corev1.Pod) TaskEvent {
	switch pod.Status.Phase {
	case corev1.PodRunning:
		return TaskRunning
	case corev1.PodSucceeded:
		return TaskFinished
	case corev1.PodFailed:
		return TaskFailed
	}
	return NoEvent
}

// EventOfDeleted returns the event of a pod that disappeared without
// regionsched deleting it (pod is its last state seen): finished if it
// had Succeeded, failed otherwise.
func EventOfDeleted(pod *corev1.Pod) TaskEvent {
	if pod.Status.Phase == corev1.PodSucceeded {
		return TaskFinished
	}
	return TaskFailed
}

// Rejected reports whether a pod Failed without any of its containers
// ever starting, with a reason (the node refused it: OutOfcpu,
// NodeAffinity, UnexpectedAdmissionError, ...): its bulk never ran whole,
// so every pod of the bulk is deleted and its slots treated as lost.
func Rejected(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodFailed || pod.Status.Reason == "" {
		return false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running != nil || (cs.State.Terminated != nil && !cs.State.Terminated.StartedAt.IsZero()) ||
			(cs.LastTerminationState.Terminated != nil) {
			return false
		}
	}
	return true
}
