package strategy_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

func TestRegionsToRestart(t *testing.T) {
	allD := []string{"{D#0}", "{D#1}", "{D#2}", "{D#3}"}
	tests := []struct {
		name     string
		mode     exchange.Mode
		finished []string // finished before the failure, in order
		failed   string
		lost     []string
		want     []string
	}{
		{
			name: "all-blocking: the region and its consumers, transitively", mode: exchange.AllBlocking,
			failed: "B#0",
			want:   append([]string{"{B#0}", "{C#0}", "{C#1}"}, allD...),
		},
		{
			name: "all-blocking: available inputs are kept", mode: exchange.AllBlocking,
			finished: []string{"A#0", "A#1", "B#0", "B#1"},
			failed:   "C#0",
			want:     append([]string{"{C#0}"}, allD...),
		},
		{
			name: "all-blocking: a lost input restarts its producer, released inputs of that producer too", mode: exchange.AllBlocking,
			finished: []string{"A#0", "A#1", "B#0", "B#1"}, // A#0->B and A#1->B are released
			failed:   "C#0",
			lost:     []string{"B#0->C"},
			want:     append([]string{"{A#0}", "{B#0}", "{C#0}", "{C#1}"}, allD...),
		},
		{
			name: "all-blocking: a lost partition nobody restarted reads changes nothing", mode: exchange.AllBlocking,
			finished: []string{"A#0", "A#1", "B#0", "B#1"},
			failed:   "C#0",
			lost:     []string{"B#1->C"},
			want:     append([]string{"{C#0}"}, allD...),
		},
		{
			name: "all-blocking: a consumer failing after its inputs were released", mode: exchange.AllBlocking,
			finished: []string{"A#0", "A#1", "B#0", "B#1", "C#0", "C#1", "C#2", "C#3", "D#0"},
			failed:   "D#1",
			lost:     []string{"C#2->D"},
			want:     append([]string{"{A#1}", "{B#1}", "{C#2}", "{C#3}"}, allD...),
		},
		{
			name: "forward-pipelined-only", mode: exchange.ForwardPipelinedOnly,
			failed: "A#1",
			want:   append([]string{"{A#1 B#1}", "{C#2}", "{C#3}"}, allD...),
		},
		{
			name: "pointwise-pipelined-only", mode: exchange.PointwisePipelinedOnly,
			failed: "B#0",
			want:   append([]string{"{A#0 B#0 C#0 C#1}"}, allD...),
		},
		{
			name: "pointwise-pipelined-only: a failed consumer does not restart finished producers", mode: exchange.PointwisePipelinedOnly,
			finished: []string{"A#0", "B#0", "C#0", "C#1", "A#1", "B#1", "C#2", "C#3"},
			failed:   "D#2",
			want:     []string{"{D#2}"},
		},
		{
			name: "all-pipelined", mode: exchange.AllPipelined,
			failed: "C#3",
			want:   []string{"{A#0 A#1 B#0 B#1 C#0 C#1 C#2 C#3 D#0 D#1 D#2 D#3}"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := recorderFor(flip119Job(t), tt.mode)
			s := rec.Strategy()
			_, err := rec.Start()
			require.NoError(t, err)
			for _, name := range tt.finished {
				_, err := rec.Report(name, strategy.TaskFinished)
				require.NoError(t, err, name)
			}
			var lost []topology.ResultPartitionID
			for _, name := range tt.lost {
				lost = append(lost, partitionByName(t, s, name))
			}
			before := snapshot(t, s)
			got, err := rec.RegionsToRestart(vertexByName(t, s, tt.failed), lost...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, regionStrings(s, got))
			assert.Equal(t, before, snapshot(t, s), "RegionsToRestart is a query")
		})
	}
}

// A full failover, as the transcript of a Recorder: C#0 fails after the
// machine that ran B#0 was lost; B#0 must run again, and A#0 too because
// its output to B#0 was already released.
func TestFailoverTranscript(t *testing.T) {
	rec := recorderFor(flip119Job(t), exchange.AllBlocking)
	s := rec.Strategy()
	_, err := rec.Start()
	require.NoError(t, err)
	for _, name := range []string{"A#0", "A#1", "B#0", "B#1", "C#2"} {
		_, err := rec.Report(name, strategy.TaskFinished)
		require.NoError(t, err)
	}
	_, err = rec.Report("C#0", strategy.TaskRunning)
	require.NoError(t, err)
	_, err = rec.Report("C#0", strategy.TaskFailed)
	require.NoError(t, err)
	c0 := vertexByName(t, s, "C#0")
	lost, err := s.BlockingPartitionsOf(vertexByName(t, s, "B#0"))
	require.NoError(t, err)
	restart, err := rec.RegionsToRestart(c0, lost...)
	require.NoError(t, err)
	_, err = rec.Report("C#1", strategy.TaskCanceled)
	require.NoError(t, err)
	_, err = rec.Restart(restart)
	require.NoError(t, err)
	_, err = rec.UpdateState(vertexByName(t, s, "C#1"), 0, strategy.TaskFinished) // late report of the canceled attempt
	require.ErrorIs(t, err, strategy.ErrStaleAttempt)
	for _, name := range []string{"A#0", "B#0", "C#0", "C#3", "C#1", "D#0", "D#1", "D#2", "D#3"} {
		_, err := rec.Report(name, strategy.TaskFinished)
		require.NoError(t, err)
	}
	want := `start: deploy {A#0} {A#1}
A#0 finished: deploy {B#0}
A#1 finished: deploy {B#1}
B#0 finished: deploy {C#0} {C#1}; release A#0->B
B#1 finished: deploy {C#2} {C#3}; release A#1->B
C#2 finished: -
C#0 running: -
C#0 failed: -
regions to restart for C#0 lost [B#0->C]: {A#0} {B#0} {C#0} {C#1} {D#0} {D#1} {D#2} {D#3}
C#1 canceled: -
restart {A#0} {B#0} {C#0} {C#1} {D#0} {D#1} {D#2} {D#3}: deploy {A#0}@1
C#1 finished: error: strategy: event of a superseded attempt: C#1 (id 5) finished in attempt 0, current attempt 1
A#0@1 finished: deploy {B#0}@1
B#0@1 finished: deploy {C#0}@1 {C#1}@1; release A#0->B
C#0@1 finished: -
C#3 finished: release B#1->C
C#1@1 finished: deploy {D#0}@1 {D#1}@1 {D#2}@1 {D#3}@1; release B#0->C
D#0@1 finished: -
D#1@1 finished: -
D#2@1 finished: -
D#3@1 finished: release C#0->D C#1->D C#2->D C#3->D
`
	assert.Equal(t, want, rec.String())
	assert.True(t, s.Finished())
	deployed := rec.Deployed()
	assert.Len(t, deployed, 8+8, "A, B, C in attempt 0; A#0, B#0, C#0, C#1 and every D in attempt 1")
	assert.Len(t, rec.Released(), 2+2+4+1, "A#0->B twice")
	assert.Len(t, rec.Steps(), strings.Count(want, "\n"))
}

// Restarting a region whose output was already released and consumed
// releases the new output again once its consumers finish again.
func TestReleaseAfterRestart(t *testing.T) {
	rec := recorderFor(twoVertexJob(t, 2), exchange.AllBlocking)
	s := rec.Strategy()
	runStepsToEnd(t, rec, []step{
		{do: "start", deploy: []string{"{src#0}", "{src#1}"}},
		{do: "src#0"},
		{do: "src#1", deploy: []string{"{sink#0}", "{sink#1}"}},
		{do: "sink#0"},
		{do: "sink#1", release: []string{"src#0->sink", "src#1->sink"}},
	})
	restart, err := rec.RegionsToRestart(vertexByName(t, s, "sink#1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"{src#0}", "{src#1}", "{sink#0}", "{sink#1}"}, regionStrings(s, restart),
		"both inputs of sink#1 are released: both producers and, through them, sink#0")
	restart, err = rec.RegionsToRestart(vertexByName(t, s, "sink#1"))
	require.NoError(t, err)
	d, err := rec.Restart(restart[1:]) // not src#0: its partition stays released
	require.NoError(t, err)
	assert.Equal(t, []string{"{src#1}"}, deployedStrings(s, d))
	_, err = rec.Report("src#1", strategy.TaskFinished)
	require.NoError(t, err)
	d, err = rec.Report("sink#0", strategy.TaskFinished)
	require.NoError(t, err)
	assert.Empty(t, d.Release, "sink#1 still needs the group")
	d, err = rec.Report("sink#1", strategy.TaskFinished)
	require.NoError(t, err)
	assert.Equal(t, []string{"src#1->sink"}, partitionStrings(s, d.Release), "src#0->sink was released before and is not reported again")
}

func TestLogger(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	s := strategy.New(region.FromJob(flip119Job(t), exchange.AllBlocking), strategy.WithLogger(zap.New(core)))
	d, err := s.Start()
	require.NoError(t, err)
	finishAll(t, s, d)
	assert.Equal(t, 12, logs.FilterMessage("schedule region").Len())
	assert.Equal(t, 1, logs.FilterMessage("strategy started").Len())
	assert.Positive(t, logs.FilterMessage("release partitions").Len())

	restart, err := s.RegionsToRestart(vertexByName(t, s, "A#0"))
	require.NoError(t, err)
	_, err = s.Restart(restart)
	require.NoError(t, err)
	restarts := logs.FilterMessage("restart regions").All()
	require.Len(t, restarts, 1)
	assert.Equal(t, zapcore.InfoLevel, restarts[0].Level)
	assert.Equal(t, int64(len(restart)), restarts[0].ContextMap()["regions"])

	_, err = s.UpdateState(vertexByName(t, s, "A#0"), 0, strategy.TaskFinished)
	require.ErrorIs(t, err, strategy.ErrStaleAttempt)
	assert.Equal(t, 1, logs.FilterMessage("ignoring state report").Len())

	quiet := strategy.New(region.FromJob(flip119Job(t), exchange.AllBlocking), strategy.WithLogger(nil))
	_, err = quiet.Start()
	assert.NoError(t, err, "a nil logger means the default no-op logger")
}

// Restart accepts any set of regions. A producer restarted without its
// consumers: its consumers keep running, and its new partition is released
// as soon as it finishes if they all finished meanwhile.
func TestRestartProducerAlone(t *testing.T) {
	rec := recorderFor(twoVertexJob(t, 2), exchange.AllBlocking)
	s := rec.Strategy()
	runSteps(t, rec, []step{
		{do: "start", deploy: []string{"{src#0}", "{src#1}"}},
		{do: "src#0"},
		{do: "src#1", deploy: []string{"{sink#0}", "{sink#1}"}},
		{do: "sink#0"},
	})
	d, err := rec.Restart([]region.ID{regionByName(t, s, "src#0")})
	require.NoError(t, err)
	assert.Equal(t, []string{"{src#0}"}, deployedStrings(s, d))
	st, err := s.Region(regionByName(t, s, "sink#1"))
	require.NoError(t, err)
	assert.Equal(t, strategy.RegionStatus{State: strategy.RegionScheduled, UnsatisfiedInputs: 1, UnfinishedMembers: 1}, st,
		"sink#1 keeps running; its input counts as unfinished again")

	d, err = rec.Report("sink#1", strategy.TaskFinished)
	require.NoError(t, err)
	assert.Equal(t, []string{"src#1->sink"}, partitionStrings(s, d.Release), "only finished partitions are released")
	d, err = rec.Report("src#0", strategy.TaskFinished)
	require.NoError(t, err)
	assert.Empty(t, d.Deploy, "the consumers are not redeployed: they were not restarted")
	assert.Equal(t, []string{"src#0->sink"}, partitionStrings(s, d.Release), "no consumer is left: released as it finishes")
	assert.True(t, s.Finished())
}
