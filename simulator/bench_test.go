package simulator_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// chains is a job of `length` vertices of parallelism p connected by
// forward edges, every subtask running 100 ms.
func chains(tb testing.TB, length, p int) *topology.JobGraph {
	tb.Helper()
	b := topology.NewBuilder(fmt.Sprintf("chains-%dx%d", length, p))
	for i := range length {
		b.AddVertex(topology.JobVertex{ID: fmt.Sprintf("v%d", i), Parallelism: p, Duration: 100 * time.Millisecond})
		if i > 0 {
			b.Connect(fmt.Sprintf("v%d", i-1), fmt.Sprintf("v%d", i), exchange.Forward)
		}
	}
	job, err := b.Build()
	require.NoError(tb, err)
	return job
}

// BenchmarkSimulate runs all-blocking pointwise chains (every subtask its
// own region) under the region policy: 10 vertices of parallelism
// 100,000 on 1,000 slots (1,000,000 subtasks), and 10x smaller for the
// scale, with ties in order (the default) and seeded (-seeded-ties: the
// ends of a wave of 1,000 tasks in random order); then wide shuffles,
// where per-group work could go quadratic: two vertices of parallelism p connected all-to-all, blocking (2p
// one-task regions on 1,000 slots) and pipelined (one region of 2p tasks
// sharing p slots), each also at p/10. Regions are built once, outside
// the timed loop. Every line reports events/s, B/subtask and
// allocs/subtask; the line of the larger size of a pair reports its
// growth-10x, its time per run over that of the smaller size (when both
// ran).
func BenchmarkSimulate(b *testing.B) {
	type bench struct {
		name  string
		job   func(testing.TB) *topology.JobGraph
		mode  exchange.Mode
		n     int // subtasks
		slots int
		ties  simulator.TieOrder
		// makespan, if set, is the expected makespan
		makespan time.Duration
	}
	chain := func(p, slots int) bench {
		n := 10 * p
		return bench{name: fmt.Sprintf("chains-%d-slots%d", n, slots), job: func(tb testing.TB) *topology.JobGraph { return chains(tb, 10, p) },
			mode: exchange.AllBlocking, n: n, slots: slots, makespan: time.Duration(n/slots) * 100 * time.Millisecond} // in waves
	}
	seeded := func(bc bench) bench {
		bc.name += "-seeded-ties"
		bc.ties = simulator.TiesSeeded
		return bc
	}
	shuffle := func(name string, p int, mode exchange.Mode, slots int) bench {
		return bench{name: name, job: func(tb testing.TB) *topology.JobGraph { return allToAll(tb, p) }, mode: mode, n: 2 * p, slots: slots}
	}
	// pairs of sizes, the second 10x the first
	for _, pair := range [][2]bench{
		{chain(10_000, 100), chain(100_000, 1_000)},
		{seeded(chain(10_000, 100)), seeded(chain(100_000, 1_000))},
		{shuffle("alltoall-p1000-blocking", 1_000, exchange.AllBlocking, 1_000), shuffle("alltoall-p10000-blocking", 10_000, exchange.AllBlocking, 1_000)},
		{shuffle("pipelined-p200-slots200", 200, exchange.AllPipelined, 200), shuffle("pipelined-p2000-slots2000", 2_000, exchange.AllPipelined, 2_000)},
	} {
		var perRun [2]time.Duration
		for i, bc := range pair {
			b.Run(bc.name, func(b *testing.B) {
				rs := region.FromJob(bc.job(b), bc.mode)
				m := startMeasure(b)
				processed := 0
				for i := 0; i < b.N; i++ {
					res, err := simulator.Run(simulator.Config{Regions: rs, Cluster: slots(bc.slots), Seed: uint64(i + 1), Ties: bc.ties})
					if err != nil || res.Verdict != runfile.Finished {
						b.Fatalf("%v %v", err, res)
					}
					if bc.makespan > 0 && res.Makespan != bc.makespan {
						b.Fatalf("makespan %v, want %v", res.Makespan, bc.makespan)
					}
					processed += res.Processed
				}
				perRun[i] = b.Elapsed() / time.Duration(b.N)
				if i == 1 && perRun[0] > 0 {
					// the time per run over that of the 10x smaller size, measured just before
					b.ReportMetric(float64(perRun[1])/float64(perRun[0]), "growth-10x")
				}
				m.report(b, processed, bc.n)
			})
		}
	}
}

// measure reads the allocation counters around a benchmark's timed loop
// (b.ReportAllocs gives them per run, not per subtask).
type measure struct {
	bytes, allocs uint64
}

// startMeasure resets the timer and reads the counters.
func startMeasure(b *testing.B) measure {
	b.ReportAllocs()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ResetTimer()
	return measure{bytes: ms.TotalAlloc, allocs: ms.Mallocs}
}

// report stops the timer and reports events/s, tasks/s, B/subtask and
// allocs/subtask for b.N runs of n subtasks each.
func (m measure) report(b *testing.B, events, n int) {
	b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	tasks := float64(n) * float64(b.N)
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(tasks/b.Elapsed().Seconds(), "tasks/s")
	b.ReportMetric(float64(ms.TotalAlloc-m.bytes)/tasks, "B/subtask")
	b.ReportMetric(float64(ms.Mallocs-m.allocs)/tasks, "allocs/subtask")
}

// allToAll is src(p) -all-to-all-> sink(p), every subtask running 100 ms.
func allToAll(tb testing.TB, p int) *topology.JobGraph {
	tb.Helper()
	b := topology.NewBuilder(fmt.Sprintf("alltoall-p%d", p))
	b.AddVertex(topology.JobVertex{ID: "src", Parallelism: p, Duration: 100 * time.Millisecond})
	b.AddVertex(topology.JobVertex{ID: "sink", Parallelism: p, Duration: 100 * time.Millisecond})
	b.Connect("src", "sink", exchange.Hash)
	job, err := b.Build()
	require.NoError(tb, err)
	return job
}
