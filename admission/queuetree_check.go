package admission

import (
	"fmt"
	"slices"
)

// checkTenants checks the queue hierarchy's counts, for checkInvariants:
// each queue's used slots are what its subtree's jobs hold (granted,
// their drivers and placeholders included, and reserved for their
// claims), and no queue holds more than its maximum; what the guarantees
// read agrees with the jobs (checkGuaranteeCounts).
func (q *Queues) checkTenants() error {
	if err := q.checkGuaranteeCounts(); err != nil {
		return err
	}
	want := make(map[*qnode]int, len(q.nodes))
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		for n := j.queue.node; n != nil; n = n.parent {
			want[n] += j.granted + len(j.reserved)
		}
	}
	names := make([]string, 0, len(q.nodes))
	for name := range q.nodes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		n := q.nodes[name]
		if n.used != want[n] {
			return fmt.Errorf("admission: queue %s counts %d slots used, its jobs hold %d", name, n.used, want[n])
		}
		if n.max > 0 && n.used > n.max {
			return fmt.Errorf("admission: queue %s holds %d slots, over its maxSlots %d", name, n.used, n.max)
		}
	}
	return nil
}

// checkReclaimGuarantee checks a reclaim of count slots of v for c as
// takeFrom makes it (CheckInvariants reports the first violation found,
// see Queues.broken): from a job of another queue than c's, it is made
// for a queue below its guarantee, and leaves the victim's queue holding
// its guarantee beside the slots it gives up to jobs outside it
// (checkGiveGuarantee, leavingSlots). It costs O(slots), for reclaims
// across queues only.
func (q *Queues) checkReclaimGuarantee(c, v *job, count int) error {
	if c.queue == v.queue {
		return nil
	}
	if n := c.queue.node; n.used >= n.guaranteed {
		return fmt.Errorf("admission: job %s of queue %s (holding %d, guaranteed %d) reclaimed from job %s of queue %s",
			c.spec.Name, n.name, n.used, n.guaranteed, v.spec.Name, v.queue.cfg.Name)
	}
	leaving := q.leavingSlots()
	return q.checkGiveGuarantee("reclaimed", c, v, count, func(n *qnode) int { return leaving[n.idx] })
}

// checkGiveGuarantee checks a move of count slots of v to c, by a claim
// (how is "claimed") or a preemption ("reclaimed"), once v gives them up:
// from a job of another queue than c's, it leaves the victim's queue,
// and each parent of it below the parent both queues share, holding at
// least its guarantee beside every slot it is giving up (no slot moves
// across queues from a queue at or below its guarantee); yielding counts
// the slots a queue's subtree gives up (qnode.yielding, or fewer: those
// it gives up to jobs outside it).
func (q *Queues) checkGiveGuarantee(how string, c, v *job, count int, yielding func(*qnode) int) error {
	if c.queue == v.queue {
		return nil
	}
	for _, n := range below(v.queue, c.queue) {
		if y := yielding(n); n.used-y < n.guaranteed {
			return fmt.Errorf("admission: job %s of queue %s %s %d slots of job %s, taking queue %s below its guarantee: it holds %d, gives up %d, guaranteed %d",
				c.spec.Name, c.queue.cfg.Name, how, count, v.spec.Name, n.name, n.used, y, n.guaranteed)
		}
	}
	return nil
}

// checkGuaranteeCounts checks the counts of tenantcounts.go against the
// jobs: each queue has its own place in the per-queue counts (qnode.idx),
// its yielding slots are those its subtree's jobs give up, its drivers
// those of its jobs, and what it keeps (and its children keep) is
// keptSlots counted down the tree.
func (q *Queues) checkGuaranteeCounts() error {
	yielding, drivers := map[*qnode]int{}, map[*qnode]int{}
	for _, j := range q.jobs {
		if j == nil { // forgotten
			continue
		}
		for n := j.queue.node; n != nil; n = n.parent {
			yielding[n] += len(j.yielding)
		}
		if j.hasSlot {
			drivers[j.queue.node]++
		}
	}
	var kept func(n *qnode) int
	kept = func(n *qnode) int {
		sum := drivers[n]
		for _, c := range n.children {
			sum += kept(c)
		}
		return max(n.guaranteed, sum)
	}
	for i, n := range q.nodeList {
		if n.idx != i {
			return fmt.Errorf("admission: queue %s has place %d in the per-queue counts, not its own %d", n.name, n.idx, i)
		}
		kids := 0
		for _, c := range n.children {
			kids += kept(c)
		}
		if n.yielding != yielding[n] || n.drivers != drivers[n] || n.kept != kept(n) || n.keptKids != kids {
			return fmt.Errorf("admission: queue %s counts %d slots given up, %d drivers, %d slots kept (%d by its children); its jobs: %d, %d, %d (%d)",
				n.name, n.yielding, n.drivers, n.kept, n.keptKids, yielding[n], drivers[n], kept(n), kids)
		}
	}
	return nil
}
