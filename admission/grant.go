package admission

import (
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// decideNow grants what it can, queue by queue (in the fair order of
// sibling queues, queuesort.go), to the jobs of each queue in policy
// order, and makes at most one claim across
// queues (see claim): for the first job it could not serve whose lack
// the free slots and the slots of the jobs behind it can complete.
// Claims for the jobs behind are tried only while that one cannot be
// helped, and stop at the first job with nothing reclaimable behind it
// (the jobs after it have less). Then the first waiting job of every
// queue that may take no free slot claims within its own queue
// (claim_within.go).
//
// It withdraws stale preemptions, grants and claims in passes
// until a pass changes nothing the next could use, withdraws the
// preemptions that the free slots left make unneeded, then lets waiting
// jobs of preempting queues take from lower-priority ones (preempt.go).
// A decision that grants a driver whose first asks follow at once ends
// with that grant (startcut.go); one that cancels a task of a job that
// runs tasks in other slots too ends once that preemption is made
// (cancelcut.go).
func (q *Queues) decideNow() {
	if q.cut() {
		return // (startcut.go, cancelcut.go)
	}
	for _, qu := range q.fairShareQueues {
		q.entitle(qu)
		q.dropOvertaken(qu)
	}
	q.withdrawStale(false)
	q.yieldRepassed = false
	q.heldToStart = q.heldToStart[:0]
	q.decision++
	q.dropPassedClaims()
	// A pass passes again only if it granted under fair share, gave up a
	// claim that kept slots reserved or released placeholders (jobs it
	// passed may use the slots), or, once per decision, a driver left its
	// slot to a request; so do the passes when, after them, the fair
	// order as it stands outranks a claim whose slots came back for it
	// (dropOutrankedLeft). The passes end: no pass adds to the slots that
	// are free, reserved or placeholders (G; they go back to free only
	// from one another, a slot comes back from a job only by an input),
	// and a grant takes at least one of them; a claim given up without a
	// grant of its job's is given up for the rest of the decision (its
	// job claims nothing more in it: giveUpClaim), so there are at most as
	// many such passes as jobs; placeholders are made once per job (its
	// gang) and released once. So at most G + 3 × jobs + 1 passes (a
	// grant of placeholders gives up its job's claim too).
	//
	// The decisions of one instant end as well: a slot moves between
	// two jobs within an instant only if it is idle (one that runs a
	// task comes back when the task ends), and an idle slot that a
	// preemption, or a claim across queues, took from a job is not
	// claimed back by that job in the same instant (lostNowTo), nor are
	// the idle slots of a job whose own claim is complete taken by any
	// (claim_settled.go): they stay with it until its ask deploys and
	// they run its tasks; nor is an idle slot a claim asks back taken
	// from that claim by a preemption for another job (claimedAway): it
	// reaches the claim in the same instant. Across queues this matters
	// because the fair order of sibling queues flips with each grant, and
	// the guarantees count the slots each queue gives up: the queue that
	// lost the slots comes first again.
	q.grantAndClaim()
	if q.startCut {
		q.retractBeforeCut()
		return
	}
	q.preemptAll()
	for !q.cancelCut && (q.retracted || q.repass) {
		// A preemption retracted grants of this call (retract.go): the
		// slots it took are its claimant's to be granted, and the others
		// are free again; or it took the free slots of lower-priority
		// claims (preempt_claims.go), kept for its claimant.
		q.retracted, q.repass = false, false
		q.grantAndClaim()
		if q.startCut {
			q.retractBeforeCut()
			return
		}
		q.preemptAll()
	}
	if q.cancelCut {
		q.retracted, q.repass = false, false // (Decide retracts: cancelcut.go)
		return
	}
	q.grantSpeculative()
}

// grantAndClaim is a decision's passes and claims.
func (q *Queues) grantAndClaim() {
	for q.decidePass() || (!q.startCut && q.dropOutrankedLeft()) {
	}
	if q.startCut {
		q.withdrawStale(true) // (the driver's job may have taken a reclaim's reason)
		return
	}
	q.claimWithinQueues()
	q.unreserved = false
	q.withdrawStale(true)
	if q.unreserved {
		// A claim given up with the preemptions it counted on: the slots
		// it kept reserved are the passes' to grant.
		for q.decidePass() || (!q.startCut && q.dropOutrankedLeft()) {
		}
	}
}

// decidePass is one pass of decide over the waiting jobs, queue by queue
// (see walk.go). It reports whether it gave up a claim that held
// reserved slots: they are free again, and jobs it passed already may use
// them.
func (q *Queues) decidePass() (again bool) {
	q.unreserved, q.regrant, q.driverYielded, q.yielder = false, false, false, nil
	st := &passState{claiming: true, touched: q.touched[:0]}
	q.turnQueues = q.startPass()
	touched := 0
	marked := false // the queues left with jobs not at rest are marked (markReservers)
	for qu := q.firstWaiting(); qu != nil; qu = q.firstWaiting() {
		free := -1 // (counted when no claim is to be made)
		if !st.claiming && q.nPlaceholders == 0 {
			free = q.freeFor(qu)
		}
		if free == 0 && q.sparse() {
			// No claim to make, no free slot it may take: only its jobs
			// with reserved slots may be served (walkSparse), and the
			// walks would visit no other job.
			if q.nFree == 0 && q.nReserved == 0 {
				break // nothing left to grant in any queue (as visit stops)
			}
			if q.nFree == 0 {
				// Nor to any queue: nothing changes until a walk, and
				// none is left to walk unless a queue left has
				// reserved slots of a job not at rest (resting.go). The
				// marks hold until a slot changes hands: a walk that
				// moves none changes whether its own queue's jobs are
				// at rest only, and its queue is marked already.
				if !marked || q.uses != q.markedUses {
					marked = true
					if !q.markReservers() {
						break
					}
				} else if !q.markedLeft() {
					break
				}
			}
			switch {
			case len(qu.reservers) > 0 && (q.nFree > 0 || !q.reserversAtRest(qu)):
			case q.nFree == 0:
				// So are all the queues of its branch without reserved
				// slots of jobs not at rest (its walk would visit only
				// jobs at rest): they come first, one after the other.
				q.leaveBranch(qu)
				continue
			default:
				q.doneWaiting(qu)
				continue
			}
		}
		if free >= 0 && len(qu.reservers) == 0 && (q.sparse() || !q.resumeOf(qu).set) && !qu.fitsSome(min(free, maxBucket)) {
			// Its walk would visit no job: none has reserved slots, and
			// none's smallest grant fits the free slots it may take
			// (walkSparse finds none; a walk's fresh count, fitCount, is
			// done at once).
			q.doneWaiting(qu)
			continue
		}
		q.turn, q.turnEnded = qu, false
		stop := q.walk(qu, st)
		touched += len(st.touched)
		had := q.unreserved
		for _, j := range st.touched {
			q.updateOrder(j) // (a job that waits no more gives its placeholders back)
		}
		st.touched = st.touched[:0]
		switch {
		case q.startCut:
			q.turn, q.turnEnded = nil, false
			q.touched = st.touched[:0]
			return false // (startcut.go)
		case q.regrant:
		case !had && q.unreserved && st.passedOver:
			// Slots given back after the pass passed over a job that
			// still waits: the next pass offers them in order (see visit).
		case q.turnEnded:
			continue // served while it came first: sort again
		case !stop:
			q.doneWaiting(qu) // nothing more of it can be served in this pass
			continue
		}
		break
	}
	q.turn, q.turnEnded = nil, false
	q.touched = st.touched[:0]
	// A driver that left its slot to a job served after it in the pass
	// may fit what is left, and one that left it to a request the pass
	// then did not serve (a claim made after the driver's visit took the
	// slots or its queue's room) may take it: one more pass per decision
	// for that.
	yieldAgain := q.driverYielded && (touched > 0 || q.nFree > 0) && !q.yieldRepassed
	q.yieldRepassed = q.yieldRepassed || yieldAgain
	return q.unreserved || q.regrant || yieldAgain
}

// passState is what one pass carries from job to job.
type passState struct {
	claiming bool // no job has claimed yet in this pass
	touched  []*job
	// guarded: the guarantees of other queues kept a claim of the pass
	// from completing (claimGuarded).
	guarded bool
	// wedged lists the jobs of the pass found wedged that hold idle
	// slots (wedged.go).
	wedged []*job
	// passedOver: a job the pass visited still waits.
	passedOver bool
}

// visit serves one waiting job what fits and, if it is the first that
// still waits, claims what it lacks. It returns true when nothing more
// can happen in this pass, and when the visit gave up a claim's reserved
// slots while a job visited before still waits: the slots, or the room
// under a queue's maxSlots that they took, are that job's before any
// job after it, so the pass ends and the next one starts from the first
// (a job at its fair share took a slot so freed from a job below its
// share, visited earlier when its queue had no room).
func (q *Queues) visit(qu *queue, j *job, st *passState) (stop bool) {
	had := q.unreserved
	stop = q.visitJob(qu, j, st)
	if !had && q.unreserved && st.passedOver {
		return true
	}
	st.passedOver = st.passedOver || j.waiting()
	return stop
}

// visitJob is visit but for a claim given up ahead of a job passed over.
func (q *Queues) visitJob(qu *queue, j *job, st *passState) (stop bool) {
	q.visits++
	if q.startCut {
		return true // (startcut.go)
	}
	if h := q.holdOf(j); h != notHeld {
		q.markHeldBack(j)
		// (A job in its requeue backoff may wait for such a job too.)
		if h == heldToStart || (h == heldBackoff && j.queue.cfg.Policy == StateAware && j.queue.starting == 0 && q.preemptedToStart(j)) {
			q.heldToStart = append(q.heldToStart, j)
		}
		if q.debug {
			q.log.Debug("job waits", zap.String("job", j.spec.Name), zap.String("why", q.blocked(j)))
		}
		q.giveUpClaim(j) // it may not be granted anything yet
		return false
	}
	if q.nFree == 0 && q.nReserved == 0 && q.nPlaceholders == 0 && !st.claiming {
		return true // nothing left to grant, no claim to make
	}
	if j.handedIn == q.decision && len(j.reserved) > 0 && q.uses != q.handedUses && q.dropOutrankedInPass() {
		// Grants of the decision changed the fair order, and slots that
		// came back for claims serve a job of a queue before theirs: the
		// next pass serves them in that order (claim_passed.go).
		return true
	}
	canServe := q.nFree > 0 || len(j.reserved) > 0
	if j.gangWaits() && canServe && q.gangStartFits(j) && q.reserveGang(j) {
		st.touched = append(st.touched, j)
	}
	if (canServe || len(j.placeholders) > 0) && q.serve(j) {
		st.touched = append(st.touched, j)
		if q.regrant {
			return true // fair share: the next pass sorts by the new shares
		}
	}
	if len(st.touched) > 0 && st.touched[len(st.touched)-1] == j && q.turnOver(qu) {
		// Its queue no longer comes first: the pass sorts again, and its
		// next turn starts at j (it may have more to be served).
		qu.resume, qu.resumeIn = cursor{key: j.key, set: true, incl: true}, q.pass
		return true
	}
	lack := j.headNeed()
	if lack == nil {
		return false
	}
	if q.waitsForRoom(qu, j, lack) {
		// Its queue, or a parent, is at its maxSlots, and the other jobs
		// under it hold too little for a claim (or its driver could not
		// be followed by its first regions within the room left): it
		// waits for its queue's slots to come back, and claims nothing.
		q.dropClaim(j)
		return false
	}
	if q.yielder == j {
		q.yielder = nil
		return false // its driver left the free slots to a request: it claims none
	}
	if q.debug {
		q.log.Debug("job waits", zap.String("job", j.spec.Name), zap.String("why", "its ask does not fit the free slots"))
	}
	if !st.claiming {
		switch {
		case len(j.reserved)+len(j.incoming) > 0 && !q.claimComplete(j, lack):
			q.giveUpClaim(j) // stale: what it lacks changed; its reserved slots serve others
		case len(st.touched) == 0 || st.touched[len(st.touched)-1] != j:
			q.markResting(j) // (resting.go)
		}
		return false
	}
	if j.noClaimIn == q.decision {
		// Its claim was given up in this decision without a grant: it
		// claims again in the next one (see decideNow).
		st.claiming = false
		return false
	}
	if q.overtaken(j) {
		// It holds its fair share while a job below its share waits (one
		// whose driver left the free slots to a request): the next
		// decision would give its claim up at once (dropOvertaken), and
		// make it again, asking the same slots back without end. It
		// claims nothing; the job after it may.
		return false
	}
	// Only the first job that waits claims: every job ahead of it is
	// served, so their slots come back as their tasks end, and it cannot
	// wait forever; a claim is needed only for what jobs behind it sit on.
	st.claiming = false
	q.claimFirst(qu, j, lack, st)
	return false
}

// claimFirst makes the claim of j, of queue qu, the first job of the
// pass that waits, for lack (see visit).
func (q *Queues) claimFirst(qu *queue, j *job, lack []resource.Count, st *passState) {
	if len(j.reserved)+len(j.incoming) > 0 && q.claimComplete(j, lack) {
		return // what it lacks is on its way
	}
	// A cheap bound first: the slots it has coming, the free ones and
	// all those held behind it, by number. Nothing held behind it is no
	// reason to give the claim up when what it has coming and the free
	// slots are enough (short <= 0; a slot preempted for it comes only
	// when its task ends or is cancelled, so serve could not grant the
	// ask yet): the free slots that complete it are kept for it (claim
	// reserves them first). Given up, they would go to another job (the
	// preempted one, ahead of it in fifo order, restarting its region),
	// the preempted slots, once back, would no longer complete it, and it
	// would preempt again after every reclaim timeout, without end.
	short := sumCounts(lack) - len(j.reserved) - len(j.incoming) - len(j.placeholders) - q.nFree
	q.rankQueues() // the queues behind its own, as they stand
	held := q.heldBehind(qu, j.key, max(short, 1))
	if held < short && !st.guarded && len(st.wedged) == 0 {
		// (After a claim that guarantees kept from completing, or after
		// a wedged job, the jobs that wait may claim idle slots of jobs
		// ahead: see claim_guarantees.go and wedged.go.)
		q.giveUpClaim(j)
		q.passOnWedged(j, lack, st)
		return
	}
	q.claimScratch.passGuarded, q.claimScratch.passWedged = st.guarded, st.wedged
	switch q.claim(j, lack) {
	case claimMade:
		if len(j.incoming) == 0 && q.serve(j) { // it took free or reserved slots only
			st.touched = append(st.touched, j)
		}
	case claimGuarded:
		// Guarantees keep what it lacks from it (claim.go): it waits for
		// slots to come back, and the next job that waits may claim.
		st.claiming, st.guarded = true, true
	default:
		q.passOnWedged(j, lack, st)
	}
}

// giveUpClaim gives up j's claim for a reason other than a grant (see
// dropClaim); if it kept slots reserved, j claims nothing more in this
// decision: the free slots go to the first job in order that can use
// them (a pass that gave them up ends if it passed over a job that still
// waits: see visit; else the jobs it visits after j take them), and the
// passes end (see decideNow).
func (q *Queues) giveUpClaim(j *job) {
	if len(j.reserved) > 0 {
		j.noClaimIn = q.decision
	}
	q.dropClaim(j)
}

// heldBehind counts the slots that a claim may take (held, not drivers,
// not being reclaimed) of the jobs behind key k in grant order: those of
// qu after k, walked from the back, and all those of the queues after qu
// (by rank, as rankQueues left them), the last first; it stops counting
// once it has counted enough.
func (q *Queues) heldBehind(qu *queue, k orderKey, enough int) int {
	n := q.heldBehindIn(qu, k, enough)
	for r := len(q.byRank) - 1; r > int(qu.rank) && n < enough; r-- {
		if other := q.byRank[r]; other != nil {
			n += other.heldSlots
		}
	}
	return n
}

// sumCounts adds up the counts.
func sumCounts(cs []resource.Count) int {
	n := 0
	for _, c := range cs {
		n += c.N
	}
	return n
}

// hold is why a job may not have its first grant yet.
type hold uint8

const (
	notHeld      hold = iota // it may
	heldBackoff              // its gang timed out, and its requeue backoff runs
	heldStarting             // StateAware: another job of its queue is starting
	heldToStart              // StateAware: a job of its queue that preempts to start starts first
	heldRunLimit             // its queue, or a parent, runs maxRunningJobs jobs
)

// holdOf says why a job may not have its first grant yet (notHeld if it
// may). It allocates nothing: the decisions ask it of every job they
// visit; blocked puts it in words.
func (q *Queues) holdOf(j *job) hold {
	if j.state != JobAccepted {
		return notHeld
	}
	if q.now.Before(j.notBefore) {
		return heldBackoff
	}
	qu := j.queue
	if qu.cfg.Policy == StateAware && qu.starting > 0 {
		return heldStarting
	}
	if qu.cfg.Policy == StateAware && q.preemptedToStart(j) {
		return heldToStart
	}
	if qu.runLimit() != nil {
		return heldRunLimit
	}
	return notHeld
}

// blocked says why a job may not have its first grant yet, in words, for
// logs and errors ("" if it may).
func (q *Queues) blocked(j *job) string {
	qu := j.queue
	switch q.holdOf(j) {
	case heldBackoff:
		return "requeue backoff after its gang timed out"
	case heldStarting:
		return "stateaware: another job of " + qu.cfg.Name + " is starting"
	case heldToStart:
		return "stateaware: a job of " + qu.cfg.Name + " that preempts to start starts first"
	case heldRunLimit:
		return "maxRunningJobs of " + qu.runLimit().name + " reached"
	}
	return ""
}

// firstNeed is what the job waits for first, as serve serves it: its
// gang, its driver, else the first of its asks in its order; whole says
// whether only all of it may be granted. nil if it waits for nothing.
// (firstNeedWhat says what it is, in words.)
func (j *job) firstNeed() (need []resource.Count, whole bool) {
	switch {
	case j.gangWaits():
		return j.gangNeed(), true
	case j.driver && !j.hasSlot:
		return []resource.Count{{Profile: *j.spec.Driver, N: 1}}, true
	}
	if a := j.asks.inOrder(nil); a != nil && a.n > 0 {
		return a.left, a.allOrNothing
	}
	return nil, false
}

// headNeed is what the job needs first: its driver, else the ask of its
// pool's head (slotpool.Ask.Head: exactly what the head lacks, so granting
// it completes the head, and a region deploys), else its oldest ask. nil
// if it needs nothing.
func (j *job) headNeed() []resource.Count {
	if j.gangWaits() {
		return j.gangNeed()
	}
	if j.driver && !j.hasSlot {
		return []resource.Count{{Profile: *j.spec.Driver, N: 1}}
	}
	if a := j.asks.head; a != nil {
		return a.left
	}
	if a := j.asks.first; a != nil {
		return a.left
	}
	return nil
}

// availableTo tallies the slots j may be granted now toward the
// requests want, per profile: the free ones (as many as its queues'
// maxima leave room for, see freeToward) and those reserved for it;
// prof[i] is the profile index of entry i.
func (q *Queues) availableTo(j *job, want []resource.Count) (counts []resource.Count, prof []int32) {
	n := q.countScratch()
	for _, idx := range j.reserved {
		n[q.slots[idx].profile]++
	}
	for _, idx := range j.placeholders {
		n[q.slots[idx].profile]++
	}
	q.freeToward(j.queue, want, n, n, q.driverMask(j))
	return q.supplyOf(n)
}

// supplyOf lists the slots counted per profile in n as a supply to
// match against: counts[i] of profile index prof[i]. The slices are the
// admission's storage, valid until the next call.
func (q *Queues) supplyOf(n []int) (counts []resource.Count, prof []int32) {
	counts, prof = q.availCounts[:0], q.availProf[:0]
	for p, c := range n {
		if c > 0 {
			counts = append(counts, resource.Count{Profile: q.profiles[p], N: c})
			prof = append(prof, int32(p))
		}
	}
	q.availCounts, q.availProf = counts, prof
	return counts, prof
}

// assign is resource.Assign into the admission's own storage, without
// allocating in the common cases: the result is valid until the next
// call.
func (q *Queues) assign(demand, supply []resource.Count) resource.Assignment {
	resource.AssignInto(&q.asg, demand, supply, q.cfg.Matching)
	return q.asg
}

// takeFor takes n slots of profile p for j: its reserved ones first, then
// free ones.
func (q *Queues) takeFor(j *job, p int32, n int) []int32 {
	out := make([]int32, 0, n)
	for i := len(j.placeholders) - 1; i >= 0 && len(out) < n; i-- {
		if idx := j.placeholders[i]; q.slots[idx].profile == p {
			// a real request swaps into the placeholder
			j.placeholders = slices.Delete(j.placeholders, i, i+1)
			q.unpark(j)
			q.addGranted(j, -1)
			q.nPlaceholders--
			q.pin(idx, -1)
			out = append(out, idx)
		}
	}
	for len(out) < n {
		idx, ok := q.takeReserved(j, p)
		if !ok {
			break
		}
		out = append(out, idx)
	}
	if rest := n - len(out); rest > 0 {
		out = append(out, q.take(p, rest)...)
	}
	return out
}

// serve grants a job what fits: its driver first, then its asks in order
// (an all-or-nothing ask whole or not at all), and reports whether
// anything was granted. A job granted something gives up its claim: what
// it still lacks is claimed afresh.
func (q *Queues) serve(j *job) (grantedSome bool) {
	if j.gangWaits() {
		return false // nothing of it runs before its gang is reserved
	}
	if j.driver && !j.hasSlot {
		p, ok := q.driverProfile(j)
		if !ok || !q.startFitsRoom(j) {
			return false
		}
		yields, follows := q.driverYields(j, p)
		if yields {
			q.driverYielded, q.yielder = true, j // the pass that follows may serve it
			return false
		}
		j.startFollowed = follows
		idx := q.takeFor(j, p, 1)[0]
		s := &q.slots[idx]
		s.state, s.owner, s.claimant, s.heldSince = slotDriver, j.id, noJob, q.now
		q.stamp++
		j.driverSlot, j.hasSlot, j.driverAt, j.driverStamp = idx, true, q.now, q.stamp
		q.unpark(j)
		addDriver(j, 1)
		q.pin(idx, 1)
		q.addGranted(j, 1)
		q.firstGrant(j)
		q.event(Event{At: q.now, Job: j.spec.Name, ID: j.id, Kind: DriverGranted, Slot: s.slot.ID})
		if q.debug {
			q.log.Debug("driver granted", zap.String("job", j.spec.Name), zap.Int64("slot", int64(s.slot.ID)))
		}
		grantedSome = true
		q.cutForStart(j)
	}
	fair := j.queue.cfg.Policy == FairShare
	mayHave := q.nFree + len(j.reserved) + len(j.placeholders)
	if grantedSome && q.turnOver(j.queue) {
		mayHave = 0 // its queue no longer comes first
	}
	// The asks in the job's order, its head's first: its pool assigns
	// FIFO, so an ask granted past one that waits would only feed the
	// waiting head (which takes every slot it can use) and sit there
	// unused. Under fair share one grant at a time: the job's key changes
	// with it, and the next grant goes to whoever is then furthest below
	// its share.
	for a, next := j.asks.inOrder(nil), (*jobAsk)(nil); a != nil && (!fair || !grantedSome) && mayHave > 0; a = next {
		next = j.asks.inOrder(a)
		q.checkPlaceholders(j, a)
		if a.allOrNothing && a.size() > mayHave {
			break // too big for every slot it may have: no need to match
		}
		avail, prof := q.availableTo(j, a.left)
		if len(avail) == 0 {
			break
		}
		asg := q.assign(a.left, avail)
		if asg.Matched == 0 || (a.allOrNothing && !asg.Complete()) {
			break
		}
		var rec *grantRecord // (only a preemption retracts a grant: retract.go)
		state := j.state
		if q.anyPreempt {
			rec = q.recordGrant(j, a, len(j.placeholders) == 0 && !q.hasPreempted(j))
		}
		granted := make([]slotpool.Slot, 0, asg.Matched)
		for _, pair := range asg.Pairs {
			for _, idx := range q.takeFor(j, prof[pair.Slot], pair.N) {
				q.hold(j, idx)
				granted = append(granted, q.slots[idx].slot)
				if rec != nil {
					rec.slots = append(rec.slots, idx)
				}
			}
			a.left[pair.Request].N -= pair.N
		}
		j.asks.took(a, asg.Matched)
		mayHave -= asg.Matched
		q.send(j, slotpool.Grant{Ask: a.id, Slots: granted})
		q.firstGrant(j)
		if rec != nil {
			rec.removed, rec.started = asg.Complete(), state == JobAccepted && j.state != JobAccepted
		}
		grantedSome = true
		if q.debug {
			q.log.Debug("ask granted", zap.String("job", j.spec.Name), zap.Int64("ask", int64(a.id)), zap.Int("slots", len(granted)))
		}
		if !asg.Complete() {
			break // the rest of it waits, and what comes after it
		}
		q.markIdle(j, a, false) // its bulk runs in them now
		j.asks.remove(a)
		q.unpark(j)
		q.stamp++
		j.askDoneAt, j.askDoneStamp = q.now, q.stamp
		if q.turnOver(j.queue) {
			break // its queue no longer comes first: the pass sorts again
		}
	}
	if grantedSome {
		if fair {
			q.keepPreempted(j)
		} else {
			q.dropClaim(j)
		}
		q.updateHolder(j)
		if fair {
			q.regrant = true
		}
	}
	return grantedSome
}

// size is how many slots the ask still lacks.
func (a *jobAsk) size() int { return a.n }

// countScratch returns a zeroed count per profile.
func (q *Queues) countScratch() []int {
	q.counts = resize(q.counts, len(q.profiles))
	return q.counts
}

// firstGrant moves an accepted job to starting at its first grant.
func (q *Queues) firstGrant(j *job) {
	if j.state == JobAccepted {
		q.move(j, JobStarting, "first grant")
		switch {
		case j.queue.cfg.StartingTimeout == NoStartingWait:
			q.move(j, JobRunning, "starting timeout of 0")
		case j.queue.cfg.Policy == StateAware:
			q.addStarting(j)
		}
		q.dropBlockedClaims(j.queue)
	}
}

// dropBlockedClaims gives up the claims of the jobs that a job's start in
// qu holds back (StateAware, maxRunningJobs of qu or of a parent: the
// jobs of every queue under it): they may not be granted anything until
// it leaves starting or ends, and what they kept would sit idle
// meanwhile.
func (q *Queues) dropBlockedClaims(qu *queue) {
	top := qu.limitedRuns()
	switch {
	case top != nil:
		q.dropBlockedUnder(top)
	case qu.cfg.Policy == StateAware:
		q.dropBlockedIn(qu)
	}
}

// dropBlockedUnder is dropBlockedIn for every queue of n's subtree.
func (q *Queues) dropBlockedUnder(n *qnode) {
	if n.qu != nil {
		q.dropBlockedIn(n.qu)
	}
	for _, c := range n.children {
		q.dropBlockedUnder(c)
	}
}

// dropBlockedIn gives up the claims of the jobs of qu held back.
func (q *Queues) dropBlockedIn(qu *queue) {
	for _, x := range qu.claims() {
		if x.state == JobAccepted && q.holdOf(x) != notHeld {
			q.dropClaim(x)
		}
	}
}

// release takes back a slot j's pool gave back: free again, or, if it was
// reclaimed for a job that still claims it, reserved for that job.
func (q *Queues) release(j *job, idx int32) {
	s := &q.slots[idx]
	s.revokeAt, s.revoked = time.Time{}, false
	q.addGranted(j, -1)
	switch s.state {
	case slotGranted:
		q.unhold(j, idx)
		q.updateHolder(j)
	case slotReclaiming:
		j.dropYielding(idx)
		q.handOver(idx)
		return
	}
	q.put(idx)
	// Its job gave it back of its own accord, unless the admission asked
	// a slot of it back at this instant: its pool answers a Reclaim of a
	// slot whose claim was given up since, or gives back the slots of a
	// bulk that lost its task to a Revoke.
	q.freed(idx, !j.askedBackAt.Equal(q.now))
}

// handOver frees a slot that was being reclaimed: reserved for its
// claimant if there still is one, free otherwise.
func (q *Queues) handOver(idx int32) {
	s := &q.slots[idx]
	if s.claimant == noJob {
		s.preempt = false
		q.put(idx)
		return
	}
	c := q.jobs[s.claimant]
	c.incoming = removeIdx(c.incoming, idx)
	s.from, s.owner, s.fromPreempt, s.preempt = s.owner, noJob, s.preempt, false
	if mask := q.driverMask(c); !c.active() || !c.waiting() || q.holdOf(c) != notHeld || q.room(c.queue) == 0 || (mask != nil && !mask[s.profile]) {
		// It got what it waited for otherwise, or may not be granted
		// anything now (a slot revoked for it comes back after its claim
		// was given up), or it is a slot its waiting driver may not take
		// (the cluster's slots changed since its claim, driverslot.go):
		// nobody keeps the slot.
		q.unpark(c)
		q.put(idx)
		return
	}
	if !s.fromPreempt { // (a preemption's slot serves its claimant)
		q.handedTo = append(q.handedTo, c) // (see dropPassedClaims)
	}
	q.reserveFor(c, idx)
	q.freed(idx, false)
	if q.overtaken(c) {
		// It holds its fair share while a job below its share waits:
		// its claim goes, the policy grants the slot.
		q.dropClaim(c)
	}
}

// end releases everything of a job that ended and moves it on.
func (q *Queues) end(now time.Time, j *job, failed error) {
	q.now = now
	for _, idx := range j.held {
		if q.slots[idx].idle {
			q.addIdleHeld(j, -1)
		}
		q.put(idx)
		q.freed(idx, true)
	}
	j.queue.heldSlots -= len(j.held)
	j.queue.heldResized(len(j.held), 0)
	// Its slots being asked back go to their claimants, or are free.
	// They have no owner first: handing one over may give up a claim
	// (overtaken), which gives the slots asked back for it back to their
	// owners (unyield), and none is to go back to a job that ended, nor
	// leave the list walked here.
	yielding := slices.Clone(j.yielding)
	for _, idx := range yielding {
		q.slots[idx].owner = noJob
	}
	for _, idx := range yielding {
		q.slots[idx].revokeAt, q.slots[idx].revoked = time.Time{}, false
		q.handOver(idx)
	}
	if j.hasSlot {
		// Its driver is gone: it no longer counts toward what its queue
		// keeps under the guarantees (tenantcounts.go).
		q.pin(j.driverSlot, -1)
		q.put(j.driverSlot)
		q.freed(j.driverSlot, true)
		j.hasSlot = false
		addDriver(j, -1)
	}
	for _, idx := range j.placeholders {
		q.pin(idx, -1)
		q.put(idx)
	}
	q.nPlaceholders -= len(j.placeholders)
	j.placeholders = nil
	q.dropPreemptions(j)
	q.dropClaim(j)
	q.dropSpecAsks(j)
	j.held = nil
	j.clearYielding()
	q.addGranted(j, -j.granted)
	j.out, j.spare = nil, nil
	j.asks.clear()
	j.driver = false
	q.updateHolder(j)
	q.dropStarting(j)
	if failed != nil {
		j.err = failed
		q.move(j, JobFailing, failed.Error())
		q.move(j, JobFailed, "its slots are back")
	} else {
		q.move(j, JobCompleting, "finished")
		q.move(j, JobCompleted, "its slots are back")
	}
	q.updateOrder(j)
}
