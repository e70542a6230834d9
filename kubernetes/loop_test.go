package kubernetes

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// specOf decodes a job file into the spec Run takes.
func specOf(t *testing.T, text string) multijob.JobSpec {
	t.Helper()
	g, err := topology.DecodeBytes([]byte(text))
	require.NoError(t, err)
	return multijob.JobSpec{JobSpec: admission.JobSpec{Name: g.Name()}, Regions: region.FromJob(g, exchange.PointwisePipelinedOnly)}
}

const (
	earlyJob = `{"name": "early", "vertices": [{"id": "a", "parallelism": 2, "durationMs": 5}]}`
	lateJob  = `{"name": "late", "submitAtMs": 250, "vertices": [{"id": "b", "parallelism": 1, "durationMs": 5}]}`
)

// firstRequest returns when a job first asked for a slot in a trace.
func firstRequest(trace []runfile.Event, job string) (time.Duration, bool) {
	for _, ev := range trace {
		if ev.Kind == runfile.Request && ev.Job == job {
			return ev.At, true
		}
	}
	return 0, false
}

// TestLoopSubmitsAtSubmitAt: the loop of Run submits a job whose topology
// says submitAtMs 250 at 250 ms, not before: its turns, driven on the
// mock clock the way run drives them (to the next time due, or poll),
// submit it in the turn at exactly 250 ms, which next names.
func TestLoopSubmitsAtSubmitAt(t *testing.T) {
	c := fourNodes(t)
	clk := clock.NewMock()
	var trace []runfile.Event
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024), Start: clk.Now(), TraceJobs: true,
		Trace: func(ev runfile.Event) { trace = append(trace, ev) }})
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()
	l := newLoop(r, clk.Now(), []multijob.JobSpec{specOf(t, earlyJob), specOf(t, lateJob)}, nil, nil)
	const poll = 100 * time.Millisecond
	done := false
	for i := 0; i < 100 && !done; i++ {
		synced(t, r, c)
		done, err = l.step(ctx, clk.Now())
		require.NoError(t, err)
		if clk.Now().Sub(l.start) < 250*time.Millisecond {
			_, err := r.Status("late")
			assert.Error(t, err, "late submitted at %v", clk.Now().Sub(l.start))
		}
		kwok(t, c, nil)
		until := clk.Now().Add(poll)
		if next, ok := l.next(clk.Now()); ok && next.Before(until) {
			until = next
		}
		clk.Set(until)
	}
	require.True(t, done, "the jobs did not end")
	at, ok := firstRequest(trace, "late")
	require.True(t, ok, "late never asked for a slot")
	assert.Equal(t, 250*time.Millisecond, at)
	at, ok = firstRequest(trace, "early")
	require.True(t, ok)
	assert.Zero(t, at)
	for _, e := range r.Ends() {
		assert.Equal(t, multijob.Finished, e.Outcome, "%s: %v", e.Job, e.Err)
	}
}

// TestRunOnChanges runs Run on the mock clock with a poll of an hour,
// a goroutine playing KWOK from a watch of the pods: Run steps on the
// changes of its caches and on its timers only (the late job's
// submission), both jobs finish, the late one asks for its slot at 250
// ms at the earliest, and the whole run takes far less than the poll.
func TestRunOnChanges(t *testing.T) {
	c := fourNodes(t)
	clk := clock.NewMock()
	start := clk.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kwokErr := make(chan error, 1)
	w, err := c.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	go func() { kwokErr <- kwokOnWatch(ctx, c, w) }()

	var mu sync.Mutex
	var trace []runfile.Event
	type result struct {
		ends []multijob.JobEnd
		err  error
	}
	res := make(chan result, 1)
	go func() {
		ends, err := Run(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024), Start: start, TraceJobs: true,
			Trace: func(ev runfile.Event) { mu.Lock(); trace = append(trace, ev); mu.Unlock() }},
			clk, time.Hour, specOf(t, earlyJob), specOf(t, lateJob))
		res <- result{ends, err}
	}()
	var got result
	for done := false; !done; {
		select {
		case got = <-res:
			done = true
		case err := <-kwokErr:
			require.NoError(t, err)
		default:
			clk.Add(Coalesce) // the mock clock yields to the other goroutines
			require.Less(t, clk.Now().Sub(start), time.Minute, "the run waited for its poll")
		}
	}
	require.NoError(t, got.err)
	require.Len(t, got.ends, 2)
	for _, e := range got.ends {
		assert.Equal(t, multijob.Finished, e.Outcome, "%s: %v", e.Job, e.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	at, ok := firstRequest(trace, "late")
	require.True(t, ok)
	assert.GreaterOrEqual(t, at, 250*time.Millisecond)
	left, err := Leftovers(context.Background(), c, "default", "r1")
	require.NoError(t, err)
	assert.Empty(t, left)
}

// kwokOnWatch plays KWOK on the pods of a watch until ctx ends: a pod
// bound and Pending becomes Running, a Running pod with a complete-after
// annotation Succeeds.
func kwokOnWatch(ctx context.Context, c *fake.Clientset, w watch.Interface) error {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errors.New("the watch of the pods ended")
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod || ev.Type == watch.Deleted || p.Spec.NodeName == "" {
				continue
			}
			switch {
			case p.Status.Phase == "" || p.Status.Phase == corev1.PodPending:
				p.Status.Phase = corev1.PodRunning
			case p.Status.Phase == corev1.PodRunning && p.Annotations[AnnotationCompleteAfter] != "":
				p.Status.Phase = corev1.PodSucceeded
			default:
				continue
			}
			if _, err := c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
				return err
			}
		}
	}
}

// TestLoopRefusesEventsBeforeArrival: an event for a job before its
// submitAtMs is refused, as simulate refuses it: an outcome and a refused
// trace event saying when the job arrives, and an audit record; the job
// then runs as if nothing was asked.
func TestLoopRefusesEventsBeforeArrival(t *testing.T) {
	var audited []admission.AuditRecord
	l, r, trace := runEarlyAndLate(t, []runfile.JobEvent{{At: 100 * time.Millisecond, Action: admission.ActionKill, Job: "late", By: "alice"}},
		func(rec admission.AuditRecord) { audited = append(audited, rec) })
	const why = "the job has not arrived yet (it arrives at 250 ms)"
	require.Len(t, l.outcomes, 1)
	assert.False(t, l.outcomes[0].Applied)
	assert.Equal(t, why, l.outcomes[0].Reason)
	require.Len(t, audited, 1)
	assert.Equal(t, why, audited[0].Reason)
	assert.False(t, audited[0].Accepted)
	var refused []runfile.Event
	for _, ev := range trace {
		if ev.Kind == runfile.Refused {
			refused = append(refused, ev)
		}
	}
	require.Len(t, refused, 1)
	assert.Equal(t, 100*time.Millisecond, refused[0].At)
	assert.Equal(t, "kill: "+why, refused[0].Reason)
	for _, e := range r.Ends() {
		assert.Equal(t, multijob.Finished, e.Outcome, "%s: %v", e.Job, e.Err)
	}
}

// TestLoopKilledAtArrivalWithdrawsItsRequests: a job killed in the turn
// it arrives in asked for slots in it; its trace withdraws those
// requests when it ends, as the simulator's does: every request ends in
// a deploy or a withdrawal.
func TestLoopKilledAtArrivalWithdrawsItsRequests(t *testing.T) {
	l, _, trace := runEarlyAndLate(t, []runfile.JobEvent{{At: 250 * time.Millisecond, Action: admission.ActionKill, Job: "late", By: "alice"}}, nil)
	require.Len(t, l.outcomes, 1)
	require.True(t, l.outcomes[0].Applied, l.outcomes[0].Reason)
	open := map[[2]string]bool{}
	withdrawn := 0
	for _, ev := range trace {
		k := [2]string{ev.Job, ev.Task}
		switch ev.Kind {
		case runfile.Request:
			open[k] = true
		case runfile.Deploy:
			delete(open, k)
		case runfile.Withdraw:
			assert.True(t, open[k], "%+v: withdraws no open request", ev)
			assert.Equal(t, "late", ev.Job)
			delete(open, k)
			withdrawn++
		}
	}
	assert.Empty(t, open, "every request ends in a deploy or a withdrawal")
	assert.Equal(t, 1, withdrawn, "late's only task")
}

// runEarlyAndLate runs earlyJob and lateJob through the loop of Run on
// the mock clock, stepping as run does, with the events given (alice an
// admin) and audit receiving what is refused before the admission is
// asked; it returns the loop, its Runner (closed when the test ends) and
// the trace, once every job ended.
func runEarlyAndLate(t *testing.T, events []runfile.JobEvent, audit func(admission.AuditRecord)) (*loop, *Runner, []runfile.Event) {
	t.Helper()
	c := fourNodes(t)
	clk := clock.NewMock()
	var trace []runfile.Event
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024), Start: clk.Now(), TraceJobs: true,
		Trace: func(ev runfile.Event) { trace = append(trace, ev) }})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close(ctx)) })
	l := newLoop(r, clk.Now(), []multijob.JobSpec{specOf(t, earlyJob), specOf(t, lateJob)}, events, map[string]admission.Role{"alice": admission.RoleAdmin})
	l.audit = audit
	done := false
	for i := 0; i < 100 && !done; i++ {
		synced(t, r, c)
		done, err = l.step(ctx, clk.Now())
		require.NoError(t, err)
		kwok(t, c, nil)
		until := clk.Now().Add(100 * time.Millisecond)
		if next, ok := l.next(clk.Now()); ok && next.Before(until) {
			until = next
		}
		clk.Set(until)
	}
	require.True(t, done, "the jobs did not end")
	return l, r, trace
}
