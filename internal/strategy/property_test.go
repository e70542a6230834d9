package strategy_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/jobgen"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// world is a runtime simulated with its own view of the job (the naive
// expanded graph): it deploys what the strategy decides, finishes and
// fails tasks in a seeded random order, and checks every decision.
type world struct {
	t   *testing.T
	rng *rand.Rand
	s   *strategy.Strategy
	rs  *region.Regions
	x   *expandedGraph

	outputs []([]topology.ResultPartitionID) // per vertex: its blocking partitions

	attempt     []strategy.Attempt // per region
	deployed    []bool             // per region: deployed in its current attempt
	running     []bool             // per region: a member reported deploying, running or finished in its current attempt
	readsLive   map[liveRead]bool  // (consumer, edge): when its region began running, a selective hybrid producer it reads on edge had not finished
	share       float64            // the strategy's selective share
	deployments []int              // per region
	state       []strategy.ExecutionState
	active      []topology.ExecutionVertexID // deployed, not yet finished, failed or canceled

	finished []bool // per partition: finished in the current run of its producer
	released []bool // per partition: released by the strategy, producer not rerun since
	lost     []bool // per partition: gone, producer not rerun since
	releases []int  // per partition

	failuresLeft int
	induced      []inducedFailure
}

// inducedFailure is a task deployed with a lost input: it fails.
type inducedFailure struct {
	v       topology.ExecutionVertexID
	attempt strategy.Attempt
	lost    []topology.ResultPartitionID
}

func newWorld(t *testing.T, rng *rand.Rand, rs *region.Regions, failures int, share float64) *world {
	topo := rs.Topology()
	w := &world{
		t: t, rng: rng, s: strategy.New(rs, strategy.WithSelectiveShare(share)), rs: rs, x: expand(rs),
		outputs:      make([][]topology.ResultPartitionID, topo.NumExecutionVertices()),
		attempt:      make([]strategy.Attempt, rs.NumRegions()),
		deployed:     make([]bool, rs.NumRegions()),
		running:      make([]bool, rs.NumRegions()),
		readsLive:    map[liveRead]bool{},
		share:        share,
		deployments:  make([]int, rs.NumRegions()),
		state:        make([]strategy.ExecutionState, topo.NumExecutionVertices()),
		finished:     make([]bool, topo.NumPartitions()),
		released:     make([]bool, topo.NumPartitions()),
		lost:         make([]bool, topo.NumPartitions()),
		releases:     make([]int, topo.NumPartitions()),
		failuresLeft: failures,
	}
	for v, out := range w.x.out {
		for _, e := range out {
			if e.blocking && !slices.Contains(w.outputs[v], e.partition) {
				w.outputs[v] = append(w.outputs[v], e.partition)
			}
		}
	}
	return w
}

// run drives the job to the end.
func (w *world) run() {
	d, err := w.s.Start()
	require.NoError(w.t, err)
	w.apply(d)
	for steps := 0; !w.allFinished(); steps++ {
		require.Less(w.t, steps, 100_000, "no progress")
		switch {
		case len(w.induced) > 0:
			f := w.induced[0]
			w.induced = w.induced[1:]
			if f.attempt == w.attempt[w.rs.RegionOf(f.v)] && w.state[f.v] == strategy.TaskScheduled {
				w.fail(f.v, f.lost)
			}
		case len(w.active) == 0:
			require.FailNow(w.t, "stuck: no task is deployed and the job has not finished")
		case w.failuresLeft > 0 && w.rng.IntN(8) == 0:
			w.failuresLeft--
			w.fail(w.active[w.rng.IntN(len(w.active))], w.randomLost())
		default:
			w.progress(w.active[w.rng.IntN(len(w.active))])
		}
	}
}

// progress moves v one state on: sometimes through deploying and running,
// else straight to finished. A task whose hybrid producers have not all
// finished cannot finish: now and then its finish is reported anyway, and
// must be refused without a change; it moves to deploying or running, or
// waits.
func (w *world) progress(v topology.ExecutionVertexID) {
	to := strategy.TaskFinished
	switch st := w.state[v]; {
	case st == strategy.TaskScheduled && w.rng.IntN(3) == 0:
		to = strategy.TaskDeploying
	case (st == strategy.TaskScheduled || st == strategy.TaskDeploying) && w.rng.IntN(3) == 0:
		to = strategy.TaskRunning
	}
	r := w.rs.RegionOf(v)
	if to == strategy.TaskFinished && !w.finishable(v) {
		if w.rng.IntN(3) == 0 {
			d, err := w.s.UpdateState(v, w.attempt[r], strategy.TaskFinished)
			require.ErrorIs(w.t, err, strategy.ErrEarlyFinish, "%s finished before its hybrid producers", w.rs.Topology().VertexName(v))
			assert.True(w.t, d.IsEmpty())
		}
		switch w.state[v] {
		case strategy.TaskScheduled:
			to = strategy.TaskDeploying
		case strategy.TaskDeploying:
			to = strategy.TaskRunning
		default:
			return
		}
	}
	if !w.running[r] {
		w.startRunning(r)
	}
	d, err := w.s.UpdateState(v, w.attempt[r], to)
	require.NoError(w.t, err)
	w.state[v] = to
	if to != strategy.TaskFinished {
		w.apply(d)
		return
	}
	w.deactivate(v)
	for _, p := range w.outputs[v] {
		w.finished[p] = true
	}
	w.apply(d)
}

// startRunning records that region r's first member reports: its hybrid
// results may be read, and each member reads live its selective hybrid
// input on an edge (one with a producer outside r) while a producer of
// it has not finished.
func (w *world) startRunning(r region.ID) {
	w.running[r] = true
	for _, in := range w.x.hybridInputs(r) {
		if in.pt != exchange.HybridSelective {
			continue
		}
		for _, p := range in.producers {
			if w.finished[w.rs.Topology().PartitionOf(in.edge, p)] {
				continue
			}
			for _, v := range in.readers {
				if w.rs.RegionOf(v) == r {
					w.readsLive[liveRead{consumer: v, edge: in.edge}] = true
				}
			}
			break
		}
	}
}

// finishable reports whether every hybrid producer v reads finished.
func (w *world) finishable(v topology.ExecutionVertexID) bool {
	for _, e := range w.x.in[v] {
		if e.pt.IsHybrid() && !w.finished[e.partition] {
			return false
		}
	}
	return true
}

// consumable reports whether region r may read hybrid input set in: every
// producer region but r runs, and for a selective one enough producers
// finished (expandedGraph.selectiveNeed).
func (w *world) consumable(r region.ID, in inputSet) bool {
	finished := 0
	for _, p := range in.producers {
		if pr := w.rs.RegionOf(p); pr != r && !w.running[pr] {
			return false
		}
		if w.finished[w.rs.Topology().PartitionOf(in.edge, p)] {
			finished++
		}
	}
	return in.pt != exchange.HybridSelective || finished >= w.x.selectiveNeed(in, w.share)
}

// ready reports whether region r's inputs allow it to run: its blocking
// inputs from outside finished, its hybrid ones consumable.
func (w *world) ready(r region.ID) bool {
	for _, p := range w.x.externalInputs(r) {
		if !w.x.hybrid(p) && !w.finished[p] {
			return false
		}
	}
	for _, in := range w.x.hybridInputs(r) {
		if !w.consumable(r, in) {
			return false
		}
	}
	return true
}

// randomLost picks a random set of partitions to report lost (finished
// blocking ones, and pipelined ones, which failover must ignore).
func (w *world) randomLost() []topology.ResultPartitionID {
	var lost []topology.ResultPartitionID
	if w.rng.IntN(2) == 0 {
		return nil
	}
	for p := range w.finished {
		if (w.finished[p] || !w.x.blocking[p]) && w.rng.IntN(6) == 0 {
			lost = append(lost, topology.ResultPartitionID(p))
		}
	}
	return lost
}

// fail fails v, checks the restart set against the naive reference,
// cancels some tasks, restarts, and sends stale reports of the old attempt.
func (w *world) fail(v topology.ExecutionVertexID, lost []topology.ResultPartitionID) {
	d, err := w.s.UpdateState(v, w.attempt[w.rs.RegionOf(v)], strategy.TaskFailed)
	require.NoError(w.t, err)
	assert.True(w.t, d.IsEmpty())
	w.state[v] = strategy.TaskFailed
	w.deactivate(v)
	unavailable := map[topology.ResultPartitionID]bool{}
	for _, p := range lost {
		w.lost[p] = true
		unavailable[p] = true
	}
	for p, r := range w.released {
		if r {
			unavailable[topology.ResultPartitionID(p)] = true
		}
	}
	restart, err := w.s.RegionsToRestart(v, lost...)
	require.NoError(w.t, err)
	require.Equal(w.t, w.x.naiveRegionsToRestart(v, unavailable, w.readsLive), restart, "regions to restart for %s, lost %v", w.rs.Topology().VertexName(v), lost)

	type report struct {
		v       topology.ExecutionVertexID
		attempt strategy.Attempt
	}
	var stale []report
	for _, r := range restart {
		for _, m := range w.rs.Members(r) {
			st := w.state[m]
			if (st == strategy.TaskScheduled || st == strategy.TaskDeploying || st == strategy.TaskRunning) && w.rng.IntN(2) == 0 {
				_, err := w.s.UpdateState(m, w.attempt[r], strategy.TaskCanceled)
				require.NoError(w.t, err)
			}
			if st != strategy.TaskCreated {
				stale = append(stale, report{m, w.attempt[r]})
			}
		}
	}
	d, err = w.s.Restart(restart)
	require.NoError(w.t, err)
	for _, r := range restart {
		w.attempt[r]++
		w.deployed[r], w.running[r] = false, false
		for _, m := range w.rs.Members(r) {
			maps.DeleteFunc(w.readsLive, func(k liveRead, _ bool) bool { return k.consumer == m })
			w.state[m] = strategy.TaskCreated
			w.deactivate(m)
			for _, p := range w.outputs[m] {
				w.finished[p], w.released[p], w.lost[p] = false, false, false
			}
		}
	}
	w.apply(d)
	for _, rep := range stale {
		if w.rng.IntN(2) == 0 {
			d, err := w.s.UpdateState(rep.v, rep.attempt, strategy.TaskFinished)
			require.ErrorIs(w.t, err, strategy.ErrStaleAttempt)
			assert.True(w.t, d.IsEmpty())
		}
	}
	w.checkNothingReadyWaits()
}

// apply checks and carries out decisions.
func (w *world) apply(d strategy.Decisions) {
	require.True(w.t, slices.IsSortedFunc(d.Deploy, func(a, b strategy.Deployment) int { return int(a.Region - b.Region) }), "deployments in region id order")
	for _, dep := range d.Deploy {
		r := dep.Region
		require.Equal(w.t, w.attempt[r], dep.Attempt, "region %d", r)
		require.False(w.t, w.deployed[r], "region %d deployed twice in attempt %d", r, dep.Attempt)
		var lostInputs []topology.ResultPartitionID
		require.True(w.t, w.ready(r), "region %d deployed before its inputs allow it", r)
		for _, p := range w.x.externalInputs(r) {
			require.False(w.t, w.released[p], "region %d deployed with its input %d released", r, p)
			if w.lost[p] && !slices.Contains(lostInputs, p) {
				lostInputs = append(lostInputs, p)
			}
		}
		w.deployed[r] = true
		w.deployments[r]++
		for _, v := range w.rs.Members(r) {
			w.state[v] = strategy.TaskScheduled
			w.active = append(w.active, v)
		}
		if len(lostInputs) > 0 {
			w.induced = append(w.induced, inducedFailure{v: w.rs.Members(r)[0], attempt: dep.Attempt, lost: lostInputs})
		}
	}
	require.True(w.t, slices.IsSorted(d.Release), "released partitions ascending")
	for _, p := range d.Release {
		require.True(w.t, w.finished[p], "partition %d released before it finished", p)
		require.False(w.t, w.released[p], "partition %d released twice", p)
		for _, c := range w.x.consumerRegions(p) {
			require.True(w.t, w.regionFinished(c), "partition %d released while consumer region %d runs", p, c)
		}
		w.released[p] = true
		w.releases[p]++
	}
	w.checkNothingReadyWaits()
}

// checkNothingReadyWaits: a region whose inputs are all finished has been
// deployed in the same call, and a finished partition whose consumer
// regions have all finished has been released in the same call.
func (w *world) checkNothingReadyWaits() {
	for p, blocking := range w.x.blocking {
		if !blocking || !w.finished[p] || w.released[p] {
			continue
		}
		unneeded := true
		for _, c := range w.x.consumerRegions(topology.ResultPartitionID(p)) {
			unneeded = unneeded && w.regionFinished(c)
		}
		require.False(w.t, unneeded, "partition %d is kept although its consumers finished", p)
	}
	for r := range w.rs.NumRegions() {
		if w.deployed[r] {
			continue
		}
		require.False(w.t, w.ready(region.ID(r)), "region %d waits although its inputs allow it to run", r)
	}
}

func (w *world) regionFinished(r region.ID) bool {
	for _, v := range w.rs.Members(r) {
		if w.state[v] != strategy.TaskFinished {
			return false
		}
	}
	return true
}

func (w *world) allFinished() bool {
	for r := range w.rs.NumRegions() {
		if !w.regionFinished(region.ID(r)) {
			return false
		}
	}
	return true
}

func (w *world) deactivate(v topology.ExecutionVertexID) {
	if i := slices.Index(w.active, v); i >= 0 {
		w.active = slices.Delete(w.active, i, i+1)
	}
}

// checkEnd checks the strategy agrees that the job finished and every
// blocking partition was released.
func (w *world) checkEnd() {
	assert.True(w.t, w.s.Finished())
	for r := range w.rs.NumRegions() {
		st, err := w.s.Region(region.ID(r))
		require.NoError(w.t, err)
		assert.Equal(w.t, strategy.RegionFinished, st.State, "region %d", r)
		assert.Zero(w.t, st.UnsatisfiedInputs, "region %d", r)
	}
	for p, blocking := range w.x.blocking {
		if blocking {
			assert.True(w.t, w.released[p], "blocking partition %d released at the end", p)
		} else {
			assert.Zero(w.t, w.releases[p], "pipelined partition %d is never released", p)
		}
	}
}

func forSeeds(t *testing.T, n int, run func(t *testing.T, rng *rand.Rand)) {
	for seed := range uint64(n) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			run(t, rand.New(rand.NewPCG(seed, 0x5eed)))
		})
	}
}

// Without failures: no region is deployed before its blocking inputs
// produced outside it are finished, none waits once they are, every
// region is deployed exactly once, and every blocking partition is
// released exactly once, after all its consumers finished.
func TestPropertySchedulingOnRandomDAGs(t *testing.T) {
	forSeeds(t, 400, func(t *testing.T, rng *rand.Rand) {
		job, mode := randomJob(t, rng)
		t.Cleanup(func() {
			if t.Failed() {
				t.Log(describeJob(job, mode))
			}
		})
		w := newWorld(t, rng, region.FromJob(job, mode), 0, strategy.DefaultSelectiveShare)
		w.run()
		w.checkEnd()
		for r, n := range w.deployments {
			assert.Equal(t, 1, n, "region %d deployments", r)
		}
		for p, n := range w.releases {
			if w.x.blocking[p] {
				assert.Equal(t, 1, n, "partition %d releases", p)
			}
		}
	})
}

// With random failures and lost partitions: the restart sets equal the
// naive reference, stale reports are rejected, the scheduling invariants
// hold throughout, and every region finishes.
func TestPropertyFailoverOnRandomDAGs(t *testing.T) {
	forSeeds(t, 400, func(t *testing.T, rng *rand.Rand) {
		job, mode := randomJob(t, rng)
		t.Cleanup(func() {
			if t.Failed() {
				t.Log(describeJob(job, mode))
			}
		})
		w := newWorld(t, rng, region.FromJob(job, mode), 1+rng.IntN(5), strategy.DefaultSelectiveShare)
		w.run()
		w.checkEnd()
	})
}

// randomHybridJobs are randomJobs with hybrid exchanges: every partition
// type may be pinned, and the cross-region motif (a third of the jobs) has
// its cut on a hybrid edge, full or selective.
func randomHybridJob(t testing.TB, rng *rand.Rand) (*topology.JobGraph, exchange.Mode, float64) {
	t.Helper()
	o := randomJobs
	o.PinRates = []float64{0.25, 0.5}
	o.PinTypes = jobgen.AllPinTypes()
	o.MotifCut = []exchange.ResultPartitionType{exchange.HybridFull, exchange.HybridSelective}[rng.IntN(2)]
	g, err := jobgen.Generate(rng, o)
	require.NoError(t, err)
	modes := exchange.Modes()
	mode := modes[4+rng.IntN(2)] // mostly hybrid: the two hybrid modes, or any mode
	if rng.IntN(3) == 0 {
		mode = modes[rng.IntN(len(modes))]
	}
	share := []float64{0.1, 0.5, 0.75, 1}[rng.IntN(4)]
	return g, mode, share
}

// Hybrid jobs without failures: no region is deployed before its blocking
// inputs finished and its hybrid inputs are consumable (producers
// deployed; selective: a share of them finished, by the expanded graph),
// none waits once they are, no task finishes before its hybrid producers
// (such reports are refused), every region is deployed once and every
// blocking and hybrid partition released once.
func TestPropertyHybridSchedulingOnRandomDAGs(t *testing.T) {
	forSeeds(t, 400, func(t *testing.T, rng *rand.Rand) {
		job, mode, share := randomHybridJob(t, rng)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("share %v; %s", share, describeJob(job, mode))
			}
		})
		w := newWorld(t, rng, region.FromJob(job, mode), 0, share)
		w.run()
		w.checkEnd()
		for r, n := range w.deployments {
			assert.Equal(t, 1, n, "region %d deployments", r)
		}
		for p, n := range w.releases {
			if w.x.blocking[p] {
				assert.Equal(t, 1, n, "partition %d releases", p)
			}
		}
	})
}

// Hybrid jobs with random failures and lost partitions: the restart sets
// equal the naive reference (the consumers of a restarted producer
// restart; a restarted region that read a selective result live restarts
// its producers), and every region finishes.
func TestPropertyHybridFailoverOnRandomDAGs(t *testing.T) {
	forSeeds(t, 400, func(t *testing.T, rng *rand.Rand) {
		job, mode, share := randomHybridJob(t, rng)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("share %v; %s", share, describeJob(job, mode))
			}
		})
		w := newWorld(t, rng, region.FromJob(job, mode), 1+rng.IntN(5), share)
		w.run()
		w.checkEnd()
	})
}
