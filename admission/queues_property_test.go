package admission

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomMix builds a random job mix (a quarter of the jobs with a soft
// gang of 1 to the fitting slots, timing out after 20 to 220 ms) on a
// fresh harness: 4 to 12 slots; 1
// to 3 queues with random policies (StateAware among them) and
// maxRunningJobs, one in three preempting with a reclaim timeout of 0, 10
// or 20 ms; 2 to 7 jobs with 1
// to 4 regions that each fit the cluster alone, arriving within 50 ms.
// Drivers only where admission keeps them from flooding the cluster: in a
// queue with maxRunningJobs 1 (at most one driver of the queue at a time),
// or a StateAware queue whose jobs have one region each (at most two: the
// running job's and the starting one's); every region fits the cluster
// minus all the drivers that can coexist.
func randomMix(t *testing.T, seed uint64, policies ...Policy) *sim {
	rng := rand.New(rand.NewPCG(seed, 2024))
	slots := 4 + rng.IntN(9)
	nq := 1 + rng.IntN(3)
	var queues []QueueConfig
	drivers := make([]int, nq) // drivers that can coexist in each queue (0: no drivers)
	singleRegion := make([]bool, nq)
	total := 0
	for i := range nq {
		qc := QueueConfig{Name: fmt.Sprintf("root.q%d", i), Policy: policies[rng.IntN(len(policies))], MaxRunningJobs: []int{0, 0, 1, 2}[rng.IntN(4)]}
		if rng.IntN(3) == 0 {
			qc.Preempt, qc.ReclaimTimeout = true, time.Duration(rng.IntN(3))*10*ms
		}
		queues = append(queues, qc)
		switch {
		case rng.IntN(2) == 0:
		case qc.MaxRunningJobs == 1:
			drivers[i] = 1
		case qc.Policy == StateAware:
			drivers[i], singleRegion[i] = 2, true
		}
		if slots-total-drivers[i] < 1 {
			drivers[i], singleRegion[i] = 0, false
		}
		total += drivers[i]
	}
	s := newSim(t, Config{Slots: clusterSlots(slots), Queues: queues}, simConfig{checks: true, record: true})
	s.logf("seed %d: %d slots, queues %+v", seed, slots, queues)
	fit := slots - total
	nj := 2 + rng.IntN(6)
	for i := range nj {
		qi := rng.IntN(nq)
		nr := 1 + rng.IntN(4)
		if singleRegion[qi] {
			nr = 1
		}
		regions := make([]int, nr)
		durs := make([]time.Duration, nr)
		for r := range regions {
			regions[r] = 1 + rng.IntN(fit)
			durs[r] = time.Duration(1+rng.IntN(5)) * 10 * ms
		}
		spec := JobSpec{Name: fmt.Sprintf("j%d", i), Queue: queues[qi].Name, Priority: 1 + rng.IntN(10000)}
		if drivers[qi] > 0 && rng.IntN(3) > 0 {
			drv := small
			spec.Driver = &drv
		}
		if rng.IntN(4) == 0 {
			spec.Gang = &Gang{MinSlots: 1 + rng.IntN(fit), Hard: false, Timeout: time.Duration(20+rng.IntN(200)) * ms}
		}
		s.add(spec, time.Duration(rng.IntN(50))*ms, regions, durs, 1+rng.IntN(2), time.Duration(rng.IntN(30))*ms)
	}
	return s
}

// TestPropertyQueuesEveryJobFinishes: over random job mixes (fifo,
// priority and stateaware queues), the invariants hold after every step
// (the harness checks them: no slot in two pools, pools hold exactly what
// the admission granted them, queue limits and StateAware respected, every
// pool consistent), every job finishes with every region served, and a
// seed replays the same events.
func TestPropertyQueuesEveryJobFinishes(t *testing.T) {
	checkMixes(t, FIFO, Priority, StateAware)
}

// mixes is how many random mixes each property test of the queues runs
// (seeds mixFrom ... mixFrom+N-1).
var (
	mixes   = flag.Int("mixes", 200, "how many random mixes each TestPropertyQueues*/TestPropertyFairShare* runs")
	mixFrom = flag.Uint64("mixfrom", 1, "the first seed of the random mixes of TestPropertyQueues*/TestPropertyFairShare*")
)

func checkMixes(t *testing.T, policies ...Policy) {
	for seed := *mixFrom; seed < *mixFrom+uint64(*mixes); seed++ {
		s := randomMix(t, seed, policies...)
		finished := s.run(0)
		if !assert.True(t, finished, "seed %d: jobs did not finish: %v\n%s\n%s", seed, s.states(), s.tail(20), s.dump()) {
			continue
		}
		for _, j := range s.jobs {
			assert.Equal(t, JobCompleted, j.port.State(), "seed %d: job %s", seed, j.name)
			assert.Empty(t, j.failed, "seed %d: job %s: failed regions", seed, j.name)
			assert.Equal(t, len(j.regions), j.next, "seed %d: job %s: regions submitted", seed, j.name)
		}
		for i, f := range s.q.free {
			assert.Len(t, f, len(s.q.slots), "seed %d: profile %d: every slot free at the end", seed, i)
		}
		again := randomMix(t, seed, policies...)
		again.run(0)
		require.Equal(t, s.log, again.log, "seed %d: the same seed must replay the same events", seed)
	}
}

func TestPropertyFairShareEveryJobFinishes(t *testing.T) {
	checkMixes(t, FIFO, Priority, FairShare, StateAware)
}

// TestPropertyQueuesRegressions runs seeds of the random mixes beyond
// the default count whose mixes hold a case the admission must get
// right, with what it is: every job finishes, the invariants holding
// after every step.
func TestPropertyQueuesRegressions(t *testing.T) {
	for _, r := range []struct {
		seed     uint64
		policies []Policy
		what     string
	}{
		{8330, []Policy{FIFO, Priority, FairShare, StateAware}, "on a preempting fair-share queue with a reclaim timeout of 0, a job " +
			"does not claim the idle slots of a job whose preemption took its own at that instant: it would preempt them again, " +
			"and the instant would never end"},
		{491, []Policy{FIFO, Priority, StateAware}, "on a preempting fifo queue with a reclaim timeout of 0, the first job in fifo " +
			"order does not claim the idle slot of a higher-priority job that preempted at that instant: it would preempt again"},
		{5114, []Policy{FIFO, Priority, StateAware}, "the same with two preempting fifo queues"},
		{971, []Policy{FIFO, Priority, StateAware}, "two jobs of two sibling queues, each holding idle slots the other's head " +
			"lacks: a claim across queues takes the other's idle slots, the fair order of the queues flips with the grant, and the " +
			"other job does not claim them straight back in the same instant (it would, without end)"},
		{971, []Policy{FIFO, Priority, FairShare, StateAware}, "the same under the fair-share mix"},
		{10612, []Policy{FIFO, Priority, StateAware}, "a driver whose first regions cannot follow takes a free slot while " +
			"a higher-priority job of a preempting queue waits for more than the free slots; that job's preemption then serves " +
			"its first ask, and the ask after it, which the driver's slot would serve, came first only with the slots the " +
			"preemption freed (the instant's inputs decided together still hold)"},
		{10612, []Policy{FIFO, Priority, FairShare, StateAware}, "the same under the fair-share mix"},
		{14166, []Policy{FIFO, Priority, FairShare, StateAware}, "a timed preemption whose claimant's asks changed since (its region " +
			"served by its own slots, the next one larger) and that completes none of them whole is withdrawn, not fired: fired, its slot " +
			"came back to nobody, a driver whose first regions could not follow took it, and the victim's lost region then released the " +
			"slots that, with it, completed another job's waiting ask"},
		{34783, []Policy{FIFO, Priority, FairShare, StateAware}, "a driver whose first regions could not follow leaves the free slots " +
			"to a job of another queue whose gang they complete with the idle slots of a job behind it in its queue, which its claim " +
			"takes back at once: it no longer takes a slot that job's first ask, beside its gang, needed"},
		{45794, []Policy{FIFO, Priority, FairShare, StateAware}, "j1 preempts a slot of j4, ahead of it in its queue, for its " +
			"driver, counting on j4's idle slots for its first regions; a claim of j2, of another queue, then takes no idle slot of " +
			"j4 at that instant: it would make them placeholders of j2's gang, which no preemption takes, and j1's driver would " +
			"wait beside them with its first regions never fitting"},
		{5436, []Policy{FIFO, Priority, FairShare, StateAware}, "on a preempting stateaware queue with a reclaim timeout of 20 ms, " +
			"j2 preempts j4, ahead of it in fifo order, whose regions restart as the preemptions fall due: free slots do not make " +
			"j2's preemptions unneeded before the instant's grants (j4 takes them first; j2's claim would no longer complete, be " +
			"given up, its reserved slots go to j4, and j2 would preempt them all again after every reclaim timeout, without end)"},
		{113843, []Policy{FIFO, Priority, StateAware}, "four drivers up on 12 slots; j3, first in grant order, holds 8 idle slots " +
			"for a region of 9 that can never fit beside the other three drivers, and the jobs behind it (needing 9, 9 and 4) " +
			"held none: j3 is wedged, the claim passes to the next waiting job, and j4's claim takes 4 of j3's idle slots, so its " +
			"job ends, its driver with it, and j3's region fits"},
		{148823, []Policy{FIFO, Priority, StateAware}, "j4's driver reclaims a slot of j1 counting, for its first regions (8 of " +
			"10 slots), on j1's slots that a claim of j2 asks back for j2's driver: when they come back in the same instant j2's " +
			"driver takes one, and j4's would wait beside three drivers. The claims under way count as the drivers they will " +
			"grant: nothing is reclaimed for j4 then"},
		{12122945, []Policy{FIFO, Priority, FairShare, StateAware}, "on a preempting stateaware queue with a reclaim timeout of 0, " +
			"j2 (not started) preempted a slot of j3's region for its driver while j4, ahead of it in fifo order, waited to start: " +
			"the grant to j3, of that call, was retracted, its other slot went to j4's driver, j4 started and held j2 back, and j2's " +
			"driver and first regions no longer fit beside the drivers. Now j4 waits while j2's preemption is under way: j2 " +
			"starts first"},
	} {
		t.Run(fmt.Sprintf("seed=%d", r.seed), func(t *testing.T) {
			s := randomMix(t, r.seed, r.policies...)
			require.True(t, s.run(time.Minute), "%s\njobs did not finish: %v\n%s", r.what, s.states(), s.tail(20))
		})
	}
}
