package admission

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// treeMixes is how many random mixes TestPropertyQueueTrees runs, from
// seed treeFirst.
var (
	treeMixes = flag.Int("tree-mixes", 200, "how many random mixes TestPropertyQueueTrees runs")
	treeFirst = flag.Uint64("tree-first", 1, "the first seed of TestPropertyQueueTrees")
)

// randomTree builds random queues as tenants on 4 to 12 slots: one or two
// parents under root, each with one to three leaves, and perhaps a leaf
// of root; random guarantees (children's within their parent's) and
// maxima (at least the guarantee; children's guarantees within their
// parent's max), random policies (StateAware among them), maxRunningJobs,
// one leaf in three preempting with a reclaim timeout of 0, 10 or 20 ms.
// Leaves with maxRunningJobs 1 may have jobs with drivers (one at a time
// per leaf). It returns the queues, the leaves, and for each leaf the most
// slots a region of its jobs may take: every region fits each of its
// queue's caps (the cluster's included) minus the drivers that can
// coexist under that cap.
func randomTree(rng *rand.Rand, slots int, policies []Policy) (queues []QueueConfig, leaves []int, fit []int, drivers []bool) {
	type node struct {
		qc       QueueConfig
		parent   int // index in queues, -1: root
		driver   bool
		isParent bool
	}
	var nodes []node
	np := 1 + rng.IntN(2)
	for p := range np {
		qc := QueueConfig{Name: fmt.Sprintf("root.p%d", p), Policy: FIFO}
		if rng.IntN(2) == 0 {
			qc.GuaranteedSlots = rng.IntN(slots/2 + 1)
		}
		if rng.IntN(2) == 0 {
			qc.MaxSlots = max(qc.GuaranteedSlots, 2+rng.IntN(slots-1))
		}
		pi := len(nodes)
		nodes = append(nodes, node{qc: qc, parent: -1, isParent: true})
		left := qc.GuaranteedSlots
		if left == 0 {
			left = slots / 2
		}
		if qc.MaxSlots > 0 {
			left = min(left, qc.MaxSlots)
		}
		for l := range 1 + rng.IntN(3) {
			lc := QueueConfig{Name: fmt.Sprintf("%s.l%d", qc.Name, l), Policy: policies[rng.IntN(len(policies))], MaxRunningJobs: []int{0, 0, 1, 2}[rng.IntN(4)]}
			if left > 0 && rng.IntN(2) == 0 {
				lc.GuaranteedSlots = 1 + rng.IntN(left)
				left -= lc.GuaranteedSlots
			}
			if rng.IntN(3) == 0 {
				lc.MaxSlots = max(lc.GuaranteedSlots, 2+rng.IntN(slots-1))
				if qc.MaxSlots > 0 {
					// (never over its parent's: a larger one is refused,
					// and the parent's bounds the leaf all the same)
					lc.MaxSlots = min(lc.MaxSlots, qc.MaxSlots)
				}
			}
			nodes = append(nodes, node{qc: lc, parent: pi})
		}
	}
	if rng.IntN(2) == 0 {
		nodes = append(nodes, node{qc: QueueConfig{Name: "root.solo", Policy: policies[rng.IntN(len(policies))], GuaranteedSlots: rng.IntN(3)}, parent: -1})
	}
	for i := range nodes {
		if !nodes[i].isParent && rng.IntN(3) == 0 {
			nodes[i].qc.Preempt, nodes[i].qc.ReclaimTimeout = true, time.Duration(rng.IntN(3))*10*ms
		}
		nodes[i].driver = nodes[i].qc.MaxRunningJobs == 1 && rng.IntN(2) == 0
	}
	// caps of a leaf: its own max, its parent's, the cluster; drivers
	// under each.
	capOf := func(i int) int {
		if m := nodes[i].qc.MaxSlots; m > 0 {
			return m
		}
		return slots
	}
	under := func(i int) int { // drivers that can coexist under node i
		n := 0
		for k, x := range nodes {
			if x.driver && (k == i || x.parent == i) {
				n++
			}
		}
		return n
	}
	allDrivers := under(-2) // (no node is -2: count below)
	for _, x := range nodes {
		if x.driver {
			allDrivers++
		}
	}
	for i, x := range nodes {
		queues = append(queues, x.qc)
		if x.isParent {
			continue
		}
		f := min(capOf(i)-under(i), slots-allDrivers)
		if x.parent >= 0 {
			f = min(f, capOf(x.parent)-under(x.parent))
		}
		if f < 1 {
			nodes[i].driver = false
			f = 1 // (a leaf without room for a driver's job runs none)
		}
		leaves = append(leaves, i)
		fit = append(fit, f)
		drivers = append(drivers, nodes[i].driver)
	}
	return queues, leaves, fit, drivers
}

// randomTreeMix builds a random job mix over randomTree's queues: 2 to 8
// jobs with 1 to 4 regions each that fit their leaf (see randomTree),
// arriving within 50 ms, a quarter with a soft gang.
func randomTreeMix(t *testing.T, seed uint64, policies ...Policy) *sim {
	return treeMix(t, seed, false, policies)
}

// randomTreeMixLimited is randomTreeMix with, from a random stream of
// its own, a maxRunningJobs of 1 to 3 on a third of the parent queues:
// the jobs of all its leaves count against it.
func randomTreeMixLimited(t *testing.T, seed uint64, policies ...Policy) *sim {
	return treeMix(t, seed, true, policies)
}

// treeMix is randomTreeMix, with parents' maxRunningJobs if limits.
func treeMix(t *testing.T, seed uint64, limits bool, policies []Policy) *sim {
	rng := rand.New(rand.NewPCG(seed, 39))
	slots := 4 + rng.IntN(9)
	queues, leaves, fit, drivers := randomTree(rng, slots, policies)
	if limits {
		lr := rand.New(rand.NewPCG(seed, 0x11a1))
		for i := range queues {
			if strings.Count(queues[i].Name, ".") == 1 && queues[i].Name != "root.solo" && lr.IntN(3) == 0 {
				queues[i].MaxRunningJobs = 1 + lr.IntN(3)
			}
		}
	}
	s := newSim(t, Config{Slots: clusterSlots(slots), Queues: queues}, simConfig{checks: true, record: true})
	s.logf("seed %d: %d slots, queues %+v", seed, slots, queues)
	for i := range 2 + rng.IntN(7) {
		li := rng.IntN(len(leaves))
		nr := 1 + rng.IntN(4)
		regions := make([]int, nr)
		durs := make([]time.Duration, nr)
		for r := range regions {
			regions[r] = 1 + rng.IntN(fit[li])
			durs[r] = time.Duration(1+rng.IntN(5)) * 10 * ms
		}
		spec := JobSpec{Name: fmt.Sprintf("j%d", i), Queue: queues[leaves[li]].Name, Priority: 1 + rng.IntN(10000)}
		if drivers[li] && rng.IntN(3) > 0 {
			drv := small
			spec.Driver = &drv
		}
		if rng.IntN(4) == 0 {
			spec.Gang = &Gang{MinSlots: 1 + rng.IntN(fit[li]), Timeout: time.Duration(20+rng.IntN(200)) * ms}
		}
		s.add(spec, time.Duration(rng.IntN(50))*ms, regions, durs, 1+rng.IntN(2), time.Duration(rng.IntN(30))*ms)
	}
	return s
}

// TestPropertyQueueTrees: over random queue trees with guarantees and
// maxima, and random job mixes in them, the invariants hold after every
// step (the harness checks them: among them, no queue holds more than its
// maxSlots, its children's included, no StateAware queue has two jobs
// starting, and no slot moves across queues, by a claim or a reclaim,
// from a queue at or below its guarantee but the idle slots of a job that
// borrows: checked at every claim and every Reclaimed event), every job
// finishes, and a seed replays the same events. -tree-mixes runs more (tens of thousands outside CI),
// from seed -tree-first.
func TestPropertyQueueTrees(t *testing.T) {
	for seed := *treeFirst; seed < *treeFirst+uint64(*treeMixes); seed++ {
		s := randomTreeMixLimited(t, seed, FIFO, Priority, FairShare, StateAware)
		finished := s.run(0)
		if !assert.True(t, finished, "seed %d: jobs did not finish: %v\n%s\n%s", seed, s.states(), s.tail(20), s.dump()) {
			continue
		}
		for _, j := range s.jobs {
			assert.Equal(t, JobCompleted, j.port.State(), "seed %d: job %s", seed, j.name)
		}
		for _, u := range s.q.Usage() {
			assert.Zero(t, u.Used, "seed %d: queue %s holds nothing at the end", seed, u.Name)
		}
		again := randomTreeMixLimited(t, seed, FIFO, Priority, FairShare, StateAware)
		again.run(0)
		require.Equal(t, s.log, again.log, "seed %d: the same seed must replay the same events", seed)
	}
}

// reclaimAcrossMix builds a random mix in which reclaims across queues
// wait on their timeouts while the victims' queues change: 4 to 10 slots;
// root.a.x, guaranteed 1 to 4, preempting after 20 to 150 ms; root.a.y
// and root.b, guaranteed 0 to 2, root.b perhaps preempting too; random
// policies (not StateAware). 3 to 10 jobs of random priorities (few
// values: equal ones preempt nothing), 1 to 3 regions of 1 or 2 slots
// running 10 to 200 ms, arriving within 100 ms. Jobs of the victims'
// queues end while a reclaim waits, taking their queue to its guarantee.
func reclaimAcrossMix(t *testing.T, seed uint64) *sim {
	rng := rand.New(rand.NewPCG(seed, 0x7ec1))
	slots := 4 + rng.IntN(7)
	policies := []Policy{FIFO, Priority, FairShare}
	gx := 1 + rng.IntN(4)
	queues := []QueueConfig{
		{Name: "root.a.x", Policy: policies[rng.IntN(3)], GuaranteedSlots: gx, Preempt: true, ReclaimTimeout: time.Duration(2+rng.IntN(14)) * 10 * ms},
		{Name: "root.a.y", Policy: policies[rng.IntN(3)], GuaranteedSlots: min(rng.IntN(3), slots-gx)},
		{Name: "root.b", Policy: policies[rng.IntN(3)]},
	}
	queues[2].GuaranteedSlots = min(rng.IntN(3), slots-gx-queues[1].GuaranteedSlots)
	if rng.IntN(2) == 0 {
		queues[2].Preempt, queues[2].ReclaimTimeout = true, time.Duration(2+rng.IntN(14))*10*ms
	}
	s := newSim(t, Config{Slots: clusterSlots(slots), Queues: queues}, simConfig{checks: true, record: true})
	s.logf("seed %d: %d slots, queues %+v", seed, slots, queues)
	for i := range 3 + rng.IntN(8) {
		qc := queues[rng.IntN(len(queues))]
		nr := 1 + rng.IntN(3)
		regions := make([]int, nr)
		durs := make([]time.Duration, nr)
		for r := range regions {
			regions[r] = 1 + rng.IntN(2)
			durs[r] = time.Duration(1+rng.IntN(20)) * 10 * ms
		}
		spec := JobSpec{Name: fmt.Sprintf("j%d", i), Queue: qc.Name, Priority: []int{1, 1000, 5000, 9000}[rng.IntN(4)]}
		s.add(spec, time.Duration(rng.IntN(100))*ms, regions, durs, 1+rng.IntN(2), 0)
	}
	return s
}

// TestPropertyReclaimAcrossQueues: over reclaimAcrossMix's mixes every
// job finishes and the invariants hold after every step: among them, a
// reclaim across queues waiting on its timeout is withdrawn once it would
// take the victim's queue (or a parent of it below the parent both share)
// below its guarantee, and no task is cancelled by one that would. Runs
// -tree-mixes mixes from seed -tree-first.
func TestPropertyReclaimAcrossQueues(t *testing.T) {
	for seed := *treeFirst; seed < *treeFirst+uint64(*treeMixes); seed++ {
		s := reclaimAcrossMix(t, seed)
		finished := s.run(0)
		if !assert.True(t, finished, "seed %d: jobs did not finish: %v\n%s\n%s", seed, s.states(), s.tail(20), s.dump()) {
			continue
		}
		for _, u := range s.q.Usage() {
			assert.Zero(t, u.Used, "seed %d: queue %s holds nothing at the end", seed, u.Name)
		}
	}
}

// seedCase is a seed of a random mix that holds a case the admission
// must get right, and what that case is.
type seedCase struct {
	seed uint64
	what string
}

// TestPropertyReclaimAcrossQueuesRegressions runs seeds of
// reclaimAcrossMix beyond the default count whose mixes hold a case the
// admission must get right, with what it is: every job finishes, the
// invariants holding after every step.
func TestPropertyReclaimAcrossQueuesRegressions(t *testing.T) {
	for _, r := range []seedCase{
		{905471, "an idle slot a claim across queues asks back (from a job that borrows) is not preempted for a job of " +
			"another queue: taken, it went from one claim to the other, the claim took the job's other idle slot, its " +
			"queue's guarantee withdrew the preemption's other slot, and the decisions of the instant never ended"},
		{9720775, "a preemption across queues does not count the idle slots a job holds on loan as held above its queue's " +
			"guarantee: j0 (root.a.x, below its guarantee) preempted j3's slot of root.a.y counting j4's idle slot there, " +
			"j1's claim (of root.a.x too) then took that idle slot, as a claim may, the preemption was withdrawn, and the " +
			"slot kept for j0 went to j4 again: the decisions of one instant never ended"},
		{12751552, "a claim given up as the reclaim timeouts fire (its preemption across queues withdrawn, as the victim's " +
			"queue would drop below its guarantee) frees the slot a preemption of an idle one had brought back for it: a " +
			"decision follows in the same Decide, and the job waiting for one slot gets it (it stayed free)"},
	} {
		t.Run(fmt.Sprintf("seed=%d", r.seed), func(t *testing.T) {
			s := reclaimAcrossMix(t, r.seed)
			require.True(t, s.run(0), "%s\njobs did not finish: %v\n%s", r.what, s.states(), s.tail(20))
			for _, u := range s.q.Usage() {
				require.Zero(t, u.Used, "seed %d: queue %s holds nothing at the end", r.seed, u.Name)
			}
		})
	}
}

// TestPropertyQueueTreesRegressions runs seeds of the queue-tree mixes
// beyond the default count whose mixes hold a case the admission must get
// right, with what it is: every job finishes, the invariants holding
// after every step.
func TestPropertyQueueTreesRegressions(t *testing.T) {
	// Mixes with parents' maxRunningJobs (randomTreeMixLimited), by seed.
	limited := map[uint64]bool{14442794: true}
	for _, r := range []seedCase{
		{4167, "a job of a preempting queue below its guarantee, with slots of a lower-priority job of another queue asked " +
			"back by a claim, preempts a third job's slots: the preemption is not withdrawn as unneeded by counting the " +
			"claim's slots as coming because the preemption itself closed the gap to the guarantee (it would be made again " +
			"in the next decision, without end)"},
		{4180, "a job of a preempting queue below its guarantee takes, from a claim of a job of another subtree, slots " +
			"that claim asks back inside that subtree only while the subtree holds its guarantee without every slot it " +
			"is giving up"},
		{7, "a claim across queues takes no slot that would bring the victim's parent queue (below the parent the " +
			"two queues share) under its guarantee"},
		{17, "a claim across queues takes no slot of a queue holding exactly its guarantee, whose parent comes " +
			"after the claimant's queue in the fair order"},
		{101, "a claim across queues takes from a subtree no more than it holds above its guarantee, counting the " +
			"slots it gives up already"},
		{27, "two jobs of two queues each hold an idle slot at or under their queues' guarantees and wait for each " +
			"other's: the one whose ask its queue is not assured yields its idle slot to a claim"},
		{1112, "the first job in the fair order borrows (its ask is more than its queue is assured) and its claim " +
			"stops at a guarantee: the job behind it, within its guarantee, claims its idle slots although it comes first"},
		{1533, "the idle slots of a job that borrows do not count against its queue's guarantee: a claim takes them " +
			"beside the slots the queue holds above its guarantee"},
		{2119, "a queue's assured slots are within its parent's maxSlots, less its siblings' guarantees"},
		{4950, "after a claim stopped at a guarantee, a job behind claims idle slots of a job ahead whose queue " +
			"holds them above its guarantee"},
		{25248, "the slots a queue is assured leave out the drivers of other queues (never asked back), beyond " +
			"their guarantees"},
		{54611, "a driver of a preempting queue whose first regions do not fit the room its parent's maxSlots " +
			"leaves preempts nothing: its claim would be given up for that at once, the slot going back to its " +
			"victim and preempted again, without end within the instant"},
		{165259, "a preemption across queues withdrawn because its claimant's queue came to hold its guarantee (a grant of " +
			"the claimant's first ask, then a claim for its second that kept the preempted slot coming) gives up the " +
			"claim's reservation that nothing completes any more, instead of keeping the free slot reserved idle"},
		{188833, "a free slot (a gang's placeholder released at its timeout) kept for a claimant whose preemption it made " +
			"unneeded brings the claimant's queue to its guarantee: its other preemption across queues is withdrawn, " +
			"its claim given up, and the slots it kept go to the job they complete in the same decision"},
		{204361, "a driver whose first regions did not fit the free slots, and then came to it by a claim of an idle " +
			"slot in the same instant, is no driver that keeps a slot it cannot use (the claim also made room " +
			"under another queue's maxSlots; that room was not there when the driver was granted)"},
		{245417, "a job whose first ask, served by a claim after a driver's grant in the same instant, needed " +
			"slots the driver's did not give, did not wait for its next ask then: the driver took nothing it needed"},
		{430373, "a claimant with a gang placeholder counts it toward what its claim completes, as the withdrawal of " +
			"unneeded preemptions does: counted there and not in the claim, the claim asked back a slot, the " +
			"withdrawal left it short of it, the claim was given up and made again, without end within the instant"},
		{576687, "the slots a job's pool gives back after the admission revoked one of them at the same instant (the " +
			"bulk that lost its task stops) answer that Revoke: a driver granted before they came back took none of " +
			"them from a waiting request"},
		{821686, "a gang's placeholders reserved from slots that came back after a driver's grant, as answers to the " +
			"admission's own claim, were not there when the driver took its slot: the driver took nothing the " +
			"gang's first ask needed then"},
		{1137088, "a slot asked back with a Reclaim whose claim was given up, and which its job's pool then gave " +
			"back in the same instant, answers that Reclaim: it was not there when a driver took its slot before"},
		{2483074, "j1's driver takes the last free slot while j2 waits for a slot its queue's maxSlots (2, both held by " +
			"j2) has no room for; a preemption then revokes j2's two slots in the same instant: the room that request fits " +
			"in now came with the admission's own Revoke, not with an input decided after the driver"},
		{2707675, "j3 ends while one of its slots is being asked back for a claim of another job; handing that slot over " +
			"gives the claim up (its claimant holds its fair share), which gives the claim's other slots back to their owners, " +
			"j3 among them: the ended job's slots are handed over ownerless, so none goes back to it, and the list walked " +
			"is not shortened under the walk (a cleared entry read as slot index 0, granted twice)"},
		{13866888, "a preemption across queues withdrawn because the victim's queue would go below its guarantee (j2 of " +
			"root.solo ended at 40 ms) leaves its claimant j6 (4 slots) with 2 reserved and 1 coming: the free slot j2 gave " +
			"back completes the claim and is kept for it, as when a preemption is withdrawn as unneeded, instead of the claim " +
			"keeping 2 slots reserved that nothing completes"},
		{14442794, "on 12 slots root.p0.l0 and root.solo (fairshare, both guaranteed 2) each hold 6 idle slots for a job at " +
			"its share (j1, 6 of 10; j0, 6 of 7), behind a job below its share waiting for 11, more than its queue is " +
			"assured (10) while the other holds its guarantee (j5, j3): no claim of those can complete, and the jobs at " +
			"their shares, overtaken by them, claimed nothing, all 12 slots idle; now a job at its share behind one out of " +
			"reach claims (within the guarantees)"},
	} {
		t.Run(fmt.Sprintf("seed=%d", r.seed), func(t *testing.T) {
			s := treeMix(t, r.seed, limited[r.seed], []Policy{FIFO, Priority, FairShare, StateAware})
			require.True(t, s.run(0), "%s\njobs did not finish: %v\n%s", r.what, s.states(), s.tail(20))
		})
	}
}
