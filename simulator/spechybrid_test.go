package simulator_test

import (
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

// hybridSpecRun runs job in all-hybrid-full on n slots with seed, 10% of
// attempts 10x slow, under Flink's speculation defaults without the lower
// bound, every event (the picture-only ones too) kept in events.
func hybridSpecRun(t *testing.T, job *topology.JobGraph, n int, seed uint64) (cfg simulator.Config, events *[]runfile.Event) {
	spec := scheduler.DefaultSpeculation()
	spec.BaselineLowerBound = 0
	events = new([]runfile.Event)
	return simulator.Config{Regions: region.FromJob(job, exchange.AllHybridFull),
		Cluster: []resource.Count{{Profile: resource.Unknown, N: n}}, Seed: seed, Stragglers: 0.1,
		Speculation: spec, Detail: true, OnEvent: func(ev runfile.Event) { *events = append(*events, ev) }}, events
}

// firstEvent returns the first event of kind k of task's attempt (any
// attempt if attempt < 0); ok false if there is none.
func firstEvent(events []runfile.Event, k runfile.Kind, task string, attempt int) (runfile.Event, bool) {
	for _, ev := range events {
		if ev.Kind == k && ev.Task == task && (attempt < 0 || ev.Attempt == attempt) {
			return ev, true
		}
	}
	return runfile.Event{}, false
}

// TestSpeculationOfFullHybridProducer: src (8 x 10 s) -hash-> sink (2 x
// 10 s), all-hybrid-full, seed 5: src#0's first attempt is a straggler
// (100 s). It gets a speculative attempt at 15 s (A's baseline 1.5 x
// 10 s), which wins at 25 s: the first attempt is canceled (its slot,
// which sink#0 shares, goes back with the sink). The sinks, deployed at 0
// in their producers' slots, read the
// srcs' results only once finished (the scheduler's ReadsFinishedOnly):
// they work from the winner's finish on and finish 10 s later. Without
// speculation they read live and finish with the straggler, at 100 s.
func TestSpeculationOfFullHybridProducer(t *testing.T) {
	job, err := topology.NewBuilder("hybrid").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 8, Duration: 10 * time.Second}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 2, Duration: 10 * time.Second}).
		Connect("src", "sink", exchange.Hash).
		Build()
	require.NoError(t, err)
	cfg, events := hybridSpecRun(t, job, 12, 5)
	with, without, err := simulator.CompareSpeculation(cfg)
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, with.Verdict, with.Reason)
	assert.Equal(t, simulator.SpeculationSummary{Requested: 1, Started: 1, Won: 1, SlotTime: 10 * time.Second, Stragglers: 1},
		with.Speculation)

	deploy, ok := firstEvent(*events, runfile.Deploy, "src#0", 1)
	require.True(t, ok, "a speculative attempt of src#0 was deployed")
	assert.True(t, deploy.Speculative)
	assert.Equal(t, 15*time.Second, deploy.At)
	win, ok := firstEvent(*events, runfile.Win, "src#0", -1)
	require.True(t, ok)
	assert.Equal(t, runfile.Event{At: 25 * time.Second, Kind: runfile.Win, Task: "src#0", Region: win.Region,
		Slot: deploy.Slot, Attempt: 1, Speculative: true}, win, "the speculative attempt won")
	cancel, ok := firstEvent(*events, runfile.Cancel, "src#0", 0)
	require.True(t, ok, "the first attempt was canceled")
	assert.Equal(t, 25*time.Second, cancel.At)
	// sink#0 went into src#0's slot (it reads src#0's result): the slot
	// stays until the sink finished, and goes back with it.
	sinkDeploy, _ := firstEvent(*events, runfile.Deploy, "sink#0", 0)
	assert.True(t, sinkDeploy.Shared)
	assert.Equal(t, cancel.Slot, sinkDeploy.Slot)
	release, ok := firstEvent(*events, runfile.Release, "sink#0", 0)
	require.True(t, ok, "the shared slot was returned")
	assert.Equal(t, cancel.Slot, release.Slot)
	assert.Equal(t, 35*time.Second, release.At)

	for _, sink := range []string{"sink#0", "sink#1"} {
		d, _ := firstEvent(*events, runfile.Deploy, sink, 0)
		p, _ := firstEvent(*events, runfile.Progress, sink, 0)
		f, _ := firstEvent(*events, runfile.Finish, sink, 0)
		assert.Zero(t, d.At, "%s is deployed with its producers", sink)
		assert.Equal(t, 25*time.Second, p.At, "%s works from the winner's finish on", sink)
		assert.Equal(t, 35*time.Second, f.At, sink)
	}
	assert.Equal(t, 35*time.Second, with.Makespan)
	assert.Equal(t, 100*time.Second, without.Makespan, "without speculation the sinks read live and finish with the straggler")

	// Without stragglers speculation finds nothing to do, and the sinks'
	// reading only finished results costs the overlap with their
	// producers (a conservative model: Flink may read the finished
	// partitions of a partially finished input).
	cfg.Stragglers = 0
	cfg.OnEvent, cfg.Detail = nil, false
	with, without, err = simulator.CompareSpeculation(cfg)
	require.NoError(t, err)
	assert.Zero(t, with.Speculation.Started)
	assert.Equal(t, 20*time.Second, with.Makespan)
	assert.Equal(t, 10*time.Second, without.Makespan)
}

// TestSpeculativeAttemptWaitsForFinishedOnlyInputs: src (8 x 10 s)
// -forward-> mid (8 x 1 s) -hash-> sink (1 s), all-hybrid-full, seed 21:
// src#3 straggles (its speculative attempt, from 15 s, wins at 25 s), so
// mid#3, which reads only src#3, is slow by 17 s (mid's baseline 1.5 x
// 11 s) and gets a speculative attempt. That attempt holds its slot but
// works only once src#3 finished, as mid#3's first attempt does; both end
// their work at 26 s, the first one wins. The sink works only after
// every mid finished.
func TestSpeculativeAttemptWaitsForFinishedOnlyInputs(t *testing.T) {
	job, err := topology.NewBuilder("hybrid").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 8, Duration: 10 * time.Second}).
		AddVertex(topology.JobVertex{ID: "mid", Parallelism: 8, Duration: time.Second}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1, Duration: time.Second}).
		Connect("src", "mid", exchange.Forward).
		Connect("mid", "sink", exchange.Hash).
		Build()
	require.NoError(t, err)
	cfg, events := hybridSpecRun(t, job, 17, 21)
	res, err := simulator.Run(cfg)
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)

	srcWin, ok := firstEvent(*events, runfile.Win, "src#3", -1)
	require.True(t, ok)
	assert.True(t, srcWin.Speculative)
	assert.Equal(t, 25*time.Second, srcWin.At)
	copyDeploy, ok := firstEvent(*events, runfile.Deploy, "mid#3", 1)
	require.True(t, ok, "mid#3 got a speculative attempt")
	assert.True(t, copyDeploy.Speculative)
	assert.Equal(t, 17*time.Second, copyDeploy.At, "deployed before src#3 finished")
	copyWork, ok := firstEvent(*events, runfile.Progress, "mid#3", 1)
	require.True(t, ok)
	assert.Equal(t, srcWin.At, copyWork.At, "it works only once src#3 finished")
	firstWork, _ := firstEvent(*events, runfile.Progress, "mid#3", 0)
	assert.Equal(t, srcWin.At, firstWork.At)
	midWin, ok := firstEvent(*events, runfile.Win, "mid#3", -1)
	require.True(t, ok)
	assert.Equal(t, 26*time.Second, midWin.At)
	sinkWork, _ := firstEvent(*events, runfile.Progress, "sink#0", 0)
	assert.Equal(t, 26*time.Second, sinkWork.At)
	assert.Equal(t, 27*time.Second, res.Makespan)
}

// TestHybridSpeculationTPCDSReadsFinishedResults runs the TPC-DS-like
// job in all-hybrid-full under speculation over random seeds and checks
// every run: it finishes; every race has one winner, after which no
// attempt of its task runs; and every consumer, whose inputs are all
// read only once finished, finishes no sooner than its duration after
// the last finish of its producers.
func TestHybridSpeculationTPCDSReadsFinishedResults(t *testing.T) {
	job := testjobs.Load(t, "tpcds-q3.json")
	topo := region.FromJob(job, exchange.AllHybridFull).Topology()
	won := 0
	for seed := range uint64(20) {
		cfg := tpcdsSpeculationRun(t, seed+1)
		cfg.Record = true
		res, err := simulator.Run(cfg)
		require.NoError(t, err)
		require.Equal(t, runfile.Finished, res.Verdict, "seed %d: %s", seed+1, res.Reason)
		won += res.Speculation.Won
		lastFinish := map[string]time.Duration{} // per job vertex
		finish := map[string]time.Duration{}     // per task
		running := map[string]map[int]bool{}
		for _, ev := range res.Events {
			switch ev.Kind {
			case runfile.Deploy:
				if running[ev.Task] == nil {
					running[ev.Task] = map[int]bool{}
				}
				running[ev.Task][ev.Attempt] = true
			case runfile.Finish, runfile.Cancel:
				delete(running[ev.Task], ev.Attempt)
				if ev.Kind == runfile.Finish {
					finish[ev.Task] = ev.At
					v, err := topo.ParseVertexName(ev.Task)
					require.NoError(t, err)
					id := job.Vertex(topo.JobVertexOf(v)).ID
					lastFinish[id] = max(lastFinish[id], ev.At)
				}
			case runfile.Win:
				assert.Empty(t, running[ev.Task], "seed %d: attempts of %s run after its win", seed+1, ev.Task)
			}
		}
		for jv := range topology.JobVertexID(job.NumVertices()) {
			vx := job.Vertex(jv)
			vs := topo.VerticesOf(jv)
			for _, e := range job.InEdges(jv) {
				src, _ := job.EdgeEnds(e)
				for v := vs.Start; v < vs.End; v++ {
					name := topo.VertexName(topology.ExecutionVertexID(v))
					assert.GreaterOrEqual(t, finish[name], lastFinish[job.Vertex(src).ID]+vx.Duration,
						"seed %d: %s finished before it could read all of %s", seed+1, name, job.Vertex(src).ID)
				}
			}
		}
	}
	assert.Positive(t, won)
}

// tpcdsSpeculationRun is the benchmark's hybrid run: the TPC-DS-like job
// (examples/jobs/tpcds-q3.json) in all-hybrid-full on 40 slots, 5% of
// attempts 10x slow, with Flink's speculation defaults scaled to a job
// whose tasks run for seconds, not minutes: a baseline lower bound of
// 1 s (not 1 minute) and a check every 100 ms (not every second).
func tpcdsSpeculationRun(tb testing.TB, seed uint64) simulator.Config {
	spec := scheduler.DefaultSpeculation()
	spec.BaselineLowerBound = time.Second
	spec.CheckInterval = 100 * time.Millisecond
	return simulator.Config{
		Regions:     region.FromJob(testjobs.Load(tb, "tpcds-q3.json"), exchange.AllHybridFull),
		Cluster:     []resource.Count{{Profile: resource.Unknown, N: tpcdsEnough}},
		Seed:        seed,
		Stragglers:  0.05,
		Speculation: spec,
	}
}

// TestJobsReadFinishedOnlyAsOneJob: a job in a run of several jobs reads
// the full hybrid results of tasks that may be speculated only once
// finished, as in a run of its own: the TPC-DS-like job in all-hybrid-full
// mode, 30% stragglers, through the admission alone, ends when it ends
// alone, with the same speculative attempts.
func TestJobsReadFinishedOnlyAsOneJob(t *testing.T) {
	job := testjobs.Load(t, "tpcds-q3.json")
	cluster := []resource.Count{{Profile: resource.Unknown, N: 8}}
	spec := scheduler.DefaultSpeculation()
	one, err := simulator.Run(simulator.Config{Regions: region.FromJob(job, exchange.AllHybridFull), Cluster: cluster, Seed: 1,
		Stragglers: 0.3, Speculation: spec})
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, one.Verdict, one.Reason)
	jobs, per, err := simulator.RunJobs(simulator.JobsConfig{Jobs: []runfile.Job{{Name: "q3", Job: job}}, Mode: exchange.AllHybridFull,
		Cluster: cluster, Seed: 1, Stragglers: 0.3, Speculation: spec})
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, jobs.Verdict, jobs.Reason)
	require.Len(t, per, 1)
	assert.Equal(t, one.Makespan, jobs.Makespan)
	assert.Equal(t, one.Speculation.Started, jobs.Speculation.Started)
}
