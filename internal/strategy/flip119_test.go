package strategy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/internal/strategy/strategytest"
	"github.com/regionsched/regionsched/region"
)

// step is one call in a step-by-step test: "start", or a vertex name that
// finishes, with the regions it must deploy and the partitions it must
// release.
type step struct {
	do      string
	deploy  []string
	release []string
}

func runSteps(t *testing.T, rec *strategytest.Recorder, steps []step) {
	t.Helper()
	s := rec.Strategy()
	for i, st := range steps {
		var d strategy.Decisions
		var err error
		if st.do == "start" {
			d, err = rec.Start()
		} else {
			d, err = rec.Report(st.do, strategy.TaskFinished)
		}
		require.NoError(t, err, "step %d (%s)", i, st.do)
		assert.Equal(t, st.deploy, deployedStrings(s, d), "step %d (%s): deployed regions", i, st.do)
		assert.Equal(t, st.release, partitionStrings(s, d.Release), "step %d (%s): released partitions", i, st.do)
	}
}

// runStepsToEnd is runSteps for steps that finish the job.
func runStepsToEnd(t *testing.T, rec *strategytest.Recorder, steps []step) {
	t.Helper()
	runSteps(t, rec, steps)
	assert.True(t, rec.Strategy().Finished(), "every region finished")
}

func TestFLIP119StepByStep(t *testing.T) {
	allC := []string{"C#0->D", "C#1->D", "C#2->D", "C#3->D"}
	allD := []string{"{D#0}", "{D#1}", "{D#2}", "{D#3}"}
	tests := []struct {
		mode  exchange.Mode
		steps []step
	}{
		{exchange.AllBlocking, []step{
			{do: "start", deploy: []string{"{A#0}", "{A#1}"}},
			{do: "A#0", deploy: []string{"{B#0}"}},
			{do: "A#1", deploy: []string{"{B#1}"}},
			{do: "B#0", deploy: []string{"{C#0}", "{C#1}"}, release: []string{"A#0->B"}},
			{do: "B#1", deploy: []string{"{C#2}", "{C#3}"}, release: []string{"A#1->B"}},
			{do: "C#0"},
			{do: "C#1", release: []string{"B#0->C"}},
			{do: "C#2"},
			{do: "C#3", deploy: allD, release: []string{"B#1->C"}},
			{do: "D#0"},
			{do: "D#1"},
			{do: "D#2"},
			{do: "D#3", release: allC},
		}},
		{exchange.ForwardPipelinedOnly, []step{
			{do: "start", deploy: []string{"{A#0 B#0}", "{A#1 B#1}"}},
			{do: "A#0"},
			{do: "A#1"},
			{do: "B#1", deploy: []string{"{C#2}", "{C#3}"}},
			{do: "B#0", deploy: []string{"{C#0}", "{C#1}"}},
			{do: "C#3"},
			{do: "C#2", release: []string{"B#1->C"}},
			{do: "C#1"},
			{do: "C#0", deploy: allD, release: []string{"B#0->C"}},
			{do: "D#3"},
			{do: "D#2"},
			{do: "D#1"},
			{do: "D#0", release: allC},
		}},
		{exchange.PointwisePipelinedOnly, []step{
			{do: "start", deploy: []string{"{A#0 B#0 C#0 C#1}", "{A#1 B#1 C#2 C#3}"}},
			{do: "A#0"},
			{do: "B#0"},
			{do: "C#0"},
			{do: "C#1"},
			{do: "A#1"},
			{do: "B#1"},
			{do: "C#2"},
			{do: "C#3", deploy: allD},
			{do: "D#0"},
			{do: "D#2"},
			{do: "D#1"},
			{do: "D#3", release: allC},
		}},
		{exchange.AllPipelined, []step{
			{do: "start", deploy: []string{"{A#0 A#1 B#0 B#1 C#0 C#1 C#2 C#3 D#0 D#1 D#2 D#3}"}},
			{do: "A#0"}, {do: "A#1"}, {do: "B#0"}, {do: "B#1"},
			{do: "C#0"}, {do: "C#1"}, {do: "C#2"}, {do: "C#3"},
			{do: "D#0"}, {do: "D#1"}, {do: "D#2"}, {do: "D#3"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			runStepsToEnd(t, recorderFor(flip119Job(t), tt.mode), tt.steps)
		})
	}
}

// Every mode, finished in any order region by region, deploys each region
// exactly once, in the FLIP-119 region counts 12/10/6/1.
func TestFLIP119DeploysEveryRegionOnce(t *testing.T) {
	wantRegions := map[exchange.Mode]int{
		exchange.AllBlocking: 12, exchange.ForwardPipelinedOnly: 10,
		exchange.PointwisePipelinedOnly: 6, exchange.AllPipelined: 1,
		exchange.AllHybridFull: 12, exchange.AllHybridSelective: 12,
	}
	for _, mode := range exchange.Modes() {
		t.Run(mode.String(), func(t *testing.T) {
			rec := recorderFor(flip119Job(t), mode)
			s := rec.Strategy()
			d, err := s.Start()
			require.NoError(t, err)
			deployed := finishAll(t, s, d)
			assert.Len(t, deployed, wantRegions[mode])
			seen := map[region.ID]int{}
			for _, r := range deployed {
				seen[r]++
			}
			for r, n := range seen {
				assert.Equal(t, 1, n, "region %d deployed %d times", r, n)
			}
			assert.True(t, s.Finished())
		})
	}
}
