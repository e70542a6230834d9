package kubernetes

import (
	"maps"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// DefaultImage is the image of the container of a PodTemplate that gives
// none: a pause container (under KWOK no image is ever pulled).
const DefaultImage = "registry.k8s.io/pause:3.10"

// PodTemplate is what the pods of a run look like beyond what regionsched
// sets itself (name, labels, annotations, scheduler name, the first
// container's requests, and the environment variables naming the task).
type PodTemplate struct {
	// Namespace of the pods ("" means "default").
	Namespace string
	// Labels and Annotations are added to every pod (regionsched's own
	// keys win).
	Labels      map[string]string
	Annotations map[string]string
	// Spec is every pod's spec: its first container runs the task (with
	// no container, one named "task" of DefaultImage). Its restart policy
	// becomes Never (a task attempt runs once: a failure restarts its
	// region), its scheduler name SchedulerName, and its node name is
	// cleared (pods are bound, not created on a node).
	Spec corev1.PodSpec
}

// Placement is one task attempt in its slot on its node: what its pod is
// made of.
type Placement struct {
	Ref TaskRef
	// TaskName is the task's name ("vertex#subtask"), for people.
	TaskName string
	Slot     slotpool.SlotID
	Node     string
	// Requests is what the pod requests of its node: the slot's profile
	// for the first task placed in a slot, resource.Unknown (nothing) for
	// those sharing it, so that the slot counts once.
	Requests rsresource.Profile
	// CompleteAfter, if positive, is how long the task runs under KWOK
	// (AnnotationCompleteAfter).
	CompleteAfter time.Duration
}

// namespace returns the template's namespace ("default" if unset).
func (t *PodTemplate) namespace() string {
	if t.Namespace == "" {
		return "default"
	}
	return t.Namespace
}

// Pod returns the pod of a placement, not bound: its AnnotationNode says
// where it is to be bound.
func (t *PodTemplate) Pod(p Placement) *corev1.Pod {
	labels := maps.Clone(t.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, Labels(p.Ref))
	ann := maps.Clone(t.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationJob] = p.Ref.Job
	ann[AnnotationTaskName] = p.TaskName
	ann[AnnotationSlot] = strconv.FormatInt(int64(p.Slot), 10)
	ann[AnnotationNode] = p.Node
	if p.CompleteAfter > 0 {
		ann[AnnotationCompleteAfter] = CompleteAfter(p.CompleteAfter)
	}
	spec := *t.Spec.DeepCopy()
	spec.SchedulerName = SchedulerName
	spec.RestartPolicy = corev1.RestartPolicyNever
	spec.NodeName = ""
	if len(spec.Containers) == 0 {
		spec.Containers = []corev1.Container{{Name: "task", Image: DefaultImage}}
	}
	c := &spec.Containers[0]
	c.Resources.Requests = ResourceListOf(p.Requests)
	c.Env = append(c.Env,
		corev1.EnvVar{Name: "REGIONSCHED_RUN", Value: p.Ref.Run},
		corev1.EnvVar{Name: "REGIONSCHED_JOB", Value: p.Ref.Job},
		corev1.EnvVar{Name: "REGIONSCHED_TASK", Value: p.TaskName},
		corev1.EnvVar{Name: "REGIONSCHED_TASK_ID", Value: strconv.FormatInt(int64(p.Ref.Task), 10)},
		corev1.EnvVar{Name: "REGIONSCHED_ATTEMPT", Value: strconv.FormatInt(int64(p.Ref.Attempt), 10)},
	)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        PodName(p.Ref),
			Namespace:   t.namespace(),
			Labels:      labels,
			Annotations: ann,
		},
		Spec: spec,
	}
}
