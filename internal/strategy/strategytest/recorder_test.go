package strategytest_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/internal/strategy/strategytest"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// runtimeCalls is what a scheduler calls; Strategy and Recorder both
// provide it, so a Recorder can stand in for the Strategy.
type runtimeCalls interface {
	Start() (strategy.Decisions, error)
	UpdateState(v topology.ExecutionVertexID, attempt strategy.Attempt, to strategy.ExecutionState) (strategy.Decisions, error)
	MarkDeploying(r region.ID) (int, strategy.Decisions, error)
	RegionsToRestart(failed topology.ExecutionVertexID, lost ...topology.ResultPartitionID) ([]region.ID, error)
	Restart(regions []region.ID) (strategy.Decisions, error)
}

var (
	_ runtimeCalls = (*strategy.Strategy)(nil)
	_ runtimeCalls = (*strategytest.Recorder)(nil)
)

// recorderFor returns a recorder over a fresh strategy for the FLIP-119
// job under mode.
func recorderFor(t testing.TB, mode exchange.Mode) *strategytest.Recorder {
	return strategytest.NewRecorder(strategy.New(region.FromJob(testjobs.FLIP119(t), mode)))
}

func TestRecorderRecordsCallsResultsAndErrors(t *testing.T) {
	rec := recorderFor(t, exchange.AllBlocking)
	a0, err := rec.Strategy().Regions().Topology().ParseVertexName("A#0")
	require.NoError(t, err)

	_, err = rec.UpdateState(a0, 0, strategy.TaskFinished)
	require.ErrorIs(t, err, strategy.ErrNotStarted)
	start, err := rec.Start()
	require.NoError(t, err)
	start.Deploy = slices.Clone(start.Deploy) // valid until the next call
	_, err = rec.UpdateState(-1, 0, strategy.TaskRunning)
	require.ErrorIs(t, err, strategy.ErrUnknownVertex)
	finish, err := rec.Report("A#0", strategy.TaskFinished)
	require.NoError(t, err)
	restart, err := rec.RegionsToRestart(a0, -2)
	require.ErrorIs(t, err, strategy.ErrUnknownPartition)
	assert.Nil(t, restart)
	_, err = rec.Restart([]region.ID{99})
	require.ErrorIs(t, err, strategy.ErrUnknownRegion)

	steps := rec.Steps()
	require.Len(t, steps, 6)
	assert.Equal(t, strategytest.Step{Call: "start", Decisions: start}, steps[1])
	assert.Equal(t, strategytest.Step{Call: "A#0 finished", Decisions: finish}, steps[3])
	assert.Equal(t, start.Deploy, rec.Deployed()[:2])
	assert.Equal(t, finish.Deploy, rec.Deployed()[2:])
	assert.Empty(t, rec.Released())
	assert.Equal(t, `A#0 finished: error: strategy: not started
start: deploy {A#0} {A#1}
vertex(-1) running: error: strategy: unknown execution vertex: id -1
A#0 finished: deploy {B#0}
regions to restart for A#0 lost [partition(-2)]: error: strategy: unknown result partition: id -2
restart region(99): error: strategy: unknown region: id 99
`, rec.String())
}

func TestRecorderRecordsMarkDeploying(t *testing.T) {
	rec := recorderFor(t, exchange.AllBlocking)
	_, _, err := rec.MarkDeploying(0)
	require.ErrorIs(t, err, strategy.ErrNotStarted)
	start, err := rec.Start()
	require.NoError(t, err)
	n, _, err := rec.MarkDeploying(start.Deploy[0].Region)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "all blocking: a region of one member")
	n, _, err = rec.MarkDeploying(start.Deploy[0].Region)
	require.NoError(t, err)
	assert.Zero(t, n, "deploying already")
	_, _, err = rec.MarkDeploying(99)
	require.ErrorIs(t, err, strategy.ErrUnknownRegion)

	require.Len(t, rec.Steps(), 5)
	assert.Equal(t, strategytest.Step{Call: "deploying {A#0}", Deploying: 1}, rec.Steps()[2])
	assert.Equal(t, `deploying {A#0}: error: strategy: not started
start: deploy {A#0} {A#1}
deploying {A#0}: 1 member
deploying {A#0}: -
deploying region(99): error: strategy: unknown region: id 99
`, rec.String())
}

func TestRecorderReportUnknownName(t *testing.T) {
	rec := recorderFor(t, exchange.AllBlocking)
	_, err := rec.Start()
	require.NoError(t, err)
	_, err = rec.Report("Z#0", strategy.TaskRunning)
	require.ErrorIs(t, err, topology.ErrUnknownSubtask, "the topology's parse error")
	require.Len(t, rec.Steps(), 2)
	assert.Equal(t, "Z#0 running", rec.Steps()[1].Call)
	assert.Equal(t, err, rec.Steps()[1].Err)
}
