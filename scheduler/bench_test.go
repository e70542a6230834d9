package scheduler_test

import (
	"fmt"
	"math/rand/v2"
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
//
// chains-1000000-any-order is the larger job with each finish taken at
// random among the deployed tasks (seeded), as tasks of unequal durations
// end in a runtime: the same work, but the scheduler's per-task and
// per-region records are then touched out of order, far apart, so it
// measures what the caches cost.
func BenchmarkSchedulerJob(b *testing.B) {
	var perRun [2]time.Duration
	for k, bc := range []struct {
		p        int
		anyOrder bool
	}{{10_000, false}, {100_000, false}, {100_000, true}} {
		n := 10 * bc.p
		name := fmt.Sprintf("chains-%d", n)
		if bc.anyOrder {
			name += "-any-order"
		}
		b.Run(name, func(b *testing.B) {
			rs := region.FromJob(benchChains(b, bc.p), exchange.AllBlocking)
			const nSlots = 1000
			slots := make([]scheduler.Slot, nSlots)
			for i := range slots {
				slots[i] = scheduler.Slot{ID: slotpool.SlotID(i), Profile: resource.Unknown}
			}
			now := time.Unix(0, 0)
			var queue running // deployed tasks; reused across runs
			b.ReportAllocs()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			bytes0, allocs0 := ms.TotalAlloc, ms.Mallocs
			b.ResetTimer()
			events := 0
			for i := 0; i < b.N; i++ {
				s := newScheduler(b, rs, scheduler.Config{})
				if bc.anyOrder {
					queue.rng = rand.NewPCG(uint64(i+1), 0) // the same orders in every benchmark run
				}
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
			if k < len(perRun) {
				perRun[k] = b.Elapsed() / time.Duration(b.N)
			}
			if k == 1 && perRun[0] > 0 {
				// the time per run over that of the 10x smaller job, measured just before
				b.ReportMetric(float64(perRun[1])/float64(perRun[0]), "growth-10x")
			}
		})
	}
}

// running holds the deployed tasks, reusing its storage: the harness
// should not cost more than the scheduler it measures. Without rng it is
// a queue, oldest first; with it, pop takes a random one.
type running struct {
	buf  []scheduler.Deployment
	head int
	rng  *rand.PCG
}

// push appends ds (copied).
func (q *running) push(ds []scheduler.Deployment) {
	if q.head > 0 && q.head >= len(q.buf)/2 {
		n := copy(q.buf, q.buf[q.head:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.buf = append(q.buf, ds...)
}

// pop removes the oldest deployment, or a random one with rng.
func (q *running) pop() (scheduler.Deployment, bool) {
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
		return scheduler.Deployment{}, false
	}
	if q.rng != nil {
		j := q.head + int(q.rng.Uint64()%uint64(len(q.buf)-q.head))
		q.buf[q.head], q.buf[j] = q.buf[j], q.buf[q.head]
	}
	d := q.buf[q.head]
	q.head++
	return d, true
}
