package kubernetes

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// cacheWatches are the test's handlers on the informers of each Runner
// (watchCaches): each receives a value on any change of a cache.
var cacheWatches sync.Map // *Runner -> chan struct{}

// watchCaches returns a channel that receives a value whenever one of
// the Runner's caches changes (registered once per Runner).
func watchCaches(t testing.TB, r *Runner) chan struct{} {
	t.Helper()
	if ch, ok := cacheWatches.Load(r); ok {
		return ch.(chan struct{})
	}
	ch := make(chan struct{}, 1)
	sig := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	h := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { sig() }, UpdateFunc: func(any, any) { sig() }, DeleteFunc: func(any) { sig() }}
	for _, inf := range []cache.SharedIndexInformer{r.view.nodes, r.view.runPods, r.view.livePods} {
		_, err := inf.AddEventHandler(h)
		require.NoError(t, err)
	}
	cacheWatches.Store(r, ch)
	t.Cleanup(func() { cacheWatches.Delete(r) })
	return ch
}

// synced waits until the Runner's caches hold exactly the nodes and pods
// of the fake clientset (the fake ignores selectors: every cache holds
// all of them), blocking on the caches' changes, not sleeping; it fails
// the test after 10 s.
func synced(t testing.TB, r *Runner, c *fake.Clientset) {
	t.Helper()
	ch := watchCaches(t, r)
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for !caught(t, r, c) {
		select {
		case <-ch:
		case <-timeout.C:
			t.Fatal("the Runner's caches did not catch up with the clientset")
		}
	}
}

// caught reports whether the Runner's caches hold what the clientset has.
func caught(t testing.TB, r *Runner, c *fake.Clientset) bool {
	t.Helper()
	ctx := context.Background()
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	same := func(store cache.Store, objs []runtime.Object) bool {
		if len(store.List()) != len(objs) {
			return false
		}
		for _, o := range objs {
			got, ok, err := store.Get(o)
			if err != nil || !ok || !equality.Semantic.DeepEqual(got, o) {
				return false
			}
		}
		return true
	}
	var ns, ps, run []runtime.Object
	for i := range nodes.Items {
		ns = append(ns, &nodes.Items[i])
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		ps = append(ps, p)
		if p.Namespace == r.view.ns {
			run = append(run, p)
		}
	}
	return same(r.view.nodes.GetStore(), ns) && same(r.view.livePods.GetStore(), ps) && same(r.view.runPods.GetStore(), run)
}

// stepSynced steps the Runner once its caches caught up with the
// clientset.
func stepSynced(t testing.TB, r *Runner, c *fake.Clientset, now time.Time) {
	t.Helper()
	synced(t, r, c)
	require.NoError(t, r.Step(context.Background(), now))
}
