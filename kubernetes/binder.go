package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Binder creates and binds the pods of bulks through the API server.
type Binder struct {
	Client   kubernetes.Interface
	Template PodTemplate
	// Parallel is how many API calls of one bulk run at once (default 8).
	Parallel int
	// SkipNodeCheck leaves out the look at the bulk's nodes before its
	// pods are created: by default a node that is gone, cordoned, not
	// Ready or tainted (CapacityOf's Usable) fails the bulk at once, as
	// the API server binds a pod to any node name, even one that does not
	// exist.
	SkipNodeCheck bool
	// CleanupTimeout bounds the deletion of a failed bulk's pods, which
	// runs even when the bulk's context is canceled (default 30s).
	CleanupTimeout time.Duration
}

// Bind creates the pods of a bulk (not bound), then binds each to its
// node (pods/binding): all of them, or none. If a pod cannot be created
// or bound, or ctx ends first, every pod of the bulk created so far is
// deleted (grace period 0) and a *BulkError says which pod failed at
// which step; its slots are then to be treated as lost. On success it
// returns the pods as created, in placement order.
func (b *Binder) Bind(ctx context.Context, bulk Bulk) ([]*corev1.Pod, error) {
	pods := make([]*corev1.Pod, len(bulk.Places))
	for i, p := range bulk.Places {
		pods[i] = b.Template.Pod(p)
	}
	created := make([]*corev1.Pod, len(pods))
	fail := func(i int, op string, err error) *BulkError {
		return &BulkError{Job: bulk.Job, Region: bulk.Region, Attempt: bulk.Attempt,
			Pod: pods[i].Name, Node: bulk.Places[i].Node, Op: op, Err: err}
	}
	ns := b.Template.namespace()
	api := b.Client.CoreV1().Pods(ns)
	if !b.SkipNodeCheck {
		if err := b.checkNodes(ctx, bulk); err != nil {
			return nil, err
		}
	}
	err := b.each(ctx, len(pods), func(ctx context.Context, i int) *BulkError {
		c, err := api.Create(ctx, pods[i], metav1.CreateOptions{})
		if err != nil {
			return fail(i, "create", err)
		}
		created[i] = c
		return nil
	})
	if err == nil {
		err = b.each(ctx, len(pods), func(ctx context.Context, i int) *BulkError {
			binding := &corev1.Binding{
				ObjectMeta: metav1.ObjectMeta{Name: created[i].Name, Namespace: ns, UID: created[i].UID},
				Target:     corev1.ObjectReference{Kind: "Node", Name: bulk.Places[i].Node},
			}
			if err := api.Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
				return fail(i, "bind", err)
			}
			return nil
		})
	}
	if err != nil {
		err.Cleanup = b.deleteAll(ctx, ns, created)
		return nil, err
	}
	return created, nil
}

// checkNodes fails the bulk (op "check") on the first of its nodes that
// is gone or not usable.
func (b *Binder) checkNodes(ctx context.Context, bulk Bulk) *BulkError {
	seen := map[string]bool{}
	for i, p := range bulk.Places {
		if seen[p.Node] {
			continue
		}
		seen[p.Node] = true
		var err error
		node, gerr := b.Client.CoreV1().Nodes().Get(ctx, p.Node, metav1.GetOptions{})
		if gerr != nil {
			err = gerr
		} else if ok, why := usable(node, b.Template.Spec.Tolerations); !ok {
			err = fmt.Errorf("node %s is %s", p.Node, why)
		}
		if err != nil {
			return &BulkError{Job: bulk.Job, Region: bulk.Region, Attempt: bulk.Attempt,
				Pod: PodName(bulk.Places[i].Ref), Node: p.Node, Op: "check", Err: err}
		}
	}
	return nil
}

// each runs fn(i) for i in [0, n) with at most Parallel at once and
// returns the first failure (ctx's end is one: "canceled"); after one
// fails no new call starts.
func (b *Binder) each(ctx context.Context, n int, fn func(context.Context, int) *BulkError) *BulkError {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	par := b.Parallel
	if par <= 0 {
		par = 8
	}
	var (
		mu    sync.Mutex
		first *BulkError
		wg    sync.WaitGroup
		sem   = make(chan struct{}, par)
	)
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if e := fn(ctx, i); e != nil {
				mu.Lock()
				if first == nil {
					first = e
				}
				mu.Unlock()
				cancel()
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return &BulkError{Op: "canceled", Err: ctx.Err()}
	}
	return first
}

// deleteAll deletes the pods (grace period 0; a pod already gone is
// fine), with a context of its own so that a canceled bulk is still
// cleaned up.
func (b *Binder) deleteAll(ctx context.Context, ns string, pods []*corev1.Pod) error {
	timeout := b.CleanupTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	var errs []error
	for _, p := range pods {
		if p == nil {
			continue
		}
		if err := DeletePod(ctx, b.Client, ns, p.Name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// DeletePod deletes a pod at once (grace period 0); a pod already gone is
// no error.
func DeletePod(ctx context.Context, c kubernetes.Interface, ns, name string) error {
	zero := int64(0)
	err := c.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
