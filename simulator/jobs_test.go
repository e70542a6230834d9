package simulator_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// floodJobs loads the four jobs with drivers of examples/jobs/flood.
func floodJobs(t *testing.T) []simulator.Job {
	t.Helper()
	paths, err := filepath.Glob("../examples/jobs/flood/spark-*.json")
	require.NoError(t, err)
	require.Len(t, paths, 4)
	var jobs []simulator.Job
	for _, p := range paths {
		f, err := os.Open(p)
		require.NoError(t, err)
		g, err := topology.Decode(f)
		require.NoError(t, f.Close())
		require.NoError(t, err)
		jobs = append(jobs, simulator.Job{Name: g.Name(), Job: g})
	}
	return jobs
}

// TestDriverFlood: four jobs with drivers on a cluster that fits one
// driver plus one region. fifo deadlocks with every slot held by a
// driver; stateaware and maxRunningJobs 1 finish all four.
func TestDriverFlood(t *testing.T) {
	run := func(queue admission.QueueConfig) (*simulator.Result, []simulator.JobResult) {
		res, jobs, err := simulator.RunJobs(simulator.JobsConfig{Jobs: floodJobs(t), Mode: exchange.AllBlocking,
			Cluster: []resource.Count{{Profile: resource.Unknown, N: 4}}, Queues: []admission.QueueConfig{queue}, Record: true})
		require.NoError(t, err)
		return res, jobs
	}
	res, jobs := run(admission.QueueConfig{Name: "root.default", Policy: admission.FIFO})
	assert.Equal(t, simulator.Deadlock, res.Verdict, res.Reason)
	assert.Contains(t, res.Reason, "deadlock: ")
	assert.Contains(t, res.Reason, "spark-1:driver, spark-2:driver, spark-3:driver, spark-4:driver hold slots while waiting")
	for _, j := range jobs {
		assert.Equal(t, simulator.Deadlock, j.Verdict, j.Name)
	}

	for _, q := range []admission.QueueConfig{
		{Name: "root.default", Policy: admission.StateAware},
		{Name: "root.default", Policy: admission.FIFO, MaxRunningJobs: 1},
	} {
		res, jobs := run(q)
		require.Equal(t, simulator.Finished, res.Verdict, "%+v: %s", q, res.Reason)
		for _, j := range jobs {
			assert.Equal(t, simulator.Finished, j.Verdict, j.Name)
			assert.Equal(t, admission.JobCompleted, j.State, j.Name)
		}
		// Never two jobs starting at once: a driver is deployed only once
		// the previous job's first region was.
		var driverAt, firstRegionAt []int64
		seen := map[string]bool{}
		for _, ev := range res.Events {
			if ev.Kind != simulator.Deploy {
				continue
			}
			if ev.Task == "driver" {
				driverAt = append(driverAt, ev.At.Milliseconds())
			} else if !seen[ev.Job] {
				seen[ev.Job] = true
				firstRegionAt = append(firstRegionAt, ev.At.Milliseconds())
			}
		}
		require.Len(t, driverAt, 4)
		require.Len(t, firstRegionAt, 4)
		for i := 1; i < 4; i++ {
			assert.GreaterOrEqual(t, driverAt[i], firstRegionAt[i-1], "%+v: driver %d before job %d's first region", q, i, i-1)
		}
	}
}
