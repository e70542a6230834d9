package kubernetes

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// handledByView is, for each Runner's view, what its handlers have seen
// (handledHook): every object of each informer by key, as of its last
// event, and a channel that receives a value after each event.
var handledByView sync.Map // *view -> *handledObjs

type handledObjs struct {
	mu   sync.Mutex
	objs map[cache.SharedIndexInformer]map[string]any
	ch   chan struct{}
}

func handledOf(v *view) *handledObjs {
	h, _ := handledByView.LoadOrStore(v, &handledObjs{objs: map[cache.SharedIndexInformer]map[string]any{}, ch: make(chan struct{}, 1)})
	return h.(*handledObjs)
}

func init() {
	handledHook = func(v *view, inf cache.SharedIndexInformer, obj any, deleted bool) {
		h := handledOf(v)
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			panic(err)
		}
		h.mu.Lock()
		m := h.objs[inf]
		if m == nil {
			m = map[string]any{}
			h.objs[inf] = m
		}
		if deleted {
			delete(m, key)
		} else {
			m[key] = obj
		}
		h.mu.Unlock()
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
}

// watches counts, for each fake clientset of watchedClientset, the
// watches it established, with a channel that receives a value on each.
var watches sync.Map // *fake.Clientset -> *watchCount

type watchCount struct {
	mu sync.Mutex
	n  int
	ch chan struct{}
}

// watchedClientset returns a fake clientset that counts the watches it
// established. (A fake clientset's watch does not start from a resource
// version: a change made between an informer's list and its watch is
// never seen. synced waits for the watches first.)
func watchedClientset() *fake.Clientset {
	c := fake.NewClientset()
	wc := &watchCount{ch: make(chan struct{}, 1)}
	watches.Store(c, wc)
	c.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if wa, ok := a.(k8stesting.WatchActionImpl); ok {
			opts = wa.ListOptions
		}
		w, err := c.Tracker().Watch(a.GetResource(), a.GetNamespace(), opts)
		if err == nil {
			wc.mu.Lock()
			wc.n++
			wc.mu.Unlock()
			select {
			case wc.ch <- struct{}{}:
			default:
			}
		}
		return true, w, err
	})
	return c
}

// watched waits until a clientset of watchedClientset established the
// three watches of a Runner's informers.
func watched(t testing.TB, c *fake.Clientset, timeout <-chan time.Time) {
	t.Helper()
	v, ok := watches.Load(c)
	if !ok {
		return
	}
	wc := v.(*watchCount)
	for {
		wc.mu.Lock()
		n := wc.n
		wc.mu.Unlock()
		if n >= 3 {
			return
		}
		select {
		case <-wc.ch:
		case <-timeout:
			t.Fatal("the Runner's informers did not watch")
		}
	}
}

// synced waits until the Runner's handlers have seen what the fake
// clientset has (caught), so that the caches hold it too and every wake
// and note of the changes is done; it blocks on the handlers' events,
// never sleeping, and fails the test after 10 s.
func synced(t testing.TB, r *Runner, c *fake.Clientset) {
	t.Helper()
	h := handledOf(r.view)
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	watched(t, c, timeout.C)
	for !caught(t, r, c) {
		select {
		case <-h.ch:
		case <-timeout.C:
			t.Fatal("the Runner's caches did not catch up with the clientset")
		}
	}
}

// caught reports whether the Runner's handlers have seen, for each of
// its informers, what the clientset has: every object the informer's
// selection takes, as the clientset has it, and nothing the clientset
// does not have. (A fake clientset's watches ignore selectors: an
// informer may see more than its selection, as long as it is current.)
func caught(t testing.TB, r *Runner, c *fake.Clientset) bool {
	t.Helper()
	ctx := context.Background()
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	h := handledOf(r.view)
	h.mu.Lock()
	defer h.mu.Unlock()
	current := func(inf cache.SharedIndexInformer, objs map[string]runtime.Object, wanted func(runtime.Object) bool) bool {
		seen := h.objs[inf]
		for key, o := range objs {
			got, ok := seen[key]
			if (ok && !equality.Semantic.DeepEqual(got, o)) || (!ok && wanted(o)) {
				return false
			}
		}
		for key := range seen {
			if _, ok := objs[key]; !ok {
				return false
			}
		}
		return true
	}
	ns, ps := map[string]runtime.Object{}, map[string]runtime.Object{}
	for i := range nodes.Items {
		ns[nodes.Items[i].Name] = &nodes.Items[i]
	}
	runPods := map[string]runtime.Object{}
	for i := range pods.Items {
		p := &pods.Items[i]
		ps[p.Namespace+"/"+p.Name] = p
		if p.Namespace == r.view.ns {
			runPods[p.Namespace+"/"+p.Name] = p
		}
	}
	return current(r.view.nodes, ns, func(o runtime.Object) bool {
		return r.view.nodeSel.Matches(labels.Set(o.(*corev1.Node).Labels))
	}) && current(r.view.livePods, ps, func(o runtime.Object) bool {
		return !Ended(o.(*corev1.Pod))
	}) && current(r.view.runPods, runPods, func(o runtime.Object) bool {
		return o.(*corev1.Pod).Labels[LabelRun] == r.cfg.Run
	})
}

// stepSynced steps the Runner once its caches caught up with the
// clientset.
func stepSynced(t testing.TB, r *Runner, c *fake.Clientset, now time.Time) {
	t.Helper()
	synced(t, r, c)
	require.NoError(t, r.Step(context.Background(), now))
}
