package admission

import (
	"fmt"
	"slices"
)

// checkTenants checks the queue hierarchy's counts, for checkInvariants:
// each queue's used slots are what its subtree's jobs hold (granted,
// their drivers and placeholders included, and reserved for their
// claims), and no queue holds more than its maximum.
func (q *Queues) checkTenants() error {
	want := make(map[*qnode]int, len(q.nodes))
	for _, j := range q.jobs {
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
