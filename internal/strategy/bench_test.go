package strategy_test

import (
	"fmt"
	"testing"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// BenchmarkScheduleDownstream: src(p) -hash-> sink(p), all blocking. One
// op creates the strategy, starts it (p source regions) and finishes the
// p producers; the last finish deploys the p consumer regions (docs/architecture.md: <= 20 ms at p = 10,000).
func BenchmarkScheduleDownstream(b *testing.B) {
	for _, p := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("p%d", p), func(b *testing.B) {
			rs := region.FromJob(twoVertexJob(b, p), exchange.AllBlocking)
			producers := rs.Topology().VerticesOf(0)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s := strategy.New(rs)
				d, err := s.Start()
				if err != nil || len(d.Deploy) != p {
					b.Fatalf("start: %d regions, %v", len(d.Deploy), err)
				}
				deployed := 0
				for v := producers.Start; v < producers.End; v++ {
					d, err := s.UpdateState(topology.ExecutionVertexID(v), 0, strategy.TaskFinished)
					if err != nil {
						b.Fatal(err)
					}
					deployed += len(d.Deploy)
				}
				if deployed != p {
					b.Fatalf("%d consumer regions deployed, want %d", deployed, p)
				}
			}
		})
	}
	// The same job with hybrid exchanges: one op creates the strategy,
	// starts it, reports the p producer regions deploying (with full
	// spilling the last one makes the p consumer regions ready), then
	// finishes the p producers (selective, share 0.5: the p/2-th finish
	// makes them ready). Within 2x of the blocking one.
	for _, mode := range []exchange.Mode{exchange.AllHybridFull, exchange.AllHybridSelective} {
		for _, p := range []int{1000, 10000} {
			b.Run(fmt.Sprintf("%v-p%d", mode, p), func(b *testing.B) {
				rs := region.FromJob(twoVertexJob(b, p), mode)
				producers := rs.Topology().VerticesOf(0)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					s := strategy.New(rs)
					d, err := s.Start()
					if err != nil || len(d.Deploy) != p {
						b.Fatalf("start: %d regions, %v", len(d.Deploy), err)
					}
					deployed := 0
					for _, dep := range d.Deploy {
						_, d, err := s.MarkDeploying(dep.Region)
						if err != nil {
							b.Fatal(err)
						}
						deployed += len(d.Deploy)
					}
					for v := producers.Start; v < producers.End; v++ {
						d, err := s.UpdateState(topology.ExecutionVertexID(v), 0, strategy.TaskFinished)
						if err != nil {
							b.Fatal(err)
						}
						deployed += len(d.Deploy)
					}
					if deployed != p {
						b.Fatalf("%d consumer regions deployed, want %d", deployed, p)
					}
				}
			})
		}
	}
}

// BenchmarkRegionsToRestart: one failed producer subtask of src(p)
// -hash-> sink(p). All blocking: its region and the p consumer regions;
// all pipelined: the one region (docs/architecture.md: <= 1 ms at
// p = 10,000; Flink 1.14 needed 170 ms).
func BenchmarkRegionsToRestart(b *testing.B) {
	for _, mode := range []exchange.Mode{exchange.AllBlocking, exchange.AllPipelined} {
		for _, p := range []int{1000, 10000} {
			b.Run(fmt.Sprintf("%v-p%d", mode, p), func(b *testing.B) {
				s := strategy.New(region.FromJob(twoVertexJob(b, p), mode))
				if _, err := s.Start(); err != nil {
					b.Fatal(err)
				}
				want := p + 1
				if mode == exchange.AllPipelined {
					want = 1
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					restart, err := s.RegionsToRestart(0)
					if err != nil || len(restart) != want {
						b.Fatalf("%d regions, want %d, %v", len(restart), want, err)
					}
				}
			})
		}
	}
}

// BenchmarkRegionsToRestartNaive is the same all-blocking query answered
// the naive way, for the ratio: Flink 1.12's walk over regions along every
// execution edge expanded pairwise (p*p edges), checking every input
// partition of every restarted vertex for availability.
func BenchmarkRegionsToRestartNaive(b *testing.B) {
	for _, p := range []int{100, 1000} {
		b.Run(fmt.Sprintf("all-blocking-p%d", p), func(b *testing.B) {
			rs := region.FromJob(twoVertexJob(b, p), exchange.AllBlocking)
			x := expand(rs)
			unavailable := make([]bool, rs.Topology().NumPartitions())
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				seen := make([]bool, rs.NumRegions())
				queue := []region.ID{rs.RegionOf(0)}
				seen[queue[0]] = true
				visit := func(r region.ID) {
					if !seen[r] {
						seen[r] = true
						queue = append(queue, r)
					}
				}
				for i := 0; i < len(queue); i++ {
					for _, v := range rs.Members(queue[i]) {
						for _, e := range x.in[v] {
							if e.blocking && unavailable[e.partition] {
								visit(rs.RegionOf(e.producer))
							}
						}
						for _, e := range x.out[v] {
							visit(rs.RegionOf(e.consumer))
						}
					}
				}
				if len(queue) != p+1 {
					b.Fatalf("%d regions, want %d", len(queue), p+1)
				}
			}
		})
	}
}
