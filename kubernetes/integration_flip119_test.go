package kubernetes_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regionsched/regionsched/exchange"
	rsk8s "github.com/regionsched/regionsched/kubernetes"
	"github.com/regionsched/regionsched/kubernetes/internal/k8stest"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
)

// TestIntegrationFLIP119Modes runs FLIP-119's job (examples/jobs/flip119.json,
// tasks of 1 s scaled to 150 ms) in the four exchange modes of growing
// pipelining, each on 4 one-slot KWOK nodes and on exactly as many as its
// regions need at least (region.Regions.MinimumSlots, check's lower
// bound): the job finishes every time, every task's last attempt
// Succeeded on a node of the run (read from the API server), every
// region was bound whole, and no pod is left.
func TestIntegrationFLIP119Modes(t *testing.T) {
	c := k8stest.Client(t)
	t.Parallel()
	for _, mode := range exchange.Modes()[:4] {
		spec := k8stest.JobFile(t, "../examples/jobs/flip119.json", mode)
		for i, nodes := range []int{4, spec.Regions.MinimumSlots()} {
			name := fmt.Sprintf("%s/%d-nodes", mode, nodes)
			if i == 1 {
				name = fmt.Sprintf("%s/minimum-%d-nodes", mode, nodes)
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runFLIP119(t, c, mode, nodes)
			})
		}
	}
}

func runFLIP119(t *testing.T, c kubernetes.Interface, mode exchange.Mode, nodes int) {
	g := group(t)
	spec := k8stest.JobFile(t, "../examples/jobs/flip119.json", mode)
	names := oneSlotNodes(t, c, g, 1, nodes)
	rec := k8stest.Record(t, c, "default", g)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	ends, err := rsk8s.Run(ctx, runConfig(c, g, 0.15, multijob.Config{}), realClock(), poll, spec)
	require.NoError(t, err)
	require.Len(t, ends, 1)
	assert.Equal(t, multijob.Finished, ends[0].Outcome, "%v", ends[0].Err)
	t.Logf("%s on %d nodes: finished in %v", mode, nodes, time.Since(start))
	k8stest.NoPodsLeft(t, c, "default", g)

	events := rec.Stop(t)
	checkGangs(t, events, map[string]*region.Regions{spec.Name: spec.Regions})
	// Every task's latest attempt Succeeded, on one of the run's nodes.
	onNodes := map[string]bool{}
	for _, n := range names {
		onNodes[n] = true
	}
	last := map[int]int{}
	succeeded := map[[2]int]bool{}
	for _, ev := range events {
		ref, err := rsk8s.RefOf(ev.Pod)
		require.NoError(t, err)
		last[int(ref.Task)] = max(last[int(ref.Task)], int(ref.Attempt))
		if ev.Pod.Status.Phase == corev1.PodSucceeded {
			succeeded[[2]int{int(ref.Task), int(ref.Attempt)}] = true
			assert.True(t, onNodes[ev.Pod.Spec.NodeName], "%s ran on %q", ev.Pod.Name, ev.Pod.Spec.NodeName)
		}
	}
	n := spec.Regions.Topology().NumExecutionVertices()
	require.Len(t, last, n, "every task got a pod")
	for task, a := range last {
		assert.True(t, succeeded[[2]int{task, a}], "task %d attempt %d never Succeeded", task, a)
	}
}
