package k8stest

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	rsk8s "github.com/regionsched/regionsched/kubernetes"
)

// PodEvent is one change of a pod the API server reported to a watch.
type PodEvent struct {
	Type watch.EventType // watch.Added, watch.Modified or watch.Deleted
	Pod  *corev1.Pod     // the pod after the change (before it, for Deleted)
	At   time.Time       // when the watch delivered it
}

// Recorder records every change of the pods of a run, from a watch of the
// API server started before the run.
type Recorder struct {
	mu     sync.Mutex
	events []PodEvent
	closed bool // the watch ended before Stop
	cancel context.CancelFunc
	done   chan struct{}
}

// Record starts watching the pods of run in namespace ns. The watch
// starts before Record returns: every change after that is recorded. A
// watch the API server ends (its timeout, or a watcher too slow for it
// on a loaded machine) is started again from the last change recorded;
// only one that cannot be (the change is no longer in the server's
// history) leaves a hole, which Stop reports.
func Record(t testing.TB, c kubernetes.Interface, ns, run string) *Recorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	opts := metav1.ListOptions{LabelSelector: rsk8s.RunSelector(run)}
	w, err := c.CoreV1().Pods(ns).Watch(ctx, opts)
	if err != nil {
		cancel()
		t.Fatalf("watching the pods of run %s: %v", run, err)
	}
	r := &Recorder{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			last, ok := r.follow(ctx, w)
			w.Stop()
			if ctx.Err() != nil {
				return
			}
			if ok && last != "" {
				opts.ResourceVersion = last
				if w, err = c.CoreV1().Pods(ns).Watch(ctx, opts); err == nil {
					continue
				}
			}
			r.mu.Lock()
			r.closed = ctx.Err() == nil
			r.mu.Unlock()
			return
		}
	}()
	t.Cleanup(func() { r.Stop(t) })
	return r
}

// follow records the changes of one watch until it ends or ctx does, and
// returns the resource version of the last change recorded; ok is false
// if the watch ended on an error (the history it started from is gone).
func (r *Recorder) follow(ctx context.Context, w watch.Interface) (last string, ok bool) {
	for {
		select {
		case <-ctx.Done():
			return last, true
		case ev, open := <-w.ResultChan():
			if !open {
				return last, true
			}
			if ev.Type == watch.Error {
				return last, false
			}
			if pod, isPod := ev.Object.(*corev1.Pod); isPod {
				r.mu.Lock()
				r.events = append(r.events, PodEvent{Type: ev.Type, Pod: pod, At: time.Now()})
				r.mu.Unlock()
				last = pod.ResourceVersion
			}
		}
	}
}

// Events returns the changes recorded so far.
func (r *Recorder) Events() []PodEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]PodEvent(nil), r.events...)
}

// Stop ends the watch and returns every change recorded. A watch the
// API server ended early fails the test: the record would have a hole.
func (r *Recorder) Stop(t testing.TB) []PodEvent {
	t.Helper()
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		t.Errorf("the API server ended the watch of the run's pods early")
		r.closed = false
	}
	return append([]PodEvent(nil), r.events...)
}

// WaitEvents waits (at most timeout) until ok holds of the changes
// recorded so far.
func (r *Recorder) WaitEvents(t testing.TB, timeout time.Duration, what string, ok func([]PodEvent) bool) {
	t.Helper()
	WaitFor(t, timeout, what, func() bool { return ok(r.Events()) })
}
