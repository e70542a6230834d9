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
	return b.bindPods(ctx, bulk, pods)
}

// bindPods is Bind of the pods made of bulk's placements (pods[i] of
// bulk.Places[i]).
func (b *Binder) bindPods(ctx context.Context, bulk Bulk, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	created := make([]*corev1.Pod, len(pods))
	// unsure marks the pods whose create ended without a definite answer
	// (ctx ended in flight, a timeout, a broken connection): the API
	// server may have created them, so a failed bulk deletes them by name.
	unsure := make([]bool, len(pods))
	fail := func(i int, op string, err error) *BulkError {
		return &BulkError{Job: bulk.Job, Region: bulk.Region, Attempt: bulk.Attempt,
			Pod: pods[i].Name, Node: bulk.Places[i].Node, Op: op, Err: err}
	}
	ns := b.Template.namespace()
	api := b.Client.CoreV1().Pods(ns)
	if !b.SkipNodeCheck {
		if err := b.checkNodes(ctx, bulk, pods); err != nil {
			return nil, err
		}
	}
	err := b.each(ctx, len(pods), func(i int) *BulkError {
		c, err := api.Create(ctx, pods[i], metav1.CreateOptions{})
		if err != nil {
			unsure[i] = outcomeUnknown(err)
			return fail(i, "create", err)
		}
		created[i] = c
		return nil
	})
	if err == nil {
		err = b.each(ctx, len(pods), func(i int) *BulkError {
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
		var names []string
		for i, p := range created {
			if p != nil {
				names = append(names, p.Name)
			} else if unsure[i] {
				names = append(names, pods[i].Name)
			}
		}
		err.Cleanup = b.deleteAll(ctx, ns, names)
		return nil, err
	}
	return created, nil
}

// outcomeUnknown reports whether a failed create may still have created
// its pod: the call ended without the API server's answer (ctx ended, the
// connection broke) or with a timeout. A definite refusal (the name is
// taken, the pod is invalid or forbidden) created nothing.
func outcomeUnknown(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}

// checkNodes fails the bulk (op "check") on the first of its nodes that
// is gone or not usable.
func (b *Binder) checkNodes(ctx context.Context, bulk Bulk, pods []*corev1.Pod) *BulkError {
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
				Pod: pods[i].Name, Node: p.Node, Op: "check", Err: err}
		}
	}
	return nil
}

// each runs fn(i) for i in [0, n) with at most Parallel at once and
// returns the first failure (ctx's end is one: "canceled"). After a
// failure, or once ctx ends, no new call starts; calls in flight run to
// their end, so that every call's outcome is known before a cleanup.
func (b *Binder) each(ctx context.Context, n int, fn func(int) *BulkError) *BulkError {
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
			if e := fn(i); e != nil {
				mu.Lock()
				if first == nil {
					first = e
				}
				mu.Unlock()
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
func (b *Binder) deleteAll(ctx context.Context, ns string, names []string) error {
	timeout := b.CleanupTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	var errs []error
	for _, name := range names {
		if err := DeletePod(ctx, b.Client, ns, name); err != nil {
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
