package admission

import (
	"fmt"
	"slices"

	"github.com/regionsched/regionsched/resource"
)

// checkInvariants checks the admission's state, for tests (through
// package internal/inspect for other packages' tests); it costs
// O(slots + jobs) (and a matching per waiting job). Call it when the
// admission is quiet: after Decide (its inputs only record what
// happened). It returns the first violation found, naming the slot or job:
//
//   - capacity: Capacity counts every slot, those AddSlots added
//     included and those RemoveSlots removed not, and every slot is
//     indexed by its id (a removed one by none);
//   - bookkeeping: every slot not removed is in exactly one place (a free stack, a
//     job's granted, yielding, driver, reserved or placeholder slots), and
//     the slot's own state agrees; a slot being reclaimed for a claimant
//     is among the claimant's incoming slots; a job's granted count is
//     what it owns; the counters of free, reserved, placeholder and
//     pinned slots (per profile: drivers' and placeholders, wedged.go),
//     of each queue's held slots, starting and running jobs add up (and
//     those of each job's asks by size); no
//     queue runs more jobs than its maxRunningJobs, nor more than one
//     starting under StateAware; a job that ended holds nothing; each
//     queue counts what its subtree holds, and none holds more than its
//     maxSlots (queuetree_check.go); the trees of victims hold each job
//     that holds slots a claim may take, at its priority, the idle one
//     those that hold idle slots (claim_streams.go);
//   - no idle slot beside a waiting job: no job that may be granted now
//     (not held back by StateAware, maxRunningJobs or a gang's requeue
//     backoff) waits for its gang, its driver or the first of its asks in
//     the order it is served (an all-or-nothing ask whole) while the free
//     slots, with those reserved for it and its placeholders, would
//     complete it;
//   - a reservation is kept only for a claim that completes what its
//     claimant lacks: the claimant waits, may be granted, and its
//     reserved and incoming slots (with its placeholders) complete its
//     first need; none reserved for a waiting driver is one it may not
//     take (driverslot.go);
//   - under fair share no job holding its share keeps a claim (slots
//     reserved or coming to it) while a job of its queue below its share
//     waits and may be granted, but for the slots that job yields to the
//     claim (see overtaken);
//   - speculative asks: each is of a job that has not ended, and none
//     waits beside a free slot it may take (see speculative.go);
//   - a timed preemption still pending has its reason: its claimant has
//     not ended, waits, has a higher priority than the victim, which is
//     of its queue, and is not such a job at its fair share; across
//     queues, the victim's queue, and each parent of it below the parent
//     it shares with the claimant's, holds at least its guarantee without
//     the slots its subtree gives up to other queues (leavingSlots), as
//     each did when such a preemption's timeout cancelled a task
//     (fireRevokes);
//   - no preemption took a slot twice (takeFrom: its Reclaimed events
//     count each victim's slots once);
//   - no reclaim across queues took a queue at or below its guarantee,
//     nor was made for a queue that held its guarantee
//     (checkReclaimGuarantee); no claim across queues took a queue, or a
//     parent of it below the parent it shares with the claimant's, below
//     its guarantee, but by the idle slots of a job that borrows
//     (checkClaimGuarantees, claim_guarantees.go);
//   - a reclaim never serves what the queue's policy holds back, and
//     never leaves its claimant unable to progress: no job reclaims in an
//     instant in which its queue held it back (StateAware,
//     maxRunningJobs) before, and a job that reclaimed for its driver at
//     this instant could hold its driver with its first regions in the
//     cluster without the other jobs' drivers and placeholders;
//   - slots that come back at one instant, a job's end included, are
//     decided together: no driver granted at this instant, whose first
//     regions could not follow, holds a slot that, with the free slots
//     that were free then or that the instant's inputs freed since,
//     would serve the request of a job that may be granted and waited
//     then (see driverYields);
//   - no driver granted at this instant took a slot whose leaving the
//     cluster as configured leaves a region of its job no room while a
//     slot of another profile would have left them all room
//     (driverslot.go).
//
// After a decision cut for a driver's first asks (startcut.go), which
// leaves the rest of its instant to the next decision, the rules about
// idle slots, claims, speculative asks and drivers decided together are
// left to that decision.
func (q *Queues) checkInvariants() error {
	if q.broken != nil {
		return q.broken
	}
	if err := q.checkCapacity(); err != nil {
		return err
	}
	if err := q.checkBookkeeping(); err != nil {
		return err
	}
	if err := q.checkCounters(); err != nil {
		return err
	}
	if err := q.checkVictimTrees(); err != nil {
		return err
	}
	if err := q.checkQueueSets(); err != nil {
		return err
	}
	if err := q.checkAsking(); err != nil {
		return err
	}
	if err := q.checkBounds(); err != nil {
		return err
	}
	if err := q.checkTenants(); err != nil {
		return err
	}
	if !q.cut() {
		// (A decision cut for a driver's first asks, startcut.go, or by
		// a cancellation, cancelcut.go, left the rest of its instant to
		// the next: these are about a decision that went through.)
		if err := q.checkNoIdleSlot(); err != nil {
			return err
		}
		if err := q.checkClaims(); err != nil {
			return err
		}
		if err := q.checkSpeculative(); err != nil {
			return err
		}
	}
	if err := q.checkReclaimRules(); err != nil {
		return err
	}
	if !q.cut() {
		if err := q.checkDriversDecided(); err != nil {
			return err
		}
	}
	if err := q.checkDriverSlots(); err != nil {
		return err
	}
	return q.checkPreemptions()
}

// slotName names a slot in a violation.
func (q *Queues) slotName(idx int32) string {
	s := &q.slots[idx]
	return fmt.Sprintf("slot %d (%v)", s.slot.ID, s.slot.Profile)
}

// jobAt returns the job of an id a slot refers to, or an error.
func (q *Queues) jobAt(idx int32, what string, id JobID) (*job, error) {
	if id < 0 || int(id) >= len(q.jobs) {
		return nil, fmt.Errorf("admission: %s: %s is job id %d, no such job", q.slotName(idx), what, id)
	}
	if q.jobs[id] == nil {
		return nil, fmt.Errorf("admission: %s: %s is job id %d, a job forgotten", q.slotName(idx), what, id)
	}
	return q.jobs[id], nil
}

// checkBookkeeping checks that every slot is in exactly one place and
// that its state says the same.
func (q *Queues) checkBookkeeping() error {
	places := slotPlaces{q: q, of: make([]string, len(q.slots))}
	if err := q.checkFreeStacks(&places); err != nil {
		return err
	}
	nReserved, nPlaceholders := 0, 0
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		if j.state.Terminal() || j.state == JobNew {
			if len(j.held)+len(j.yielding)+len(j.reserved)+len(j.incoming)+len(j.placeholders) > 0 || j.granted != 0 {
				return fmt.Errorf("admission: job %s is %v but holds slots: held %d, yielding %d, reserved %d, incoming %d, placeholders %d, granted %d",
					j.spec.Name, j.state, len(j.held), len(j.yielding), len(j.reserved), len(j.incoming), len(j.placeholders), j.granted)
			}
			continue // (its driver's slot, if it had one, is on a free stack)
		}
		if err := q.checkJobSlots(j, &places); err != nil {
			return err
		}
		nReserved += len(j.reserved)
		nPlaceholders += len(j.placeholders)
		if err := q.checkJobAsks(j); err != nil {
			return err
		}
	}
	if nReserved != q.nReserved || nPlaceholders != q.nPlaceholders {
		return fmt.Errorf("admission: %d slots reserved and %d placeholders, counted %d and %d", nReserved, nPlaceholders, q.nReserved, q.nPlaceholders)
	}
	if err := q.checkPinned(); err != nil {
		return err
	}
	return q.checkEverySlotPlaced(&places)
}

// slotPlaces records where checkBookkeeping found each slot: a slot must
// be in exactly one place.
type slotPlaces struct {
	q  *Queues
	of []string // by slot index: the place, or ""
}

// put records slot idx in place, or says why it cannot be there.
func (p *slotPlaces) put(idx int32, place string) error {
	if idx < 0 || int(idx) >= len(p.of) {
		return fmt.Errorf("admission: %s lists slot index %d, no such slot", place, idx)
	}
	if p.of[idx] != "" {
		return fmt.Errorf("admission: %s is in two places: %s and %s", p.q.slotName(idx), p.of[idx], place)
	}
	p.of[idx] = place
	return nil
}

// checkFreeStacks checks that the free stacks hold free slots of their
// profile, as many as nFree says.
func (q *Queues) checkFreeStacks(places *slotPlaces) error {
	nFree := 0
	for p, f := range q.free {
		for _, idx := range f {
			if err := places.put(idx, fmt.Sprintf("the free stack of %v", q.profiles[p])); err != nil {
				return err
			}
			if s := &q.slots[idx]; s.state != slotFree || s.profile != int32(p) || s.owner != noJob || s.claimant != noJob {
				return fmt.Errorf("admission: %s is on the free stack of %v but its state is %d, owner %d, claimant %d", q.slotName(idx), q.profiles[p], s.state, s.owner, s.claimant)
			}
			nFree++
		}
	}
	if nFree != q.nFree {
		return fmt.Errorf("admission: the free stacks hold %d slots, nFree says %d", nFree, q.nFree)
	}
	return nil
}

// checkJobSlots checks that the slots a live job lists (held, yielded,
// reserved, placeholders, its driver's, incoming) are in the state that
// says so, and that its count of granted slots is what it owns.
func (q *Queues) checkJobSlots(j *job, places *slotPlaces) error {
	name := j.spec.Name
	for pos, idx := range j.held {
		if err := places.put(idx, "the granted slots of job "+name); err != nil {
			return err
		}
		if s := &q.slots[idx]; s.state != slotGranted || s.owner != j.id || int(s.pos) != pos {
			return fmt.Errorf("admission: %s is granted to job %s (position %d) but its state is %d, owner %d, position %d", q.slotName(idx), name, pos, s.state, s.owner, s.pos)
		}
	}
	for _, idx := range j.yielding {
		if err := places.put(idx, "the slots job "+name+" yields"); err != nil {
			return err
		}
		if s := &q.slots[idx]; s.state != slotReclaiming || s.owner != j.id {
			return fmt.Errorf("admission: %s is yielded by job %s but its state is %d, owner %d", q.slotName(idx), name, s.state, s.owner)
		}
	}
	for _, idx := range j.reserved {
		if err := places.put(idx, "the slots reserved for job "+name); err != nil {
			return err
		}
		if s := &q.slots[idx]; s.state != slotReserved || s.claimant != j.id {
			return fmt.Errorf("admission: %s is reserved for job %s but its state is %d, claimant %d", q.slotName(idx), name, s.state, s.claimant)
		}
	}
	for _, idx := range j.placeholders {
		if err := places.put(idx, "the placeholders of job "+name); err != nil {
			return err
		}
		if s := &q.slots[idx]; s.state != slotPlaceholder || s.owner != j.id {
			return fmt.Errorf("admission: %s is a placeholder of job %s but its state is %d, owner %d", q.slotName(idx), name, s.state, s.owner)
		}
	}
	driver := 0
	if j.hasSlot {
		driver = 1
		if err := places.put(j.driverSlot, "the driver of job "+name); err != nil {
			return err
		}
		if s := &q.slots[j.driverSlot]; s.state != slotDriver || s.owner != j.id {
			return fmt.Errorf("admission: %s runs the driver of job %s but its state is %d, owner %d", q.slotName(j.driverSlot), name, s.state, s.owner)
		}
	}
	if owns := len(j.held) + len(j.yielding) + len(j.placeholders) + driver; owns != j.granted {
		return fmt.Errorf("admission: job %s is counted %d slots but owns %d (granted %d, yielding %d, placeholders %d, driver %d)",
			name, j.granted, owns, len(j.held), len(j.yielding), len(j.placeholders), driver)
	}
	if (len(j.held) > 0) != j.inHolders {
		return fmt.Errorf("admission: job %s holds %d reclaimable slots but is in its queue's holders: %v", name, len(j.held), j.inHolders)
	}
	for _, idx := range j.incoming {
		if idx < 0 || int(idx) >= len(q.slots) {
			return fmt.Errorf("admission: job %s has incoming slot index %d, no such slot", name, idx)
		}
		if s := &q.slots[idx]; s.state != slotReclaiming || s.claimant != j.id {
			return fmt.Errorf("admission: %s is coming to job %s but its state is %d, claimant %d", q.slotName(idx), name, s.state, s.claimant)
		}
	}
	if i := slices.IndexFunc(j.queue.reservers, func(x *job) bool { return x == j }); (i >= 0) != (len(j.reserved) > 0) || (i >= 0 && i != j.reserverPos) {
		return fmt.Errorf("admission: job %s has %d reserved slots; its place among its queue's reservers is %d (recorded %d)", name, len(j.reserved), i, j.reserverPos)
	}
	return nil
}

// checkJobAsks checks a job's count of asks per size bucket and the bits
// that say which buckets have asks.
func (q *Queues) checkJobAsks(j *job) error {
	var sizes [maxBucket + 1]int
	for a := j.asks.first; a != nil; a = a.next {
		sizes[a.bucket]++
	}
	if s := j.asks.sizes; s != nil && *s != sizes {
		return fmt.Errorf("admission: job %s counts its asks per size bucket %v, they are %v", j.spec.Name, *s, sizes)
	}
	for b, n := range sizes {
		if bit := j.asks.nonEmpty[b/64]&(1<<(b%64)) != 0; bit != (n > 0) {
			return fmt.Errorf("admission: job %s has %d asks of size bucket %d, its bit says %v", j.spec.Name, n, b, bit)
		}
	}
	return nil
}

// checkEverySlotPlaced checks that every slot was found in a place, and
// that a slot reclaimed for a job is among that job's incoming slots.
func (q *Queues) checkEverySlotPlaced(places *slotPlaces) error {
	for idx := range q.slots {
		s := &q.slots[idx]
		if s.state == slotGone {
			if places.of[idx] != "" {
				return fmt.Errorf("admission: %s was removed but is in %s", q.slotName(int32(idx)), places.of[idx])
			}
			continue
		}
		if places.of[idx] == "" {
			return fmt.Errorf("admission: %s (state %d, owner %d) is nowhere", q.slotName(int32(idx)), s.state, s.owner)
		}
		if s.state == slotReclaiming && s.claimant != noJob {
			c, err := q.jobAt(int32(idx), "its claimant", s.claimant)
			if err != nil {
				return err
			}
			if !slices.Contains(c.incoming, int32(idx)) {
				return fmt.Errorf("admission: %s is reclaimed for job %s (%v), not among its incoming slots", q.slotName(int32(idx)), c.spec.Name, c.state)
			}
		}
	}
	return nil
}

// checkCounters checks the queues' counters and limits.
func (q *Queues) checkCounters() error {
	type count struct{ held, idle, maxHeld, starting, running, weight int }
	counts := map[*queue]*count{}
	for _, qu := range q.qorder {
		counts[qu] = &count{}
	}
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		c := counts[j.queue]
		if c == nil {
			return fmt.Errorf("admission: job %s is in queue %s, which is not listed", j.spec.Name, j.queue.cfg.Name)
		}
		c.held += len(j.held)
		idle := 0
		for _, idx := range j.held {
			if q.slots[idx].idle {
				idle++
			}
		}
		if idle != j.idleHeld {
			return fmt.Errorf("admission: job %s holds %d slots unused, counted %d", j.spec.Name, idle, j.idleHeld)
		}
		c.idle += idle
		c.maxHeld = max(c.maxHeld, len(j.held))
		switch j.state {
		case JobStarting:
			c.starting++
			c.running++
			c.weight += j.spec.Priority
		case JobRunning:
			c.running++
			c.weight += j.spec.Priority
		}
	}
	listed := 0
	for _, qu := range q.qorder {
		listed += len(qu.startingJobs)
	}
	if listed != q.nStarting {
		return fmt.Errorf("admission: the queues list %d jobs starting under stateaware, counted %d", listed, q.nStarting)
	}
	for _, qu := range q.qorder {
		c := counts[qu]
		switch {
		case c.held != qu.heldSlots:
			return fmt.Errorf("admission: queue %s: its jobs hold %d reclaimable slots, counted %d", qu.cfg.Name, c.held, qu.heldSlots)
		case c.idle != qu.idleHeld:
			return fmt.Errorf("admission: queue %s: its jobs hold %d reclaimable slots unused, counted %d", qu.cfg.Name, c.idle, qu.idleHeld)
		case c.maxHeld != qu.maxHeld:
			return fmt.Errorf("admission: queue %s: a job of it holds at most %d reclaimable slots, counted %d", qu.cfg.Name, c.maxHeld, qu.maxHeld)
		case c.starting != qu.starting || c.running != qu.running:
			return fmt.Errorf("admission: queue %s: %d jobs starting and %d running, counted %d and %d", qu.cfg.Name, c.starting, c.running, qu.starting, qu.running)
		case c.weight != qu.weight:
			return fmt.Errorf("admission: queue %s: the priorities of its running jobs add up to %d, counted %d", qu.cfg.Name, c.weight, qu.weight)
		case qu.cfg.MaxRunningJobs > 0 && c.running > qu.cfg.MaxRunningJobs:
			return fmt.Errorf("admission: queue %s runs %d jobs, maxRunningJobs %d", qu.cfg.Name, c.running, qu.cfg.MaxRunningJobs)
		case qu.cfg.Policy == StateAware && c.starting > 1:
			return fmt.Errorf("admission: queue %s (stateaware) has %d jobs starting", qu.cfg.Name, c.starting)
		}
	}
	return q.checkSubtreeRuns(func(qu *queue) int { return counts[qu].running })
}

// checkSubtreeRuns checks each queue's count of the jobs running in its
// subtree against running, the count of each queue's own, and against
// its maxRunningJobs.
func (q *Queues) checkSubtreeRuns(running func(*queue) int) error {
	sums := make(map[*qnode]int, len(q.nodeList))
	for _, qu := range q.qorder {
		for n := qu.node; n != nil; n = n.parent {
			sums[n] += running(qu)
		}
	}
	for _, n := range q.nodeList {
		switch {
		case sums[n] != n.running:
			return fmt.Errorf("admission: queue %s: %d jobs running in its subtree, counted %d", n.name, sums[n], n.running)
		case n.qu != nil && n.qu.cfg.MaxRunningJobs > 0 && sums[n] > n.qu.cfg.MaxRunningJobs:
			return fmt.Errorf("admission: queue %s runs %d jobs in its subtree, maxRunningJobs %d", n.name, sums[n], n.qu.cfg.MaxRunningJobs)
		}
	}
	return nil
}

// firstNeedWhat is firstNeed with what it is, in words, for the
// invariants' errors.
func (j *job) firstNeedWhat() (need []resource.Count, whole bool, what string) {
	need, whole = j.firstNeed()
	switch {
	case need == nil:
	case j.gangWaits():
		what = "its gang"
	case j.driver && !j.hasSlot:
		what = "its driver"
	default:
		what = fmt.Sprintf("ask %d", j.asks.inOrder(nil).id)
	}
	return need, whole, what
}

// checkNoIdleSlot checks that no job that may be granted now waits for
// something the free slots (with those kept for it) would complete.
func (q *Queues) checkNoIdleSlot() error {
	if q.nFree == 0 {
		return nil
	}
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		if !j.active() || q.holdOf(j) != notHeld {
			continue
		}
		need, whole, what := j.firstNeedWhat()
		if need == nil {
			continue
		}
		if j.gangWaits() && !q.gangStartFits(j) {
			continue // its driver could not start within its queues' maxima (gang.go)
		}
		if j.waitsForDriver() {
			p, ok := q.driverProfile(j)
			if !ok {
				continue // no free slot serves it (of those that leave its regions room, driverslot.go)
			}
			if yields(q.driverYields(j, p)) {
				continue // it leaves the slot to a request (drivers.go)
			}
			if !q.startFitsRoom(j) {
				continue // its first regions could not follow within its queues' maxima
			}
		}
		avail, _ := q.availableTo(j, need)
		a := resource.Assign(need, avail, q.cfg.Matching)
		if a.Complete() || (!whole && a.Matched > 0) {
			return fmt.Errorf("admission: %d slots free (%s) while job %s (%v, queue %s) waits for %s %v, which they would complete (with its %d reserved slots and %d placeholders)",
				q.nFree, q.freeString(), j.spec.Name, j.state, j.queue.cfg.Name, what, need, len(j.reserved), len(j.placeholders))
		}
	}
	return nil
}

// freeString lists the free slots.
func (q *Queues) freeString() string {
	var ids []string
	for _, f := range q.free {
		for _, idx := range f {
			ids = append(ids, q.slotName(idx))
		}
	}
	if len(ids) > 8 {
		ids = append(ids[:8], "...")
	}
	return fmt.Sprint(ids)
}

// checkClaims checks that every reservation belongs to a claim that
// completes what its claimant lacks.
func (q *Queues) checkClaims() error {
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		if len(j.reserved)+len(j.incoming) > 0 && q.overtaken(j) {
			return fmt.Errorf("admission: job %s holds %d slots, its fair share %d, and keeps a claim (%d slots reserved, %d coming) while a job of its queue below its share waits",
				j.spec.Name, j.granted, j.entitled, len(j.reserved), len(j.incoming))
		}
		if len(j.reserved) == 0 {
			continue
		}
		name := j.spec.Name
		if !j.active() {
			return fmt.Errorf("admission: job %s is %v and has %d slots reserved", name, j.state, len(j.reserved))
		}
		if why := q.blocked(j); why != "" {
			return fmt.Errorf("admission: job %s may not be granted anything (%s) and has %d slots reserved", name, why, len(j.reserved))
		}
		need, _, what := j.firstNeedWhat()
		if need == nil {
			return fmt.Errorf("admission: job %s waits for nothing and has %d slots reserved", name, len(j.reserved))
		}
		if m := q.matched(need, q.countClaim(j)); m < sumCounts(need) {
			return fmt.Errorf("admission: job %s keeps %d slots reserved (%d more coming) for %s %v, which they cannot complete (%d of %d)",
				name, len(j.reserved), len(j.incoming), what, need, m, sumCounts(need))
		}
		if mask := q.driverMask(j); mask != nil {
			for _, idx := range j.reserved {
				if !mask[q.slots[idx].profile] {
					return fmt.Errorf("admission: job %s keeps %s reserved for its driver, which may not take it: its regions need it (driverslot.go)", name, q.slotName(idx))
				}
			}
		}
	}
	return nil
}

// checkPreemptions checks that every timed preemption still pending has
// its reason.
func (q *Queues) checkPreemptions() error {
	for idx := range q.slots {
		s := &q.slots[idx]
		if s.state != slotReclaiming || !s.preempt || s.revoked || s.claimant == noJob {
			continue
		}
		c, v := q.jobs[s.claimant], q.jobs[s.owner]
		switch {
		case !c.active():
			return fmt.Errorf("admission: %s of job %s is still to be preempted for job %s, which is %v", q.slotName(int32(idx)), v.spec.Name, c.spec.Name, c.state)
		case !c.waiting():
			return fmt.Errorf("admission: %s of job %s is still to be preempted for job %s, which waits for nothing", q.slotName(int32(idx)), v.spec.Name, c.spec.Name)
		case q.holdOf(c) != notHeld:
			return fmt.Errorf("admission: %s of job %s is still to be preempted for job %s, which may not be granted anything (%s)", q.slotName(int32(idx)), v.spec.Name, c.spec.Name, q.blocked(c))
		case c.spec.Priority <= v.spec.Priority:
			return fmt.Errorf("admission: %s of job %s (priority %d) is still to be preempted for job %s of priority %d", q.slotName(int32(idx)), v.spec.Name, v.spec.Priority, c.spec.Name, c.spec.Priority)
		case c.queue != v.queue && c.queue.node.used >= c.queue.node.guaranteed:
			return fmt.Errorf("admission: %s of job %s (queue %s) is to be preempted for job %s of queue %s, which holds its guarantee", q.slotName(int32(idx)), v.spec.Name, v.queue.cfg.Name, c.spec.Name, c.queue.cfg.Name)
		case q.overtaken(c):
			return fmt.Errorf("admission: %s of job %s is still to be preempted for job %s, which holds its fair share while a job below its share waits", q.slotName(int32(idx)), v.spec.Name, c.spec.Name)
		}
		if q.pendingAcross(int32(idx)) {
			leaving := q.leavingSlots()
			if n := q.shortOfGuarantee(v.queue, c.queue, leaving); n != nil {
				return fmt.Errorf("admission: %s of job %s (queue %s) is still to be preempted for job %s of queue %s, taking queue %s below its guarantee: it holds %d, gives up %d to other queues, guaranteed %d",
					q.slotName(int32(idx)), v.spec.Name, v.queue.cfg.Name, c.spec.Name, c.queue.cfg.Name, n.name, n.used, leaving[n.idx], n.guaranteed)
			}
		}
	}
	return nil
}

// checkReclaimRules checks the preemptions made at this instant: none for
// a job its queue held back before in the instant, and none for a driver
// that could never be followed by its first regions beside the other
// jobs' drivers and placeholders (which no preemption takes).
func (q *Queues) checkReclaimRules() error {
	for _, c := range q.jobs {
		if c == nil { // forgotten
			continue
		}
		if !c.reclaimed || !c.reclaimAt.Equal(q.now) || !c.active() {
			continue
		}
		if held, ok := q.heldBackNow(c); ok && held < c.reclaimStamp {
			return fmt.Errorf("admission: job %s reclaimed slots at %v although its queue %s held it back earlier in that instant",
				c.spec.Name, q.now, c.queue.cfg.Name)
		}
		if !c.driverReclaim {
			continue
		}
		have := make([]int, len(q.profiles))
		for idx := range q.slots {
			s := &q.slots[idx]
			if s.state == slotGone || ((s.state == slotDriver || s.state == slotPlaceholder) && s.owner != c.id) {
				continue
			}
			have[s.profile]++
		}
		if !q.startFollows(c, have) {
			need, n := q.startNeed(c)
			return fmt.Errorf("admission: job %s reclaimed slots for its driver at %v, but its driver and first regions %v (%d of them at once) never fit beside the other jobs' drivers and placeholders",
				c.spec.Name, q.now, need, n)
		}
	}
	return nil
}

// checkDriversDecided checks that no driver granted at this instant,
// whose first regions could not follow (then, nor by the end of the
// instant), took a slot that a waiting request needed: that slot, with the free slots that were free when it
// was granted or that an input of the instant freed since (a release, a
// job's end: an input that came after the decision, which should have
// been decided with it), would serve the request of a job that waited
// then and may be granted. Slots that came back since as answers to the
// admission's own messages (a reclaim, a claim given up) were not there
// to be decided with it.
func (q *Queues) checkDriversDecided() error {
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		if !j.active() || !j.hasSlot || !j.driverAt.Equal(q.now) || j.startFollowed || q.startHeld(j) {
			continue
		}
		counted := func(idx int32) bool {
			s := &q.slots[idx]
			return !s.freedAt.Equal(q.now) || s.freedStamp < j.driverStamp || s.freedInput
		}
		p := q.slots[j.driverSlot].profile
		for _, x := range q.jobs {
			if x == nil { // forgotten
				continue
			}
			// Not a job held back then, let go later in the instant, nor
			// one that waited for its gang then, given up since (its timer
			// fires after the instant's decision), nor a request that came
			// after the driver's grant, nor a job that preempted since: the
			// slots its preemption freed (the admission's own message)
			// served the requests it waited for first then, and the one it
			// waits for now came first only with them. Nor one granted a
			// whole ask since: the ask it waits for now was not its first
			// then. Nor one under a maxSlots from which the admission asked
			// slots back, or gave placeholders back, since
			// (roomGivenSince). Nor one whose grant a preemption retracted
			// since: it was served then, and waits again only since (as a
			// job whose slots were revoked asks anew).
			if x == j || q.heldBackBefore(x, j.driverStamp) || x.gangStamp > j.driverStamp ||
				(x.reclaimed && x.reclaimAt.Equal(q.now) && x.reclaimStamp > j.driverStamp) ||
				(x.askDoneAt.Equal(q.now) && x.askDoneStamp > j.driverStamp) ||
				(x.retractedAt.Equal(q.now) && x.retractStamp > j.driverStamp) || q.roomGivenSince(x, j.driverStamp) {
				continue
			}
			if a := x.asks.inOrder(nil); a != nil && a.stamp < j.driverStamp && q.requestServed(x, p, counted) {
				need, _, what := x.firstNeedWhat()
				return fmt.Errorf("admission: the driver of job %s took %s at %v while its first regions could not follow, and job %s waits for %s %v, which that slot serves with the free ones",
					j.spec.Name, q.slotName(j.driverSlot), q.now, x.spec.Name, what, need)
			}
		}
	}
	return nil
}

// roomGivenSince reports whether, after stamp in this instant, the
// admission asked back a slot of a job, or gave back a job's unused
// placeholders (its gang timer, or no request of the job could use
// them), under a queue with a maxSlots that x's queue is, or is under:
// the room that leaves there came with the admission's own message or
// decision, and x's request may have fitted its queues only with it.
// (Stamps only grow: one after stamp is of this instant.)
func (q *Queues) roomGivenSince(x *job, stamp uint64) bool {
	for _, y := range q.jobs {
		if y == nil { // forgotten
			continue
		}
		askedBack := y.askedBackAt.Equal(q.now) && y.askedBackStamp >= stamp
		if !askedBack && y.placeholdersStamp <= stamp {
			continue
		}
		for n := x.queue.node; n != nil; n = n.parent {
			if n.max > 0 && n.contains(y.queue.node) {
				return true
			}
		}
	}
	return false
}

// startHeld reports whether j holds (or has kept for it) its driver and
// first regions: they followed its driver later in the instant.
func (q *Queues) startHeld(j *job) bool {
	have := make([]int, len(q.profiles))
	have[q.slots[j.driverSlot].profile]++
	for _, idx := range j.held {
		have[q.slots[idx].profile]++
	}
	for _, idx := range j.reserved {
		have[q.slots[idx].profile]++
	}
	return q.startFollows(j, have)
}

// yields is the first result of driverYields.
func yields(y, _ bool) bool { return y }

// checkPinned checks the count of pinned slots per profile (wedged.go):
// the slots of drivers and placeholders.
func (q *Queues) checkPinned() error {
	want := make([]int, len(q.profiles))
	for idx := range q.slots {
		if s := &q.slots[idx]; s.state == slotDriver || s.state == slotPlaceholder {
			want[s.profile]++
		}
	}
	for p := range want {
		got := 0
		if p < len(q.pinned) {
			got = q.pinned[p]
		}
		if got != want[p] {
			return fmt.Errorf("admission: %d slots of profile %v are drivers' or placeholders, counted %d", want[p], q.profiles[p], got)
		}
	}
	return nil
}
