package simulator

import (
	"fmt"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/runfile"
)

// noAdmission is why the eager baseline refuses every event.
const noAdmission = "the eager baseline has no admission to apply it"

// eagerEvents refuses the events of the events file in an eager
// multi-job run, which has no admission, no priorities, nothing to kill
// through: each at its time, last in its instant (as a run through the
// admission applies them, see jobsPolicy.start), with a refused trace
// event and an audit record, so that the run still says what became of
// each event.
type eagerEvents struct {
	e        *engine
	cfg      JobsConfig
	byName   map[string]int
	outcomes []EventOutcome
}

// newEagerEvents puts the events of jc in e's calendar.
func newEagerEvents(e *engine, jc JobsConfig) *eagerEvents {
	ee := &eagerEvents{e: e, cfg: jc, byName: map[string]int{}}
	for i, j := range jc.Jobs {
		ee.byName[j.Name] = i
	}
	for i, ev := range jc.Events {
		e.model.cal.add(timed{at: ev.At, order: eventsOrder - uint64(len(jc.Events)) + uint64(i), kind: eagerEvent, task: int32(i)})
	}
	return ee
}

// refuse refuses event i of the events file.
func (ee *eagerEvents) refuse(i int32) {
	ev := ee.cfg.Events[i]
	ee.outcomes = append(ee.outcomes, EventOutcome{JobEvent: ev, Reason: noAdmission})
	if ee.cfg.Audit != nil {
		rec := admission.AuditRecord{At: epoch.Add(ev.At), By: admission.Principal{Name: ev.By, Role: ee.cfg.Users[ev.By]},
			Action: ev.Action, Job: ev.Job, Reason: noAdmission}
		if ev.Action == admission.ActionSetPriority {
			rec.Old, rec.New = filePriority(ee.cfg.Jobs[ee.byName[ev.Job]]), ev.Priority
		}
		_ = ee.cfg.Audit.Audit(rec) // as the admission does, a failing sink does not stop the run
	}
	ee.e.emit(runfile.Event{At: ee.e.now(), Kind: runfile.Refused, Job: ev.Job, By: ev.By, Reason: fmt.Sprintf("%s: %s", ev.Action, noAdmission), Slot: runfile.NoSlot, Region: runfile.NoRegion})
}

// filePriority is the priority a job's file gives it (the default if
// none).
func filePriority(j runfile.Job) int {
	if p := j.Job.Submission().Priority; p > 0 {
		return p
	}
	return admission.DefaultPriority
}
