package kubernetes_test

import (
	"context"
	"errors"
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
)

// TestIntegrationTwoJobsNoPartialRegion: two copies of FLIP-119's job
// compete for 5 one-slot nodes, one all-pipelined (a region of 12 pods in
// 4 slots), one pointwise-pipelined-only (regions of 4 pods in 2 slots),
// under a fair-share queue. A watch of the run's pods, over the whole
// run, shows every region attempt's pods bound whole (checkGangs), never
// part of a region left bound, and never two pods requesting a slot
// running at once on a node of one slot.
func TestIntegrationTwoJobsNoPartialRegion(t *testing.T) {
	c := k8stest.Client(t)
	t.Parallel()
	g := group(t)
	oneSlotNodes(t, c, g, 1, 5)
	wide := k8stest.JobFile(t, "../examples/jobs/flip119.json", exchange.AllPipelined)
	wide.Name = "wide"
	narrow := k8stest.JobFile(t, "../examples/jobs/flip119.json", exchange.PointwisePipelinedOnly)
	narrow.Name = "narrow"
	rec := k8stest.Record(t, c, "default", g)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ends, err := rsk8s.Run(ctx, runConfig(c, g, 0.2, multijob.Config{Admission: admission.Config{DefaultPolicy: admission.FairShare}}),
		realClock(), poll, wide, narrow)
	require.NoError(t, err)
	require.Len(t, ends, 2)
	for _, end := range ends {
		assert.Equal(t, multijob.Finished, end.Outcome, "%s: %v", end.Job, end.Err)
	}
	k8stest.NoPodsLeft(t, c, "default", g)

	events := rec.Stop(t)
	gangs := checkGangs(t, events, map[string]*region.Regions{"wide": wide.Regions, "narrow": narrow.Regions})
	perJob := map[string]int{}
	for a, series := range gangs {
		perJob[a.job]++
		t.Logf("%s: pods bound after each change %v", a, series)
	}
	assert.Equal(t, wide.Regions.NumRegions(), perJob["wide"], "every region of wide was bound")
	assert.Equal(t, narrow.Regions.NumRegions(), perJob["narrow"], "every region of narrow was bound")

	// Per node, the pods that request its one slot and have not ended.
	occupying := map[string]map[string]bool{}
	for _, ev := range events {
		p := ev.Pod
		if p.Spec.NodeName == "" || p.Spec.Containers[0].Resources.Requests.Cpu().IsZero() {
			continue
		}
		if occupying[p.Spec.NodeName] == nil {
			occupying[p.Spec.NodeName] = map[string]bool{}
		}
		live := ev.Type != watch.Deleted && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
		occupying[p.Spec.NodeName][p.Name] = live
		n := 0
		for _, l := range occupying[p.Spec.NodeName] {
			if l {
				n++
			}
		}
		assert.LessOrEqual(t, n, 1, "node %s: pods holding its slot at once: %v", p.Spec.NodeName, occupying[p.Spec.NodeName])
	}
}

// TestIntegrationRegionTooLargeRefused: FLIP-119's job all-pipelined needs
// 4 slots at once; on 3 nodes its run refuses it at once, with an
// *admission.RejectedError naming the region, and creates no pod.
func TestIntegrationRegionTooLargeRefused(t *testing.T) {
	c := k8stest.Client(t)
	t.Parallel()
	g := group(t)
	oneSlotNodes(t, c, g, 1, 3)
	spec := k8stest.JobFile(t, "../examples/jobs/flip119.json", exchange.AllPipelined)
	rec := k8stest.Record(t, c, "default", g)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	ends, err := rsk8s.Run(ctx, runConfig(c, g, 1, multijob.Config{}), realClock(), poll, spec)
	took := time.Since(start)
	require.NoError(t, err)
	require.Len(t, ends, 1)
	assert.Equal(t, multijob.Rejected, ends[0].Outcome)
	var re *admission.RejectedError
	require.True(t, errors.As(ends[0].Err, &re), "%T %v", ends[0].Err, ends[0].Err)
	assert.Equal(t, spec.Name, re.Job)
	assert.Contains(t, re.Reason, "needs 4 slots at once")
	assert.Less(t, took, 2*time.Second, "refused at once")
	t.Logf("refused in %v: %v", took, ends[0].Err)
	assert.Empty(t, rec.Stop(t), "no pod was created")
	k8stest.NoPodsLeft(t, c, "default", g)
}
