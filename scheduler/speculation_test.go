package scheduler_test

import (
	"container/heap"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

func TestDefaultSpeculationIsFlinks(t *testing.T) {
	c := scheduler.DefaultSpeculation()
	assert.Equal(t, scheduler.Speculation{Enabled: true, BaselineRatio: 0.75, BaselineMultiplier: 1.5,
		BaselineLowerBound: time.Minute, CheckInterval: time.Second, MaxConcurrentExecutions: 2,
		BlockSlowNodeDuration: time.Minute}, c)
	require.NoError(t, c.Validate())
	require.NoError(t, scheduler.Speculation{}.Validate(), "the zero value is off, hence valid")
}

func TestSpeculationValidateNamesTheFieldAndTheValidValues(t *testing.T) {
	for _, tc := range []struct {
		change func(*scheduler.Speculation)
		field  string
		text   string
	}{
		{func(c *scheduler.Speculation) { c.BaselineRatio = 1.5 }, "BaselineRatio", "BaselineRatio 1.5 (valid: 0 ... 1)"},
		{func(c *scheduler.Speculation) { c.BaselineRatio = -0.1 }, "BaselineRatio", "BaselineRatio -0.1 (valid: 0 ... 1)"},
		{func(c *scheduler.Speculation) { c.BaselineMultiplier = 0.5 }, "BaselineMultiplier", "BaselineMultiplier 0.5 (valid: 1 ... 1e9)"},
		{func(c *scheduler.Speculation) { c.BaselineLowerBound = -time.Second }, "BaselineLowerBound", "BaselineLowerBound -1s (valid: 0 or more)"},
		{func(c *scheduler.Speculation) { c.CheckInterval = 0 }, "CheckInterval", "CheckInterval 0s (valid: more than 0)"},
		{func(c *scheduler.Speculation) { c.MaxConcurrentExecutions = 1 }, "MaxConcurrentExecutions", "MaxConcurrentExecutions 1 (valid: 2 ... 1024)"},
		{func(c *scheduler.Speculation) { c.BlockSlowNodeDuration = -1 }, "BlockSlowNodeDuration", "BlockSlowNodeDuration -1ns (valid: 0 or more)"},
	} {
		c := scheduler.DefaultSpeculation()
		tc.change(&c)
		err := c.Validate()
		var se *scheduler.SpeculationError
		require.ErrorAs(t, err, &se, tc.field)
		assert.Equal(t, tc.field, se.Field)
		assert.ErrorIs(t, err, scheduler.ErrBadSpeculation)
		assert.Equal(t, "scheduler: invalid speculation setting: "+tc.text, err.Error())

		// New refuses it with the same error, and makes no scheduler.
		s, err := scheduler.New(region.FromJob(specJob(t, 2), exchange.AllBlocking), scheduler.Config{Speculation: c})
		assert.Nil(t, s)
		require.Equal(t, c.Validate(), err)
		require.ErrorIs(t, err, scheduler.ErrInvalidConfig)
	}
}

// TestSpeculableOnlyWhereNoPipelinedNeighbour: a task that shares a
// pipelined region is never speculated, whatever the configuration; a
// task alone in its region is.
func TestSpeculableOnlyWhereNoPipelinedNeighbour(t *testing.T) {
	b := topology.NewBuilder("mixed")
	b.AddVertex(topology.JobVertex{ID: "src", Parallelism: 2})
	b.AddVertex(topology.JobVertex{ID: "map", Parallelism: 2})
	b.AddVertex(topology.JobVertex{ID: "sink", Parallelism: 2})
	b.AddVertex(topology.JobVertex{ID: "stream", Parallelism: 1, Unbounded: true})
	b.ConnectPinned("src", "map", exchange.Forward, exchange.PipelinedBounded)
	b.ConnectPinned("map", "sink", exchange.Hash, exchange.Blocking)
	job, err := b.Build()
	require.NoError(t, err)
	rs := region.FromJob(job, exchange.AllBlocking)
	s := newScheduler(t, rs, scheduler.Config{Speculation: scheduler.DefaultSpeculation()})
	got := map[string]bool{}
	for v := range scheduler.TaskID(rs.Topology().NumExecutionVertices()) {
		got[s.TaskName(v)] = s.Speculable(v)
	}
	assert.Equal(t, map[string]bool{"src#0": false, "src#1": false, "map#0": false, "map#1": false,
		"sink#0": true, "sink#1": true, "stream#0": false}, got)
	assert.False(t, s.Speculable(-1))
	assert.False(t, s.Speculable(100))
}

// TestSpeculationRefusedWhereNoTaskIsSpeculable: speculation on a job
// whose every task shares a pipelined region, or reads a selective
// hybrid exchange live, is a configuration error New names (as Flink
// refuses it without blocking or hybrid exchanges); the same job
// all-blocking or full hybrid is speculable.
func TestSpeculationRefusedWhereNoTaskIsSpeculable(t *testing.T) {
	for _, mode := range []exchange.Mode{exchange.AllPipelined, exchange.AllHybridSelective} {
		s, err := scheduler.New(region.FromJob(specJob(t, 4), mode), scheduler.Config{Speculation: scheduler.DefaultSpeculation()})
		assert.Nil(t, s)
		var se *scheduler.SpeculationError
		require.ErrorAs(t, err, &se, mode.String())
		assert.Equal(t, "Enabled", se.Field)
		assert.Contains(t, err.Error(), "no task is alone in its region")
	}
	for _, mode := range []exchange.Mode{exchange.AllBlocking, exchange.AllHybridFull} {
		s := newScheduler(t, region.FromJob(specJob(t, 4), mode), scheduler.Config{Speculation: scheduler.DefaultSpeculation()})
		assert.NoError(t, s.Start(time.Unix(0, 0)), mode.String())
	}
}

// TestSpeculableWithFullHybridOutputs: a task alone in its region that
// writes a full hybrid result is speculable, and its consumers read that
// result only once finished (ReadsFinishedOnly); a task that writes or
// reads a selective hybrid result is not, and its results are read live.
// Blocking results, and every result with speculation off, are never
// named.
func TestSpeculableWithFullHybridOutputs(t *testing.T) {
	b := topology.NewBuilder("hybrid")
	b.AddVertex(topology.JobVertex{ID: "src", Parallelism: 2})
	b.AddVertex(topology.JobVertex{ID: "mid", Parallelism: 2})
	b.AddVertex(topology.JobVertex{ID: "sel", Parallelism: 2})
	b.AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1})
	b.AddVertex(topology.JobVertex{ID: "side", Parallelism: 1})
	b.ConnectPinned("src", "mid", exchange.Hash, exchange.HybridFull)
	b.ConnectPinned("mid", "sel", exchange.Hash, exchange.HybridSelective)
	b.ConnectPinned("sel", "sink", exchange.Hash, exchange.Blocking)
	b.ConnectPinned("src", "side", exchange.Hash, exchange.Blocking)
	job, err := b.Build()
	require.NoError(t, err)
	rs := region.FromJob(job, exchange.AllBlocking)
	topo := rs.Topology()

	on := newScheduler(t, rs, scheduler.Config{Speculation: scheduler.DefaultSpeculation()})
	off := newScheduler(t, rs, scheduler.Config{})
	got := map[string]bool{}
	for v := range scheduler.TaskID(topo.NumExecutionVertices()) {
		got[on.TaskName(v)] = on.Speculable(v)
		assert.Equal(t, on.Speculable(v), off.Speculable(v), "Speculable tells what the job allows")
	}
	assert.Equal(t, map[string]bool{"src#0": true, "src#1": true, "mid#0": false, "mid#1": false,
		"sel#0": false, "sel#1": false, "sink#0": true, "side#0": true}, got)

	finishedOnly := map[string]bool{}
	for p := range scheduler.PartitionID(topo.NumPartitions()) {
		_, dst := job.EdgeEnds(topo.EdgeOfPartition(p))
		name := topo.VertexName(topo.PartitionProducer(p)) + "->" + job.Vertex(dst).ID
		finishedOnly[name] = on.ReadsFinishedOnly(p)
		assert.False(t, off.ReadsFinishedOnly(p), "speculation off: %s is read live", name)
	}
	assert.Equal(t, map[string]bool{"src#0->mid": true, "src#1->mid": true, "src#0->side": false,
		"src#1->side": false, "mid#0->sel": false, "mid#1->sel": false, "sel#0->sink": false,
		"sel#1->sink": false}, finishedOnly)
	assert.False(t, on.ReadsFinishedOnly(-1))
	assert.False(t, on.ReadsFinishedOnly(scheduler.PartitionID(topo.NumPartitions())))
}

// TestSpeculationRefusedWithOnlySelectiveHybridProducers: a job whose
// every task writes or reads a selective hybrid result has nothing to
// speculate; the error says why.
func TestSpeculationRefusedWithOnlySelectiveHybridProducers(t *testing.T) {
	rs := region.FromJob(specJob(t, 2), exchange.AllHybridSelective)
	s := newScheduler(t, rs, scheduler.Config{}) // Speculable tells what the job allows, speculation on or off
	for v := range scheduler.TaskID(rs.Topology().NumExecutionVertices()) {
		assert.False(t, s.Speculable(v), s.TaskName(v))
	}
	on, err := scheduler.New(rs, scheduler.Config{Speculation: scheduler.DefaultSpeculation()})
	assert.Nil(t, on)
	var se *scheduler.SpeculationError
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, scheduler.ErrBadSpeculation)
	assert.Equal(t, "scheduler: invalid speculation setting: Enabled true (valid: false for this job: "+
		"no task is alone in its region, reading blocking or full hybrid results and writing blocking or "+
		"full hybrid ones (every task shares a pipelined region, reads or writes a selective hybrid result, "+
		"or runs unbounded))", err.Error())
}

// TestSpeculationOffAddsNothing: the zero value asks for no deadline and
// makes no attempt, however slow a task is.
func TestSpeculationOffAddsNothing(t *testing.T) {
	rs := region.FromJob(specJob(t, 4), exchange.AllBlocking)
	s := newScheduler(t, rs, scheduler.Config{})
	t0 := time.Unix(0, 0)
	require.NoError(t, s.Offer(t0, slotpool.Slots(8)...))
	require.NoError(t, s.Start(t0))
	s.Ready()
	for v := range scheduler.TaskID(3) {
		require.NoError(t, s.TaskFinished(t0.Add(time.Second), v, 0))
	}
	require.NoError(t, s.Tick(t0.Add(time.Hour)))
	rd := s.Ready()
	assert.Empty(t, rd.Deploy)
	assert.Zero(t, rd.Deadline)
	assert.Equal(t, scheduler.SpeculationStats{}, s.SpeculationStats())
}

// TestSpeculationChecksDoNotDependOnQueries: two schedulers get the same
// inputs; one is asked for its Ready (and so its NextDeadline) after each,
// the other only at the end. The detector looks at the same times in
// both: after an input at 5.5 s its next look is at 6 s, so a Tick at
// 5.7 s finds nothing due, whether or not anyone asked in between.
func TestSpeculationChecksDoNotDependOnQueries(t *testing.T) {
	rs, spec, t0, at := detectorSetup(t)
	var stats [2][]scheduler.SpeculationStats
	for i, asking := range []bool{true, false} {
		s := newScheduler(t, rs, scheduler.Config{Speculation: spec})
		step := func(err error) {
			require.NoError(t, err)
			if asking {
				s.Ready()
			}
			stats[i] = append(stats[i], s.SpeculationStats())
		}
		step(s.Offer(t0, slotpool.Slots(8)...))
		step(s.Start(t0))
		step(s.TaskFinished(at(1000), 0, 0))
		step(s.TaskFinished(at(1200), 1, 0))
		step(s.TaskRunning(at(5500), 2, 0))
		step(s.Tick(at(5700)))
		step(s.Tick(at(6000)))
	}
	assert.Equal(t, stats[0], stats[1])
	last := len(stats[0]) - 1
	assert.Zero(t, stats[0][last-1].Requested, "nothing due at 5.7 s")
	assert.Equal(t, 2, stats[0][last].Requested, "A#2 and A#3 found slow at 6 s (baseline 1.5 x 1.1 s)")
}

// TestSpeculationDetectorWakesOnFinishes: a Tick before any vertex has
// a baseline finds nothing to watch; the finishes that give A its
// baseline, with A's other tasks running, bring the detector's deadline
// back, as in a run without that Tick: the slow tasks are speculated.
func TestSpeculationDetectorWakesOnFinishes(t *testing.T) {
	rs, spec, t0, at := detectorSetup(t)
	var requested [2]int
	for i, early := range []bool{false, true} {
		s := newScheduler(t, rs, scheduler.Config{Speculation: spec})
		require.NoError(t, s.Offer(t0, slotpool.Slots(8)...))
		require.NoError(t, s.Start(t0))
		s.Ready()
		if early {
			require.NoError(t, s.Tick(at(1000)))
			s.Ready()
		}
		require.NoError(t, s.TaskFinished(at(1100), 0, 0))
		require.NoError(t, s.TaskFinished(at(1200), 1, 0))
		rd := s.Ready()
		require.False(t, rd.Deadline.IsZero(), "early Tick %v: the detector looks again", early)
		require.NoError(t, s.Tick(rd.Deadline))
		requested[i] = s.SpeculationStats().Requested
	}
	assert.Equal(t, 2, requested[0], "A#2 and A#3 found slow")
	assert.Equal(t, requested[0], requested[1], "a Tick that found nothing changes nothing")
}

// TestSpeculationDetectorRestsWhileNothingRuns: once A has its baseline
// but its remaining tasks wait for slots (their slots lost, none left),
// the detector's look finds nothing running and it asks for no more
// ticks, so that a run where nothing can progress ends; a slot offered
// deploys them and the detector looks again.
func TestSpeculationDetectorRestsWhileNothingRuns(t *testing.T) {
	rs, spec, t0, at := detectorSetup(t)
	s := newScheduler(t, rs, scheduler.Config{Speculation: spec, Pool: slotpool.Config{Timeout: slotpool.NoTimeout}}) // no timeout of its own
	require.NoError(t, s.Offer(t0, slotpool.Slots(2)...))
	require.NoError(t, s.Start(t0))
	rd := s.Ready()
	require.Len(t, rd.Deploy, 2, "A#0 and A#1")
	require.NoError(t, s.TaskFinished(at(1000), rd.Deploy[0].Task, rd.Deploy[0].Attempt))
	require.NoError(t, s.TaskFinished(at(1200), rd.Deploy[1].Task, rd.Deploy[1].Attempt))
	rd = s.Ready()
	require.Len(t, rd.Deploy, 2, "A#2 and A#3 in the freed slots")
	for _, d := range rd.Deploy {
		require.NoError(t, s.SlotLost(at(1300), d.Slot))
	}
	rd = s.Ready()
	require.Empty(t, rd.Deploy, "no slot left")
	require.False(t, rd.Deadline.IsZero(), "the detector's next look")
	look := rd.Deadline
	require.NoError(t, s.Tick(look))
	rd = s.Ready()
	assert.True(t, rd.Deadline.IsZero(), "nothing it watches runs: no tick asked for (deadline %v after the look)", rd.Deadline.Sub(look))

	require.NoError(t, s.Offer(at(5000), slotpool.Slot{ID: 9}))
	rd = s.Ready()
	require.Len(t, rd.Deploy, 1, "a waiting task of A deploys")
	assert.False(t, rd.Deadline.IsZero(), "the detector looks again")
}

// detectorSetup is what the detector's tests share: specJob(4)'s
// regions, Flink's speculation with a baseline from half of a vertex's
// subtasks and no lower bound, the time 0 and at(ms).
func detectorSetup(t *testing.T) (*region.Regions, scheduler.Speculation, time.Time, func(ms int) time.Time) {
	rs := region.FromJob(specJob(t, 4), exchange.AllBlocking)
	spec := scheduler.DefaultSpeculation()
	spec.BaselineRatio, spec.BaselineLowerBound = 0.5, 0
	t0 := time.Unix(0, 0)
	return rs, spec, t0, func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
}

// specJob is A (parallelism p) -> B (1), hash, blocking.
func specJob(t testing.TB, p int) *topology.JobGraph {
	b := topology.NewBuilder("spec")
	b.AddVertex(topology.JobVertex{ID: "A", Parallelism: p})
	b.AddVertex(topology.JobVertex{ID: "B", Parallelism: 1})
	b.Connect("A", "B", exchange.Hash)
	job, err := b.Build()
	require.NoError(t, err)
	return job
}

// TestSpeculationProperty runs random jobs with random durations, some
// attempts ten times slower, under speculation with random knobs, in a
// small discrete-event runtime, and checks after every Ready:
//   - a slot holds one attempt at a time, and a released slot holds none;
//   - the attempts of a task are numbered upwards in deployment order;
//   - a task's race has one winner (in Won, the attempt whose finish was
//     reported first), and every other attempt of it that runs is
//     canceled in the same Ready;
//   - a speculative attempt is deployed only while no region waits;
//   - the job finishes.
//
// One end in eight is a failure instead: a failed attempt while another
// runs is dropped, the last one fails its region over. Every other job is
// all-hybrid-full, where tasks with hybrid outputs are speculated too: a
// consumer's finish before its hybrid producers' is refused
// (strategy.ErrEarlyFinish), and the attempt reports it again later.
func TestSpeculationProperty(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runSpeculationProperty(t, seed) })
	}
}

func runSpeculationProperty(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := topology.NewBuilder("prop")
	n := 2 + rng.IntN(3)
	for i := range n {
		b.AddVertex(topology.JobVertex{ID: fmt.Sprintf("V%d", i), Parallelism: 1 + rng.IntN(8)})
	}
	for i := 1; i < n; i++ {
		ship := exchange.Hash
		if rng.IntN(3) == 0 {
			ship = exchange.Rebalance
		}
		b.Connect(fmt.Sprintf("V%d", rng.IntN(i)), fmt.Sprintf("V%d", i), ship)
	}
	job, err := b.Build()
	require.NoError(t, err)
	mode := exchange.AllBlocking
	if seed%2 == 1 {
		mode = exchange.AllHybridFull
	}
	rs := region.FromJob(job, mode)
	topo := rs.Topology()
	c := scheduler.DefaultSpeculation()
	c.BaselineRatio = []float64{0, 0.5, 0.75, 1}[rng.IntN(4)]
	c.BaselineLowerBound = time.Duration(rng.IntN(3)) * time.Second
	c.CheckInterval = time.Duration(100+rng.IntN(900)) * time.Millisecond
	c.MaxConcurrentExecutions = 2 + rng.IntN(2)
	c.BlockSlowNodeDuration = time.Duration(rng.IntN(3)) * time.Second
	s := newScheduler(t, rs, scheduler.Config{Speculation: c})
	slots := 1 + rng.IntN(12)
	nodes := 1 + rng.IntN(4)
	offered := make([]slotpool.Slot, slots)
	for i := range offered {
		offered[i] = slotpool.Slot{ID: slotpool.SlotID(i + 1), Node: fmt.Sprintf("n%d", i%nodes)}
	}

	type key struct {
		v scheduler.TaskID
		a scheduler.Attempt
	}
	running := map[key]scheduler.SlotID{}
	inSlot := map[scheduler.SlotID]map[key]bool{} // the attempts running in each slot
	leave := func(slot scheduler.SlotID, k key) {
		delete(inSlot[slot], k)
		if len(inSlot[slot]) == 0 {
			delete(inSlot, slot)
		}
	}
	enter := func(slot scheduler.SlotID, k key) {
		if inSlot[slot] == nil {
			inSlot[slot] = map[key]bool{}
		}
		inSlot[slot][k] = true
	}
	lastAttempt := map[scheduler.TaskID]scheduler.Attempt{}
	var cal endHeap
	now := time.Unix(0, 0)
	finishedFirst := map[key]bool{}

	apply := func(rd scheduler.Ready, reported *key) {
		t.Helper()
		for _, c := range rd.Cancel {
			k := key{c.Task, c.Attempt}
			slot, ok := running[k]
			require.True(t, ok || finishedFirst[k], "cancel of %s attempt %d, which does not run", topo.VertexName(c.Task), c.Attempt)
			delete(running, k)
			if ok {
				leave(slot, k)
			}
		}
		for _, r := range rd.Released {
			_, busy := inSlot[r.Slot]
			require.False(t, busy, "slot %d released while %v runs in it", r.Slot, inSlot[r.Slot])
		}
		for _, w := range rd.Won {
			require.NotNil(t, reported, "a winner without a finish")
			require.Equal(t, *reported, key{w.Task, w.Attempt}, "the winner is the attempt reported finished")
			for k := range running {
				require.False(t, k.v == w.Task, "%s attempt %d runs on after the race", topo.VertexName(k.v), k.a)
			}
		}
		for _, d := range rd.Deploy {
			k := key{d.Task, d.Attempt}
			prev, seen := lastAttempt[d.Task]
			require.True(t, !seen || d.Attempt > prev, "%s attempt %d after attempt %d", topo.VertexName(d.Task), d.Attempt, prev)
			lastAttempt[d.Task] = d.Attempt
			_, busy := inSlot[d.Slot]
			if d.Shared { // into a slot its hybrid producers run in
				require.True(t, busy, "shared deploy of %s into idle slot %d", topo.VertexName(d.Task), d.Slot)
			} else {
				require.False(t, busy, "slot %d deployed twice", d.Slot)
			}
			if d.Speculative {
				require.Zero(t, s.Status().Pool.Waiting, "a speculative attempt deployed while a region waits")
			}
			running[k] = d.Slot
			enter(d.Slot, k)
			dur := time.Duration(500+rng.IntN(1500)) * time.Millisecond
			if rng.IntN(10) == 0 {
				dur *= 10
			}
			heap.Push(&cal, end{at: now.Add(dur), k: endKey{d.Task, d.Attempt}})
		}
	}
	require.NoError(t, s.Offer(now, offered...))
	require.NoError(t, s.Start(now))
	apply(s.Ready(), nil)
	for steps := 0; s.State() == scheduler.JobRunning; steps++ {
		require.Less(t, steps, 100000, "no end")
		dl, hasDL := s.NextDeadline()
		if cal.Len() == 0 || (hasDL && dl.Before(cal[0].at)) {
			require.True(t, hasDL, "nothing to wait for")
			now = dl
			require.NoError(t, s.Tick(now))
			apply(s.Ready(), nil)
			continue
		}
		e := heap.Pop(&cal).(end)
		k := key{e.k.v, e.k.a}
		if _, ok := running[k]; !ok {
			continue // canceled
		}
		now = e.at
		slot := running[k]
		leave(slot, k)
		delete(running, k)
		if rng.IntN(8) == 0 && !e.retry {
			require.NoError(t, s.TaskFailed(now, k.v, k.a))
			apply(s.Ready(), nil)
			continue
		}
		err := s.TaskFinished(now, k.v, k.a)
		if errors.Is(err, strategy.ErrEarlyFinish) {
			// It holds its slot until its hybrid producers finished.
			require.Equal(t, exchange.AllHybridFull, mode)
			running[k] = slot
			enter(slot, k)
			heap.Push(&cal, end{at: now.Add(100 * time.Millisecond), k: e.k, retry: true})
			continue
		}
		require.NoError(t, err)
		finishedFirst[k] = true
		apply(s.Ready(), &k)
	}
	require.Equal(t, scheduler.JobFinished, s.State(), "%v", s.Err())
	assert.Empty(t, running)
	st := s.SpeculationStats()
	assert.LessOrEqual(t, st.Won, st.Started)
	assert.LessOrEqual(t, st.Started, st.Requested)
}

type endKey struct {
	v scheduler.TaskID
	a scheduler.Attempt
}

type end struct {
	at    time.Time
	k     endKey
	retry bool // a finish refused before: the attempt's work is done
}

// endHeap orders the ends by time, then task and attempt.
type endHeap []end

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	if h[i].k.v != h[j].k.v {
		return h[i].k.v < h[j].k.v
	}
	return h[i].k.a < h[j].k.a
}
func (h endHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(end)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// TestSpeculativeEarlyFinishEndsNoRace: a speculative attempt of a
// consumer of a full hybrid result that reports its finish before the
// producer's is refused (strategy.ErrEarlyFinish) and changes nothing:
// the race goes on, no attempt is canceled, nothing is won. Once the
// producer finished, its report wins.
func TestSpeculativeEarlyFinishEndsNoRace(t *testing.T) {
	b := topology.NewBuilder("hybrid")
	b.AddVertex(topology.JobVertex{ID: "A", Parallelism: 1})
	b.AddVertex(topology.JobVertex{ID: "B", Parallelism: 1})
	b.Connect("A", "B", exchange.Hash)
	job, err := b.Build()
	require.NoError(t, err)
	rs := region.FromJob(job, exchange.AllHybridFull)
	c := scheduler.DefaultSpeculation()
	c.BaselineRatio, c.BaselineLowerBound = 0, time.Second // every attempt is slow after a second
	s := newScheduler(t, rs, scheduler.Config{Speculation: c})
	t0 := time.Unix(0, 0)
	require.NoError(t, s.Offer(t0, slotpool.Slots(4)...))
	require.NoError(t, s.Start(t0))
	assert.Len(t, s.Ready().Deploy, 2, "A, and B beside it")
	const a, bv = scheduler.TaskID(0), scheduler.TaskID(1)
	require.True(t, s.ReadsFinishedOnly(0), "A's result is read only once finished")

	require.NoError(t, s.Tick(t0.Add(time.Second)))
	copies := map[scheduler.TaskID]scheduler.Attempt{}
	for _, d := range s.Ready().Deploy {
		require.True(t, d.Speculative)
		copies[d.Task] = d.Attempt
	}
	require.Len(t, copies, 2, "both got a speculative attempt")

	err = s.TaskFinished(t0.Add(1500*time.Millisecond), bv, copies[bv])
	require.ErrorIs(t, err, strategy.ErrEarlyFinish)
	var ef *scheduler.EarlyFinishError
	require.ErrorAs(t, err, &ef)
	assert.Equal(t, "A#0", ef.ProducerName)
	rd := s.Ready()
	assert.Empty(t, rd.Won)
	assert.Empty(t, rd.Cancel)
	assert.Equal(t, 0, s.SpeculationStats().Won)

	// A's speculative attempt wins; then B's does.
	require.NoError(t, s.TaskFinished(t0.Add(2*time.Second), a, copies[a]))
	rd = s.Ready()
	assert.Equal(t, []scheduler.Task{{Task: a, Attempt: copies[a]}}, rd.Won)
	require.NoError(t, s.TaskFinished(t0.Add(2500*time.Millisecond), bv, copies[bv]))
	rd = s.Ready()
	assert.Equal(t, []scheduler.Task{{Task: bv, Attempt: copies[bv]}}, rd.Won)
	assert.Equal(t, []scheduler.Task{{Task: bv, Attempt: 0}}, rd.Cancel)
	assert.Equal(t, scheduler.JobFinished, s.State())
	assert.Equal(t, 2, s.SpeculationStats().Won)
}

// newScheduler is scheduler.New for a Config the test knows is valid.
func newScheduler(tb testing.TB, rs *region.Regions, cfg scheduler.Config) *scheduler.Scheduler {
	tb.Helper()
	s, err := scheduler.New(rs, cfg)
	require.NoError(tb, err)
	return s
}
