package admission

import (
	"cmp"

	"github.com/regionsched/regionsched/internal/heap"
	"github.com/regionsched/regionsched/internal/rbtree"
)

// With many queues, the jobs behind a claimant are spread over the
// holders trees of every queue after its own: collecting and sorting them
// all for every claim costs O(holders log holders). When each of those
// trees, walked from its back, meets its jobs in victim order anyway
// (streamable), mergeBehind merges the walks instead, and stops once the
// victims hold enough slots: O(victims taken x log queues).

// victimOrder orders victims: the lowest priority first, the most
// recently submitted first among equals.
func victimOrder(a, b *job) int {
	if c := cmp.Compare(a.spec.Priority, b.spec.Priority); c != 0 {
		return c
	}
	return compareArrival(b, a)
}

// streamable reports whether qu's holders, walked from the back, come in
// victim order.
func (qu *queue) streamable() bool {
	return qu.cfg.Policy == Priority || (len(qu.prios) <= 1 && qu.cfg.Policy != FairShare)
}

// holderCursor walks one queue's holders from the back.
type holderCursor struct {
	n *rbtree.Node[*job]
}

// mergeBehind appends to out the jobs behind c (as behind) in victim
// order until they hold enough slots (all of them if enough is 0); ok is
// false, and out is to be discarded, when a queue's holders cannot be
// walked so or the jobs behind hold fewer slots than enough.
func (q *Queues) mergeBehind(c *job, ck orderKey, enough int, out []*job) ([]*job, bool) {
	h := heap.New(func(a, b holderCursor) bool { return victimOrder(a.n.Item(), b.n.Item()) < 0 }, nil)
	own := c.queue
	for _, qu := range q.qorder {
		if qu.rank < own.rank || qu.holders.Len() == 0 {
			continue
		}
		if !qu.streamable() {
			return out, false
		}
		if n := qu.holders.Last(); n != nil && (qu != own || n.Item().hkey.compare(ck) > 0) {
			h.Push(holderCursor{n: n})
		}
	}
	held := 0
	for h.Len() > 0 && (enough == 0 || held < enough) {
		cur := h.Pop()
		v := cur.n.Item()
		if v != c {
			out = append(out, v)
			held += len(v.held)
		}
		if p := cur.n.Prev(); p != nil && (v.queue != own || p.Item().hkey.compare(ck) > 0) {
			h.Push(holderCursor{n: p})
		}
	}
	return out, held >= enough
}
