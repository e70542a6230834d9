package admission

// What the guarantees read of each queue of the hierarchy is kept up to
// date as slots change hands, as the slots a subtree holds are (used,
// addUse), rather than counted over every job at each claim: a claim
// across queues reads them for each of its victims (giveBudget, borrows).
// Each queue counts
//
//   - yielding: the slots its subtree's jobs are giving up (being
//     reclaimed, by a claim or a preemption);
//   - drivers: the jobs of the queue whose driver holds its slot (until
//     the job ends or the slot is removed from the cluster);
//   - kept: what its subtree keeps while every queue holds its guarantee
//     (keptSlots: its guarantee, or its drivers with what its children
//     keep if more), and keptKids, what its children keep together.
//
// An update costs O(depth). checkTenants compares them with a count
// over the jobs.

// addYielding adds slot idx to the slots v gives up.
func (v *job) addYielding(idx int32) {
	v.yielding = append(v.yielding, idx)
	addYielding(v.queue.node, 1)
}

// dropYielding takes slot idx out of the slots v gives up, if it is
// there.
func (v *job) dropYielding(idx int32) {
	n := len(v.yielding)
	if v.yielding = removeIdx(v.yielding, idx); len(v.yielding) < n {
		addYielding(v.queue.node, -1)
	}
}

// clearYielding forgets every slot j gives up (it ended).
func (j *job) clearYielding() {
	addYielding(j.queue.node, -len(j.yielding))
	j.yielding = nil
}

// addYielding counts d more slots given up in n and its parents.
func addYielding(n *qnode, d int) {
	if d != 0 {
		n.markStale()
	}
	for ; n != nil && d != 0; n = n.parent {
		n.yielding += d
	}
}

// addDriver counts d more drivers run by jobs of j's queue.
func addDriver(j *job, d int) {
	n := j.queue.node
	n.drivers += d
	n.updateKept()
}

// updateKept recomputes what n keeps (keptSlots) after its guarantee,
// drivers or children changed, and what its parents keep in turn.
func (n *qnode) updateKept() {
	for x := n; x != nil; x = x.parent {
		k := keptSlots(x)
		if k == x.kept {
			return
		}
		if x.parent != nil {
			x.parent.keptKids += k - x.kept
		}
		x.kept = k
	}
}

// keptSlots is what a queue's subtree keeps while every queue holds its
// guarantee: its own guarantee, or what its children keep together if
// more (a parent without a guarantee of its own may have children with
// guarantees), or, for a queue with jobs, the drivers they run if more.
func keptSlots(n *qnode) int {
	return max(n.guaranteed, n.drivers+n.keptKids)
}
