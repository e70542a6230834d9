package simulator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
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
// scale. Regions are built once, outside the timed loop.
func BenchmarkSimulate(b *testing.B) {
	for _, bc := range []struct {
		p, slots int
	}{
		{10_000, 100},
		{100_000, 1_000},
	} {
		n := 10 * bc.p
		b.Run(fmt.Sprintf("chains-%d-slots%d", n, bc.slots), func(b *testing.B) {
			rs := region.FromJob(chains(b, 10, bc.p), exchange.AllBlocking)
			require.Equal(b, n, rs.NumRegions())
			b.ReportAllocs()
			b.ResetTimer()
			processed := 0
			for i := 0; i < b.N; i++ {
				res, err := simulator.Run(simulator.Config{Regions: rs, Cluster: slots(bc.slots), Seed: uint64(i + 1)})
				if err != nil || res.Verdict != simulator.Finished {
					b.Fatalf("%v %v", err, res)
				}
				// n tasks of 100 ms on `slots` slots, in waves
				if want := time.Duration(n/bc.slots) * 100 * time.Millisecond; res.Makespan != want {
					b.Fatalf("makespan %v, want %v", res.Makespan, want)
				}
				processed += res.Processed
			}
			b.ReportMetric(float64(processed)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
	// Wide shuffles, where per-group work could go quadratic: two vertices
	// of parallelism p connected all-to-all, blocking (2p one-task regions
	// on 1,000 slots) and pipelined (one region of 2p tasks sharing p
	// slots), each also at p/10 to show the growth.
	for _, bc := range []struct {
		name  string
		p     int
		mode  exchange.Mode
		slots int
	}{
		{"alltoall-p1000-blocking", 1_000, exchange.AllBlocking, 1_000},
		{"alltoall-p10000-blocking", 10_000, exchange.AllBlocking, 1_000},
		{"pipelined-p200-slots200", 200, exchange.AllPipelined, 200},
		{"pipelined-p2000-slots2000", 2_000, exchange.AllPipelined, 2_000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rs := region.FromJob(allToAll(b, bc.p), bc.mode)
			b.ReportAllocs()
			b.ResetTimer()
			processed := 0
			for i := 0; i < b.N; i++ {
				res, err := simulator.Run(simulator.Config{Regions: rs, Cluster: slots(bc.slots), Seed: uint64(i + 1)})
				if err != nil || res.Verdict != simulator.Finished {
					b.Fatalf("%v %v", err, res)
				}
				processed += res.Processed
			}
			b.ReportMetric(float64(processed)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(2*bc.p*b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
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
