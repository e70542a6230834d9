package admission

// A claim takes no idle slot of a job whose own claim is complete: the
// slots reserved for it and those coming back to it complete its head
// ask, with the idle slots it holds for that ask (claimSettled). It
// deploys the ask as soon as they are all there, so its idle slots come
// back with its tasks' ends like any busy slot. Taken, they would leave
// the slots of its claim granted to an ask that can no longer complete:
// slots moved for nothing, and the job waiting again with idle slots.
// Across queues that never ends within an instant: the fair order of
// sibling queues flips with every grant, so the job, first again, claims
// the idle slots of a job of a third queue whose claim is complete in
// turn, and so on around a cycle of queues (the direct way back,
// claiming from the job that took them, lostNowTo forbids). With this
// rule no claim undoes another that is complete: the idle slots a
// complete claim comes with stay with its job until its ask deploys and
// they run its tasks.

// claimSettled reports whether v's claim completes its head ask: the
// slots reserved for it and those being reclaimed for it serve all its
// head ask lacks (as claimComplete counts them, in a buffer of its own:
// a claim's picker counts in the claim scratch while it asks).
func (q *Queues) claimSettled(v *job) bool {
	if len(v.reserved)+len(v.incoming) == 0 {
		return false
	}
	lack := v.headNeed()
	if lack == nil {
		return false
	}
	if len(q.profiles) == 1 { // (every slot coming counts: countComing's total)
		return q.matchedOne(lack, len(v.reserved)+len(v.incoming)+len(v.placeholders)) >= sumCounts(lack)
	}
	cs := &q.claimScratch
	cs.settled = q.countComing(v, cs.settled)
	return q.matched(lack, cs.settled) >= sumCounts(lack)
}
