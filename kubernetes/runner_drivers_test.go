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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// floodJob returns the multijob spec of examples/jobs/flood/spark-<i>.json:
// a job with a driver.
func floodJob(t *testing.T, i int) multijob.JobSpec {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("../examples/jobs/flood/spark-%d.json", i))
	require.NoError(t, err)
	g, err := topology.DecodeBytes(data)
	require.NoError(t, err)
	sub := g.Submission()
	require.NotNil(t, sub.Driver)
	d := sub.Driver.Resources
	return multijob.JobSpec{JobSpec: admission.JobSpec{Name: g.Name(), Driver: &d},
		Regions: region.Build(topology.NewExecutionTopology(g, exchange.AllBlocking))}
}

// floodRunner is a Runner of the four jobs of the driver flood on 4
// fake one-slot nodes under a queue policy.
func floodRunner(t *testing.T, policy admission.Policy) (*fake.Clientset, *Runner) {
	t.Helper()
	c := fake.NewClientset()
	kwokNodes(t, c, "k1", "k2", "k3", "k4")
	c.PrependReactor("create", "pods", bindReactor(c))
	r, err := NewRunner(context.Background(), RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024),
		Jobs: multijob.Config{Admission: admission.Config{DefaultPolicy: policy}}})
	require.NoError(t, err)
	now := time.Unix(0, 0)
	for i := 1; i <= 4; i++ {
		require.NoError(t, r.Submit(now, floodJob(t, i)))
	}
	return c, r
}

func TestRunnerDriverFloodFIFODeadlocks(t *testing.T) {
	c, r := floodRunner(t, admission.FIFO)
	ctx := context.Background()
	now := time.Unix(0, 0)
	var de *DeadlockError
	for i := 0; i < 100 && de == nil; i++ {
		now = now.Add(100 * time.Millisecond)
		stepSynced(t, r, c, now)
		de = r.Deadlock(now)
		kwok(t, c, nil)
	}
	require.NotNil(t, de)
	var err error = de
	assert.ErrorIs(t, err, ErrDeadlock)
	assert.Equal(t, []string{"spark-1", "spark-2", "spark-3", "spark-4"}, de.Jobs)
	assert.Equal(t, []string{"spark-1:driver", "spark-2:driver", "spark-3:driver", "spark-4:driver"}, de.Holding)
	assert.Len(t, de.Waiting, 24, "each job's first region: scan and shuffle, 3 each")
	assert.Contains(t, de.Waiting, "spark-1:scan#0")
	assert.Empty(t, de.NoDriver)
	assert.Contains(t, err.Error(), "deadlock: at ")
	assert.Contains(t, err.Error(), "jobs spark-1, spark-2, spark-3, spark-4 never finish: spark-1:driver, spark-2:driver, spark-3:driver, spark-4:driver hold slots while waiting; spark-1:scan#0")
	assert.False(t, r.Done())

	// Four driver pods, one per node, and nothing else.
	left, err := Leftovers(ctx, c, "default", "r1")
	require.NoError(t, err)
	require.Len(t, left, 4)
	nodes := map[string]bool{}
	for _, l := range left {
		assert.Equal(t, DriverPodName("r1", l.Ref.Job), l.Pod)
		nodes[l.Node] = true
	}
	assert.Len(t, nodes, 4)
	require.NoError(t, r.Close(ctx))
	left, err = Leftovers(ctx, c, "default", "r1")
	require.NoError(t, err)
	assert.Empty(t, left)
}

func TestRunnerDriverFloodStateAwareFinishes(t *testing.T) {
	c, r := floodRunner(t, admission.StateAware)
	ctx := context.Background()
	now := time.Unix(0, 0)
	drivers := map[string]bool{}
	for i := 0; i < 400 && !r.Done(); i++ {
		now = now.Add(100 * time.Millisecond)
		stepSynced(t, r, c, now)
		require.Nil(t, r.Deadlock(now))
		kwok(t, c, nil)
		list, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: LabelDriver})
		require.NoError(t, err)
		for _, p := range list.Items {
			drivers[p.Name] = true
			assert.True(t, IsDriver(&p))
			assert.Equal(t, DriverTaskName, p.Annotations[AnnotationTaskName])
			assert.Empty(t, p.Annotations[AnnotationCompleteAfter], "a driver runs until its job ends")
		}
		assert.LessOrEqual(t, len(list.Items), 2, "stateaware: one job starting at a time")
	}
	require.True(t, r.Done())
	for _, end := range r.Ends() {
		assert.Equal(t, multijob.Finished, end.Outcome, "%s: %v", end.Job, end.Err)
	}
	assert.Len(t, drivers, 4)
	list, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: LabelDriver})
	require.NoError(t, err)
	assert.Empty(t, list.Items, "every driver's pod is deleted when its job ends")
}

// TestRunnerNodeAdded: FLIP-119's job holds both slots of two nodes, its
// other regions waiting, when two more nodes join: its waiting regions
// run at once in the new slots.
func TestRunnerNodeAdded(t *testing.T) {
	c := fake.NewClientset()
	kwokNodes(t, c, "k1", "k2")
	c.PrependReactor("create", "pods", bindReactor(c))
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024)})
	require.NoError(t, err)
	require.Len(t, r.Slots(), 2)
	now := time.Unix(0, 0)
	require.NoError(t, r.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "a"}, Regions: flip119(t)}))
	stepSynced(t, r, c, now)
	kwok(t, c, nil) // a's first region runs on k1 and k2
	onNodes := func(job string) map[string]bool {
		list, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: LabelJob + "=" + job})
		require.NoError(t, err)
		out := map[string]bool{}
		for _, p := range list.Items {
			out[p.Spec.NodeName] = true
		}
		return out
	}
	require.Equal(t, map[string]bool{"k1": true, "k2": true}, onNodes("a"))

	kwokNodes(t, c, "k3", "k4")
	now = now.Add(100 * time.Millisecond)
	stepSynced(t, r, c, now)
	assert.Len(t, r.Slots(), 4)
	assert.Equal(t, map[string]bool{"k1": true, "k2": true, "k3": true, "k4": true}, onNodes("a"),
		"a's waiting regions run in the slots the new nodes brought")
	for i := 0; i < 200 && !r.Done(); i++ {
		now = now.Add(100 * time.Millisecond)
		kwok(t, c, nil)
		stepSynced(t, r, c, now)
	}
	require.True(t, r.Done())
	for _, end := range r.Ends() {
		assert.Equal(t, multijob.Finished, end.Outcome, "%s: %v", end.Job, end.Err)
	}
}

func TestDriverPod(t *testing.T) {
	tmpl := PodTemplate{Namespace: "batch"}
	s := slotpool.Slot{ID: 3, Profile: rsresource.New(1000, 1024), Node: "n1"}
	pod := tmpl.DriverPod("r1", "Spark Job", s)
	assert.Equal(t, DriverPodName("r1", "Spark Job"), pod.Name)
	assert.True(t, IsDriver(pod))
	assert.Equal(t, "r1", pod.Labels[LabelRun])
	assert.Equal(t, JobLabel("Spark Job"), pod.Labels[LabelJob])
	assert.NotContains(t, pod.Labels, LabelTask)
	assert.NotContains(t, pod.Labels, LabelAttempt)
	assert.Equal(t, "n1", pod.Annotations[AnnotationNode])
	assert.Empty(t, pod.Spec.NodeName)
	assert.Equal(t, SchedulerName, pod.Spec.SchedulerName)
	assert.Equal(t, ResourceListOf(s.Profile), pod.Spec.Containers[0].Resources.Requests)
	var env []string
	for _, e := range pod.Spec.Containers[0].Env {
		env = append(env, e.Name+"="+e.Value)
	}
	assert.Equal(t, []string{"REGIONSCHED_RUN=r1", "REGIONSCHED_JOB=Spark Job", "REGIONSCHED_TASK=driver"}, env)
	_, err := RefOf(pod)
	assert.Error(t, err, "a driver runs no task")
	left := leftoversOf([]corev1.Pod{*pod})
	assert.Equal(t, TaskRef{Run: "r1", Job: "Spark Job"}, left[0].Ref)
	assert.Empty(t, Finished([]corev1.Pod{*pod}, "r1"))
}
