package simulator_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// A stream beside a bounded job: the run is Steady (OK) once the bounded
// job finished, under the admission and the eager policy alike, and the
// stream's JobResult is Steady, not a deadlock.
func TestRunJobsStreamIsSteady(t *testing.T) {
	st, err := topology.NewBuilder("st").AddVertex(topology.JobVertex{ID: "a", Parallelism: 1, Unbounded: true}).Build()
	require.NoError(t, err)
	y, err := topology.NewBuilder("y").AddVertex(topology.JobVertex{ID: "a", Parallelism: 1}).Build()
	require.NoError(t, err)
	for _, policy := range []simulator.Policy{simulator.RegionPolicy, simulator.EagerPolicy} {
		t.Run(policy.String(), func(t *testing.T) {
			res, per, err := simulator.RunJobs(simulator.JobsConfig{Jobs: []runfile.Job{{Name: "st", Job: st}, {Name: "y", Job: y}},
				Cluster: []resource.Count{{N: 2}}, Policy: policy})
			require.NoError(t, err)
			assert.Equal(t, runfile.Steady, res.Verdict, res.Reason)
			assert.True(t, res.Verdict.OK())
			assert.Contains(t, res.Reason, "running: ")
			require.Len(t, per, 2)
			assert.Equal(t, runfile.Steady, per[0].Verdict, per[0].Reason)
			assert.Contains(t, per[0].Reason, "1 unbounded task keeps running")
			assert.Negative(t, per[0].Finished)
			assert.Equal(t, runfile.Finished, per[1].Verdict)
		})
	}
}
