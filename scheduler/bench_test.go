package scheduler_test

import (
	"fmt"
	"runtime"
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
// built once, outside the timed loop. It reports events/s, B/subtask and
// allocs/subtask, and for the larger job its growth-10x: its time per run
// over the smaller one's (when both ran).
func BenchmarkSchedulerJob(b *testing.B) {
	var perRun [2]time.Duration
	for k, p := range []int{10_000, 100_000} {
		n := 10 * p
		b.Run(fmt.Sprintf("chains-%d", n), func(b *testing.B) {
			rs := region.FromJob(benchChains(b, p), exchange.AllBlocking)
			const nSlots = 1000
			slots := make([]scheduler.Slot, nSlots)
			for i := range slots {
				slots[i] = scheduler.Slot{ID: slotpool.SlotID(i), Profile: resource.Unknown}
			}
			now := time.Unix(0, 0)
			var queue fifo // deployed tasks, oldest first; reused across runs
			b.ReportAllocs()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			bytes0, allocs0 := ms.TotalAlloc, ms.Mallocs
			b.ResetTimer()
			events := 0
			for i := 0; i < b.N; i++ {
				s := scheduler.New(rs, scheduler.Config{ReuseReady: true}) // Deploy is copied at once
				require.NoError(b, s.Offer(now, slots...))
				require.NoError(b, s.Start(now))
				for {
					queue.push(s.Ready().Deploy)
					d, ok := queue.pop()
					if !ok {
						break
					}
					if err := s.TaskFinished(now, d.Task, d.Attempt); err != nil {
						b.Fatal(err)
					}
					events++
				}
				if s.State() != scheduler.JobFinished {
					b.Fatalf("job %v", s.State())
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&ms)
			tasks := float64(n) * float64(b.N)
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(ms.TotalAlloc-bytes0)/tasks, "B/subtask")
			b.ReportMetric(float64(ms.Mallocs-allocs0)/tasks, "allocs/subtask")
			perRun[k] = b.Elapsed() / time.Duration(b.N)
			if k == 1 && perRun[0] > 0 {
				// the time per run over that of the 10x smaller job, measured just before
				b.ReportMetric(float64(perRun[1])/float64(perRun[0]), "growth-10x")
			}
		})
	}
}

// fifo is a queue of deployments that reuses its storage: the harness
// should not cost more than the scheduler it measures.
type fifo struct {
	buf  []scheduler.Deployment
	head int
}

// push appends ds (copied).
func (q *fifo) push(ds []scheduler.Deployment) {
	if q.head > 0 && q.head >= len(q.buf)/2 {
		n := copy(q.buf, q.buf[q.head:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.buf = append(q.buf, ds...)
}

// pop removes the oldest deployment.
func (q *fifo) pop() (scheduler.Deployment, bool) {
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
		return scheduler.Deployment{}, false
	}
	d := q.buf[q.head]
	q.head++
	return d, true
}
