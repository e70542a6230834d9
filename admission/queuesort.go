package admission

import (
	"math/bits"
	"slices"
)

// Across queues, each decision serves the queues in YuniKorn's fair
// order, in slots, recursively from root: among sibling queues, first
// those below their guarantee, the lowest used / guaranteed first; then
// the others, the fewest slots used above their guarantee first (so
// siblings without guarantees split evenly); ties by name. A queue's
// policy orders its own jobs. The order changes with every grant, so a
// pass serves the first queue in that order only while it stays first
// (serve checks after each grant, see turnOver), then sorts again; a
// queue none of whose waiting jobs can be served now is done for the
// pass. A queue's name never decides beyond a tie.

// compareNodes orders two sibling queues (see above).
func compareNodes(a, b *qnode) int {
	return fairKeyOf(a).compare(fairKeyOf(b))
}

// fairKey is what orders a queue among its siblings: the slots it uses,
// its guarantee, and its place by name.
type fairKey struct{ used, guaranteed, nameRank int }

// fairKeyOf is n's fairKey.
func fairKeyOf(n *qnode) fairKey { return fairKey{n.used, n.guaranteed, n.nameRank} }

// compare orders two sibling queues by their keys (see above).
func (a fairKey) compare(b fairKey) int {
	aBelow, bBelow := a.used < a.guaranteed, b.used < b.guaranteed
	switch {
	case aBelow && !bBelow:
		return -1
	case bBelow && !aBelow:
		return 1
	case aBelow:
		if c := compareRatios(a.used, a.guaranteed, b.used, b.guaranteed); c != 0 {
			return c
		}
	default:
		if c := compareInts(a.used-a.guaranteed, b.used-b.guaranteed); c != 0 {
			return c
		}
	}
	return compareInts(a.nameRank, b.nameRank) // (siblings: by name)
}

// compareRatios compares x1/y1 with x2/y2 exactly (all non-negative, y
// positive).
func compareRatios(x1, y1, x2, y2 int) int {
	h1, l1 := bits.Mul64(uint64(x1), uint64(y2))
	h2, l2 := bits.Mul64(uint64(x2), uint64(y1))
	if c := compareUints(h1, h2); c != 0 {
		return c
	}
	return compareUints(l1, l2)
}

func compareUints(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareInts(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// A pass visits the queues that had jobs to visit when it started
// (waitedAtStart), in the fair order as it stands (their ranks, rankQueues),
// each until it is done for the pass (doneWaiting) or its whole branch
// is (leaveBranch): the next queue to serve is the first in rank order
// still to visit. The ranks change only as slots change hands, so a
// pass walks the ranks once between two such changes.

// startPass starts a pass and returns how many queues have jobs to
// visit.
func (q *Queues) startPass() int {
	q.pass++
	q.scanAt, q.scanned = 0, false
	return q.nWaitingQueues
}

// waitedAtStart reports whether qu had jobs to visit when the pass
// started: as it has now, unless its jobs to visit changed since
// (noteOrderChange).
func (q *Queues) waitedAtStart(qu *queue) bool {
	if qu.orderChangedIn == q.pass {
		return qu.waitedBefore
	}
	return qu.hasWaiting
}

// noteOrderChange records, before a job goes in or out of qu's order,
// whether qu had jobs to visit before the first such change since the
// pass started (waitedAtStart), and counts the queues with jobs to visit
// once it changed (orderChanged).
func (q *Queues) noteOrderChange(qu *queue) {
	if qu.orderChangedIn != q.pass {
		qu.orderChangedIn, qu.waitedBefore = q.pass, qu.hasWaiting
	}
}

// orderChanged counts qu among the queues with jobs to visit, or not,
// after a job went in or out of its order (from whether it had any).
func (q *Queues) orderChanged(qu *queue, had bool) {
	if has := qu.order.Len() > 0; has != had {
		q.nWaitingQueues += b2i(has) - b2i(had)
		qu.hasWaiting = has
	}
}

// toVisit reports whether the pass still visits qu: it had jobs to
// visit when the pass started, and neither it nor a branch it is in is
// done for the pass.
func (q *Queues) toVisit(qu *queue) bool {
	if qu.doneIn == q.pass || !q.waitedAtStart(qu) {
		return false
	}
	if q.leftIn != q.pass {
		return true // (no branch is done for the pass)
	}
	for x := qu.node; x != nil; x = x.parent {
		if x.leftIn == q.pass {
			return false
		}
	}
	return true
}

// doneWaiting takes qu out of the pass's queues to visit.
func (q *Queues) doneWaiting(qu *queue) { qu.doneIn = q.pass }

// markReservers marks the queues left to visit in the pass that have
// jobs with reserved slots not at rest (resting.go), and their parents
// (see leaveBranch), lists them, and reports whether there are any:
// O(queues). While no slot is free, only their walks may change
// anything.
func (q *Queues) markReservers() bool {
	q.resvStamp++
	q.markedUses = q.uses
	q.marked = q.marked[:0]
	for qu := range q.listedQueues(reservingQueues) {
		if q.toVisit(qu) && !q.reserversAtRest(qu) {
			q.marked = append(q.marked, qu)
			for x := qu.node; x != nil && x.resvMark != q.resvStamp; x = x.parent {
				x.resvMark = q.resvStamp
			}
		}
	}
	return len(q.marked) > 0
}

// markedLeft reports whether a queue markReservers listed is still to
// visit and has jobs with reserved slots not at rest.
func (q *Queues) markedLeft() bool {
	for _, qu := range q.marked {
		if len(qu.reservers) > 0 && q.toVisit(qu) && !q.reserversAtRest(qu) {
			return true
		}
	}
	return false
}

// leaveBranch takes qu, and the queues of the largest branch it is in
// with no queue marked by markReservers, out of the pass's queues to
// visit, as doneWaiting each of them would: in O(depth), not O(queues
// of the branch).
func (q *Queues) leaveBranch(qu *queue) {
	x := qu.node
	for x.parent != nil && x.parent.resvMark != q.resvStamp {
		x = x.parent
	}
	x.leftIn, q.leftIn = q.pass, q.pass
}

// resumeOf is where qu's last turn in the pass stopped (qu.resume, set
// in this pass), or the start.
func (q *Queues) resumeOf(qu *queue) cursor {
	if qu.resumeIn != q.pass {
		return cursor{}
	}
	return qu.resume
}

// firstWaiting returns the queue to serve next: the first in the fair
// order, recursively from root, among those the pass still visits; nil
// if none is left. It walks the ranks from where it found the last one,
// from the first after the ranks changed (a queue no longer to visit
// never is again in the pass): O(queues) per change of the ranks.
func (q *Queues) firstWaiting() *queue {
	q.rankQueues()
	if !q.scanned || q.scanGen != q.rankGen {
		q.scanAt, q.scanGen, q.scanned = 0, q.rankGen, true
	}
	for ; q.scanAt < len(q.byRank); q.scanAt++ {
		if qu := q.byRank[q.scanAt]; qu != nil && q.toVisit(qu) {
			return qu
		}
	}
	return nil
}

// turnOver reports, during a pass's turn of qu, whether qu no longer
// comes first among the queues left to visit: it stops being served in
// this turn (the pass sorts again). Nothing to check with one queue to
// visit.
func (q *Queues) turnOver(qu *queue) bool {
	if q.turn != qu || q.turnQueues < 2 {
		return false
	}
	if q.firstWaiting() != qu {
		q.turnEnded = true
		return true
	}
	return false
}

// rankQueues numbers the queues in the fair order as it stands (rank
// 0 first), recursively from root: claims take slots only from jobs
// behind their claimant, its queue's later jobs and the queues after it.
func (q *Queues) rankQueues() {
	if q.rankedOnce && q.ranked == q.uses && len(q.qorder) == q.rankedQueues {
		return // nothing changed since
	}
	all := !q.rankedOnce || len(q.qorder) != q.rankedQueues // (a queue was added)
	q.rankedOnce, q.ranked, q.rankedQueues = true, q.uses, len(q.qorder)
	q.rankGen++
	if all {
		q.byRank = make([]*queue, len(q.qorder))
	}
	if q.root != nil {
		q.rankFrom(q.root, 0, all)
	}
}

// rankFrom numbers the queues of n's subtree in the fair order from rank
// on, and returns the rank after them. A subtree in which no queue's
// slots changed since it was numbered (a change marks every parent of
// the queue unsorted) keeps its order; numbered from the same rank, it
// keeps its numbers, and is passed over (unless all).
func (q *Queues) rankFrom(n *qnode, rank int32, all bool) int32 {
	if !all && !n.unsorted && n.rankBase == rank && len(n.sorted) == len(n.children) {
		return rank + n.ranked
	}
	n.rankBase = rank
	first := rank
	if n.qu != nil {
		n.qu.rank = rank
		q.byRank[rank] = n.qu
		rank++
	}
	if n.unsorted || len(n.sorted) != len(n.children) {
		n.sorted = append(n.sorted[:0], n.children...)
		slices.SortFunc(n.sorted, compareNodes)
		n.unsorted = false
	}
	for _, c := range n.sorted {
		rank = q.rankFrom(c, rank, all)
	}
	n.ranked = rank - first
	return rank
}

// fairQueues returns the queues in the fair order as it stands.
func (q *Queues) fairQueues() []*queue {
	q.rankQueues()
	out := slices.Clone(q.qorder)
	slices.SortFunc(out, func(a, b *queue) int { return compareInts(int(a.rank), int(b.rank)) })
	return out
}

// crossYield is how many of its slots queue vq may give up to claimant
// c of another queue and still come after c's queue in the fair order
// (compared where their branches meet, below their common parent), once
// c holds what it lacks (gain more slots than it holds and has coming):
// a slot beyond that would put vq first, to claim it straight back.
func (q *Queues) crossYield(vq *queue, c *job, gain int) int {
	av, ac := vq.node, c.queue.node
	for av.depth > ac.depth {
		av = av.parent
	}
	for ac.depth > av.depth {
		ac = ac.parent
	}
	for av.parent != ac.parent {
		av, ac = av.parent, ac.parent
	}
	if av == ac {
		return vq.heldSlots // (one queue: its own rules)
	}
	// The most slots k (up to what vq holds) such that av, holding k
	// fewer, still comes after: av comes no earlier the more it holds
	// (compareNodes), so by bisection. av holds at least vq's slots, so
	// its count stays non-negative.
	lo, hi := 0, vq.heldSlots // yieldsAfter(lo), or lo is 0
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if yieldsAfter(av, ac, c, gain, mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// yieldsAfter reports whether sibling branch av, holding k slots fewer,
// still comes after branch ac of claimant c's queue holding what c's
// claim (of gain more slots than it holds and has coming) brings it.
func yieldsAfter(av, ac *qnode, c *job, gain, k int) bool {
	x, y := fairKeyOf(av), fairKeyOf(ac)
	x.used -= k
	y.used += len(c.incoming) + gain
	return x.compare(y) > 0
}
