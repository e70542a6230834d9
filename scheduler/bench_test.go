package scheduler_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// benchChains is 10 vertices of parallelism p connected by forward edges.
func benchChains(tb testing.TB, p int) *topology.JobGraph {
	tb.Helper()
	b := topology.NewBuilder(fmt.Sprintf("chains-10x%d", p))
	for i := range 10 {
		b.AddVertex(topology.JobVertex{ID: fmt.Sprintf("v%d", i), Parallelism: p})
		if i > 0 {
			b.Connect(fmt.Sprintf("v%d", i-1), fmt.Sprintf("v%d", i), exchange.Forward)
		}
	}
	job, err := b.Build()
	require.NoError(tb, err)
	return job
}

// BenchmarkSchedulerJob runs the scheduler alone, without a simulator:
// all-blocking pointwise chains (every subtask its own region) on 1,000
// slots; the loop reports the deployed tasks finished, oldest first,
// until the job finishes. A task event is one finish report. Regions are
// built once, outside the timed loop.
func BenchmarkSchedulerJob(b *testing.B) {
	for _, p := range []int{10_000, 100_000} {
		n := 10 * p
		b.Run(fmt.Sprintf("chains-%d", n), func(b *testing.B) {
			rs := region.FromJob(benchChains(b, p), exchange.AllBlocking)
			const nSlots = 1000
			slots := make([]scheduler.Slot, nSlots)
			for i := range slots {
				slots[i] = scheduler.Slot{ID: slotpool.SlotID(i), Profile: resource.Unknown}
			}
			now := time.Unix(0, 0)
			b.ReportAllocs()
			b.ResetTimer()
			events := 0
			for i := 0; i < b.N; i++ {
				s := scheduler.New(rs, scheduler.Config{ReuseReady: true}) // Deploy is copied at once
				require.NoError(b, s.Offer(now, slots...))
				require.NoError(b, s.Start(now))
				var queue []scheduler.Deployment
				for {
					queue = append(queue, s.Ready().Deploy...)
					if len(queue) == 0 {
						break
					}
					d := queue[0]
					queue = queue[1:]
					if err := s.TaskFinished(now, d.Task, d.Attempt); err != nil {
						b.Fatal(err)
					}
					events++
				}
				if s.State() != scheduler.JobFinished {
					b.Fatalf("job %v", s.State())
				}
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
