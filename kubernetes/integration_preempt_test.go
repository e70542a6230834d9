package kubernetes_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	rsk8s "github.com/regionsched/regionsched/kubernetes"
	"github.com/regionsched/regionsched/kubernetes/internal/k8stest"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
)

// TestIntegrationPreemptionDeletesLowestPriority: on 4 one-slot nodes in a
// priority queue that preempts at once, low (priority 1000) and mid
// (5000) hold two slots each when high (9000) arrives wanting two: the
// pods deleted before the run ends are exactly low's two running pods;
// nothing of mid or high is deleted, and every job finishes (low's tasks
// run again).
func TestIntegrationPreemptionDeletesLowestPriority(t *testing.T) {
	c := k8stest.Client(t)
	t.Parallel()
	g := group(t)
	oneSlotNodes(t, c, g, 1, 4)
	low := k8stest.Job(t, `{"name": "low", "priority": 1000, "vertices": [{"id": "scan", "parallelism": 2, "durationMs": 4000}]}`, exchange.AllBlocking)
	mid := k8stest.Job(t, `{"name": "mid", "priority": 5000, "vertices": [{"id": "scan", "parallelism": 2, "durationMs": 4000}]}`, exchange.AllBlocking)
	high := k8stest.Job(t, `{"name": "high", "priority": 9000, "vertices": [{"id": "report", "parallelism": 2, "durationMs": 1000}]}`, exchange.AllBlocking)
	regions := map[string]*region.Regions{"low": low.Regions, "mid": mid.Regions, "high": high.Regions}
	cfg := runConfig(c, g, 0.5, multijob.Config{Admission: admission.Config{Queues: []admission.QueueConfig{
		{Name: "root.default", Policy: admission.Priority, Preempt: true}}}})
	var traceMu sync.Mutex
	var trace []runfile.Event
	cfg.TraceJobs, cfg.Trace = true, func(ev runfile.Event) { traceMu.Lock(); trace = append(trace, ev); traceMu.Unlock() }

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := rsk8s.NewRunner(ctx, cfg)
	require.NoError(t, err)
	defer func() { assert.NoError(t, r.Close(context.Background())) }()
	rec := k8stest.Record(t, c, "default", g)
	clk := realClock()
	require.NoError(t, r.Submit(clk.Now(), low))
	require.NoError(t, r.Submit(clk.Now(), mid))
	running := func(evs []k8stest.PodEvent) int {
		phase := map[string]corev1.PodPhase{}
		for _, ev := range evs {
			phase[ev.Pod.Name] = ev.Pod.Status.Phase
			if ev.Type == watch.Deleted {
				delete(phase, ev.Pod.Name)
			}
		}
		n := 0
		for _, p := range phase {
			if p == corev1.PodRunning {
				n++
			}
		}
		return n
	}
	ticker := clk.Ticker(poll)
	defer ticker.Stop()
	step := func() {
		t.Helper()
		require.NoError(t, r.Step(ctx, clk.Now()))
		select {
		case <-ticker.C:
		case <-ctx.Done():
			t.Fatal("the run took too long")
		}
	}
	for running(rec.Events()) < 4 {
		step()
	}
	require.NoError(t, r.Submit(clk.Now(), high))
	for !r.Done() {
		step()
	}
	for _, end := range r.Ends() {
		assert.Equal(t, multijob.Finished, end.Outcome, "%s: %v", end.Job, end.Err)
	}
	events := rec.Events() // before Close deletes every pod of the run
	checkGangs(t, events, regions)
	var deleted []string
	for _, ev := range events {
		if ev.Type != watch.Deleted {
			continue
		}
		ref, err := rsk8s.RefOf(ev.Pod)
		require.NoError(t, err)
		assert.Equal(t, "low", ref.Job, "%s deleted", ev.Pod.Name)
		assert.Equal(t, corev1.PodRunning, ev.Pod.Status.Phase, "%s was running", ev.Pod.Name)
		deleted = append(deleted, ev.Pod.Name)
	}
	assert.ElementsMatch(t, []string{rsk8s.PodName(rsk8s.TaskRef{Run: g, Job: "low", Task: 0}), rsk8s.PodName(rsk8s.TaskRef{Run: g, Job: "low", Task: 1})}, deleted,
		"low's two first attempts, and nothing else")
	// The trace, as the simulator's: a reclaim before the cancels it
	// causes, and a slot released by the job that held it before another
	// job deploys into it.
	traceMu.Lock()
	defer traceMu.Unlock()
	holder := map[int]string{}
	reclaimed := false
	open := map[[2]string]bool{}
	for i, ev := range trace {
		switch k := [2]string{ev.Job, ev.Task}; ev.Kind {
		case runfile.Request:
			open[k] = true
		case runfile.Withdraw:
			delete(open, k)
		case runfile.Reclaim:
			reclaimed = true
		case runfile.Cancel:
			assert.True(t, reclaimed, "event %d (%+v): a cancel before any reclaim", i, ev)
		case runfile.Deploy:
			delete(open, [2]string{ev.Job, ev.Task})
			if h, ok := holder[ev.Slot]; ok && h != ev.Job {
				assert.Fail(t, "a deploy into a slot another job holds", "event %d (%+v): slot %d held by %s", i, ev, ev.Slot, h)
			}
			holder[ev.Slot] = ev.Job
		case runfile.Release:
			delete(holder, ev.Slot)
		}
	}
	assert.True(t, reclaimed, "the reclaim is traced")
	assert.Empty(t, open, "every request ends in a deploy or a withdrawal")
	require.NoError(t, r.Close(ctx))
	k8stest.NoPodsLeft(t, c, "default", g)
}
