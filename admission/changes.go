package admission

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// ErrKilled is wrapped by the error of a killed job (KilledError).
var ErrKilled = errors.New("admission: job killed")

// KilledError is why a killed job ended: who killed it.
type KilledError struct {
	Job string
	By  Principal
}

// Error names the job and who killed it.
func (e *KilledError) Error() string {
	return fmt.Sprintf("admission: job %q killed by %s", e.Job, e.By.Name)
}

// Unwrap returns ErrKilled.
func (e *KilledError) Unwrap() error { return ErrKilled }

// SetPriority changes a job's priority at time now, if by may (see
// Role): a waiting job moves in its queue at once, and under Priority and
// FairShare a running job gets more (or fewer) slots from this decision
// on. Every change and every refusal goes to Config.Audit. A refusal
// returns a *RefusedError and changes nothing else; the admission goes on.
func (q *Queues) SetPriority(now time.Time, by Principal, job string, priority int) error {
	q.now = now
	rec := AuditRecord{At: now, By: by, Action: ActionSetPriority, Job: job, New: priority}
	j, ok := q.byName[job]
	if ok {
		rec.Old = j.spec.Priority
	}
	err := q.Authorize(by, ActionSetPriority, job, priority)
	q.audit(rec, err)
	if err != nil {
		return err
	}
	if j.state == JobStarting || j.state == JobRunning {
		j.queue.weight += priority - j.spec.Priority
	}
	if !j.state.Terminal() {
		j.queue.countPrio(j.spec.Priority, -1)
		j.queue.countPrio(priority, +1)
	}
	q.event(Event{At: now, Job: job, ID: j.id, Kind: PriorityChanged,
		OldPriority: j.spec.Priority, NewPriority: priority, Reason: "set by " + principalName(by)})
	lowered := priority < j.spec.Priority
	j.spec.Priority = priority
	q.updateOrder(j)
	q.updateHolder(j)
	if lowered && !j.state.Terminal() {
		// Its claim took slots from the jobs behind it when it ranked
		// higher: they may now be ahead of it. It claims again, if it
		// still should, in the next decision (a preemption for it goes
		// by its own rules: preempt.go).
		q.dropClaim(j)
	}
	return nil
}

// principalName names a principal in a reason: its name, or "an anonymous
// principal".
func principalName(by Principal) string {
	if by.Name == "" {
		return "an anonymous principal"
	}
	return by.Name
}

// Kill ends a job at time now, if by may (as SetPriority): its slots go
// back at once and it is failed with a *KilledError; the runtime cancels
// its tasks (its port's Err says why). A refusal returns a *RefusedError, is
// audited like a priority change, and changes nothing.
func (q *Queues) Kill(now time.Time, by Principal, job string) error {
	q.now = now
	err := q.Authorize(by, ActionKill, job, 0)
	q.audit(AuditRecord{At: now, By: by, Action: ActionKill, Job: job}, err)
	if err != nil {
		return err
	}
	q.end(now, q.byName[job], &KilledError{Job: job, By: by})
	return nil
}

// Authorize says whether by may do action to the job (with priority for
// ActionSetPriority), without doing it or auditing: nil, or the
// *RefusedError SetPriority or Kill would return. A runtime asks it
// before it stops a job's tasks for a kill.
func (q *Queues) Authorize(by Principal, action Action, job string, priority int) error {
	j, ok := q.byName[job]
	switch {
	case !ok:
		return &RefusedError{By: by, Action: action, Job: job, Priority: priority, Reason: "no such job", Err: ErrUnknownJob}
	case j.state.Terminal():
		return &RefusedError{By: by, Action: action, Job: job, Priority: priority, Reason: "the job is " + endedAs(j), Err: ErrInvalidTransition}
	}
	return authorize(by, action, job, j.spec.User, priority)
}

// endedAs says how a job that ended did: its state, or killed.
func endedAs(j *job) string {
	if errors.Is(j.err, ErrKilled) {
		return "killed"
	}
	return j.state.String()
}

// audit records a change (refused if err is set) in Config.Audit.
func (q *Queues) audit(rec AuditRecord, err error) {
	rec.Accepted = err == nil
	var refused *RefusedError
	if errors.As(err, &refused) {
		rec.Reason = refused.Reason
	}
	if q.debug {
		q.log.Debug("change", zap.Stringer("action", rec.Action), zap.String("job", rec.Job), zap.String("by", rec.By.Name),
			zap.Int("old", rec.Old), zap.Int("new", rec.New), zap.Bool("accepted", rec.Accepted), zap.String("reason", rec.Reason))
	}
	if q.cfg.Audit == nil {
		return
	}
	if aerr := q.cfg.Audit.Audit(rec); aerr != nil {
		q.log.Warn("audit sink failed", zap.Error(aerr))
	}
}
