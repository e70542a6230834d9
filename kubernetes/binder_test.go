package kubernetes

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
)

// fakeCluster is a fake clientset with Ready nodes n1, n2, n3 and gone
// and a cordoned one, whose pods/binding sets the pod's node, refusing
// nodes named in refuse.
func fakeCluster(refuse ...string) *fake.Clientset {
	c := watchedClientset()
	for _, n := range []string{"n1", "n2", "n3", "gone", "cordoned"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: corev1.NodeSpec{Unschedulable: n == "cordoned"},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
		if _, err := c.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
			panic(err)
		}
	}
	c.PrependReactor("create", "pods", bindReactor(c, refuse...))
	return c
}

// bindReactor makes pods/binding of a fake clientset set the pod's node,
// refusing nodes named in refuse.
func bindReactor(c *fake.Clientset, refuse ...string) k8stesting.ReactionFunc {
	return func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca := a.(k8stesting.CreateAction)
		if ca.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := ca.GetObject().(*corev1.Binding)
		for _, r := range refuse {
			if b.Target.Name == r {
				return true, nil, errors.New("node " + r + " refuses")
			}
		}
		obj, err := c.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), a.GetNamespace(), b.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*corev1.Pod).DeepCopy()
		pod.Spec.NodeName = b.Target.Name
		return true, nil, c.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), pod, a.GetNamespace())
	}
}

func bulkOn(nodes ...string) Bulk {
	b := Bulk{Job: "etl", Region: 1}
	for i, n := range nodes {
		b.Places = append(b.Places, Placement{
			Ref:  TaskRef{Run: "r1", Job: "etl", Task: scheduler.TaskID(i), Region: 1},
			Slot: scheduler.SlotID(i + 1), Node: n, Requests: rsresource.New(500, 256),
		})
	}
	return b
}

func TestBinderBindsAll(t *testing.T) {
	c := fakeCluster()
	b := &Binder{Client: c, Parallel: 2}
	pods, err := b.Bind(context.Background(), bulkOn("n1", "n2", "n1"))
	require.NoError(t, err)
	require.Len(t, pods, 3)
	list, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: RunSelector("r1")})
	require.NoError(t, err)
	got := map[string]string{}
	for _, p := range list.Items {
		got[p.Name] = p.Spec.NodeName
		assert.Equal(t, SchedulerName, p.Spec.SchedulerName)
		assert.Equal(t, corev1.RestartPolicyNever, p.Spec.RestartPolicy)
		assert.Equal(t, "500m", p.Spec.Containers[0].Resources.Requests.Cpu().String())
	}
	assert.Equal(t, map[string]string{"rs-r1-etl-t0-a0": "n1", "rs-r1-etl-t1-a0": "n2", "rs-r1-etl-t2-a0": "n1"}, got)
}

// TestBinderRollsBack: one pod cannot be bound, so none of the bulk is
// left.
func TestBinderRollsBack(t *testing.T) {
	c := fakeCluster("gone")
	b := &Binder{Client: c, Parallel: 1}
	_, err := b.Bind(context.Background(), bulkOn("n1", "gone", "n2"))
	var be *BulkError
	require.ErrorAs(t, err, &be)
	assert.ErrorIs(t, err, ErrBulkNotBound)
	assert.Equal(t, "bind", be.Op)
	assert.Equal(t, "gone", be.Node)
	assert.Equal(t, "rs-r1-etl-t1-a0", be.Pod)
	assert.NoError(t, be.Cleanup)
	left, err := Leftovers(context.Background(), c, "default", "r1")
	require.NoError(t, err)
	assert.Empty(t, left)
}

// TestBinderRollsBackCreate: a pod that already exists (a name taken)
// fails the bulk at create; the pods created before it are deleted, the
// one that was there is not the bulk's and stays.
func TestBinderRollsBackCreate(t *testing.T) {
	c := fakeCluster()
	tmpl := PodTemplate{}
	taken := tmpl.Pod(bulkOn("n1", "n1").Places[1])
	_, err := c.CoreV1().Pods("default").Create(context.Background(), taken, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = (&Binder{Client: c, Parallel: 1}).Bind(context.Background(), bulkOn("n1", "n1"))
	var be *BulkError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "create", be.Op)
	left, err := Leftovers(context.Background(), c, "default", "r1")
	require.NoError(t, err)
	require.Len(t, left, 1)
	assert.Equal(t, taken.Name, left[0].Pod)
}

func TestBinderCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := fakeCluster()
	_, err := (&Binder{Client: c}).Bind(ctx, bulkOn("n1"))
	var be *BulkError
	require.ErrorAs(t, err, &be)
	assert.ErrorIs(t, err, context.Canceled)
	left, err := Leftovers(context.Background(), c, "default", "")
	require.NoError(t, err)
	assert.Empty(t, left)
}

func TestDeleteRun(t *testing.T) {
	c := fakeCluster()
	_, err := (&Binder{Client: c}).Bind(context.Background(), bulkOn("n1", "n2"))
	require.NoError(t, err)
	b := bulkOn("n3")
	b.Places[0].Ref.Run = "r2"
	_, err = (&Binder{Client: c}).Bind(context.Background(), b)
	require.NoError(t, err)

	left, err := Leftovers(context.Background(), c, "default", "")
	require.NoError(t, err)
	require.Len(t, left, 3)
	assert.Equal(t, Leftover{Ref: TaskRef{Run: "r1", Job: "etl", Task: 0, Region: 1}, Pod: "rs-r1-etl-t0-a0", Node: "n1"}, left[0])
	assert.Equal(t, "r2", left[2].Ref.Run)

	n, err := DeleteRun(context.Background(), c, "default", "r1")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	left, err = Leftovers(context.Background(), c, "default", "")
	require.NoError(t, err)
	require.Len(t, left, 1)
	_, err = DeleteRun(context.Background(), c, "default", "")
	assert.ErrorIs(t, err, ErrBadRun)
}

// TestBinderChecksNodes: a bulk with a node missing or cordoned fails
// before any pod is created.
func TestBinderChecksNodes(t *testing.T) {
	for _, bad := range []string{"n9", "cordoned"} {
		c := fakeCluster()
		_, err := (&Binder{Client: c}).Bind(context.Background(), bulkOn("n1", bad))
		var be *BulkError
		require.ErrorAs(t, err, &be, bad)
		assert.Equal(t, "check", be.Op)
		assert.Equal(t, bad, be.Node)
		left, err := Leftovers(context.Background(), c, "default", "")
		require.NoError(t, err)
		assert.Empty(t, left)
	}
}

// TestBinderDeletesPodsOfUnknownOutcome: the API server stores the
// second pod but its answer is lost (a broken connection), while the
// third pod's name is taken. The bulk fails and the second pod, which
// the binder never saw created, is deleted by name; the pod that was
// there stays.
func TestBinderDeletesPodsOfUnknownOutcome(t *testing.T) {
	c := fakeCluster()
	bulk := bulkOn("n1", "n2", "n3")
	tmpl := PodTemplate{}
	taken := tmpl.Pod(bulk.Places[2])
	_, err := c.CoreV1().Pods("default").Create(context.Background(), taken, metav1.CreateOptions{})
	require.NoError(t, err)
	c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca := a.(k8stesting.CreateAction)
		pod, ok := ca.GetObject().(*corev1.Pod)
		if !ok || ca.GetSubresource() != "" || pod.Name != "rs-r1-etl-t1-a0" {
			return false, nil, nil
		}
		if err := c.Tracker().Create(corev1.SchemeGroupVersion.WithResource("pods"), pod, a.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, nil, errors.New("read tcp: connection reset by peer")
	})
	_, err = (&Binder{Client: c, Parallel: 1}).Bind(context.Background(), bulk)
	var be *BulkError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "create", be.Op)
	assert.Equal(t, "rs-r1-etl-t1-a0", be.Pod)
	assert.NoError(t, be.Cleanup)
	left, err := Leftovers(context.Background(), c, "default", "r1")
	require.NoError(t, err)
	require.Len(t, left, 1)
	assert.Equal(t, taken.Name, left[0].Pod)
}
