package admission

import (
	"fmt"
	"slices"
	"time"

	"github.com/regionsched/regionsched/slotpool"
)

// port is one job's side of a Queues admission (its JobPort): the
// slotpool.Admission its scheduler's pool talks to, plus the calls through
// which the runtime tells the admission how the job is doing. Its inputs
// only record what happened: the admission decides in Decide.
type port struct {
	q *Queues
	j *job
}

var _ slotpool.Admission = (*port)(nil)

// Job returns the job's name.
func (p *port) Job() string { return p.j.spec.Name }

// ID returns the job's id.
func (p *port) ID() JobID { return p.j.id }

// State returns the job's state.
func (p *port) State() JobState { return p.j.state }

// Err returns why the job was rejected or failed (a *RejectedError, or
// the error given to Failed), or nil.
func (p *port) Err() error { return p.j.err }

// DriverSlot returns the slot of the job's driver, once granted.
func (p *port) DriverSlot() (slotpool.SlotID, bool) {
	if !p.j.hasSlot || p.j.state.Terminal() {
		return 0, false
	}
	return p.q.slots[p.j.driverSlot].slot.ID, true
}

// Granted returns how many slots the job holds (its driver included).
func (p *port) Granted() int { return p.j.granted }

// Pending reports whether Ready has messages for the job's pool (the
// admission granted or reclaimed something in another job's call).
func (p *port) Pending() bool { return len(p.j.out) > 0 }

// Handle takes a message from the job's pool: an Ask (granted in policy
// order, whole if all-or-nothing), an AskRelease, or a SlotRelease (the
// slot goes back to the cluster and is confirmed). An ask id used twice, an
// ask of a job whose driver has no slot yet (ErrNoDriver) or a slot the
// job does not hold returns an error and changes nothing.
func (p *port) Handle(now time.Time, msg slotpool.ToAdmission) error {
	q, j := p.q, p.j
	q.now = now
	if j.state.Terminal() {
		return fmt.Errorf("admission: job %q is %v: %T ignored", j.spec.Name, j.state, msg)
	}
	switch m := msg.(type) {
	case slotpool.Ask:
		if j.driver && !j.hasSlot {
			return fmt.Errorf("%w: job %q: ask %d before it (its regions ask once the driver runs)", ErrNoDriver, j.spec.Name, m.ID)
		}
		if m.Speculative {
			return q.addSpecAsk(j, m)
		}
		if _, dup := j.asks.get(m.ID); dup || q.specIndex(j, m.ID) >= 0 {
			return fmt.Errorf("admission: job %q: ask %d asked twice", j.spec.Name, m.ID)
		}
		a := j.asks.newAsk()
		a.id, a.bulk, a.head, a.allOrNothing = m.ID, m.Bulk, m.Head, m.Gang.AllOrNothing
		q.stamp++
		a.stamp = q.stamp
		a.left = m.Gang.AppendCounts(a.left)
		a.n = sumCounts(a.left)
		for _, id := range m.Holding {
			if idx, ok := q.index[id]; ok {
				a.holding = append(a.holding, idx)
			}
		}
		j.asks.add(a)
		q.unpark(j)
		q.markIdle(j, a, true)
	case slotpool.AskRelease:
		if a, ok := j.asks.get(m.ID); ok {
			q.markIdle(j, a, false)
			j.asks.remove(a)
			q.unpark(j)
		} else if i := q.specIndex(j, m.ID); i >= 0 {
			q.specAsks = slices.Delete(q.specAsks, i, i+1)
			return nil
		}
	case slotpool.SlotRelease:
		if q.lostEcho(j, m.Slot) {
			return nil // the answer to the Revoke of a slot removed
		}
		idx, ok := q.index[m.Slot]
		if !ok || q.slots[idx].owner != j.id || (q.slots[idx].state != slotGranted && q.slots[idx].state != slotReclaiming) {
			return &slotpool.SlotError{Op: "release", Slot: m.Slot, Err: slotpool.ErrUnknownSlot}
		}
		echo := q.slots[idx].revoked
		q.release(j, idx)
		if !echo {
			q.send(j, slotpool.ReleaseConfirmed{Slot: m.Slot, Reason: m.Reason})
		}
	default:
		return fmt.Errorf("admission: %T: %w", msg, slotpool.ErrUnknownMessage)
	}
	q.updateOrder(j)
	return nil
}

// Ready returns the messages for the job's pool and forgets them. The
// returned slice is valid until the next call of Ready: its storage then
// takes the messages that follow (a scheduler reads every message of one call
// before the next, and a job should not cost an allocation per grant).
func (p *port) Ready() []slotpool.FromAdmission {
	j := p.j
	out := j.out
	clear(j.spare)
	j.out, j.spare = j.spare[:0], out
	return out
}

// Tick is Queues.Tick.
func (p *port) Tick(now time.Time) { p.q.Tick(now) }

// NextDeadline returns the admission's next deadline.
func (p *port) NextDeadline() (time.Time, bool) { return p.q.NextDeadline() }

// Deployed tells the admission that the job's first region is fully
// deployed: a starting job is running from now on (under StateAware the
// next job of its queue may start).
func (p *port) Deployed(now time.Time) {
	q, j := p.q, p.j
	if j.state != JobStarting {
		return
	}
	q.now = now
	q.leaveStarting(j, "first region deployed")
	if !j.waiting() {
		q.releasePlaceholders(j, "placeholder replaced: no request of the job waits")
	}
}

// Finished tells the admission that the job finished: every slot it held
// (its driver's included) goes back to the cluster, and it is completed.
// The job's pool must not be used afterwards.
func (p *port) Finished(now time.Time) error {
	if p.j.state.Terminal() {
		return &TransitionError{Job: p.j.spec.Name, From: p.j.state, To: JobCompleting}
	}
	p.q.end(now, p.j, nil)
	return nil
}

// Failed tells the admission that the job failed (err says why): its
// slots go back and it is failed.
func (p *port) Failed(now time.Time, err error) error {
	if p.j.state.Terminal() {
		return &TransitionError{Job: p.j.spec.Name, From: p.j.state, To: JobFailing}
	}
	if err == nil {
		err = fmt.Errorf("admission: job %q failed", p.j.spec.Name)
	}
	p.q.end(now, p.j, err)
	return nil
}

// leaveStarting moves a starting job to running.
func (q *Queues) leaveStarting(j *job, why string) {
	q.dropStarting(j)
	q.move(j, JobRunning, why)
}

// addStarting lists j, starting under StateAware, for its starting
// timeout.
func (q *Queues) addStarting(j *job) {
	j.queue.startingJobs = append(j.queue.startingJobs, j)
	q.nStarting++
}

// dropStarting takes j off its queue's starting list, if it is on it.
func (q *Queues) dropStarting(j *job) {
	n := len(j.queue.startingJobs)
	j.queue.startingJobs = slices.DeleteFunc(j.queue.startingJobs, func(x *job) bool { return x == j })
	q.nStarting -= n - len(j.queue.startingJobs)
}

// Tick takes the time now. The timers due by then fire in the next
// Decide, after that instant's decision, so that a gang reservable with
// the slots freed at that very instant is reserved, not timed out: reclaim
// timeouts (a slot asked back from a lower-priority job and not back yet
// is revoked), gang timeouts, and starting timeouts (under StateAware a
// job starting for longer than its queue's StartingTimeout counts as
// running, and the next job may start).
func (q *Queues) Tick(now time.Time) { q.now = now }

// fireTimers fires the timers due at now (see Tick) and reports whether
// one changed what a decision may do, or freed slots a claim kept
// reserved (fireRevokes).
func (q *Queues) fireTimers(now time.Time) bool {
	freed := q.fireRevokes(now)
	fired := q.gangTimers(now) || freed
	if q.nStarting == 0 {
		return fired // (no queue to look at)
	}
	for _, qu := range q.qorder {
		for _, j := range slices.Clone(qu.startingJobs) {
			if !now.Before(j.started.Add(qu.cfg.StartingTimeout)) {
				q.leaveStarting(j, "starting timeout")
				fired = true
			}
		}
	}
	return fired
}

// NextDeadline returns the earliest starting timeout or reclaim timeout.
func (q *Queues) NextDeadline() (time.Time, bool) {
	if q.startCut {
		return q.now, true // the rest of the instant's decision (startcut.go)
	}
	at, ok := q.nextRevoke()
	if t, gok := q.nextGangTimer(); gok && (!ok || t.Before(at)) {
		at, ok = t, true
	}
	if q.nStarting == 0 {
		return at, ok
	}
	for _, qu := range q.qorder {
		for _, j := range qu.startingJobs {
			if t := j.started.Add(qu.cfg.StartingTimeout); !ok || t.Before(at) {
				at, ok = t, true
			}
		}
	}
	return at, ok
}

// portOf returns the port of a submitted job by name.
func (q *Queues) portOf(name string) (*port, bool) {
	j, ok := q.byName[name]
	if !ok {
		return nil, false
	}
	return &port{q: q, j: j}, true
}
