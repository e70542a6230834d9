package kubernetes_test

import (
	"cmp"
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	rsk8s "github.com/regionsched/regionsched/kubernetes"
	"github.com/regionsched/regionsched/kubernetes/internal/k8stest"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// runFloodJobs runs the driver flood's job files through RunJobs (as
// "regionsched run --kubernetes" does) on 4 one-slot KWOK nodes under a
// queue policy, its tasks and drivers' startups scaled by floodScale.
func runFloodJobs(t *testing.T, policy admission.Policy) (rsk8s.JobsResult, []runfile.Event) {
	c := k8stest.Client(t)
	g := group(t)
	oneSlotNodes(t, c, g, 1, 4)
	var jobs []runfile.Job
	for _, f := range floodFiles() {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		job, err := topology.DecodeBytes(data)
		require.NoError(t, err)
		jobs = append(jobs, runfile.Job{Name: job.Name(), Job: job})
	}
	var trace []runfile.Event
	cfg := rsk8s.JobsConfig{
		Runner: runConfig(c, g, floodScale, multijob.Config{Admission: admission.Config{DefaultPolicy: policy}}),
		Mode:   exchange.AllBlocking,
		Trace:  func(ev runfile.Event) { trace = append(trace, ev) },
		Poll:   poll,
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := rsk8s.RunJobs(ctx, cfg, realClock(), jobs...)
	require.NoError(t, err)
	t.Logf("the flood through RunJobs under %s: %v", policy, res.Stopped)
	k8stest.NoPodsLeft(t, c, "default", g)
	return res, trace
}

// TestIntegrationFloodRunJobsFIFODeadlocks: the flood's job files through
// RunJobs under fifo: the four drivers' pods take the four nodes and the
// run stops on the deadlock the simulator reports (the same jobs, the
// same drivers holding slots, the same tasks waiting); no task's pod was
// ever bound.
func TestIntegrationFloodRunJobsFIFODeadlocks(t *testing.T) {
	t.Parallel()
	res, trace := runFloodJobs(t, admission.FIFO)
	var de *rsk8s.DeadlockError
	require.ErrorAs(t, res.Stopped, &de)
	sim, _ := simulateFlood(t, admission.FIFO)
	require.Equal(t, runfile.Deadlock, sim.Verdict, sim.Reason)
	assert.Equal(t, []string{"spark-1", "spark-2", "spark-3", "spark-4"}, de.Jobs)
	assert.ElementsMatch(t, sim.Holding, de.Holding, "what holds slots: %s", sim.Reason)
	assert.ElementsMatch(t, sim.Waiting, de.Waiting, "what waits for a slot: %s", sim.Reason)
	drivers := 0
	for _, ev := range trace {
		if ev.Kind == runfile.Deploy {
			require.Equal(t, runfile.DriverTask, ev.Task, "only drivers are deployed: %+v", ev)
			drivers++
		}
	}
	assert.Equal(t, 4, drivers)
	for _, jr := range res.Jobs {
		assert.ErrorIs(t, jr.Err, rsk8s.ErrDeadlock, jr.Name)
	}
}

// TestIntegrationFloodRunJobsStateAwareFinishes: the same under
// stateaware: all four jobs finish in the simulator's order, and the
// trace has each driver's deploy, finish and release.
func TestIntegrationFloodRunJobsStateAwareFinishes(t *testing.T) {
	t.Parallel()
	res, trace := runFloodJobs(t, admission.StateAware)
	require.NoError(t, res.Stopped)
	ended := slices.Clone(res.Jobs)
	for _, jr := range ended {
		assert.NoError(t, jr.Err, jr.Name)
	}
	slices.SortStableFunc(ended, func(a, b rsk8s.JobResult) int { return cmp.Compare(a.End, b.End) })
	_, sim := simulateFlood(t, admission.StateAware)
	slices.SortStableFunc(sim, func(a, b simulator.JobResult) int { return cmp.Compare(a.Finished, b.Finished) })
	var order, simOrder []string
	for i := range ended {
		order = append(order, ended[i].Name)
		simOrder = append(simOrder, sim[i].Name)
	}
	assert.Equal(t, simOrder, order, "the jobs finish in the simulator's order")
	drivers := map[string][]runfile.Kind{}
	for _, ev := range trace {
		if ev.Task == runfile.DriverTask && ev.Region == runfile.NoRegion {
			drivers[ev.Job] = append(drivers[ev.Job], ev.Kind)
		}
	}
	require.Len(t, drivers, 4)
	for job, kinds := range drivers {
		assert.Equal(t, []runfile.Kind{runfile.Deploy, runfile.Finish, runfile.Release}, kinds, job)
	}
}
