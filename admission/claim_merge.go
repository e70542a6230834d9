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
// not behind its claimant, and stops once the victims hold enough slots.

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
}

// startVictims makes Queues.victims once there are two queues, with the
// jobs that hold slots a claim may take.
func (q *Queues) startVictims() {
	if q.victims != nil || len(q.qorder) < 2 {
		return
	}
	q.victims = rbtree.New(byVictimKey)
	for _, qu := range q.qorder {
		for h := qu.holders.First(); h != nil; h = h.Next() {
			q.updateVictim(h.Item())
		}
	}
}

// mergeBehind appends to out the jobs behind c (as behind: c's queue's
// holders with keys after ck, every holder of the queues after it by
// rank) in victim order, until they hold enough slots (all of them if
// enough is 0, or if they hold fewer); all says they are all of them. ok
// is false, and nothing is appended, when no queue after c's holds slots:
// the walk from the back of c's queue alone is the cheaper one then.
func (q *Queues) mergeBehind(c *job, ck orderKey, enough int, out []*job) (_ []*job, all, ok bool) {
	own := c.queue
	others := false
	for _, qu := range q.qorder {
		if qu.rank > own.rank && qu.holders.Len() > 0 {
			others = true
			break
		}
	}
	if !others || q.victims == nil {
		return out, false, false
	}
	held := 0
	for n := q.victims.First(); n != nil; n = n.Next() {
		v := n.Item()
		if v == c || v.queue.rank < own.rank || (v.queue == own && v.hkey.compare(ck) <= 0) {
			continue
		}
		out = append(out, v)
		if held += len(v.held); enough > 0 && held >= enough {
			return out, false, true
		}
	}
	return out, true, true
}
