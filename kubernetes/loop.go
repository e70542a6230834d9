package kubernetes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/runfile"
)

// DefaultPoll is the longest Run and RunJobs wait between two Steps
// when their poll is not given: they step as soon as the informers'
// caches change or a timer is due, so the poll is only a bound.
const DefaultPoll = time.Second

// Coalesce is how long Run and RunJobs wait after a change of the caches
// for more before they step: the changes of a burst (the pods of a bulk
// turning Running one by one) make one Step.
const Coalesce = 20 * time.Millisecond

// loop is the driver of a Runner that Run and RunJobs share: it submits
// the jobs at their submission times (topology.Submission's SubmitAt,
// since start), applies priority changes and kills at theirs, and steps
// the Runner whenever its caches change (Runner.Changes), a submission, an
// event or a timer of the Runner (Runner.NextWake) is due, or poll passed
// since the last Step. turn and next are the deterministic part; run
// waits on the clock.
type loop struct {
	r         *Runner
	start     time.Time
	specs     []multijob.JobSpec
	submitted int // specs[:submitted] were submitted
	events    []runfile.JobEvent
	applied   int // events[:applied] were applied
	users     map[string]admission.Role
	at        map[string]int // a job's place in specs
	// outcomes are what became of the events applied so far; audited the
	// admission's records of the event being applied (noteAudit).
	outcomes []EventOutcome
	audited  []admission.AuditRecord
	// audit writes an audit record where the admission's go (nil: none).
	audit func(admission.AuditRecord)
}

// EventOutcome is what became of one event of the run: applied, or
// refused and why.
type EventOutcome struct {
	runfile.JobEvent
	// Old is the job's priority before an applied set-priority.
	Old int
	// Applied says whether it took effect; Reason says why not (the
	// admission's refusal).
	Applied bool
	Reason  string
}

// noteAudit keeps an audit record of the admission for the outcome of
// the event being applied.
func (l *loop) noteAudit(rec admission.AuditRecord) { l.audited = append(l.audited, rec) }

// newLoop returns the loop of a Runner started at start.
func newLoop(r *Runner, start time.Time, specs []multijob.JobSpec, events []runfile.JobEvent, users map[string]admission.Role) *loop {
	at := make(map[string]int, len(specs))
	for i, s := range specs {
		at[s.Name] = i
	}
	return &loop{r: r, start: start, specs: specs, events: events, users: users, at: at}
}

// submitAt is when a job is to be submitted, since the start.
func submitAt(spec multijob.JobSpec) time.Duration {
	return spec.Regions.Topology().Job().Submission().SubmitAt
}

// step does one turn at now: it submits the jobs and applies the events
// due, then steps the Runner. It reports whether every job ended; once
// every job was submitted and every event applied, a *DeadlockError if
// the jobs left can no longer progress (Runner.Deadlock), which stops the
// run.
func (l *loop) step(ctx context.Context, now time.Time) (bool, error) {
	if err := l.due(now); err != nil {
		return false, err
	}
	if err := l.r.Step(ctx, now); err != nil {
		return false, err
	}
	if l.submitted < len(l.specs) || l.applied < len(l.events) {
		return false, nil // inputs to come may still move the jobs
	}
	if l.r.Done() {
		return true, nil
	}
	if d := l.r.Deadlock(now); d != nil {
		return false, d
	}
	return false, nil
}

// due submits the jobs and applies the events due at now.
func (l *loop) due(now time.Time) error {
	since := now.Sub(l.start)
	for l.submitted < len(l.specs) {
		spec := l.specs[l.submitted]
		if submitAt(spec) > since {
			break
		}
		if err := l.r.Submit(now, spec); err != nil {
			return fmt.Errorf("submitting %s: %w", spec.Name, err)
		}
		l.submitted++
	}
	for l.applied < len(l.events) {
		ev := l.events[l.applied]
		if ev.At > since {
			break
		}
		if i, ok := l.at[ev.Job]; ok && ev.At < submitAt(l.specs[i]) {
			l.applied++
			l.notArrived(now, ev, l.specs[i])
			continue
		}
		if l.at[ev.Job] >= l.submitted {
			break // an event at a job's submission comes after it
		}
		l.applied++
		by := admission.Principal{Name: ev.By, Role: l.users[ev.By]}
		l.audited = l.audited[:0]
		var err error
		switch ev.Action {
		case admission.ActionSetPriority:
			err = l.r.SetPriority(now, by, ev.Job, ev.Priority)
		case admission.ActionKill:
			err = l.r.Kill(now, by, ev.Job)
		}
		l.r.log.Info("event", zap.Stringer("action", ev.Action), zap.String("job", ev.Job), zap.String("by", ev.By), zap.Error(err))
		l.outcome(now, ev, err)
	}
	return nil
}

// notArrived refuses an event for a job that arrives after it, as the
// simulator does: an audit record (what the admission would have
// written, had it been asked), the outcome and a refused trace event.
func (l *loop) notArrived(now time.Time, ev runfile.JobEvent, spec multijob.JobSpec) {
	reason := fmt.Sprintf("the job has not arrived yet (it arrives at %d ms)", submitAt(spec).Milliseconds())
	rec := admission.AuditRecord{At: now, By: admission.Principal{Name: ev.By, Role: l.users[ev.By]}, Action: ev.Action, Job: ev.Job, Reason: reason}
	if ev.Action == admission.ActionSetPriority {
		rec.Old, rec.New = cmp.Or(spec.Priority, admission.DefaultPriority), ev.Priority
	}
	if l.audit != nil {
		l.audit(rec)
	}
	l.audited = l.audited[:0]
	l.outcome(now, ev, &admission.RefusedError{By: rec.By, Action: ev.Action, Job: ev.Job, Priority: ev.Priority, Reason: reason, Err: admission.ErrUnknownJob})
}

// outcome records what became of an event applied at now (err: why it
// was refused) and traces a refusal, as the simulator does.
func (l *loop) outcome(now time.Time, ev runfile.JobEvent, err error) {
	out := EventOutcome{JobEvent: ev, Applied: err == nil}
	if err == nil {
		if len(l.audited) > 0 {
			out.Old = l.audited[0].Old
		}
		l.outcomes = append(l.outcomes, out)
		return
	}
	out.Reason = err.Error()
	if re := (*admission.RefusedError)(nil); errors.As(err, &re) {
		out.Reason = re.Reason
	}
	l.outcomes = append(l.outcomes, out)
	if l.r.tracing() {
		l.r.cfg.Trace(runfile.Event{At: now.Sub(l.r.cfg.Start), Kind: runfile.Refused, Job: ev.Job, By: ev.By, Reason: fmt.Sprintf("%s: %s", ev.Action, out.Reason),
			Slot: runfile.NoSlot, Region: runfile.NoRegion})
	}
}

// next returns, after a turn at now, when the next turn is due at the
// latest without a change of the caches: the next submission, the next
// event, or the Runner's next timer; false if none of them is to come.
func (l *loop) next(now time.Time) (time.Time, bool) {
	var at time.Time
	ok := false
	take := func(t time.Time) {
		if !ok || t.Before(at) {
			at, ok = t, true
		}
	}
	if l.submitted < len(l.specs) {
		take(l.start.Add(submitAt(l.specs[l.submitted])))
	}
	if l.applied < len(l.events) {
		take(l.start.Add(l.events[l.applied].At))
	}
	if t, due := l.r.NextWake(now); due {
		take(t)
	}
	return at, ok
}

// run turns until every job ended (nil), ctx ends (its error), or a turn
// fails or finds a deadlock (its error). Between turns it waits for the
// first of: a change of the caches (then Coalesce more, for the changes
// that come with it), the next turn due (next), or poll.
func (l *loop) run(ctx context.Context, clk clock.Clock, poll time.Duration) error {
	if poll <= 0 {
		poll = DefaultPoll
	}
	for {
		now := clk.Now()
		done, err := l.step(ctx, now)
		if err != nil || done {
			return err
		}
		until := now.Add(poll)
		if t, ok := l.next(now); ok && t.Before(until) {
			until = t
		}
		if err := l.wait(ctx, clk, until); err != nil {
			return err
		}
	}
}

// wait waits until until, a change of the caches followed by Coalesce,
// or the end of ctx (its error).
func (l *loop) wait(ctx context.Context, clk clock.Clock, until time.Time) error {
	t := clk.Timer(until.Sub(clk.Now()))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	case <-l.r.Changes():
	}
	c := clk.Timer(Coalesce)
	defer c.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.C:
	}
	// The changes of the window are in the caches the turn reads.
	select {
	case <-l.r.Changes():
	default:
	}
	return nil
}
