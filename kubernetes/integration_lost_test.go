package kubernetes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	rsk8s "github.com/regionsched/regionsched/kubernetes"
	"github.com/regionsched/regionsched/kubernetes/internal/k8stest"
	"github.com/regionsched/regionsched/multijob"
	rsresource "github.com/regionsched/regionsched/resource"
)

// slotsIn counts the slots of a capacity.
func slotsIn(capacity []rsresource.Count) int {
	n := 0
	for _, c := range capacity {
		n += c.N
	}
	return n
}

// TestIntegrationNodeDeletedLeavesTheAdmission: a Runner stepped on the
// real clock runs two copies of FLIP-119's job on 4 one-slot nodes; a
// node is deleted while a task of the run runs on it. From the first step
// after the Runner's watch of the nodes delivered the deletion on, the
// admission counts one slot less (3), the regions on the node run again
// elsewhere, and both jobs finish.
func TestIntegrationNodeDeletedLeavesTheAdmission(t *testing.T) {
	c := k8stest.Client(t)
	t.Parallel()
	g := group(t)
	oneSlotNodes(t, c, g, 1, 4)
	a, b, _ := twoFLIP119(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := rsk8s.NewRunner(ctx, runConfig(c, g, 0.5, multijob.Config{}))
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(context.WithoutCancel(ctx))) }()
	require.Equal(t, 4, slotsIn(r.Capacity()))
	clk := realClock()
	require.NoError(t, r.Submit(clk.Now(), a))
	require.NoError(t, r.Submit(clk.Now(), b))
	tick := clk.Ticker(poll)
	defer tick.Stop()
	victim, checked := "", false
	var deleted time.Time
	for !r.Done() {
		require.NoError(t, r.Step(ctx, clk.Now()))
		require.Nil(t, r.Deadlock(clk.Now()))
		switch n := slotsIn(r.Capacity()); {
		case checked:
			require.Equal(t, 3, n, "the deleted node's slot came back")
		case victim != "":
			// The Runner reads the nodes from its informer's cache:
			// the deletion counts from the step after the watch
			// delivered it.
			if n == 3 {
				checked = true
				t.Logf("the admission counts 3 slots %v after the deletion", clk.Since(deleted))
				break
			}
			require.Equal(t, 4, n)
			require.Less(t, clk.Since(deleted), 10*time.Second, "the deleted node's slot still counts")
		default:
			pods, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: rsk8s.RunSelector(g)})
			require.NoError(t, err)
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning {
					victim = p.Spec.NodeName
					k8stest.DeleteNode(t, c, victim)
					deleted = clk.Now()
					t.Logf("deleted node %s under %s", victim, p.Name)
					break
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("the run did not end")
		case <-tick.C:
		}
	}
	require.True(t, checked, "a node was deleted mid-run")
	assert.Equal(t, 3, slotsIn(r.Capacity()))
	for _, end := range r.Ends() {
		assert.Equal(t, multijob.Finished, end.Outcome, "%s: %v", end.Job, end.Err)
	}
	var failovers int
	for _, job := range []string{"a", "b"} {
		st, err := r.Status(job)
		require.NoError(t, err)
		failovers += st.Scheduler.Stats.Failovers
	}
	assert.Positive(t, failovers, "the region on the deleted node failed over")
}

// TestIntegrationDriverPodDeleted: spark-1 of the driver flood runs on 4
// one-slot nodes; once its first region's pods run, its driver's pod is
// deleted by someone else. The run ends with the job failed, its error
// naming the driver, and no pod of the run left.
func TestIntegrationDriverPodDeleted(t *testing.T) {
	c := k8stest.Client(t)
	t.Parallel()
	g := group(t)
	oneSlotNodes(t, c, g, 1, 4)
	spec := k8stest.JobFile(t, "../examples/jobs/flood/spark-1.json", exchange.AllBlocking)
	cfg := runConfig(c, g, 2, multijob.Config{}) // tasks of seconds: the driver goes while they run
	cfg.DriverStartup = func(string) time.Duration { return 200 * time.Millisecond }
	rec := k8stest.Record(t, c, "default", g)
	done := runInBackground(t, cfg, spec)
	rec.WaitEvents(t, 30*time.Second, "a task of the job Running", func(evs []k8stest.PodEvent) bool {
		_, ok := runningOn(evs)
		return ok
	})
	driver := rsk8s.DriverPodName(g, spec.Name)
	require.NoError(t, c.CoreV1().Pods("default").Delete(context.Background(), driver, metav1.DeleteOptions{}))
	var res runResult
	select {
	case res = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end")
	}
	require.NoError(t, res.err)
	require.Len(t, res.ends, 1)
	end := res.ends[0]
	assert.Equal(t, multijob.Failed, end.Outcome)
	var dl *admission.DriverLostError
	require.ErrorAs(t, end.Err, &dl)
	assert.Equal(t, "its pod "+driver+" was deleted", dl.Why)
	k8stest.NoPodsLeft(t, c, "default", g)
	events := rec.Stop(t)
	var tasksDeleted int
	for _, ev := range events {
		if ev.Type == watch.Deleted && !rsk8s.IsDriver(ev.Pod) && ev.Pod.Status.Phase != corev1.PodSucceeded {
			tasksDeleted++
		}
	}
	assert.Positive(t, tasksDeleted, "the job's running tasks' pods were deleted")
}
