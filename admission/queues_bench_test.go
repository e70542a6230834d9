package admission

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// BenchmarkAdmission runs jobs x 10 regions through the admission on a
// cluster of slots: every job submitted at time 0 to one fifo queue, each
// region a bulk of 1 to 4 slots running 10 to 100 ms, a job's regions one
// after another, each job with its own pool and Link (the harness, without
// the invariant checks). The pools are configured as the multi-job
// runtime's (package multijob): a slot whose tasks ended goes back to the
// admission at once, which decides who gets it (runtimePools). The timer
// runs from the admission's construction until every job has finished;
// the jobs, their pools and links are built, and the heap collected,
// before it starts, and each size runs once untimed first. A decision is
// one grant. The larger run reports its growth-10x: its time per run over
// the smaller one's (when both ran).
func BenchmarkAdmission(b *testing.B) {
	benchAdmission(b, "", benchSim, runtimePools)
}

// BenchmarkAdmissionKeepFreed runs the jobs of BenchmarkAdmission (and,
// queues100-, of BenchmarkAdmissionQueueTree) on pools that keep a freed
// slot for their own next region and give an idle one back after 1 ms
// (keptPools): the admission's claims then ask slots back for the jobs
// that come first, the claims' busiest case.
func BenchmarkAdmissionKeepFreed(b *testing.B) {
	benchAdmission(b, "", benchSim, keptPools)
	benchAdmission(b, "queues100-", treeSim, keptPools)
}

// BenchmarkAdmissionHeldBack runs the jobs of BenchmarkAdmission on a
// queue whose policy holds most of them back: stateaware- (one job
// starting at a time) and maxrunning50- (at most 50 jobs running). Every
// decision meets jobs it may not grant yet; finding that out allocates
// nothing.
func BenchmarkAdmissionHeldBack(b *testing.B) {
	benchAdmission(b, "stateaware-", heldSim(QueueConfig{Name: "root.default", Policy: StateAware}), runtimePools)
	benchAdmission(b, "maxrunning50-", heldSim(QueueConfig{Name: "root.default", MaxRunningJobs: 50}), runtimePools)
}

// heldSim returns benchSim with its jobs in the one queue qc.
func heldSim(qc QueueConfig) func(testing.TB, int, int, int, simConfig) (*sim, Config) {
	return func(b testing.TB, jobs, regions, slots int, sc simConfig) (*sim, Config) {
		s, cfg := benchSim(b, jobs, regions, slots, sc)
		cfg.Queues = []QueueConfig{qc}
		return s, cfg
	}
}

// BenchmarkAdmissionDrivers runs the jobs of BenchmarkAdmission, and of
// BenchmarkAdmissionQueueTree (queues100-), each with a driver: a job's
// driver takes a slot of its own before its first region, and keeps it
// until the job ends. While the cluster is full, most decisions meet
// drivers that the free slots could take but whose first regions could
// not follow them.
func BenchmarkAdmissionDrivers(b *testing.B) {
	benchAdmission(b, "", withDrivers(benchSim), runtimePools)
	benchAdmission(b, "queues100-", withDrivers(treeSim), runtimePools)
}

// withDrivers returns build with every job given a driver (of profile
// small) before the harness starts.
func withDrivers(build func(testing.TB, int, int, int, simConfig) (*sim, Config)) func(testing.TB, int, int, int, simConfig) (*sim, Config) {
	return func(b testing.TB, jobs, regions, slots int, sc simConfig) (*sim, Config) {
		s, cfg := build(b, jobs, regions, slots, sc)
		for _, j := range s.jobs {
			j.spec.Driver = &small
			j.spec.Start = []resource.Count{{Profile: resource.Unknown, N: j.regions[0]}}
			j.spec.StartAtOnce = true
		}
		return s, cfg
	}
}

// BenchmarkAdmissionPreempt runs the jobs of BenchmarkAdmission on a
// priority queue that preempts: samepriority- with every job of one
// priority (nothing to preempt: a decision must find that out without
// visiting the waiting jobs), priorities10- with each job's priority
// drawn from 1 to 10 (slots of lower-priority jobs are asked back for
// the higher ones as they wait).
func BenchmarkAdmissionPreempt(b *testing.B) {
	qc := QueueConfig{Name: "root.default", Policy: Priority, Preempt: true}
	benchAdmission(b, "samepriority-", heldSim(qc), runtimePools)
	benchAdmission(b, "priorities10-", withPriorities(heldSim(qc), 10), runtimePools)
}

// withPriorities returns build with every job given a priority from 1 to
// levels, drawn with a fixed seed.
func withPriorities(build func(testing.TB, int, int, int, simConfig) (*sim, Config), levels int) func(testing.TB, int, int, int, simConfig) (*sim, Config) {
	return func(b testing.TB, jobs, regions, slots int, sc simConfig) (*sim, Config) {
		s, cfg := build(b, jobs, regions, slots, sc)
		rng := rand.New(rand.NewPCG(3, 4))
		for _, j := range s.jobs {
			j.spec.Priority = 1 + rng.IntN(levels)
		}
		return s, cfg
	}
}

// runtimePools configures the benchmarks' pools as the multi-job runtime
// does (pool.Config.ReturnFreed, an idle timeout of 1 ns); keptPools as
// pools that keep a freed slot for their own next region. Neither times
// out: a run that finishes never reaches the timeout, and the harness
// then keeps no timer for it.
var (
	runtimePools = simConfig{poolTimeout: slotpool.NoTimeout, returnFreed: true}
	keptPools    = simConfig{poolTimeout: slotpool.NoTimeout}
)

// benchAdmission runs BenchmarkAdmission's two sizes on the harness build
// makes with pools configured by sc (sub-benchmarks named prefix +
// sizes). Besides the decisions it reports the slots asked back per run
// (Reclaim messages: a claim's work, as a grant is a decision's), and the
// calls of Decide (rounds/op: the harness's rounds, each after it
// delivered what the pools sent, until nothing is left to deliver at the
// instant).
func benchAdmission(b *testing.B, prefix string, build func(testing.TB, int, int, int, simConfig) (*sim, Config), sc simConfig) {
	var perRun [2]time.Duration
	for k, c := range []struct{ jobs, regions, slots int }{{1000, 10, 1000}, {10000, 10, 1000}} {
		b.Run(fmt.Sprintf("%sjobs%d-regions%d-slots%d", prefix, c.jobs, c.regions, c.slots), func(b *testing.B) {
			b.ReportAllocs()
			// runOnce runs the harness once, timing the run only.
			runOnce := func() *sim {
				b.StopTimer() // the inputs: the jobs, their pools and links
				s, cfg := build(b, c.jobs, c.regions, c.slots, sc)
				// Every run starts from a collected heap: the garbage of
				// building the inputs, and of the runs before, is not
				// the run's to collect.
				runtime.GC()
				b.StartTimer()
				s.start(cfg)
				require.True(b, s.run(0), "all jobs finish")
				return s
			}
			// One run before the timed ones (b.Loop's first call resets
			// the timer): the timed runs of both sizes then find the heap
			// grown to what a run of theirs needs, as every run after a
			// process's first does. Without it the larger size, run once
			// or twice in the time the smaller one runs many times, pays
			// nearly alone for the heap's first growth (memory from the
			// system: its pages faulted in, its spans set up), and its
			// growth-10x measures that.
			runOnce()
			grants, back, rounds := 0, 0, 0
			for b.Loop() {
				s := runOnce()
				grants += s.grants
				back += s.reclaims
				rounds += s.rounds
			}
			b.ReportMetric(float64(grants)/b.Elapsed().Seconds(), "decisions/s")
			b.ReportMetric(float64(grants)/float64(b.N), "decisions/op")
			b.ReportMetric(float64(back)/float64(b.N), "asked-back/op")
			b.ReportMetric(float64(rounds)/float64(b.N), "rounds/op")
			perRun[k] = b.Elapsed() / time.Duration(b.N)
			if k == 1 && perRun[0] > 0 {
				b.ReportMetric(float64(perRun[1])/float64(perRun[0]), "growth-10x")
			}
		})
	}
}

// benchSim returns the harness of BenchmarkAdmission with its jobs added
// and its pools configured by sc, and the configuration of its admission,
// which the caller starts.
func benchSim(b testing.TB, jobs, regions, slots int, sc simConfig) (*sim, Config) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := emptySim(b, sc)
	for i := range jobs {
		sizes := make([]int, regions)
		durs := make([]time.Duration, regions)
		for r := range sizes {
			sizes[r] = 1 + rng.IntN(4)
			durs[r] = time.Duration(1+rng.IntN(10)) * 10 * ms
		}
		s.add(JobSpec{Name: fmt.Sprintf("job%d", i)}, 0, sizes, durs, 1, 0)
	}
	return s, Config{Slots: clusterSlots(slots), Queues: defaultQueue}
}

// BenchmarkAdmissionQueueTree is BenchmarkAdmission with the jobs spread
// over 100 queues in a 3-level tree (root.tA.tB.tC: 4 x 5 x 5 leaves),
// with guarantees (every leaf 2 slots, every middle queue 10, every top
// queue 50, of 1,000) and maxima (every leaf 40, every top queue 300):
// each decision sorts the queues and checks their maxima. Its pools are
// the multi-job runtime's, as BenchmarkAdmission's.
func BenchmarkAdmissionQueueTree(b *testing.B) {
	benchAdmission(b, "queues100-", treeSim, runtimePools)
}

// benchTreeSim is benchSim's jobs, job i in leaf i mod 100 of the tree of
// BenchmarkAdmissionQueueTree, on pools that keep a freed slot for their
// own next region (the claims' busiest case: the tests of claims across
// queues run on it).
func benchTreeSim(b testing.TB, jobs, regions, slots int) (*sim, Config) {
	return treeSim(b, jobs, regions, slots, keptPools)
}

// treeSim is benchTreeSim with the pools configured by sc.
func treeSim(b testing.TB, jobs, regions, slots int, sc simConfig) (*sim, Config) {
	var queues, leaves []QueueConfig
	for a := range 4 {
		top := fmt.Sprintf("root.t%d", a)
		queues = append(queues, QueueConfig{Name: top, GuaranteedSlots: 50, MaxSlots: 300})
		for m := range 5 {
			mid := fmt.Sprintf("%s.m%d", top, m)
			queues = append(queues, QueueConfig{Name: mid, GuaranteedSlots: 10})
			for l := range 5 {
				leaves = append(leaves, QueueConfig{Name: fmt.Sprintf("%s.l%d", mid, l), GuaranteedSlots: 2, MaxSlots: 40})
			}
		}
	}
	queues = append(queues, leaves...)
	rng := rand.New(rand.NewPCG(1, 2))
	s := emptySim(b, sc)
	for i := range jobs {
		sizes := make([]int, regions)
		durs := make([]time.Duration, regions)
		for r := range sizes {
			sizes[r] = 1 + rng.IntN(4)
			durs[r] = time.Duration(1+rng.IntN(10)) * 10 * ms
		}
		s.add(JobSpec{Name: fmt.Sprintf("job%d", i), Queue: leaves[i%len(leaves)].Name}, 0, sizes, durs, 1, 0)
	}
	return s, Config{Slots: clusterSlots(slots), Queues: queues}
}

// TestBenchmarkJobsOnRuntimePools runs the benchmarks' jobs, fewer of
// them, on the multi-job runtime's pools with the invariants checked after
// every step: every job finishes, and, as a freed slot goes back to the
// admission at once and no pool keeps one, every region is granted whole,
// in one grant.
func TestBenchmarkJobsOnRuntimePools(t *testing.T) {
	sc := simConfig{checks: true, returnFreed: true}
	for _, c := range []struct {
		name  string
		build func(testing.TB, int, int, int, simConfig) (*sim, Config)
	}{{"one-queue", benchSim}, {"queue-tree", treeSim}} {
		t.Run(c.name, func(t *testing.T) {
			s, cfg := c.build(t, 400, 5, 300, sc)
			s.start(cfg)
			require.True(t, s.run(0), "all jobs finish")
			require.Equal(t, 400*5, s.grants, "one grant per region")
			require.Zero(t, s.revokes)
		})
	}
}
