package kubernetes_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	rsk8s "github.com/regionsched/regionsched/kubernetes"
	"github.com/regionsched/regionsched/kubernetes/internal/k8stest"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// benchJob is one of the benchmark's 20 jobs: 250 tasks of 1 s, source
// -forward-> map -hash-> sink; pointwise-pipelined-only makes each
// source#i and map#i one region of two pods sharing a slot, and each
// sink#j a region of its own.
const benchJob = `{"name": "job-%02d", "vertices": [
  {"id": "source", "parallelism": 100, "durationMs": 1000},
  {"id": "map", "parallelism": 100, "durationMs": 1000},
  {"id": "sink", "parallelism": 50, "durationMs": 1000}],
 "edges": [{"source": "source", "target": "map", "shipStrategy": "forward"},
           {"source": "map", "target": "sink", "shipStrategy": "hash"}]}`

// BenchmarkIntegrationRun200Nodes5000Pods runs 20 jobs of 250 tasks (5,000
// pods) on 200 one-slot KWOK nodes through the API server under a fifo
// queue, and the same jobs in the simulator on 200 slots. It reports the
// pods bound per second (from the first binding to the last, read from a
// watch of the run's pods), the run's makespan (until its last job
// ended), the simulator's, their ratio, and the wall time of Run (the
// deletion of the 5,000 pods at its end included). Not run by go test without -bench (it needs the control
// plane of make k8s-up and about a minute):
//
//	go test -run '^$' -bench BenchmarkIntegrationRun200Nodes5000Pods -benchtime 1x ./kubernetes/
func BenchmarkIntegrationRun200Nodes5000Pods(b *testing.B) {
	const nodes, jobs = 200, 20
	mode := exchange.PointwisePipelinedOnly
	var specs []multijob.JobSpec
	var simJobs []runfile.Job
	pods := 0
	for i := range jobs {
		js := fmt.Sprintf(benchJob, i)
		spec := k8stest.Job(b, js, mode)
		specs = append(specs, spec)
		pods += spec.Regions.Topology().NumExecutionVertices()
		g, err := topology.DecodeBytes([]byte(js))
		require.NoError(b, err)
		simJobs = append(simJobs, runfile.Job{Name: g.Name(), Job: g})
	}
	require.Equal(b, 5000, pods)

	res, _, err := simulator.RunJobs(simulator.JobsConfig{Jobs: simJobs, Mode: mode,
		Cluster: []resource.Count{{Profile: resource.Unknown, N: nodes}}, DefaultPolicy: admission.FIFO})
	require.NoError(b, err)
	require.Equal(b, runfile.Finished, res.Verdict, res.Reason)

	c := k8stest.Client(b)
	g := fmt.Sprintf("%s-bench", k8stest.Prefix())
	var ns []k8stest.Node
	for i := range nodes {
		ns = append(ns, k8stest.Node{Name: fmt.Sprintf("%s-n%03d", g, i), CPU: "1", Memory: "1Gi", Pods: "110", Group: g})
	}
	k8stest.FakeNodes(b, c, ns...)
	b.ResetTimer()
	for n := range b.N {
		run := fmt.Sprintf("%s-%d", g, n)
		rec := k8stest.Record(b, c, "default", run)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		start := time.Now()
		ends, err := rsk8s.Run(ctx, rsk8s.RunnerConfig{Client: c, Run: run, Shape: slotShape, NodeSelector: k8stest.Selector(g),
			Jobs: multijob.Config{Admission: admission.Config{DefaultPolicy: admission.FIFO}}}, realClock(), 100*time.Millisecond, specs...)
		wall := time.Since(start) // with the deletion of the run's pods
		cancel()
		require.Len(b, ends, jobs, "%v", err)
		var makespan time.Duration // until the last job ended
		for _, end := range ends {
			require.Equal(b, multijob.Finished, end.Outcome, "%s: %v", end.Job, end.Err)
			makespan = max(makespan, end.At.Sub(start))
		}
		bound := boundTimes(rec.Stop(b))
		require.Len(b, bound, pods, "every pod bound once")
		span := bound[len(bound)-1].Sub(bound[0]).Seconds()
		b.ReportMetric(float64(len(bound))/span, "pods-bound/s")
		b.ReportMetric(makespan.Seconds(), "makespan-s")
		b.ReportMetric(res.Makespan.Seconds(), "sim-makespan-s")
		b.ReportMetric(makespan.Seconds()/res.Makespan.Seconds(), "makespan/sim")
		b.ReportMetric(wall.Seconds(), "wall-s")
		require.NoError(b, err)
		k8stest.NoPodsLeft(b, c, "default", run)
	}
}

// boundTimes returns when each pod was first seen bound, sorted.
func boundTimes(events []k8stest.PodEvent) []time.Time {
	first := map[string]time.Time{}
	for _, ev := range events {
		if ev.Type == watch.Deleted || ev.Pod.Spec.NodeName == "" {
			continue
		}
		if _, ok := first[ev.Pod.Name]; !ok {
			first[ev.Pod.Name] = ev.At
		}
	}
	out := make([]time.Time, 0, len(first))
	for _, t := range first {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}
