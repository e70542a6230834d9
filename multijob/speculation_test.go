package multijob_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// onlyCluster is a Cluster that does not say it grants speculative asks
// (as a Slurm cluster does not).
type onlyCluster struct{ admission.Cluster }

// Submit refuses an invalid speculation setting, or speculation for a job
// without a speculable task, with the scheduler's *SpeculationError; and
// speculation over a cluster that does not grant speculative asks with
// ErrSpeculationCluster. Nothing is submitted then.
func TestSubmitSpeculationRefused(t *testing.T) {
	b := topology.NewBuilder("p")
	b.AddVertex(topology.JobVertex{ID: "a", Parallelism: 2})
	b.AddVertex(topology.JobVertex{ID: "b", Parallelism: 2})
	b.Connect("a", "b", exchange.Hash)
	g, err := b.Build()
	require.NoError(t, err)
	pipelined := region.FromJob(g, exchange.AllPipelined)
	blocking := region.FromJob(g, exchange.AllBlocking)
	now := time.Unix(0, 0)

	q, err := admission.New(admission.Config{Slots: slotpool.Slots(4)})
	require.NoError(t, err)
	s, err := multijob.New(multijob.Config{Admission: admission.Config{Slots: slotpool.Slots(4)}})
	require.NoError(t, err)

	bad := scheduler.DefaultSpeculation()
	bad.BaselineRatio = 2
	var se *scheduler.SpeculationError
	err = s.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "bad"}, Regions: blocking, Speculation: bad})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "BaselineRatio", se.Field)
	var je *multijob.JobError
	require.ErrorAs(t, err, &je)
	assert.Equal(t, "bad", je.Job)

	err = s.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "none"}, Regions: pipelined, Speculation: scheduler.DefaultSpeculation()})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "Enabled", se.Field)
	assert.Empty(t, s.Jobs())

	require.NoError(t, s.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "ok"}, Regions: blocking, Speculation: scheduler.DefaultSpeculation()}))

	other, err := multijob.New(multijob.Config{Cluster: onlyCluster{q}})
	require.NoError(t, err)
	err = other.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "x"}, Regions: blocking, Speculation: scheduler.DefaultSpeculation()})
	require.ErrorIs(t, err, multijob.ErrSpeculationCluster)
	assert.Empty(t, other.Jobs())
	require.NoError(t, other.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "x"}, Regions: blocking}), "without speculation it runs there")
}
