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
	c := watchedClientset()
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
	c := watchedClientset()
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

// driverLostRun runs spark-1 of the flood (a job with a driver) on 4
// fake nodes until its first region's pods run, then loses its driver's
// pod by lose, and steps on until the job ends; it returns how it ended.
func driverLostRun(t *testing.T, lose func(c *fake.Clientset, pod string)) multijob.JobEnd {
	t.Helper()
	c := watchedClientset()
	kwokNodes(t, c, "k1", "k2", "k3", "k4")
	c.PrependReactor("create", "pods", bindReactor(c))
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024)})
	require.NoError(t, err)
	now := time.Unix(0, 0)
	require.NoError(t, r.Submit(now, floodJob(t, 1)))
	tasks := func() int {
		list, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: LabelTask})
		require.NoError(t, err)
		return len(list.Items)
	}
	for i := 0; i < 50 && tasks() == 0; i++ {
		stepSynced(t, r, c, now)
		now = now.Add(100 * time.Millisecond)
		// Pods run, but none finishes: the job runs when its driver goes.
		list, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, p := range list.Items {
			if p.Spec.NodeName != "" && p.Status.Phase == "" {
				p.Status.Phase = corev1.PodRunning
				_, err := c.CoreV1().Pods("default").UpdateStatus(ctx, &p, metav1.UpdateOptions{})
				require.NoError(t, err)
			}
		}
	}
	require.Positive(t, tasks(), "the job started: its first region's pods are there")
	st, err := r.Status("spark-1")
	require.NoError(t, err)
	require.True(t, st.Started)
	lose(c, DriverPodName("r1", "spark-1"))
	stepSynced(t, r, c, now)
	require.True(t, r.Done(), "the job ends at the next step")
	left, err := Leftovers(ctx, c, "default", "r1")
	require.NoError(t, err)
	assert.Empty(t, left, "every pod of the job is deleted, its driver's too")
	require.Len(t, r.Ends(), 1)
	return r.Ends()[0]
}

// TestRunnerDriverPodDeleted: the driver's pod deleted by someone else
// after its job started fails the job with an *admission.DriverLostError
// naming the driver's pod; its task pods are deleted.
func TestRunnerDriverPodDeleted(t *testing.T) {
	end := driverLostRun(t, func(c *fake.Clientset, pod string) {
		require.NoError(t, c.CoreV1().Pods("default").Delete(context.Background(), pod, metav1.DeleteOptions{}))
	})
	assert.Equal(t, multijob.Failed, end.Outcome)
	var dl *admission.DriverLostError
	require.ErrorAs(t, end.Err, &dl)
	assert.Equal(t, "spark-1", dl.Job)
	assert.Equal(t, "its pod rs-r1-spark-1-driver was deleted", dl.Why)
	assert.Contains(t, end.Err.Error(), `the driver of job "spark-1"`)
}

// TestRunnerDriverPodFailed: the same for a driver's pod that Failed.
func TestRunnerDriverPodFailed(t *testing.T) {
	end := driverLostRun(t, func(c *fake.Clientset, pod string) {
		ctx := context.Background()
		p, err := c.CoreV1().Pods("default").Get(ctx, pod, metav1.GetOptions{})
		require.NoError(t, err)
		p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
		_, err = c.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
		require.NoError(t, err)
	})
	var dl *admission.DriverLostError
	require.ErrorAs(t, end.Err, &dl)
	assert.Equal(t, "its pod rs-r1-spark-1-driver Failed: Evicted", dl.Why)
}

// TestRunnerDriverNodeDeleted: the node of a driver's pod deleted: the
// driver's slot leaves the admission and the job fails, its driver lost
// with its slot.
func TestRunnerDriverNodeDeleted(t *testing.T) {
	end := driverLostRun(t, func(c *fake.Clientset, pod string) {
		ctx := context.Background()
		p, err := c.CoreV1().Pods("default").Get(ctx, pod, metav1.GetOptions{})
		require.NoError(t, err)
		require.NoError(t, c.CoreV1().Nodes().Delete(ctx, p.Spec.NodeName, metav1.DeleteOptions{}))
	})
	var dl *admission.DriverLostError
	require.ErrorAs(t, end.Err, &dl)
	assert.Equal(t, "its slot was removed", dl.Why)
}

// TestRunnerDriverNotBound: a driver whose pod cannot be bound is lost:
// its job fails at once instead of waiting for ever.
func TestRunnerDriverNotBound(t *testing.T) {
	c := watchedClientset()
	kwokNodes(t, c, "k1", "k2", "k3", "k4")
	c.PrependReactor("create", "pods", bindReactor(c, "k1", "k2", "k3", "k4"))
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024)})
	require.NoError(t, err)
	now := time.Unix(0, 0)
	require.NoError(t, r.Submit(now, floodJob(t, 1)))
	stepSynced(t, r, c, now)
	stepSynced(t, r, c, now.Add(100*time.Millisecond))
	require.True(t, r.Done())
	var dl *admission.DriverLostError
	require.ErrorAs(t, r.Ends()[0].Err, &dl)
	assert.Contains(t, dl.Why, "its pod could not be bound")
}
