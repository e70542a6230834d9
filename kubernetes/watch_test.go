package kubernetes

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/multijob"
	rsresource "github.com/regionsched/regionsched/resource"
)

// fourNodes is a fake clientset of four one-slot nodes whose pods/binding
// binds.
func fourNodes(t *testing.T) *fake.Clientset {
	t.Helper()
	c := watchedClientset()
	kwokNodes(t, c, "k1", "k2", "k3", "k4")
	c.PrependReactor("create", "pods", bindReactor(c))
	return c
}

// TestStepListsNothing: once the Runner started its informers, its Steps
// list and watch nothing: FLIP-119's job runs to its end reading the
// informers' caches (its only reads of the API server: the Binder's
// checks of a bulk's nodes just before binding it).
func TestStepListsNothing(t *testing.T) {
	c := fourNodes(t)
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024)})
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()
	now := time.Unix(0, 0)
	require.NoError(t, r.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "flip119"}, Regions: flip119(t)}))
	verbs := map[string]int{}
	for i := 0; i < 200 && !r.Done(); i++ {
		synced(t, r, c)
		n := len(c.Actions())
		require.NoError(t, r.Step(ctx, now))
		for _, a := range c.Actions()[n:] {
			verbs[a.GetVerb()+" "+a.GetResource().Resource]++
		}
		kwok(t, c, nil)
		now = now.Add(100 * time.Millisecond)
	}
	require.True(t, r.Done(), "the job did not end")
	assert.Equal(t, multijob.Finished, r.Ends()[0].Outcome, "%v", r.Ends()[0].Err)
	for _, res := range []string{"pods", "nodes"} {
		assert.Zero(t, verbs["list "+res], "%v", verbs)
		assert.Zero(t, verbs["watch "+res], "%v", verbs)
	}
	assert.Zero(t, verbs["get pods"], "%v: the caches had caught up before every Step", verbs)
	assert.Positive(t, verbs["create pods"], "%v", verbs)
}

// TestStepPodNotYetInCacheIsNotLost: a pod of the run bound and Running
// that the cache does not have (its watch lags behind the Runner's own
// writes) is looked up, not taken for deleted: its task is not failed.
// A pod deleted by someone else is failed over.
func TestStepPodNotYetInCacheIsNotLost(t *testing.T) {
	c := fourNodes(t)
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024)})
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()
	now := time.Unix(0, 0)
	require.NoError(t, r.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "flip119"}, Regions: flip119(t)}))
	stepSynced(t, r, c, now)
	require.NotEmpty(t, r.pods, "the first region is bound")
	for kwok(t, c, nil) > 0 && len(running(t, c)) == 0 {
	}
	names := running(t, c)
	require.NotEmpty(t, names)
	synced(t, r, c)
	// The cache lags: it lacks one of the pods the Runner bound.
	pod, ok := r.view.runPod(names[0])
	require.True(t, ok)
	require.NoError(t, r.view.runPods.GetStore().Delete(pod))
	gets := len(c.Actions())
	require.NoError(t, r.Step(ctx, now.Add(time.Second)))
	st, err := r.Status("flip119")
	require.NoError(t, err)
	assert.Zero(t, st.Scheduler.Stats.Failovers, "a pod the cache lacks is not lost")
	require.Contains(t, r.pods, names[0])
	assert.Equal(t, TaskRunning, r.pods[names[0]].reported)
	looked := 0
	for _, a := range c.Actions()[gets:] {
		if a.GetVerb() == "get" && a.GetResource().Resource == "pods" {
			looked++
		}
	}
	assert.Equal(t, 1, looked, "the pod the cache lacks is looked up, and only it")

	// Deleted by someone else: the cache hears of it, and the task fails.
	require.NoError(t, DeletePod(ctx, c, "default", names[0]))
	stepSynced(t, r, c, now.Add(2*time.Second))
	st, err = r.Status("flip119")
	require.NoError(t, err)
	assert.Equal(t, 1, st.Scheduler.Stats.Failovers)
}

// running returns the names of the pods Running in the fake clientset.
func running(t *testing.T, c *fake.Clientset) []string {
	t.Helper()
	list, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	var out []string
	for _, p := range list.Items {
		if p.Status.Phase == corev1.PodRunning {
			out = append(out, p.Name)
		}
	}
	return out
}

// TestViewWakes: the changes that matter to a Step wake the loop (a pod
// of the run changing phase; a node cordoned; a pod not of the run taking
// room), and those that do not (a node's heartbeat, a pod of the run
// created, a foreign pod's status) do not; the room is recomputed only
// after a change of a node or of a foreign pod.
func TestViewWakes(t *testing.T) {
	c := watchedClientset()
	kwokNodes(t, c, "k1")
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(500, 256)})
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()
	require.Len(t, r.Slots(), 2)
	synced(t, r, c)
	drain(r)
	assert.False(t, r.view.takeRoomChanged(), "nothing changed since the start")
	woke := func(what string, change func()) bool {
		t.Helper()
		change()
		synced(t, r, c)
		return drain(r)
	}

	node, err := c.CoreV1().Nodes().Get(ctx, "k1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.False(t, woke("heartbeat", func() {
		node.Status.Conditions[0].LastHeartbeatTime = metav1.Now()
		node, err = c.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		require.NoError(t, err)
	}), "a heartbeat")
	assert.False(t, r.view.takeRoomChanged())

	ours := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rs-r1-x-t0-a0", Namespace: "default", Labels: map[string]string{LabelRun: "r1"}}}
	assert.False(t, woke("ours created", func() {
		ours, err = c.CoreV1().Pods("default").Create(ctx, ours, metav1.CreateOptions{})
		require.NoError(t, err)
	}), "a pod of the run created")
	assert.True(t, woke("ours running", func() {
		ours.Spec.NodeName, ours.Status.Phase = "k1", corev1.PodRunning
		ours, err = c.CoreV1().Pods("default").UpdateStatus(ctx, ours, metav1.UpdateOptions{})
		require.NoError(t, err)
	}), "a pod of the run Running")
	assert.False(t, r.view.takeRoomChanged(), "the run's pods take the room of their slots")

	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.PodSpec{NodeName: "k1",
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}}}
	assert.True(t, woke("foreign pod", func() {
		other, err = c.CoreV1().Pods("default").Create(ctx, other, metav1.CreateOptions{})
		require.NoError(t, err)
	}), "a pod not of the run taking room")
	assert.True(t, r.view.roomChanged.Load())
	assert.False(t, woke("foreign status", func() {
		other.Status.Phase = corev1.PodRunning
		other, err = c.CoreV1().Pods("default").UpdateStatus(ctx, other, metav1.UpdateOptions{})
		require.NoError(t, err)
	}), "a foreign pod's status")
	require.NoError(t, r.Step(ctx, time.Unix(1, 0)))
	assert.Len(t, r.Slots(), 1, "the foreign pod took one slot's room")

	assert.True(t, woke("cordon", func() {
		node.Spec.Unschedulable = true
		_, err = c.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		require.NoError(t, err)
	}), "a node cordoned")
	require.NoError(t, r.Step(ctx, time.Unix(2, 0)))
	assert.Empty(t, r.Slots())
}

// drain reports whether the Runner's changes had a value, taking it.
func drain(r *Runner) bool {
	select {
	case <-r.Changes():
		return true
	default:
		return false
	}
}

// TestViewForeignPodsElsewhere: a pod not of the run that is not bound,
// or is bound to a node the node selector leaves out, neither wakes the
// loop nor makes the room be computed again.
func TestViewForeignPodsElsewhere(t *testing.T) {
	c := watchedClientset()
	kwokNodes(t, c, "k1", "other")
	ctx := context.Background()
	k1, err := c.CoreV1().Nodes().Get(ctx, "k1", metav1.GetOptions{})
	require.NoError(t, err)
	k1.Labels = map[string]string{"pool": "batch"}
	_, err = c.CoreV1().Nodes().Update(ctx, k1, metav1.UpdateOptions{})
	require.NoError(t, err)
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(500, 256), NodeSelector: "pool=batch"})
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()
	require.Len(t, r.Slots(), 2, "k1 only")
	synced(t, r, c)
	drain(r)
	r.view.takeRoomChanged()
	for i, node := range []string{"", "other"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-" + string(rune('a'+i)), Namespace: "default"}, Spec: corev1.PodSpec{NodeName: node}}
		_, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	synced(t, r, c)
	assert.False(t, drain(r), "woken by pods elsewhere")
	assert.False(t, r.view.takeRoomChanged())
}
