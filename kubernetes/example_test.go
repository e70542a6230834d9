package kubernetes_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regionsched/regionsched/kubernetes"
	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
)

// node returns a Ready node with cpu and memory allocatable.
func node(name, cpu, mem string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

// Nodes become slots: each node's allocatable minus what other pods
// request, divided into slots of one shape; a node cordoned loses its
// slots. A granted region becomes a bulk of pods, each bound to its
// slot's node.
func Example() {
	web := corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}},
	}}}}
	nodes := []*corev1.Node{node("n1", "4", "8Gi"), node("n2", "2", "4Gi")}
	inv, err := kubernetes.NewInventory(rsresource.New(1000, 1024))
	if err != nil {
		panic(err)
	}
	var caps []kubernetes.NodeCapacity
	for _, n := range nodes {
		caps = append(caps, kubernetes.CapacityOf(n, []corev1.Pod{web}, "run1", nil))
	}
	for _, s := range inv.Observe(caps).Added {
		fmt.Printf("slot %d on %s: %v\n", s.ID, s.Node, s.Profile)
	}

	// Region 0 of job "etl" is granted slots 1 and 4.
	deploys := []scheduler.Deployment{{Task: 0, Slot: 1}, {Task: 1, Slot: 4}}
	bulks, err := kubernetes.PlanBulks("run1", "etl", deploys, inv.Slot, names{})
	if err != nil {
		panic(err)
	}
	var tmpl kubernetes.PodTemplate
	for _, p := range bulks[0].Places {
		pod := tmpl.Pod(p)
		fmt.Printf("pod %s -> %s (cpu %v)\n", pod.Name, pod.Annotations[kubernetes.AnnotationNode], pod.Spec.Containers[0].Resources.Requests.Cpu())
	}

	nodes[0].Spec.Unschedulable = true
	caps[0] = kubernetes.CapacityOf(nodes[0], []corev1.Pod{web}, "run1", nil)
	for _, l := range inv.Observe(caps).Lost {
		fmt.Printf("slot %d lost: %s %s\n", l.Slot.ID, l.Slot.Node, l.Why)
	}
	// Output:
	// slot 1 on n1: {cpu=1000m mem=1024MB}
	// slot 2 on n1: {cpu=1000m mem=1024MB}
	// slot 3 on n2: {cpu=1000m mem=1024MB}
	// slot 4 on n2: {cpu=1000m mem=1024MB}
	// pod rs-run1-etl-t0-a0 -> n1 (cpu 1)
	// pod rs-run1-etl-t1-a0 -> n2 (cpu 1)
	// slot 1 lost: n1 cordoned
	// slot 2 lost: n1 cordoned
}

// names names task v "task<v>"; the tasks run until deleted.
type names struct{}

func (names) TaskName(v scheduler.TaskID) string      { return fmt.Sprintf("task%d", v) }
func (names) Duration(scheduler.TaskID) time.Duration { return 0 }
