package admission

import (
	"cmp"

	"github.com/regionsched/regionsched/internal/rbtree"
)

// With many queues, the jobs behind a claimant are spread over the
// holders of every queue after its own: collecting and sorting them all
// for every claim costs O(holders log holders), and merging each queue's
// holders walked from its back still costs O(log queues) per job. So the
// admission keeps every job that holds slots a claim may take in one tree
// in victim order (Queues.victims, kept by updateHolder from the second
// queue on), and a claim walks it from the front, passing over the jobs
// not behind its claimant, and stops once the claim completes
// (pickBehind). Most claims merge instead only the parts of it they may
// pick from, kept beside it (claim_streams.go).

// victimOrder orders victims: the lowest priority first, the most
// recently submitted first among equals.
func victimOrder(a, b *job) int {
	if c := cmp.Compare(a.spec.Priority, b.spec.Priority); c != 0 {
		return c
	}
	return compareArrival(b, a)
}

// victimLink is a job's place in Queues.victims: in it (by node, at
// priority prio) while it holds slots a claim may take.
type victimLink struct {
	node rbtree.Node[*job]
	prio int
	in   bool
	// qnode is its place in its queue's victims tree (queue.victims), at
	// priority qprio, while qin (claim_streams.go).
	qnode rbtree.Node[*job]
	qprio int
	qin   bool
}

// byVictimKey is victimOrder by the priority a job was put in the tree
// with (a changed priority moves it: updateVictim).
func byVictimKey(a, b *job) int {
	if c := cmp.Compare(a.victim.prio, b.victim.prio); c != 0 {
		return c
	}
	return compareArrival(b, a)
}

// updateVictim puts j where it belongs in Queues.victims: in it, at its
// priority, while it holds slots a claim may take. With one queue there
// is no tree (a claim walks its queue's holders): it is made with the
// second queue (startVictims).
func (q *Queues) updateVictim(j *job) {
	if q.victims == nil {
		return
	}
	want := len(j.held) > 0
	l := &j.victim
	if l.in == want && (!want || l.prio == j.spec.Priority) {
		return
	}
	if l.in {
		q.victims.Remove(&l.node)
		l.in = false
	}
	if want {
		l.prio = j.spec.Priority
		q.victims.Insert(&l.node, j)
		l.in = true
	}
	q.updateQueueVictim(j)
	q.updateIdleVictim(j)
}

// startVictims makes Queues.victims once there are two queues, with the
// jobs that hold slots a claim may take.
func (q *Queues) startVictims() {
	if q.victims != nil || len(q.qorder) < 2 {
		return
	}
	q.victims = rbtree.New(byVictimKey)
	q.idleVictims = rbtree.New(byIdleKey)
	for _, qu := range q.qorder {
		for h := qu.holders.First(); h != nil; h = h.Next() {
			q.updateVictim(h.Item())
		}
	}
}

// isBehind reports whether v is behind c (of key ck) in grant order: a
// job of c's queue after it, or of a queue after c's by rank.
func isBehind(c *job, ck orderKey, v *job) bool {
	return v != c && v.queue.rank >= c.queue.rank && (v.queue != c.queue || v.hkey.compare(ck) > 0)
}

// pickBehind picks for a claim from the jobs behind its claimant in
// victim order, across queues (those isBehind finds), until the
// claim completes: walking the victims tree as it picks, it visits the
// jobs up to the one that completes the claim, not every job behind. The
// picks from the first of them are those a claim would make from the
// first part of the jobs (behind with enough slots), and a claim that
// fails on that part picks from them all, from the start.
//
// It passes over the jobs of queues that may yield nothing and hold no
// idle slot by their queue's mark (yieldingQueues, claim_passover.go),
// and walks only the streams of jobs it may pick from when that decides
// as the walk would (pickLive, claim_streams.go).
func (pk *picker) pickBehind() {
	live := pk.q.yieldingQueues(pk.c, pk.gain())
	if pk.q.visitAll {
		pk.walkVictims(live)
		return
	}
	save := pk.save()
	if pk.pickLive(live) {
		if pk.q.checkLive {
			pk.checkLive(live, save)
		}
		return
	}
	pk.restore(save) // (whether it is guarded is unknown: walk them all)
	pk.walkVictims(live)
}

// walkVictims is pickBehind's walk of the victims tree, the queues that
// may yield the claim a slot marked live.
func (pk *picker) walkVictims(live uint64) {
	q, c := pk.q, pk.c
	ck := keyOf(c)
	for n := q.victims.First(); n != nil && pk.m < pk.need; n = n.Next() {
		v := n.Item()
		switch {
		case !isBehind(c, ck, v):
		case v.queue.liveIn != live && !q.holdsIdle(v) && !q.visitAll:
			// As passesOver would: only whether a guarantee kept its
			// slots.
			pk.guarded = pk.guarded || pk.above(v.queue) < len(v.held)
		case !pk.passesOver(v):
			pk.pickFrom(v, false)
		}
	}
}
