package kubernetes_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	rsk8s "github.com/regionsched/regionsched/kubernetes"
	"github.com/regionsched/regionsched/kubernetes/internal/k8stest"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// floodScale scales the flood's task durations and drivers' startups.
const floodScale = 0.2

// floodFiles are the four jobs of the driver flood (examples/jobs/flood).
func floodFiles() []string {
	var out []string
	for i := 1; i <= 4; i++ {
		out = append(out, fmt.Sprintf("../examples/jobs/flood/spark-%d.json", i))
	}
	return out
}

// runFlood runs the driver flood on 4 one-slot KWOK nodes under a queue
// policy, recording its pods.
func runFlood(t *testing.T, policy admission.Policy) ([]multijob.JobEnd, []k8stest.PodEvent, map[string]*region.Regions, error) {
	c := k8stest.Client(t)
	g := group(t)
	oneSlotNodes(t, c, g, 1, 4)
	var specs []multijob.JobSpec
	regions := map[string]*region.Regions{}
	for _, f := range floodFiles() {
		spec := k8stest.JobFile(t, f, exchange.AllBlocking)
		specs = append(specs, spec)
		regions[spec.Name] = spec.Regions
	}
	cfg := runConfig(c, g, floodScale, multijob.Config{Admission: admission.Config{DefaultPolicy: policy}})
	cfg.DriverStartup = func(string) time.Duration { return time.Duration(float64(time.Second) * floodScale) }
	rec := k8stest.Record(t, c, "default", g)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	ends, err := rsk8s.Run(ctx, cfg, realClock(), poll, specs...)
	t.Logf("the flood under %s: %v after %v", policy, err, time.Since(start))
	k8stest.NoPodsLeft(t, c, "default", g)
	return ends, rec.Stop(t), regions, err
}

// simulateFlood runs the driver flood in the simulator on 4 slots.
func simulateFlood(t *testing.T, policy admission.Policy) (*simulator.Result, []simulator.JobResult) {
	var jobs []runfile.Job
	for _, f := range floodFiles() {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		g, err := topology.DecodeBytes(data)
		require.NoError(t, err)
		jobs = append(jobs, runfile.Job{Name: g.Name(), Job: g})
	}
	res, jr, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Mode: exchange.AllBlocking,
		Cluster: []resource.Count{{Profile: resource.Unknown, N: 4}}, DefaultPolicy: policy})
	require.NoError(t, err)
	return res, jr
}

// TestIntegrationFloodFIFODeadlocks: under fifo queues the four drivers
// take the four nodes and no job ever gets its first region. The run
// says so as the simulator does (the same jobs stuck, the drivers holding
// slots, the same tasks waiting), and leaves no pod: the API server saw
// the four drivers' pods, one per node, and not one task's.
func TestIntegrationFloodFIFODeadlocks(t *testing.T) {
	t.Parallel()
	ends, events, _, err := runFlood(t, admission.FIFO)
	var de *rsk8s.DeadlockError
	require.ErrorAs(t, err, &de)
	assert.Empty(t, ends, "no job ended")

	res, _ := simulateFlood(t, admission.FIFO)
	require.Equal(t, runfile.Deadlock, res.Verdict, res.Reason)
	assert.Equal(t, []string{"spark-1", "spark-2", "spark-3", "spark-4"}, de.Jobs)
	assert.ElementsMatch(t, res.Holding, de.Holding, "what holds slots: %s", res.Reason)
	assert.ElementsMatch(t, res.Waiting, de.Waiting, "what waits for a slot: %s", res.Reason)
	t.Logf("run:       %v", err)
	t.Logf("simulator: %s", res.Reason)

	nodes := map[string]string{}
	for _, ev := range events {
		require.True(t, rsk8s.IsDriver(ev.Pod), "a task's pod %s was created", ev.Pod.Name)
		if n := ev.Pod.Spec.NodeName; n != "" && ev.Type != watch.Deleted {
			nodes[ev.Pod.Name] = n
		}
	}
	assert.Len(t, nodes, 4, "four drivers bound")
	distinct := map[string]bool{}
	for _, n := range nodes {
		distinct[n] = true
	}
	assert.Len(t, distinct, 4, "one driver per node: %v", nodes)
}

// TestIntegrationFloodStateAwareFinishes: under stateaware queues only one
// job starts at a time, and all four finish, as in the simulator; every
// region was bound whole, and at most two drivers ever ran at once (the
// running job's and the next one's).
func TestIntegrationFloodStateAwareFinishes(t *testing.T) {
	t.Parallel()
	ends, events, regions, err := runFlood(t, admission.StateAware)
	require.NoError(t, err)
	require.Len(t, ends, 4)
	for _, end := range ends {
		assert.Equal(t, multijob.Finished, end.Outcome, "%s: %v", end.Job, end.Err)
	}
	res, jr := simulateFlood(t, admission.StateAware)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	order := make([]string, len(ends))
	for i, end := range ends {
		order[i] = end.Job
	}
	slices.SortStableFunc(jr, func(a, b simulator.JobResult) int { return cmp.Compare(a.Finished, b.Finished) })
	var simOrder []string
	for _, j := range jr {
		simOrder = append(simOrder, j.Name)
	}
	assert.Equal(t, simOrder, order, "the jobs finish in the simulator's order")
	checkGangs(t, events, regions)

	running := map[string]bool{}
	most := 0
	for _, ev := range events {
		if !rsk8s.IsDriver(ev.Pod) {
			continue
		}
		running[ev.Pod.Name] = ev.Type != watch.Deleted
		n := 0
		for _, r := range running {
			if r {
				n++
			}
		}
		most = max(most, n)
	}
	assert.Len(t, running, 4, "four drivers ran")
	assert.LessOrEqual(t, most, 2, "stateaware: drivers at once")
}
