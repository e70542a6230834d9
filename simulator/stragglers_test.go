package simulator_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// stragglerRun is the benchmark's run: examples/jobs/stragglers.json
// (three all-to-all stages of 80 subtasks of 60 s, all-blocking) on 80
// slots, 5% of attempts 10x slow, with Flink's speculation defaults.
func stragglerRun(tb testing.TB, seed uint64) simulator.Config {
	job := testjobs.Load(tb, "stragglers.json")
	return simulator.Config{
		Regions:     region.FromJob(job, exchange.AllBlocking),
		Cluster:     []resource.Count{{Profile: resource.Unknown, N: 80}},
		Seed:        seed,
		Stragglers:  0.05,
		Speculation: scheduler.DefaultSpeculation(),
	}
}

// speculationSeeds are the benchmark's fixed seeds.
const speculationSeeds = 20

// speculationFigures runs the straggler benchmark's random seeds with
// and without speculation: the makespan cut and the extra slot time, in
// percent of the runs without, summed over all its runs.
func speculationFigures(tb testing.TB) (cut, extra float64, won, started int) {
	return compareFigures(tb, stragglerRun)
}

// compareFigures is speculationFigures of the runs config makes.
func compareFigures(tb testing.TB, config func(testing.TB, uint64) simulator.Config) (cut, extra float64, won, started int) {
	var with, without, slotWith, slotWithout time.Duration
	for seed := range uint64(speculationSeeds) {
		w, wo, err := simulator.CompareSpeculation(config(tb, seed+1))
		require.NoError(tb, err)
		require.Equal(tb, runfile.Finished, w.Verdict, w.Reason)
		require.Equal(tb, runfile.Finished, wo.Verdict, wo.Reason)
		with += w.Makespan
		without += wo.Makespan
		slotWith += w.SlotTime
		slotWithout += wo.SlotTime
		won += w.Speculation.Won
		started += w.Speculation.Started
	}
	cut = 100 * float64(without-with) / float64(without)
	extra = 100 * float64(slotWith-slotWithout) / float64(slotWithout)
	return cut, extra, won, started
}

// TestSpeculationCutsStragglersMakespan: with 5% of attempts 10x slow,
// speculation cuts the makespan by at least 40% against none, at no more
// than 10% extra slot time (docs/performance.md).
func TestSpeculationCutsStragglersMakespan(t *testing.T) {
	cut, extra, won, started := speculationFigures(t)
	t.Logf("makespan cut %.1f%%, extra slot time %.1f%%, %d of %d speculative attempts won", cut, extra, won, started)
	assert.GreaterOrEqual(t, cut, 40.0)
	assert.LessOrEqual(t, extra, 10.0)
	assert.Positive(t, won)
}

// BenchmarkSpeculation reports the figures of docs/performance.md: the
// makespan cut and the extra slot time of speculation against none, and
// the time to simulate both runs of all, side by side on 20 fixed seeds:
// the straggler benchmark (all-blocking), and the TPC-DS-like job in
// all-hybrid-full (tpcdsSpeculationRun), whose consumers of speculable
// producers read their results only once finished.
func BenchmarkSpeculation(b *testing.B) {
	for _, bc := range []struct {
		name   string
		config func(testing.TB, uint64) simulator.Config
	}{
		{"stragglers-5pct-x10", stragglerRun},
		{"tpcds-q3-all-hybrid-full-5pct-x10", tpcdsSpeculationRun},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var cut, extra float64
			for b.Loop() {
				cut, extra, _, _ = compareFigures(b, bc.config)
			}
			b.ReportMetric(cut, "%makespan-cut")
			b.ReportMetric(extra, "%extra-slot-time")
		})
	}
}

func TestStragglersAreSeededAndSharedWithTheRunWithout(t *testing.T) {
	cfg := stragglerRun(t, 3)
	a, aw, err := simulator.CompareSpeculation(cfg)
	require.NoError(t, err)
	b, bw, err := simulator.CompareSpeculation(cfg)
	require.NoError(t, err)
	assert.Equal(t, a.Makespan, b.Makespan, "same seed, same run")
	assert.Equal(t, aw.Makespan, bw.Makespan)
	assert.Equal(t, a.Speculation, b.Speculation)
	// The run without speculation has the stragglers of the run with,
	// less those among the speculative attempts.
	assert.Positive(t, aw.Speculation.Stragglers)
	assert.GreaterOrEqual(t, a.Speculation.Stragglers, aw.Speculation.Stragglers)
	assert.Zero(t, aw.Speculation.Started)

	none := cfg
	none.Stragglers, none.Speculation = 0, scheduler.Speculation{}
	r, err := simulator.Run(none)
	require.NoError(t, err)
	assert.Equal(t, 3*time.Minute, r.Makespan, "without stragglers three stages of 60 s")
}

func TestStragglerSettingsAreChecked(t *testing.T) {
	cfg := stragglerRun(t, 1)
	for _, tc := range []struct {
		p, f float64
		want string
	}{
		{1.5, 0, "stragglers 1.5: a share of attempts, 0 ... 1"},
		{0.1, 0.5, "straggler factor 0.5: 1 ... 1000 (0: 10)"},
	} {
		c := cfg
		c.Stragglers, c.StragglerFactor = tc.p, tc.f
		_, err := simulator.Run(c)
		require.ErrorIs(t, err, simulator.ErrBadStragglers)
		assert.Contains(t, err.Error(), tc.want)
	}
	c := cfg
	c.Speculation.CheckInterval = 0
	_, err := simulator.Run(c)
	require.ErrorIs(t, err, scheduler.ErrBadSpeculation)
	c = cfg
	c.Policy = simulator.EagerPolicy
	_, err = simulator.Run(c)
	require.ErrorIs(t, err, simulator.ErrSpeculationPolicy)
}

// TestSpeculationTrace: the trace shows the detector's requests, the
// speculative attempts and the winners; every race has one winner and
// every other attempt of the task is canceled; slots are released once.
func TestSpeculationTrace(t *testing.T) {
	cfg := stragglerRun(t, 2)
	cfg.Record = true
	res, err := simulator.Run(cfg)
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, res.Verdict)
	type attempt struct {
		task string
		a    int
	}
	running := map[attempt]int{}
	held := map[int]int{}
	wins := 0
	for _, e := range res.Events {
		k := attempt{e.Task, e.Attempt}
		switch e.Kind {
		case runfile.Deploy:
			running[k] = e.Slot
			held[e.Slot]++
		case runfile.Finish:
			delete(running, k)
		case runfile.Cancel:
			_, ok := running[k]
			require.True(t, ok, "cancel of %v, which does not run", k)
			delete(running, k)
		case runfile.Release:
			held[e.Slot]--
			require.Zero(t, held[e.Slot], "slot %d released while held", e.Slot)
		case runfile.Win:
			wins++
			for o := range running {
				require.NotEqual(t, e.Task, o.task, "%v runs after %s won", o, e.Task)
			}
		case runfile.Speculate:
			assert.True(t, e.Speculative)
			assert.Equal(t, runfile.NoSlot, e.Slot)
		}
	}
	assert.Empty(t, running)
	assert.Equal(t, res.Speculation.Requested, countKinds(res.Events, runfile.Speculate))
	assert.Equal(t, wins, countKinds(res.Events, runfile.Win))
	assert.Positive(t, res.Speculation.Won)

	var buf bytes.Buffer
	require.NoError(t, runfile.WriteTrace(&buf, res.Events))
	assert.Contains(t, buf.String(), `"event": "speculate"`)
	assert.Contains(t, buf.String(), `"event": "win"`)
	assert.Contains(t, buf.String(), `"speculative": true`)
	assert.Equal(t, len(res.Events), strings.Count(buf.String(), "\n"), "every event of the trace is Traced")
	requireReadBack(t, buf.Bytes(), res.Events)
}

func countKinds(events []runfile.Event, k runfile.Kind) int {
	n := 0
	for _, e := range events {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// TestSpeculationOffNodesBlocked: with the slots on 10 nodes, a
// speculative attempt never runs on the node of the slow attempt it
// copies (blocked for the default minute, again at every check while it
// is slow).
func TestSpeculationOffNodesBlocked(t *testing.T) {
	cfg := stragglerRun(t, 2)
	cfg.Record = true
	cfg.SlotNodes = make([]string, 80)
	for i := range cfg.SlotNodes {
		cfg.SlotNodes[i] = "n" + strconv.Itoa(i%10)
	}
	res, err := simulator.Run(cfg)
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, res.Verdict)
	slotOf := map[string]int{}
	checked := 0
	for _, e := range res.Events {
		if e.Kind == runfile.Deploy && !e.Speculative {
			slotOf[e.Task] = e.Slot
		}
		if e.Kind == runfile.Deploy && e.Speculative {
			assert.NotEqual(t, cfg.SlotNodes[slotOf[e.Task]], cfg.SlotNodes[e.Slot], "%s's speculative attempt on the slow node", e.Task)
			checked++
		}
	}
	assert.Positive(t, checked)
}

// A speculative attempt finds a free slot of the cluster off the blocked
// nodes however the cluster's slots are grouped: the slots modelled of a
// group larger than the job keep their nodes (a node's only slot came
// after seven of another node: it was modelled with the other node's
// name, and the attempt waited while it was free).
func TestSpeculativeAttemptsFindTheClustersFreeSlots(t *testing.T) {
	job, err := topology.NewBuilder("s4").AddVertex(topology.JobVertex{ID: "S", Parallelism: 4, Duration: 10 * time.Second}).Build()
	require.NoError(t, err)
	spec := scheduler.DefaultSpeculation()
	spec.Enabled, spec.BaselineLowerBound = true, 0
	for name, tc := range map[string]struct {
		cluster []resource.Count
		nodes   []string
	}{
		"one slot on a second node": {cluster: []resource.Count{{N: 7}, {N: 1}}, nodes: []string{"n1", "n1", "n1", "n1", "n1", "n1", "n1", "n2"}},
		"a group of each node":      {cluster: []resource.Count{{N: 5}, {N: 3}}, nodes: []string{"n1", "n1", "n1", "n1", "n1", "n2", "n2", "n2"}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := simulator.Config{Regions: region.FromJob(job, exchange.AllBlocking), Cluster: tc.cluster, SlotNodes: tc.nodes,
				Seed: 1, Stragglers: 0.3, Speculation: spec}
			res := run(t, cfg)
			require.Equal(t, runfile.Finished, res.Verdict)
			assert.Equal(t, 1, res.Speculation.Started, "the straggler's attempt starts")
			assert.Equal(t, 1, res.Speculation.Won)
			assert.Less(t, res.Makespan, 100*time.Second, "it beats the 10x straggler")
		})
	}
}
