// Package k8stest connects tests to the control plane of
// scripts/k8s-up.sh and makes KWOK nodes on it.
//
// Client skips the test when no control plane answers, and fails it
// instead when REGIONSCHED_K8S=require (what CI sets). The kubeconfig is
// $REGIONSCHED_K8S_KUBECONFIG, else $REGIONSCHED_K8S_DIR/kubeconfig
// (default /tmp/regionsched-k8s/kubeconfig), the one k8s-up.sh writes.
package k8stest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	rsk8s "github.com/regionsched/regionsched/kubernetes"
)

// Kubeconfig returns the path of the kubeconfig the tests use.
func Kubeconfig() string {
	if p := os.Getenv("REGIONSCHED_K8S_KUBECONFIG"); p != "" {
		return p
	}
	dir := os.Getenv("REGIONSCHED_K8S_DIR")
	if dir == "" {
		dir = "/tmp/regionsched-k8s"
	}
	return filepath.Join(dir, "kubeconfig")
}

// Client returns a client of the test control plane, or skips the test
// (fails it under REGIONSCHED_K8S=require) if none answers in 5 s.
func Client(t testing.TB) kubernetes.Interface {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("REGIONSCHED_K8S") == "require" {
		skip = t.Fatalf
	}
	path := Kubeconfig()
	if _, err := os.Stat(path); err != nil {
		skip("no Kubernetes control plane (%v): start one with make k8s-up", err)
		return nil
	}
	c, err := rsk8s.NewClient(path, 500)
	if err != nil {
		skip("kubeconfig %s: %v", path, err)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		skip("the control plane of %s does not answer: %v (make k8s-up starts it)", path, err)
		return nil
	}
	return c
}

// Prefix returns a name prefix unique to this test process, for nodes and
// runs: "it<pid>".
func Prefix() string { return fmt.Sprintf("it%d", os.Getpid()) }

// Node is what a fake node offers.
type Node struct {
	Name   string
	CPU    string // e.g. "4"
	Memory string // e.g. "8Gi"
	Pods   string // e.g. "110"
	// Group, if set, is the value of the node's label GroupLabel: a
	// test's runs select their own nodes by it (Selector).
	Group string
}

// GroupLabel is the label of a fake node naming its Group.
const GroupLabel = "regionsched.io/test-group"

// Selector returns the node selector of a group of fake nodes (Node.Group).
func Selector(group string) string { return GroupLabel + "=" + group }

// FakeNodes creates KWOK nodes (annotated kwok.x-k8s.io/node=fake, which
// the KWOK of k8s-up.sh manages), waits until KWOK made them all Ready,
// and deletes them (with their pods) when the test ends.
func FakeNodes(t testing.TB, c kubernetes.Interface, nodes ...Node) {
	t.Helper()
	ctx := context.Background()
	for _, n := range nodes {
		alloc := corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(n.CPU), corev1.ResourceMemory: resource.MustParse(n.Memory),
			corev1.ResourcePods: resource.MustParse(n.Pods),
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
				Labels: map[string]string{"type": "kwok", "regionsched.io/test": Prefix()}},
			Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc},
		}
		if n.Group != "" {
			node.Labels[GroupLabel] = n.Group
		}
		if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating node %s: %v", n.Name, err)
		}
		t.Cleanup(func() { DeleteNode(t, c, n.Name) })
	}
	for _, n := range nodes {
		WaitFor(t, 30*time.Second, "node "+n.Name+" Ready", func() bool {
			node, err := c.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					return true
				}
			}
			return false
		})
	}
}

// DeleteNode deletes a node, then the pods bound to it, as a node lost
// is gone before the pod garbage collector deletes its pods (no
// controller does that on this control plane); a node already gone is
// fine.
func DeleteNode(t testing.TB, c kubernetes.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	if err := c.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !isNotFound(err) {
		t.Errorf("deleting node %s: %v", name, err)
	}
	pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
	if err == nil {
		for _, p := range pods.Items {
			_ = rsk8s.DeletePod(ctx, c, p.Namespace, p.Name)
		}
	}
}

// NoPodsLeft fails the test unless no pod of run is left in namespace ns.
func NoPodsLeft(t testing.TB, c kubernetes.Interface, ns, run string) {
	t.Helper()
	left, err := rsk8s.Leftovers(context.Background(), c, ns, run)
	if err != nil {
		t.Errorf("listing the pods of run %s: %v", run, err)
		return
	}
	if len(left) > 0 {
		t.Errorf("run %s left %d pods: %v", run, len(left), left)
	}
}

// WaitFor polls ok every 50 ms until it holds, or fails the test after
// timeout.
func WaitFor(t testing.TB, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

var (
	seqs    sync.Map // testing.TB -> int64
	nextSeq atomic.Int64
)

// Seq returns a number unique to the test in this process, the same at
// every call of one test: names made of it (runs, pods, nodes) differ
// from one run of a test to the next under go test -count, so that no
// pod or node is made again under the name of one just deleted.
func Seq(t testing.TB) int64 {
	v, _ := seqs.LoadOrStore(t, nextSeq.Add(1))
	return v.(int64)
}
