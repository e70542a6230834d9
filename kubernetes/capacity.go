package kubernetes

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rsresource "github.com/regionsched/regionsched/resource"
)

// mib is the size of the memory unit of resource.Profile (MB): 2^20 bytes.
const mib = 1 << 20

// NodeCapacity is what one node offers regionsched: what it has
// (allocatable), what pods not of the run already request on it, and
// whether regionsched may use it at all.
type NodeCapacity struct {
	Node string
	// Usable is false for a node that is cordoned, not Ready, being
	// deleted, or tainted NoSchedule or NoExecute by a taint the pods do
	// not tolerate; Why then says which.
	Usable bool
	Why    string
	// Allocatable is the node's allocatable cpu, memory (in MB: 2^20
	// bytes, rounded down) and extended resources.
	Allocatable rsresource.Profile
	// Foreign is the sum of the requests of the pods on the node that are
	// not the run's and have not ended (Succeeded or Failed).
	Foreign rsresource.Profile
	// Free is Allocatable minus Foreign (zero where Foreign is larger).
	Free rsresource.Profile
	// PodsFree is how many more pods the node takes (its allocatable
	// "pods" minus the pods not of the run on it); -1 if it sets no limit.
	PodsFree int64
}

// IsExtended reports whether a resource name is an extended resource
// regionsched counts in profiles: a name with a domain
// ("example.com/gpu", "nvidia.com/gpu") outside kubernetes.io, and not a
// quota-only "requests." name.
func IsExtended(name corev1.ResourceName) bool {
	n := string(name)
	dom, _, ok := strings.Cut(n, "/")
	return ok && !strings.HasPrefix(n, "requests.") && dom != "kubernetes.io" && !strings.HasSuffix(dom, ".kubernetes.io")
}

// ProfileOf converts a resource list to a profile: cpu in millicores,
// memory in MB (2^20 bytes, rounded down), and the extended resources
// (IsExtended) in whole units (rounded down); other names (pods,
// ephemeral-storage, hugepages) are left out.
func ProfileOf(l corev1.ResourceList) rsresource.Profile {
	p := rsresource.New(nonNeg(l.Cpu().MilliValue()), nonNeg(l.Memory().Value()/mib))
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		if IsExtended(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		q := l[n]
		if v := q.Value(); v > 0 {
			p = p.WithExtended(string(n), v)
		}
	}
	return p
}

// ResourceListOf converts a profile back to a resource list (the requests
// of a pod): cpu in millicores, memory in Mi, extended resources as they
// are. Unknown converts to an empty list.
func ResourceListOf(p rsresource.Profile) corev1.ResourceList {
	l := corev1.ResourceList{}
	if p.IsUnknown() {
		return l
	}
	if p.CPUMillis() > 0 {
		l[corev1.ResourceCPU] = *resource.NewMilliQuantity(p.CPUMillis(), resource.DecimalSI)
	}
	if p.MemoryMB() > 0 {
		l[corev1.ResourceMemory] = *resource.NewQuantity(p.MemoryMB()*mib, resource.BinarySI)
	}
	for n, v := range p.Extended() {
		l[corev1.ResourceName(n)] = *resource.NewQuantity(v, resource.DecimalSI)
	}
	return l
}

func nonNeg(v int64) int64 { return max(v, 0) }

// PodRequests returns what a pod requests of its node, as the scheduler
// of Kubernetes counts it: the sum of its containers' requests (sidecar
// init containers, restartPolicy Always, included), or the largest
// request of one of its other init containers where that is larger, plus
// its overhead.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	add := func(l corev1.ResourceList) {
		for n, q := range l {
			v := sum[n]
			v.Add(q)
			sum[n] = v
		}
	}
	for i := range pod.Spec.Containers {
		add(pod.Spec.Containers[i].Resources.Requests)
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c.Resources.Requests)
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			continue
		}
		for n, q := range c.Resources.Requests {
			if v, ok := sum[n]; !ok || q.Cmp(v) > 0 {
				sum[n] = q.DeepCopy()
			}
		}
	}
	add(pod.Spec.Overhead)
	return sum
}

// Ended reports whether a pod has ended (Succeeded or Failed): it holds
// nothing of its node any more.
func Ended(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// CapacityOf computes what node offers run: pods lists pods of the cluster
// (those bound to other nodes, those of run and those that ended are
// skipped, so the whole list of the cluster may be given), tolerations
// are those of the pods regionsched makes (PodTemplate's).
func CapacityOf(node *corev1.Node, pods []corev1.Pod, run string, tolerations []corev1.Toleration) NodeCapacity {
	ptrs := make([]*corev1.Pod, len(pods))
	for i := range pods {
		ptrs[i] = &pods[i]
	}
	return capacityOfPods(node, ptrs, run, tolerations)
}

// capacityOfPods is CapacityOf of pointers to the pods (those of a cache).
func capacityOfPods(node *corev1.Node, pods []*corev1.Pod, run string, tolerations []corev1.Toleration) NodeCapacity {
	c := NodeCapacity{Node: node.Name, PodsFree: -1}
	c.Usable, c.Why = usable(node, tolerations)
	c.Allocatable = ProfileOf(node.Status.Allocatable)
	if q, ok := node.Status.Allocatable[corev1.ResourcePods]; ok {
		c.PodsFree = q.Value()
	}
	foreign := corev1.ResourceList{}
	for _, p := range pods {
		if p.Spec.NodeName != node.Name || Ended(p) || (run != "" && p.Labels[LabelRun] == run) {
			continue
		}
		for n, q := range PodRequests(p) {
			v := foreign[n]
			v.Add(q)
			foreign[n] = v
		}
		if c.PodsFree > 0 {
			c.PodsFree--
		}
	}
	c.Foreign = ProfileOf(foreign)
	c.Free = subtract(c.Allocatable, c.Foreign)
	return c
}

// subtract returns a - b, each amount at least zero.
func subtract(a, b rsresource.Profile) rsresource.Profile {
	out := rsresource.New(nonNeg(a.CPUMillis()-b.CPUMillis()), nonNeg(a.MemoryMB()-b.MemoryMB()))
	for n, v := range a.Extended() {
		if left := v - b.ExtendedValue(n); left > 0 {
			out = out.WithExtended(n, left)
		}
	}
	return out
}

// usable says whether regionsched may place pods on node, and if not why.
func usable(node *corev1.Node, tolerations []corev1.Toleration) (bool, string) {
	switch {
	case node.DeletionTimestamp != nil:
		return false, "being deleted"
	case node.Spec.Unschedulable:
		return false, "cordoned"
	}
	ready := false
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			ready = cond.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return false, "not Ready"
	}
	for _, t := range node.Spec.Taints {
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(tol corev1.Toleration) bool { return tolerates(tol, t) }) {
			return false, "tainted " + t.ToString()
		}
	}
	return true, ""
}

// tolerates reports whether tol tolerates taint t, by the rules of the
// scheduler of Kubernetes: same effect (or none given), same key (or none
// given, with operator Exists), and operator Exists or the same value.
func tolerates(tol corev1.Toleration, t corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != t.Key {
		return false
	}
	switch tol.Operator {
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpEqual, "":
		return tol.Key != "" && tol.Value == t.Value
	}
	return false
}
