package strategy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

func TestCallsBeforeAndAfterStart(t *testing.T) {
	s := strategy.New(region.FromJob(flip119Job(t), exchange.AllBlocking))
	a0 := vertexByName(t, s, "A#0")

	_, err := s.UpdateState(a0, 0, strategy.TaskRunning)
	assert.ErrorIs(t, err, strategy.ErrNotStarted)
	_, err = s.Restart([]region.ID{0})
	assert.ErrorIs(t, err, strategy.ErrNotStarted)
	assert.False(t, s.Started())

	_, err = s.Start()
	require.NoError(t, err)
	_, err = s.Start()
	assert.ErrorIs(t, err, strategy.ErrAlreadyStarted)
	assert.True(t, s.Started())
}

func TestUnknownIDs(t *testing.T) {
	s := strategy.New(region.FromJob(flip119Job(t), exchange.AllBlocking))
	_, err := s.Start()
	require.NoError(t, err)
	topo := s.Regions().Topology()

	for _, v := range []topology.ExecutionVertexID{-1, topology.ExecutionVertexID(topo.NumExecutionVertices())} {
		var ve *strategy.UnknownVertexError
		_, err := s.UpdateState(v, 0, strategy.TaskRunning)
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, v, ve.Vertex)
		assert.ErrorIs(t, err, strategy.ErrUnknownVertex)
		_, err = s.RegionsToRestart(v)
		assert.ErrorIs(t, err, strategy.ErrUnknownVertex)
		_, err = s.Vertex(v)
		assert.ErrorIs(t, err, strategy.ErrUnknownVertex)
		_, err = s.BlockingPartitionsOf(v)
		assert.ErrorIs(t, err, strategy.ErrUnknownVertex)
	}

	bad := region.ID(s.Regions().NumRegions())
	var re *strategy.UnknownRegionError
	_, err = s.Restart([]region.ID{0, bad})
	require.ErrorAs(t, err, &re)
	assert.Equal(t, bad, re.Region)
	assert.ErrorIs(t, err, strategy.ErrUnknownRegion)
	st, err := s.Region(0)
	require.NoError(t, err)
	assert.Equal(t, strategy.Attempt(0), st.Attempt, "a failed Restart restarts nothing")
	_, err = s.Region(-1)
	assert.ErrorIs(t, err, strategy.ErrUnknownRegion)

	var pe *strategy.UnknownPartitionError
	_, err = s.RegionsToRestart(vertexByName(t, s, "A#0"), 0, topology.ResultPartitionID(topo.NumPartitions()))
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, topology.ResultPartitionID(topo.NumPartitions()), pe.Partition)
	assert.ErrorIs(t, err, strategy.ErrUnknownPartition)
}

func TestInvalidTransitions(t *testing.T) {
	tests := []struct {
		name    string
		vertex  string                    // A#0 is deployed at start, B#0 waits for it
		prepare []strategy.ExecutionState // valid reports before the invalid one
		report  strategy.ExecutionState
		from    strategy.ExecutionState
	}{
		{"finish never deployed", "B#0", nil, strategy.TaskFinished, strategy.TaskCreated},
		{"fail never deployed", "B#0", nil, strategy.TaskFailed, strategy.TaskCreated},
		{"report created", "A#0", nil, strategy.TaskCreated, strategy.TaskScheduled},
		{"report scheduled", "A#0", nil, strategy.TaskScheduled, strategy.TaskScheduled},
		{"unknown state", "A#0", nil, strategy.ExecutionState(42), strategy.TaskScheduled},
		{"deploying twice", "A#0", []strategy.ExecutionState{strategy.TaskDeploying}, strategy.TaskDeploying, strategy.TaskDeploying},
		{"deploying after running", "A#0", []strategy.ExecutionState{strategy.TaskRunning}, strategy.TaskDeploying, strategy.TaskRunning},
		{"running after finished", "A#0", []strategy.ExecutionState{strategy.TaskRunning, strategy.TaskFinished}, strategy.TaskRunning, strategy.TaskFinished},
		{"finished twice", "A#0", []strategy.ExecutionState{strategy.TaskFinished}, strategy.TaskFinished, strategy.TaskFinished},
		{"canceled after failed", "A#0", []strategy.ExecutionState{strategy.TaskFailed}, strategy.TaskCanceled, strategy.TaskFailed},
		{"failed after canceled", "A#0", []strategy.ExecutionState{strategy.TaskCanceled}, strategy.TaskFailed, strategy.TaskCanceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := strategy.New(region.FromJob(flip119Job(t), exchange.AllBlocking))
			_, err := s.Start()
			require.NoError(t, err)
			v := vertexByName(t, s, tt.vertex)
			for _, st := range tt.prepare {
				_, err := s.UpdateState(v, 0, st)
				require.NoError(t, err)
			}
			before := snapshot(t, s)
			d, err := s.UpdateState(v, 0, tt.report)
			var te *strategy.TransitionError
			require.ErrorAs(t, err, &te)
			assert.ErrorIs(t, err, strategy.ErrInvalidTransition)
			assert.Equal(t, strategy.TransitionError{Vertex: v, Name: tt.vertex, From: tt.from, To: tt.report}, *te)
			assert.True(t, d.IsEmpty())
			assert.Equal(t, before, snapshot(t, s), "an invalid report changes nothing")
		})
	}
}

// TestDeployedReports checks WithDeployedReports: running, finished and
// failed are refused from TaskScheduled (a task never deployed), with
// the TransitionError UpdateState gives for any refused report and
// nothing changed; deploying and canceled are still accepted from it, and
// the reports after deploying are as without the option.
func TestDeployedReports(t *testing.T) {
	start := func(t *testing.T, opts ...strategy.Option) (*strategy.Strategy, topology.ExecutionVertexID) {
		s := strategy.New(region.FromJob(flip119Job(t), exchange.AllBlocking), opts...)
		_, err := s.Start()
		require.NoError(t, err)
		return s, vertexByName(t, s, "A#0")
	}
	for _, to := range []strategy.ExecutionState{strategy.TaskRunning, strategy.TaskFinished, strategy.TaskFailed} {
		s, v := start(t, strategy.WithDeployedReports())
		before := snapshot(t, s)
		d, err := s.UpdateState(v, 0, to)
		var te *strategy.TransitionError
		require.ErrorAs(t, err, &te, "report %v", to)
		assert.Equal(t, strategy.TransitionError{Vertex: v, Name: "A#0", From: strategy.TaskScheduled, To: to}, *te)
		assert.True(t, d.IsEmpty())
		assert.Equal(t, before, snapshot(t, s), "a refused report changes nothing")

		plain, pv := start(t)
		_, err = plain.UpdateState(pv, 0, to)
		assert.NoError(t, err, "without the option %v is accepted from scheduled", to)

		_, err = s.UpdateState(v, 0, strategy.TaskDeploying)
		require.NoError(t, err)
		_, err = s.UpdateState(v, 0, to)
		assert.NoError(t, err, "%v after deploying", to)
	}
	s, v := start(t, strategy.WithDeployedReports())
	_, err := s.UpdateState(v, 0, strategy.TaskCanceled)
	assert.NoError(t, err, "canceled from scheduled")
}

// TestMarkDeploying checks that MarkDeploying makes the scheduled members
// of a region deploying, as UpdateState would one by one, leaves a member
// in another state as it is, and refuses calls before Start and unknown
// regions without changing anything.
func TestMarkDeploying(t *testing.T) {
	s := strategy.New(region.FromJob(flip119Job(t), exchange.AllPipelined))
	_, _, err := s.MarkDeploying(0)
	assert.ErrorIs(t, err, strategy.ErrNotStarted)
	d, err := s.Start()
	require.NoError(t, err)
	require.Len(t, d.Deploy, 1, "all pipelined: one region")
	r := d.Deploy[0].Region
	members := s.Regions().Members(r)
	require.Greater(t, len(members), 1)

	_, err = s.UpdateState(members[0], 0, strategy.TaskCanceled)
	require.NoError(t, err)
	before := snapshot(t, s)
	for _, bad := range []region.ID{-1, region.ID(s.Regions().NumRegions())} {
		_, _, err = s.MarkDeploying(bad)
		var ue *strategy.UnknownRegionError
		require.ErrorAs(t, err, &ue)
		assert.Equal(t, bad, ue.Region)
	}
	assert.Equal(t, before, snapshot(t, s), "a refused call changes nothing")

	n, _, err := s.MarkDeploying(r)
	require.NoError(t, err)
	assert.Equal(t, len(members)-1, n, "every member but the canceled one")
	for i, v := range members {
		st, err := s.Vertex(v)
		require.NoError(t, err)
		want := strategy.TaskDeploying
		if i == 0 {
			want = strategy.TaskCanceled
		}
		assert.Equal(t, want, st.State, "member %d", i)
	}
	_, err = s.UpdateState(members[1], 0, strategy.TaskRunning)
	assert.NoError(t, err, "deploying, then running")
	n, _, err = s.MarkDeploying(r)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing scheduled is left")
}

// TestMarkDeployingOneMember checks MarkDeploying on regions of one
// member (their member's state is kept with the region): a scheduled
// member becomes deploying once, a canceled one and one of a region not
// scheduled yet stay as they are.
func TestMarkDeployingOneMember(t *testing.T) {
	s := strategy.New(region.FromJob(flip119Job(t), exchange.AllBlocking))
	d, err := s.Start()
	require.NoError(t, err)
	require.Greater(t, len(d.Deploy), 1, "all blocking: a region per source subtask")
	state := func(r region.ID) strategy.ExecutionState {
		t.Helper()
		v, one := s.Regions().OnlyMember(r)
		require.True(t, one, "region %d has one member", r)
		st, err := s.Vertex(v)
		require.NoError(t, err)
		return st.State
	}
	scheduled, canceled := d.Deploy[0].Region, d.Deploy[1].Region
	n, _, err := s.MarkDeploying(scheduled)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, strategy.TaskDeploying, state(scheduled))
	n, _, err = s.MarkDeploying(scheduled)
	require.NoError(t, err)
	assert.Zero(t, n, "deploying already")
	assert.Equal(t, strategy.TaskDeploying, state(scheduled))

	v, _ := s.Regions().OnlyMember(canceled)
	_, err = s.UpdateState(v, 0, strategy.TaskCanceled)
	require.NoError(t, err)
	n, _, err = s.MarkDeploying(canceled)
	require.NoError(t, err)
	assert.Zero(t, n, "canceled")
	assert.Equal(t, strategy.TaskCanceled, state(canceled))

	waiting := region.ID(s.Regions().NumRegions() - 1) // a sink: its inputs are not finished
	st, err := s.Region(waiting)
	require.NoError(t, err)
	require.Equal(t, strategy.RegionWaiting, st.State)
	n, _, err = s.MarkDeploying(waiting)
	require.NoError(t, err)
	assert.Zero(t, n, "not scheduled")
	assert.Equal(t, strategy.TaskCreated, state(waiting))
}

// statuses is the status of every region and vertex of a strategy.
type statuses struct {
	regions  []strategy.RegionStatus
	vertices []strategy.VertexStatus
}

// snapshot returns the status of every region and vertex.
func snapshot(t *testing.T, s *strategy.Strategy) statuses {
	t.Helper()
	rs := make([]strategy.RegionStatus, s.Regions().NumRegions())
	for r := range rs {
		st, err := s.Region(region.ID(r))
		require.NoError(t, err)
		rs[r] = st
	}
	vs := make([]strategy.VertexStatus, s.Regions().Topology().NumExecutionVertices())
	for v := range vs {
		st, err := s.Vertex(topology.ExecutionVertexID(v))
		require.NoError(t, err)
		vs[v] = st
	}
	return statuses{rs, vs}
}

// A late "finished" of a canceled attempt must not complete the partition
// of the new attempt: the consumers stay waiting until the new attempt
// finishes.
func TestStaleEventsAreIgnored(t *testing.T) {
	s := strategy.New(region.FromJob(flip119Job(t), exchange.AllBlocking))
	_, err := s.Start()
	require.NoError(t, err)
	for _, name := range []string{"A#0", "A#1"} {
		_, err := s.UpdateState(vertexByName(t, s, name), 0, strategy.TaskFinished)
		require.NoError(t, err)
	}
	b1 := vertexByName(t, s, "B#1")
	_, err = s.UpdateState(b1, 0, strategy.TaskRunning)
	require.NoError(t, err)
	_, err = s.UpdateState(b1, 0, strategy.TaskFailed)
	require.NoError(t, err)

	restart, err := s.RegionsToRestart(b1)
	require.NoError(t, err)
	assert.Equal(t, []string{"{B#1}", "{C#2}", "{C#3}", "{D#0}", "{D#1}", "{D#2}", "{D#3}"}, regionStrings(s, restart))
	d, err := s.Restart(restart)
	require.NoError(t, err)
	assert.Equal(t, []strategy.Deployment{{Region: regionByName(t, s, "B#1"), Attempt: 1}}, d.Deploy, "A#1 finished: B#1 runs again at once")

	before := snapshot(t, s)
	for _, st := range []strategy.ExecutionState{strategy.TaskFinished, strategy.TaskRunning, strategy.TaskCanceled, strategy.TaskFailed, strategy.TaskDeploying} {
		d, err := s.UpdateState(b1, 0, st)
		var ae *strategy.AttemptError
		require.ErrorAs(t, err, &ae)
		assert.ErrorIs(t, err, strategy.ErrStaleAttempt)
		assert.Equal(t, strategy.AttemptError{Vertex: b1, Name: "B#1", State: st, Attempt: 0, Current: 1}, *ae)
		assert.True(t, d.IsEmpty())
	}
	assert.Equal(t, before, snapshot(t, s), "stale reports change nothing")
	c2, err := s.Region(regionByName(t, s, "C#2"))
	require.NoError(t, err)
	assert.Equal(t, strategy.RegionStatus{State: strategy.RegionWaiting, Attempt: 1, UnsatisfiedInputs: 1, UnfinishedMembers: 1}, c2)

	for _, attempt := range []strategy.Attempt{2, -1} {
		_, err = s.UpdateState(b1, attempt, strategy.TaskFinished)
		assert.ErrorIs(t, err, strategy.ErrUnknownAttempt)
		assert.NotErrorIs(t, err, strategy.ErrStaleAttempt)
	}

	d, err = s.UpdateState(b1, 1, strategy.TaskFinished)
	require.NoError(t, err)
	assert.Equal(t, []strategy.Deployment{
		{Region: regionByName(t, s, "C#2"), Attempt: 1},
		{Region: regionByName(t, s, "C#3"), Attempt: 1},
	}, d.Deploy)
	assert.Equal(t, []string{"A#1->B"}, partitionStrings(s, d.Release))
}

// Canceling a region that was never deployed is allowed (a runtime
// cancels everything in the restart set); Restart then starts it anew.
func TestCancelWaitingRegion(t *testing.T) {
	s := strategy.New(region.FromJob(flip119Job(t), exchange.AllBlocking))
	_, err := s.Start()
	require.NoError(t, err)
	b0 := vertexByName(t, s, "B#0")
	_, err = s.UpdateState(b0, 0, strategy.TaskCanceled)
	require.NoError(t, err)
	st, err := s.Vertex(b0)
	require.NoError(t, err)
	assert.Equal(t, strategy.VertexStatus{State: strategy.TaskCanceled, Attempt: 0}, st)

	d, err := s.Restart([]region.ID{s.Regions().RegionOf(b0), s.Regions().RegionOf(b0)})
	require.NoError(t, err)
	assert.True(t, d.IsEmpty(), "B#0 still waits for A#0")
	st, err = s.Vertex(b0)
	require.NoError(t, err)
	assert.Equal(t, strategy.VertexStatus{State: strategy.TaskCreated, Attempt: 1}, st, "duplicates restart once")

	d, err = s.UpdateState(vertexByName(t, s, "A#0"), 0, strategy.TaskFinished)
	require.NoError(t, err)
	assert.Equal(t, []strategy.Deployment{{Region: s.Regions().RegionOf(b0), Attempt: 1}}, d.Deploy)
}
