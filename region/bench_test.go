package region_test

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// allToAllJob is source(p) -hash-> sink(p): the job of Flink's scheduler
// benchmarks and of the 2022 blog post (docs/architecture.md).
func allToAllJob(tb testing.TB, p int) *topology.JobGraph {
	tb.Helper()
	g, err := topology.NewBuilder("alltoall-p"+strconv.Itoa(p)).
		AddVertex(topology.JobVertex{ID: "source", Parallelism: p}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: p}).
		Connect("source", "sink", exchange.Hash).
		Build()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// chainsJob has exactly total subtasks in ten job vertices joined
// alternately by forward and rescale edges, the rescales both fanning in
// and fanning out: parallelisms (in units of total/20)
// 2 -fwd- 2 -resc- 1 -fwd- 1 -resc- 2 -fwd- 2 -resc- 1 -fwd- 1 -resc- 4 -fwd- 4.
func chainsJob(tb testing.TB, total int) *topology.JobGraph {
	tb.Helper()
	unit := total / 20
	if unit*20 != total {
		tb.Fatalf("total %d is not a multiple of 20", total)
	}
	units := []int{2, 2, 1, 1, 2, 2, 1, 1, 4, 4}
	b := topology.NewBuilder("chains-" + strconv.Itoa(total))
	sum := 0
	for i, u := range units {
		b.AddVertex(topology.JobVertex{ID: "op" + strconv.Itoa(i), Parallelism: u * unit})
		sum += u * unit
		if i > 0 {
			ship := exchange.Forward
			if i%2 == 0 {
				ship = exchange.Rescale
			}
			b.Connect("op"+strconv.Itoa(i-1), "op"+strconv.Itoa(i), ship)
		}
	}
	if sum != total {
		tb.Fatalf("chains job has %d subtasks, want %d", sum, total)
	}
	g, err := b.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

var benchSink *region.Regions

// BenchmarkBuildRegions measures topology.NewExecutionTopology +
// region.Build from an already built JobGraph (docs/architecture.md).
func BenchmarkBuildRegions(b *testing.B) {
	cases := []struct {
		name  string
		job   func(testing.TB) *topology.JobGraph
		mode  exchange.Mode
		bytes bool // report bytes per subtask
	}{
		{"alltoall-blocking-p10000", func(tb testing.TB) *topology.JobGraph { return allToAllJob(tb, 10000) }, exchange.AllBlocking, false},
		{"alltoall-pipelined-p10000", func(tb testing.TB) *topology.JobGraph { return allToAllJob(tb, 10000) }, exchange.AllPipelined, false},
		{"alltoall-blocking-p1000", func(tb testing.TB) *topology.JobGraph { return allToAllJob(tb, 1000) }, exchange.AllBlocking, false},
		{"alltoall-pipelined-p1000", func(tb testing.TB) *topology.JobGraph { return allToAllJob(tb, 1000) }, exchange.AllPipelined, false},
		{"chains-100000", func(tb testing.TB) *topology.JobGraph { return chainsJob(tb, 100_000) }, exchange.PointwisePipelinedOnly, true},
		{"chains-1000000", func(tb testing.TB) *topology.JobGraph { return chainsJob(tb, 1_000_000) }, exchange.PointwisePipelinedOnly, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			g := c.job(b)
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				benchSink = region.Build(topology.NewExecutionTopology(g, c.mode))
			}
			runtime.ReadMemStats(&after)
			if c.bytes {
				perOp := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N)
				b.ReportMetric(perOp/float64(g.NumSubtasks()), "B/subtask")
			}
		})
	}
}

var naiveSink []int

// BenchmarkBuildRegionsNaive is the gonum reference of the property tests
// on the same all-to-all jobs: every execution edge expanded (p^2 edges),
// connected components over pipelined edges, SCC merge over blocking ones.
func BenchmarkBuildRegionsNaive(b *testing.B) {
	for _, p := range []int{1000, 100} {
		b.Run("alltoall-blocking-p"+strconv.Itoa(p), func(b *testing.B) {
			g := allToAllJob(b, p)
			b.ReportAllocs()
			for b.Loop() {
				naiveSink, _ = naiveRegions(expand(g, exchange.AllBlocking))
			}
		})
	}
}
