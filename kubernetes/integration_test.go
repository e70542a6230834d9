package kubernetes_test

// Integration tests against the control plane of scripts/k8s-up.sh
// (etcd, kube-apiserver, KWOK): skipped when there is none, failed when
// REGIONSCHED_K8S=require.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	rsk8s "github.com/regionsched/regionsched/kubernetes"
	"github.com/regionsched/regionsched/kubernetes/internal/k8stest"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// observe lists the test's nodes and every pod, and feeds their
// capacities for run to inv.
func observe(t *testing.T, c kubernetes.Interface, inv *rsk8s.Inventory, run string) rsk8s.Change {
	t.Helper()
	ctx := context.Background()
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "regionsched.io/test=" + k8stest.Prefix()})
	require.NoError(t, err)
	pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var caps []rsk8s.NodeCapacity
	for i := range nodes.Items {
		caps = append(caps, rsk8s.CapacityOf(&nodes.Items[i], pods.Items, run, nil))
	}
	return inv.Observe(caps)
}

// nodeName is the name of the test's node i.
func nodeName(t *testing.T, i int) string {
	return strings.ToLower(fmt.Sprintf("%s-%d-%s-n%d", k8stest.Prefix(), k8stest.Seq(t), t.Name()[len("TestIntegration"):], i))
}

func TestIntegrationNodesToSlots(t *testing.T) {
	c := k8stest.Client(t)
	ctx := context.Background()
	run := fmt.Sprintf("%s-%d-slots", k8stest.Prefix(), k8stest.Seq(t))
	n1, n2, n3 := nodeName(t, 1), nodeName(t, 2), nodeName(t, 3)
	k8stest.FakeNodes(t, c, k8stest.Node{Name: n1, CPU: "4", Memory: "8Gi", Pods: "110"},
		k8stest.Node{Name: n2, CPU: "2", Memory: "4Gi", Pods: "110"}, k8stest.Node{Name: n3, CPU: "4", Memory: "2Gi", Pods: "110"})

	// A pod not of the run takes 1.5 cpus of n1.
	foreign := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d-foreign", k8stest.Prefix(), k8stest.Seq(t)), Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: n1, Containers: []corev1.Container{{Name: "web", Image: rsk8s.DefaultImage,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}}}}},
	}
	_, err := c.CoreV1().Pods("default").Create(ctx, foreign, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rsk8s.DeletePod(ctx, c, "default", foreign.Name) })

	shape := rsresource.New(1000, 1024)
	inv, err := rsk8s.NewInventory(shape)
	require.NoError(t, err)
	ch := observe(t, c, inv, run)
	perNode := map[string]int{}
	for _, s := range ch.Added {
		assert.Equal(t, shape, s.Profile)
		perNode[s.Node]++
	}
	// n1: 2.5 cpus free; n2: 2 cpus; n3: 2Gi of memory.
	assert.Equal(t, map[string]int{n1: 2, n2: 2, n3: 2}, perNode)

	// Cordoned, n3 loses its slots; deleted, n2 loses its.
	n3Node, err := c.CoreV1().Nodes().Get(ctx, n3, metav1.GetOptions{})
	require.NoError(t, err)
	n3Node.Spec.Unschedulable = true
	_, err = c.CoreV1().Nodes().Update(ctx, n3Node, metav1.UpdateOptions{})
	require.NoError(t, err)
	k8stest.DeleteNode(t, c, n2)
	ch = observe(t, c, inv, run)
	assert.Empty(t, ch.Added)
	why := map[string][]string{}
	for _, l := range ch.Lost {
		why[l.Slot.Node] = append(why[l.Slot.Node], l.Why)
	}
	assert.Equal(t, map[string][]string{n2: {"deleted", "deleted"}, n3: {"cordoned", "cordoned"}}, why)
	assert.Len(t, inv.Slots(), 2)
}

// durations gives every task the same duration under KWOK.
type durations time.Duration

func (durations) TaskName(v scheduler.TaskID) string        { return fmt.Sprintf("task#%d", v) }
func (d durations) Duration(scheduler.TaskID) time.Duration { return time.Duration(d) }

func TestIntegrationBulkAllOrNothing(t *testing.T) {
	c := k8stest.Client(t)
	ctx := context.Background()
	run := fmt.Sprintf("%s-%d-bulk", k8stest.Prefix(), k8stest.Seq(t))
	t.Cleanup(func() {
		_, err := rsk8s.DeleteRun(ctx, c, "default", run)
		assert.NoError(t, err)
	})
	n1, n2 := nodeName(t, 1), nodeName(t, 2)
	k8stest.FakeNodes(t, c, k8stest.Node{Name: n1, CPU: "4", Memory: "8Gi", Pods: "110"}, k8stest.Node{Name: n2, CPU: "4", Memory: "8Gi", Pods: "110"})
	inv, err := rsk8s.NewInventory(rsresource.New(1000, 1024))
	require.NoError(t, err)
	observe(t, c, inv, run)
	slots := inv.Slots()
	require.Len(t, slots, 8)
	binder := &rsk8s.Binder{Client: c}

	// Region 0: four tasks, two sharing a slot, on both nodes; each runs
	// 1s under KWOK.
	deploys := []scheduler.Deployment{{Task: 0, Slot: slots[0].ID}, {Task: 1, Slot: slots[0].ID}, {Task: 2, Slot: slots[4].ID}, {Task: 3, Slot: slots[5].ID}}
	bulks, err := rsk8s.PlanBulks(run, "etl", deploys, inv.Slot, durations(time.Second))
	require.NoError(t, err)
	require.Len(t, bulks, 1)
	start := time.Now()
	pods, err := binder.Bind(ctx, bulks[0])
	require.NoError(t, err)
	require.Len(t, pods, 4)
	t.Logf("bulk of 4 pods created and bound in %v", time.Since(start))
	phases := func() map[string]corev1.PodPhase {
		l, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: rsk8s.RunSelector(run)})
		require.NoError(t, err)
		out := map[string]corev1.PodPhase{}
		for _, p := range l.Items {
			out[p.Name] = p.Status.Phase
			assert.Equal(t, p.Annotations[rsk8s.AnnotationNode], p.Spec.NodeName, p.Name)
		}
		return out
	}
	k8stest.WaitFor(t, 20*time.Second, "the bulk's pods Succeeded", func() bool {
		ph := phases()
		for _, p := range ph {
			if p != corev1.PodSucceeded {
				return false
			}
		}
		return len(ph) == 4
	})
	t.Logf("the bulk's pods Succeeded %v after the bind", time.Since(start))
	got, err := c.CoreV1().Pods("default").Get(ctx, pods[0].Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, rsk8s.TaskFinished, rsk8s.EventOf(got))

	// Region 1: its last task's node is gone. Nothing of it is created.
	missing := slotpool.Slot{ID: 99, Profile: slots[0].Profile, Node: nodeName(t, 9)}
	lookup := func(id slotpool.SlotID) (slotpool.Slot, bool) {
		if id == missing.ID {
			return missing, true
		}
		return inv.Slot(id)
	}
	deploys = []scheduler.Deployment{{Task: 4, Slot: slots[1].ID, Region: 1}, {Task: 5, Slot: missing.ID, Region: 1}}
	bulks, err = rsk8s.PlanBulks(run, "etl", deploys, lookup, durations(0))
	require.NoError(t, err)
	_, err = binder.Bind(ctx, bulks[0])
	var be *rsk8s.BulkError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "check", be.Op)
	assert.Len(t, phases(), 4)

	// Region 2: its second pod's name is taken (a pod of the same task
	// attempt left over), so create fails: the first pod, created and
	// not yet bound, is deleted again; the pod that was there stays.
	deploys = []scheduler.Deployment{{Task: 6, Slot: slots[2].ID, Region: 2}, {Task: 0, Slot: slots[6].ID, Region: 2}}
	bulks, err = rsk8s.PlanBulks(run, "etl", deploys, inv.Slot, durations(0))
	require.NoError(t, err)
	_, err = binder.Bind(ctx, bulks[0])
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "create", be.Op)
	assert.Equal(t, pods[0].Name, be.Pod)
	assert.NoError(t, be.Cleanup)
	assert.Len(t, phases(), 4)

	// Region 3: bound whole, its pods (no duration) run until deleted.
	deploys = []scheduler.Deployment{{Task: 7, Slot: slots[2].ID, Region: 3}, {Task: 8, Slot: slots[6].ID, Region: 3}}
	bulks, err = rsk8s.PlanBulks(run, "etl", deploys, inv.Slot, durations(0))
	require.NoError(t, err)
	_, err = binder.Bind(ctx, bulks[0])
	require.NoError(t, err)
	k8stest.WaitFor(t, 20*time.Second, "region 3's pods Running", func() bool {
		ph := phases()
		return ph["rs-"+run+"-etl-t7-a0"] == corev1.PodRunning && ph["rs-"+run+"-etl-t8-a0"] == corev1.PodRunning
	})

	left, err := rsk8s.Leftovers(ctx, c, "default", run)
	require.NoError(t, err)
	assert.Len(t, left, 6)
	n, err := rsk8s.DeleteRun(ctx, c, "default", run)
	require.NoError(t, err)
	assert.Equal(t, 6, n)
	left, err = rsk8s.Leftovers(ctx, c, "default", run)
	require.NoError(t, err)
	assert.Empty(t, left)
}

// TestIntegrationRunFLIP119 runs FLIP-119's job (examples/jobs/flip119.json,
// every task 1s under KWOK) on 4 fake nodes of one slot each: every region's
// pods are bound together, KWOK runs them, and the job finishes; the run's
// pods are deleted at the end.
func TestIntegrationRunFLIP119(t *testing.T) {
	c := k8stest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := fmt.Sprintf("%s-%d-flip119", k8stest.Prefix(), k8stest.Seq(t))
	var nodes []k8stest.Node
	for i := 1; i <= 4; i++ {
		nodes = append(nodes, k8stest.Node{Name: nodeName(t, i), CPU: "1", Memory: "1Gi", Pods: "110"})
	}
	k8stest.FakeNodes(t, c, nodes...)
	start := time.Now()
	ends, err := rsk8s.Run(ctx, rsk8s.RunnerConfig{
		Client: c, Run: run, Shape: rsresource.New(1000, 1024),
		NodeSelector: "regionsched.io/test=" + k8stest.Prefix(),
	}, clock.New(), 100*time.Millisecond, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "flip119"}, Regions: flip119Regions(t)})
	require.NoError(t, err)
	require.Len(t, ends, 1)
	assert.Equal(t, multijob.Finished, ends[0].Outcome, "%v", ends[0].Err)
	t.Logf("FLIP-119 finished on 4 KWOK nodes in %v", time.Since(start))
	left, err := rsk8s.Leftovers(context.Background(), c, "default", run)
	require.NoError(t, err)
	assert.Empty(t, left)
}

// flip119Regions returns the regions of FLIP-119's example job in
// pointwise-pipelined-only mode.
func flip119Regions(t testing.TB) *region.Regions {
	t.Helper()
	data, err := os.ReadFile("../examples/jobs/flip119.json")
	require.NoError(t, err)
	g, err := topology.DecodeBytes(data)
	require.NoError(t, err)
	m, err := exchange.ParseMode("pointwise-pipelined-only")
	require.NoError(t, err)
	return region.Build(topology.NewExecutionTopology(g, m))
}
