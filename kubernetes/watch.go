package kubernetes

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// view is what a Runner knows of the cluster: the caches of three
// informers (the nodes of its selector, the pods of its run, and the
// pods of the cluster that have not ended), kept up to date by watches.
// It reads nothing from the API server itself once started: a Step reads
// the caches. Every change that matters to the Runner (a pod of the run
// changing phase or deleted, a node's room changing, a pod not of the run
// taking or leaving room) wakes the loop that steps the Runner (wake).
//
// The caches filter again what they hold (the selectors given to the API
// server are an optimisation: a fake clientset ignores some of them).
type view struct {
	run      string
	ns       string
	nodeSel  labels.Selector
	nodes    cache.SharedIndexInformer
	runPods  cache.SharedIndexInformer
	livePods cache.SharedIndexInformer
	// wake has a value when something changed since the loop last took
	// it.
	wake chan struct{}
	// roomChanged: a node or a pod not of the run changed since the last
	// capacities (takeRoomChanged).
	roomChanged atomic.Bool
	// startErr receives the first errors of the informers' lists and
	// watches (start gives up on the first).
	startErr chan error
	stop     chan struct{}
	stopOnce sync.Once
}

// syncTimeout bounds the wait for the informers' first lists.
const syncTimeout = time.Minute

// byNode is the index of the live pods by the node they are bound to.
const byNode = "node"

// newView makes the informers of a run (they start with start).
func newView(client kubernetes.Interface, run, ns, nodeSelector string) (*view, error) {
	sel, err := labels.Parse(nodeSelector)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: node selector %q: %w", nodeSelector, err)
	}
	v := &view{run: run, ns: ns, nodeSel: sel, wake: make(chan struct{}, 1), startErr: make(chan error, 1), stop: make(chan struct{})}
	v.roomChanged.Store(true)
	v.nodes = coreinformers.NewFilteredNodeInformer(client, 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = nodeSelector })
	v.runPods = coreinformers.NewFilteredPodInformer(client, ns, 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = RunSelector(run) })
	// Pods Succeeded or Failed request nothing (CapacityOf): the API
	// server leaves them out.
	v.livePods = coreinformers.NewFilteredPodInformer(client, metav1.NamespaceAll, 0,
		cache.Indexers{byNode: func(obj any) ([]string, error) {
			if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
				return []string{p.Spec.NodeName}, nil
			}
			return nil, nil
		}},
		func(o *metav1.ListOptions) { o.FieldSelector = livePods })
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{v.nodes, v.handled(v.nodes, cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { v.room() },
			UpdateFunc: func(old, cur any) { v.nodeUpdated(old, cur) },
			DeleteFunc: func(any) { v.room() },
		})},
		{v.runPods, v.handled(v.runPods, cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { v.runPodAdded(obj) },
			UpdateFunc: func(old, cur any) { v.runPodUpdated(old, cur) },
			DeleteFunc: func(obj any) { v.runPodDeleted(obj) },
		})},
		{v.livePods, v.handled(v.livePods, cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { v.foreignPod(obj, nil) },
			UpdateFunc: func(old, cur any) { v.foreignPod(cur, old) },
			DeleteFunc: func(obj any) { v.foreignPod(obj, nil) },
		})},
	}
	for _, h := range handlers {
		if _, err := h.inf.AddEventHandler(h.h); err != nil {
			return nil, err
		}
		if err := h.inf.SetWatchErrorHandlerWithContext(v.watchError); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// handledHook, when set (by tests, before any Runner starts), is called
// after each of a view's handlers with the informer, the object and
// whether it was deleted: the tests know what the Runner's handlers have
// seen.
var handledHook func(v *view, inf cache.SharedIndexInformer, obj any, deleted bool)

// handled returns h, calling handledHook after each of its calls.
func (v *view) handled(inf cache.SharedIndexInformer, h cache.ResourceEventHandlerFuncs) cache.ResourceEventHandler {
	hook := handledHook
	if hook == nil {
		return h
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { h.OnAdd(obj, false); hook(v, inf, obj, false) },
		UpdateFunc: func(old, cur any) { h.OnUpdate(old, cur); hook(v, inf, cur, false) },
		DeleteFunc: func(obj any) { h.OnDelete(obj); hook(v, inf, obj, true) },
	}
}

// start runs the informers and waits until their caches hold what the
// API server has: at most syncTimeout, and not past the first error of a
// list or watch (the API server not answering, or refusing to list or
// watch). ctx's end does not cut the wait short (a run stopped while it
// starts still ends cleanly); close stops the informers.
func (v *view) start(ctx context.Context) error {
	infs := []cache.SharedIndexInformer{v.nodes, v.runPods, v.livePods}
	synced := make([]cache.InformerSynced, len(infs))
	for i, inf := range infs {
		go inf.Run(v.stop)
		synced[i] = inf.HasSynced
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
	defer cancel()
	var failed error
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case failed = <-v.startErr:
			cancel()
		case <-wctx.Done():
		}
	}()
	ok := cache.WaitForCacheSync(wctx.Done(), synced...)
	cancel()
	<-done
	if !ok {
		if failed != nil {
			return fmt.Errorf("kubernetes: reading the nodes and pods: %w", failed)
		}
		return fmt.Errorf("kubernetes: reading the nodes and pods: not done in %v", syncTimeout)
	}
	return nil
}

// watchError passes an informer's list or watch error on to start, and
// to client-go's default handling (which logs it; the informer retries).
func (v *view) watchError(ctx context.Context, r *cache.Reflector, err error) {
	select {
	case v.startErr <- err:
	default:
	}
	cache.DefaultWatchErrorHandler(ctx, r, err)
}

// close stops the informers (once).
func (v *view) close() { v.stopOnce.Do(func() { close(v.stop) }) }

// notify wakes the loop (at most one wake waits).
func (v *view) notify() {
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

// room notes that the room of the nodes may have changed, and wakes the
// loop.
func (v *view) room() {
	v.roomChanged.Store(true)
	v.notify()
}

// takeRoomChanged reports whether the room of the nodes may have changed
// since it was last called.
func (v *view) takeRoomChanged() bool { return v.roomChanged.Swap(false) }

// nodeUpdated wakes the loop if what the node offers may have changed
// (not on a heartbeat).
func (v *view) nodeUpdated(old, cur any) {
	o, ok1 := old.(*corev1.Node)
	c, ok2 := cur.(*corev1.Node)
	if !ok1 || !ok2 || nodeRoomChanged(o, c) {
		v.room()
	}
}

// nodeRoomChanged reports whether a node's update changes what CapacityOf
// makes of it or whether the node selector takes it.
func nodeRoomChanged(o, c *corev1.Node) bool {
	ready := func(n *corev1.Node) corev1.ConditionStatus {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status
			}
		}
		return ""
	}
	return (o.DeletionTimestamp == nil) != (c.DeletionTimestamp == nil) || o.Spec.Unschedulable != c.Spec.Unschedulable ||
		ready(o) != ready(c) || !equality.Semantic.DeepEqual(o.Spec.Taints, c.Spec.Taints) ||
		!equality.Semantic.DeepEqual(o.Status.Allocatable, c.Status.Allocatable) || !equality.Semantic.DeepEqual(o.Labels, c.Labels)
}

// ofRun reports whether obj is a pod of the run.
func (v *view) ofRun(obj any) (*corev1.Pod, bool) {
	p, ok := obj.(*corev1.Pod)
	return p, ok && p.Labels[LabelRun] == v.run
}

// runPodAdded wakes the loop for a pod of the run the cache learns of
// past Pending (a watch started again); a pod just created is the
// Runner's own doing.
func (v *view) runPodAdded(obj any) {
	if p, ok := v.ofRun(obj); ok && p.Status.Phase != "" && p.Status.Phase != corev1.PodPending {
		v.notify()
	}
}

// runPodUpdated wakes the loop when a pod of the run changes phase.
func (v *view) runPodUpdated(old, cur any) {
	o, ok1 := old.(*corev1.Pod)
	c, ok2 := v.ofRun(cur)
	if ok2 && (!ok1 || o.Status.Phase != c.Status.Phase || o.Status.Reason != c.Status.Reason) {
		v.notify()
	}
}

// runPodDeleted wakes the loop when a pod of the run is deleted (or a
// deletion the watch missed is found).
func (v *view) runPodDeleted(obj any) {
	if _, ok := v.ofRun(obj); ok {
		v.notify()
	} else if _, missed := obj.(cache.DeletedFinalStateUnknown); missed {
		v.notify()
	}
}

// foreignPod notes a live pod added, updated (old its last state) or
// deleted: one not of the run takes or gives back room on its node.
func (v *view) foreignPod(obj, old any) {
	p, ok := obj.(*corev1.Pod)
	if !ok { // a deletion the watch missed: cache.DeletedFinalStateUnknown
		v.room()
		return
	}
	if p.Labels[LabelRun] == v.run {
		return // the run's own pods take the room of their slots
	}
	o, updated := old.(*corev1.Pod)
	if !v.ourNode(p.Spec.NodeName) && (!updated || !v.ourNode(o.Spec.NodeName)) {
		return // not bound, or bound to a node the run does not use
	}
	if updated && o.Spec.NodeName == p.Spec.NodeName && Ended(o) == Ended(p) &&
		equality.Semantic.DeepEqual(PodRequests(o), PodRequests(p)) {
		return
	}
	v.room()
}

// ourNode reports whether a node is in the cache of the nodes and the
// node selector takes it.
func (v *view) ourNode(name string) bool {
	if name == "" {
		return false
	}
	obj, ok, err := v.nodes.GetStore().GetByKey(name)
	if err != nil || !ok {
		return false
	}
	n, ok := obj.(*corev1.Node)
	return ok && v.nodeSel.Matches(labels.Set(n.Labels))
}

// nodeList returns the nodes of the selector, as the cache has them.
func (v *view) nodeList() []*corev1.Node {
	var out []*corev1.Node
	for _, obj := range v.nodes.GetStore().List() {
		if n, ok := obj.(*corev1.Node); ok && v.nodeSel.Matches(labels.Set(n.Labels)) {
			out = append(out, n)
		}
	}
	return out
}

// podsOn returns the pods bound to a node that have not ended.
func (v *view) podsOn(node string) []*corev1.Pod {
	objs, err := v.livePods.GetIndexer().ByIndex(byNode, node)
	if err != nil { // cannot happen: the index exists
		return nil
	}
	out := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		if p, ok := obj.(*corev1.Pod); ok && !Ended(p) {
			out = append(out, p)
		}
	}
	return out
}

// runPod returns a pod of the run as the cache has it. The object is
// the cache's: it must not be changed.
func (v *view) runPod(name string) (*corev1.Pod, bool) {
	obj, ok, err := v.runPods.GetStore().GetByKey(v.ns + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Labels[LabelRun] != v.run {
		return nil, false
	}
	return p, true
}
