package admission

import (
	"iter"

	"github.com/regionsched/regionsched/internal/rbtree"
)

// How decide walks a queue. The jobs that want a grant are in the queue's
// tree in policy order; a pass serves them in that order, and the first
// that still waits claims (see visit). Walking the whole tree on every
// decision would cost O(waiting jobs) each time, so a walk stops as soon
// as no job it has not visited could be served: with many free slots it
// walks the tree, counting the jobs left that fit by number (fitCount);
// with few free slots it jumps from job to job through per-size trees
// (queue.fits), so it visits only jobs whose smallest grant fits the free
// slots by number, and the few jobs with reserved slots: backfilling a few free slots costs O(log n) per job
// served, not a walk past every job too large for them.

// sparseFree is the number of free slots under which a walk jumps
// through the per-size trees.
const sparseFree = 16

// walk visits the jobs of qu that may be served or claim; true when
// nothing more can happen in this pass.
func (q *Queues) walk(qu *queue, st *passState) (stop bool) {
	from := q.resumeOf(qu) // where its last turn in this pass stopped (queuesort.go)
	if q.sparse() {
		return q.walkSparse(qu, st, from)
	}
	startedOnly := q.holdsUnstarted(qu)
	if startedOnly {
		q.holdUnstarted(qu, from)
	}
	fit := &qu.fit
	if !from.set {
		q.newFitCount(qu, fit)
	} // else: the count of its last turn in this pass goes on
	if startedOnly {
		fit.stopStarting()
	}
	last := from // after the job visited last
	j := firstAfter(qu.order, from)
	if startedOnly {
		j = q.nextStartable(qu, from)
	}
	for j != nil {
		if !st.claiming && q.nPlaceholders == 0 && fit.done(q.freeFor(qu)) {
			return false
		}
		if last.set && !st.claiming && q.sparse() {
			// The free slots ran low (and the claim is made): jump to the
			// jobs that fit them rather than step past every larger one.
			return q.walkSparse(qu, st, last)
		}
		fit.visit(j)
		last = after(j)
		running, starting := qu.running, qu.starting
		if q.visit(qu, j, st) {
			if q.turnEnded {
				fit.unvisit(j) // its queue's next turn starts at it
			}
			return true
		}
		if !startedOnly && q.startedLast(qu, running, starting, last) {
			startedOnly = true
			fit.stopStarting()
		}
		if startedOnly {
			j = q.nextStartable(qu, last)
		} else if n := j.orderNode.Next(); n != nil {
			j = n.Item()
		} else {
			j = nil
		}
	}
	return false
}

// holdsUnstarted reports whether a walk of qu passes over its jobs not
// started yet: the queue may start none now (StateAware with a job
// starting, maxRunningJobs reached), so each of them would only be found
// held back. Not while a job of a StateAware queue may preempt to start:
// the jobs that one holds back are noted one by one (visit), since the
// queue lets them go as soon as its preemption is taken over or
// withdrawn (repassUnheld). Passing them over keeps a decision
// O(started jobs), not O(waiting jobs), on such a queue.
func (q *Queues) holdsUnstarted(qu *queue) bool {
	if qu.starts() {
		return false
	}
	return qu.cfg.Policy != StateAware || qu.starting > 0 || !qu.cfg.Preempt
}

// startedLast reports whether the visit that found qu with running and
// starting jobs started the last job it may start now, so that its jobs
// not started are held back from the cursor on (holdsUnstarted); it
// marks them so (holdUnstarted).
func (q *Queues) startedLast(qu *queue, running, starting int, c cursor) bool {
	if (qu.running > running || qu.starting > starting) && q.holdsUnstarted(qu) {
		q.holdUnstarted(qu, c)
		return true
	}
	return false
}

// holdUnstarted does for the jobs of qu not started yet, from the cursor
// on, what visiting each would (visit): they are held back now, in this
// instant (the queue's mark: heldBackNow), and their claims are given
// up.
func (q *Queues) holdUnstarted(qu *queue, from cursor) {
	q.markQueueHeld(qu)
	for _, x := range qu.claims() {
		if x.state == JobAccepted && x.inTree && !from.before(x.key) {
			q.giveUpClaim(x)
		}
	}
}

// markQueueHeld records that a decision found every job of qu not
// started yet held back now: it does not reclaim in this instant
// (heldBackNow). The first mark of an instant stays.
func (q *Queues) markQueueHeld(qu *queue) {
	if !qu.heldSet || !qu.heldAt.Equal(q.now) {
		q.stamp++
		qu.heldAt, qu.heldSet, qu.heldStamp = q.now, true, q.stamp
	}
}

// cursor is where a walk of a queue's jobs is: after the job with key
// key if set (at it, if incl), else at the start. It holds the key
// itself, not the job: the key is the job's place when it was visited.
type cursor struct {
	key  orderKey
	set  bool
	incl bool
}

// after is the cursor after job j as it is now.
func after(j *job) cursor { return cursor{key: j.key, set: true} }

// before reports whether a job of key k comes before (or at) the cursor.
func (c cursor) before(k orderKey) bool {
	if !c.set {
		return false
	}
	if x := k.compare(c.key); x != 0 || !c.incl {
		return x <= 0
	}
	return false
}

// sparse reports whether a walk jumps through the per-size trees:
// with few free slots and no placeholders in play (they serve their job
// beyond the free slots; they are rare and short-lived: such a walk
// steps through the whole queue). Jobs with reserved slots, which may be
// served beyond the free slots too, are few (claimants): a sparse walk
// visits them in order besides the jobs that fit (nextReserver).
func (q *Queues) sparse() bool {
	return q.nFree < sparseFree && q.nPlaceholders == 0
}

// nextReserver returns the first job after the cursor, in the queue's
// order, that has reserved slots, or nil.
func (qu *queue) nextReserver(c cursor) *job {
	var best *job
	for _, r := range qu.reservers {
		if !r.inTree || c.before(r.key) {
			continue
		}
		if best == nil || r.key.compare(best.key) < 0 {
			best = r
		}
	}
	return best
}

// walkSparse visits, in policy order after the cursor (after the job
// visited last, or from the start), the first job that may be granted
// (while no job claimed yet) and then only the jobs whose smallest grant
// fits the free slots by number and the jobs with reserved slots
// (nextReserver), even with no slot free.
func (q *Queues) walkSparse(qu *queue, st *passState, c cursor) (stop bool) {
	held := q.holdsUnstarted(qu) // its jobs not started are held back
	if held {
		q.holdUnstarted(qu, c)
	}
	for {
		var j *job
		if st.claiming {
			j = q.nextStartable(qu, c)
		} else {
			j = qu.nextReserver(c)
			if free := q.freeFor(qu); free > 0 {
				if f := q.nextFitting(qu, c, min(free, maxBucket)); f != nil && (j == nil || f.key.compare(j.key) < 0) {
					j = f
				}
			}
		}
		if j == nil {
			return false
		}
		c = after(j)
		running, starting := qu.running, qu.starting
		if q.visit(qu, j, st) {
			return true
		}
		held = held || q.startedLast(qu, running, starting, c)
	}
}

// starts reports whether the queue may start a job now (StateAware,
// maxRunningJobs).
func (qu *queue) starts() bool {
	if qu.cfg.Policy == StateAware && qu.starting > 0 {
		return false
	}
	return qu.runLimit() == nil
}

// fitsSome reports whether a job of qu whose smallest grant is at most
// lim slots may be granted (as nextFitting from the start finds one).
func (qu *queue) fitsSome(lim int) bool {
	starts := qu.starts()
	for b := 0; b <= lim; b++ {
		if treeSize(qu.fits[1][b]) > 0 || (starts && treeSize(qu.fits[0][b]) > 0) {
			return true
		}
	}
	return false
}

// firstAfter returns the first job of t after the cursor, or nil.
func firstAfter(t *rbtree.Tree[*job], c cursor) *job {
	var n *rbtree.Node[*job]
	if c.set {
		n = t.Search(func(j *job) bool { return !c.before(j.key) })
	} else {
		n = t.First()
	}
	if n == nil {
		return nil
	}
	return n.Item()
}

// nextStartable returns the first job after the cursor that the queue
// may grant: any job if the queue may start one, else the first started
// one.
func (q *Queues) nextStartable(qu *queue, c cursor) *job {
	if qu.starts() {
		return firstAfter(qu.order, c)
	}
	return q.firstOf(qu.fits[1][:], c)
}

// startable yields in order the jobs of qu that the queue may grant
// (nextStartable), from the start; it finds each next one anew, so the
// caller may change the trees between steps.
func (q *Queues) startable(qu *queue) iter.Seq[*job] {
	return func(yield func(*job) bool) {
		for j := q.nextStartable(qu, cursor{}); j != nil; j = q.nextStartable(qu, after(j)) {
			if !yield(j) {
				return
			}
		}
	}
}

// nextFitting returns the first job after the cursor whose smallest grant
// is at most lim slots and that the queue may grant.
func (q *Queues) nextFitting(qu *queue, c cursor, lim int) *job {
	best := q.firstOf(qu.fits[1][:lim+1], c)
	if qu.starts() {
		if j := q.firstOf(qu.fits[0][:lim+1], c); j != nil && (best == nil || j.key.compare(best.key) < 0) {
			best = j
		}
	}
	return best
}

// firstOf returns the first job after the cursor in any of the trees.
func (q *Queues) firstOf(trees []*rbtree.Tree[*job], c cursor) *job {
	var best *job
	for _, t := range trees {
		if t == nil || t.Len() == 0 {
			continue
		}
		if j := firstAfter(t, c); j != nil && (best == nil || j.key.compare(best.key) < 0) {
			best = j
		}
	}
	return best
}

// fitCount bounds a queue walk: it counts the jobs not visited yet whose
// smallest grant fits the free slots by number (job.sizeBucket), plus
// those with reserved slots (they can be served beyond the free ones).
// When none is left and no claim is to be made, the rest of the queue
// cannot be served now. Jobs not started yet count only while the queue
// may start one (StateAware, maxRunningJobs): blocking only grows during a
// pass.
type fitCount struct {
	cnt       [maxBucket + 1]int // jobs in the tree per bucket
	visited   [maxBucket + 1]int
	lim       int // the bucket limit remaining counts up to
	remaining int
	starts    bool // the queue may start a job: unstarted jobs count
	// cnt0 and visited0: the jobs not started of cnt and visited, while
	// they count (starts).
	cnt0, visited0 [maxBucket + 1]int
}

// newFitCount starts in f the count for a walk of qu.
func (q *Queues) newFitCount(qu *queue, f *fitCount) {
	*f = fitCount{}
	starts := !(qu.cfg.Policy == StateAware && qu.starting > 0) && qu.runLimit() == nil
	for b := range f.cnt {
		f.cnt[b] = treeSize(qu.fits[1][b])
		if starts {
			f.cnt0[b] = treeSize(qu.fits[0][b])
			f.cnt[b] += f.cnt0[b]
		}
	}
	f.lim, f.starts = -1, starts
	f.remaining = len(qu.reservers)
	f.relimit(q.freeFor(qu))
}

// relimit moves the bucket limit to what nFree slots can fit.
func (f *fitCount) relimit(nFree int) {
	lim := min(nFree, maxBucket)
	for ; f.lim < lim; f.lim++ {
		f.remaining += f.cnt[f.lim+1] - f.visited[f.lim+1]
	}
	for ; f.lim > lim; f.lim-- {
		f.remaining -= f.cnt[f.lim] - f.visited[f.lim]
	}
}

// visit counts j as visited.
func (f *fitCount) visit(j *job) {
	if len(j.reserved) > 0 {
		f.remaining--
	}
	if j.bucketStarted || f.starts {
		f.visited[j.bucket]++
		if !j.bucketStarted {
			f.visited0[j.bucket]++
		}
		if j.bucket <= f.lim {
			f.remaining--
		}
	}
}

// unvisit takes back the count of visit(j).
func (f *fitCount) unvisit(j *job) {
	if len(j.reserved) > 0 {
		f.remaining++
	}
	if j.bucketStarted || f.starts {
		f.visited[j.bucket]--
		if !j.bucketStarted {
			f.visited0[j.bucket]--
		}
		if j.bucket <= f.lim {
			f.remaining++
		}
	}
}

// stopStarting stops counting the jobs not started: the queue may start
// none now. O(buckets), once a walk at most.
func (f *fitCount) stopStarting() {
	if !f.starts {
		return
	}
	f.starts = false
	for b := range f.cnt {
		if b <= f.lim {
			f.remaining -= f.cnt0[b] - f.visited0[b]
		}
		f.cnt[b] -= f.cnt0[b]
		f.visited[b] -= f.visited0[b]
		f.cnt0[b], f.visited0[b] = 0, 0
	}
}

// done reports whether no job left could be served from nFree slots.
func (f *fitCount) done(nFree int) bool {
	f.relimit(nFree)
	return f.remaining <= 0
}

// treeSize is the size of a per-size tree not created yet (0) or created.
func treeSize(t *rbtree.Tree[*job]) int {
	if t == nil {
		return 0
	}
	return t.Len()
}
