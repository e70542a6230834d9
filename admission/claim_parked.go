package admission

// Most jobs that hold idle slots on a busy cluster wait for the rest of
// a claim that is complete (claimSettled): their slots being reclaimed
// for them come back as the victims' tasks end. A claim across queues
// takes none of their idle slots (claim_settled.go), and when their queue
// may yield it nothing (yieldingQueues) it takes nothing of them at all:
// pickLive would meet each of them in the idle holders' stream, with
// every claim, only to pass over it. So the first claim that passes over
// such a job parks it: it leaves Queues.idleVictims, and claims meet it
// in its queue's stream instead, as any job that holds no idle slot:
// when its queue may yield them a slot, to pick from it (pickFrom, which
// finds its claim complete), and otherwise not at all but for whether a
// guarantee kept its slots (keptIn). It is unparked, back in the idle
// holders' stream, by any change to its claim (unpark): its reserved
// slots, those being reclaimed for it, its placeholders, and its asks,
// gang or driver, which make what it lacks; holding no idle slot ends
// the parking too. So a parked job's claim is complete whenever a claim
// looks at it (checkVictimTrees checks it after every decision in the
// tests, and checkLive every claim).

// park takes j, which holds idle slots and whose claim is complete, out
// of Queues.idleVictims until its claim changes (see above).
func (q *Queues) park(j *job) {
	if !j.idle.in {
		return
	}
	j.idle.parked = true
	q.updateIdleVictim(j)
}

// unpark puts j back in Queues.idleVictims if it was parked: its claim,
// or what it lacks, may have changed (see above).
func (q *Queues) unpark(j *job) {
	if j.idle.parked {
		j.idle.parked = false
		q.updateIdleVictim(j)
	}
}
