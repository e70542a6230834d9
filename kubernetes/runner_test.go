package kubernetes

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// flip119 returns the regions of FLIP-119's example job in
// pointwise-pipelined-only mode.
func flip119(t testing.TB) *region.Regions {
	t.Helper()
	data, err := os.ReadFile("../examples/jobs/flip119.json")
	require.NoError(t, err)
	g, err := topology.DecodeBytes(data)
	require.NoError(t, err)
	m, err := exchange.ParseMode("pointwise-pipelined-only")
	require.NoError(t, err)
	return region.Build(topology.NewExecutionTopology(g, m))
}

// kwokNodes adds n Ready nodes of one cpu and 1Gi to a fake clientset.
func kwokNodes(t *testing.T, c *fake.Clientset, names ...string) {
	t.Helper()
	for _, n := range names {
		alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("110")}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}, Status: corev1.NodeStatus{Allocatable: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
		_, err := c.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

// kwok does what KWOK does to the pods of the fake clientset, one step:
// a bound Pending pod becomes Running, a Running pod with a
// complete-after annotation Succeeds (at once), unless fail names it:
// then it Fails. It returns how many pods it changed.
func kwok(t *testing.T, c *fake.Clientset, fail map[string]bool) int {
	t.Helper()
	ctx := context.Background()
	list, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	n := 0
	for _, p := range list.Items {
		switch {
		case p.Spec.NodeName == "":
			continue
		case p.Status.Phase == "" || p.Status.Phase == corev1.PodPending:
			p.Status.Phase = corev1.PodRunning
		case p.Status.Phase == corev1.PodRunning && fail[p.Name]:
			p.Status.Phase = corev1.PodFailed
			delete(fail, p.Name)
		case p.Status.Phase == corev1.PodRunning && p.Annotations[AnnotationCompleteAfter] != "":
			p.Status.Phase = corev1.PodSucceeded
		default:
			continue
		}
		_, err := c.CoreV1().Pods("default").UpdateStatus(ctx, &p, metav1.UpdateOptions{})
		require.NoError(t, err)
		n++
	}
	return n
}

// TestRunnerFLIP119 runs FLIP-119's job on 4 fake one-slot nodes, the
// test playing KWOK between the Runner's steps: every region's pods are
// bound, run and succeed, and the job finishes; a task that fails
// restarts its region, whose new attempt's pods run anew.
func TestRunnerFLIP119(t *testing.T) {
	c := fakeCluster()
	for _, n := range []string{"n1", "n2", "n3", "gone", "cordoned"} {
		require.NoError(t, c.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{}))
	}
	kwokNodes(t, c, "k1", "k2", "k3", "k4")
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024)})
	require.NoError(t, err)
	require.Len(t, r.Slots(), 4)
	now := time.Unix(0, 0)
	require.NoError(t, r.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "flip119"}, Regions: flip119(t)}))
	fail := map[string]bool{"rs-r1-flip119-t4-a0": true} // C#0's first attempt fails
	for i := 0; i < 200 && !r.Done(); i++ {
		now = now.Add(100 * time.Millisecond)
		stepSynced(t, r, c, now)
		kwok(t, c, fail)
	}
	require.True(t, r.Done(), "the job did not end")
	require.Len(t, r.Ends(), 1)
	assert.Equal(t, multijob.Finished, r.Ends()[0].Outcome, "%v", r.Ends()[0].Err)
	assert.Empty(t, fail, "the failing pod was never run")
	// The failover is recorded as the simulator records it: the failed
	// task and the regions restarted, as many as the scheduler counts.
	st, err := r.Status("flip119")
	require.NoError(t, err)
	restarts := r.Restarts("flip119")
	require.Len(t, restarts, st.Scheduler.Stats.Failovers)
	require.Len(t, restarts, 1)
	assert.Equal(t, "C#0", restarts[0].Task)
	assert.Len(t, restarts[0].Regions, st.Scheduler.Stats.RegionRestarts)
	assert.Positive(t, restarts[0].At)

	left, err := Leftovers(ctx, c, "default", "r1")
	require.NoError(t, err)
	phases := map[corev1.PodPhase]int{}
	for _, l := range left {
		phases[l.Phase]++
	}
	// 12 tasks Succeeded, plus the failed attempt; the restarted region's
	// other pods were canceled (deleted) or Succeeded again.
	assert.Equal(t, 1, phases[corev1.PodFailed], "%v", left)
	assert.GreaterOrEqual(t, phases[corev1.PodSucceeded], 12, "%v", left)
	require.NoError(t, r.Close(ctx))
	left, err = Leftovers(ctx, c, "default", "r1")
	require.NoError(t, err)
	assert.Empty(t, left)
}

// TestRunnerNodeLost: a node deleted under a running region fails its
// tasks over; the region runs again on the nodes left and the job
// finishes.
func TestRunnerNodeLost(t *testing.T) {
	for _, podsGone := range []bool{true, false} {
		t.Run(fmt.Sprintf("pods deleted with the node %v", podsGone), func(t *testing.T) { runnerNodeLost(t, podsGone) })
	}
}

// runnerNodeLost is TestRunnerNodeLost, the lost node's pods deleted
// with it (podsGone) or left for the Runner to delete.
func runnerNodeLost(t *testing.T, podsGone bool) {
	c := watchedClientset()
	kwokNodes(t, c, "k1", "k2", "k3", "k4", "k5")
	c.PrependReactor("create", "pods", bindReactor(c))
	ctx := context.Background()
	var trace []runfile.Event
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024), Trace: func(ev runfile.Event) { trace = append(trace, ev) }})
	require.NoError(t, err)
	now := time.Unix(0, 0)
	require.NoError(t, r.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "flip119"}, Regions: flip119(t)}))
	// The first region deploys and runs; then its node k1 goes, pods and all.
	stepSynced(t, r, c, now)
	kwok(t, c, nil)
	lostNode := ""
	left, err := Leftovers(ctx, c, "default", "r1")
	require.NoError(t, err)
	require.NotEmpty(t, left)
	lostNode = left[0].Node
	require.NoError(t, c.CoreV1().Nodes().Delete(ctx, lostNode, metav1.DeleteOptions{}))
	for _, l := range left {
		if l.Node == lostNode && podsGone {
			require.NoError(t, DeletePod(ctx, c, "default", l.Pod))
		}
	}
	for i := 0; i < 200 && !r.Done(); i++ {
		now = now.Add(100 * time.Millisecond)
		stepSynced(t, r, c, now)
		kwok(t, c, nil)
	}
	require.True(t, r.Done())
	assert.Equal(t, multijob.Finished, r.Ends()[0].Outcome, "%v", r.Ends()[0].Err)
	left, err = Leftovers(ctx, c, "default", "r1")
	require.NoError(t, err)
	for _, l := range left {
		assert.NotEqual(t, lostNode, l.Node, l.Pod)
	}
	// The trace: the task of the lost slot failed, then the slot went
	// back; every slot deployed into is free (released) first, and none
	// runs a task at the end.
	running := map[int]int{}
	held := map[int]bool{}
	fails := 0
	for i, ev := range trace {
		switch ev.Kind {
		case runfile.Deploy:
			running[ev.Slot]++
			held[ev.Slot] = true
		case runfile.Finish, runfile.Cancel:
			running[ev.Slot]--
		case runfile.Fail:
			running[ev.Slot]--
			fails++
		case runfile.Release:
			assert.Zero(t, running[ev.Slot], "event %d (%+v): a slot released with a task in it", i, ev)
			delete(held, ev.Slot)
		}
	}
	assert.Positive(t, fails, "the lost slot's task failed")
	assert.Empty(t, held, "every slot released at the end")
}
