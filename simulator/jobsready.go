package simulator

import (
	"errors"
	"fmt"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/runfile"
)

// How a multi-job run applies the multi-job scheduler's decisions: once
// per instant, when the engine says the instant is over.

// decided, if set (by the package's tests), is called after every
// decision of a multi-job run, with its Scheduler quiet: after Ready,
// before what it returned is applied.
var decided func(m *multijob.Scheduler)

// endInstant applies the decision over the instant that is over: every
// job's cancels first (a slot one job gives up may go to another), the
// ends (their drivers leave their slots), every job's deployments, then
// the drivers granted (each job starts after its driver's startup time).
func (p *jobsPolicy) endInstant() bool {
	if !p.busy {
		return false
	}
	p.busy = false
	rd := p.m.Ready()
	if decided != nil {
		decided(p.m)
	}
	p.sampleQueues()
	// A job that finished ended with its last task, an input of the
	// instant: its driver leaves its slot before the decision's events.
	for _, end := range rd.Ended {
		if end.Outcome == multijob.Finished {
			p.ended(end)
		}
	}
	// Reclaims first: the cancels they cause follow.
	for _, ev := range rd.Events {
		switch ev.Kind {
		case admission.Reclaimed:
			p.reclaims++
			p.reclaimed += ev.Count
			p.e.emit(runfile.Event{At: p.e.now(), Kind: runfile.Reclaim, Job: ev.Job, Victim: ev.Victim, Slots: ev.Count, Reason: ev.Reason, Slot: runfile.NoSlot, Region: runfile.NoRegion})
		case admission.ReclaimWithdrawn:
			p.withdrawn += ev.Count
		}
	}
	for i := range rd.Jobs {
		p.byName[rd.Jobs[i].Job].rp.applyCancels(&rd.Jobs[i].Ready)
	}
	for _, end := range rd.Ended {
		if end.Outcome != multijob.Finished { // (those ended above)
			p.ended(end)
		}
	}
	for i := range rd.Jobs {
		jr := &rd.Jobs[i]
		r := p.byName[jr.Job]
		r.rp.applyDeploys(&jr.Ready)
		if r.ended {
			// It ended in this decision (killed or failed at its arrival,
			// say) after its requests: they end now too.
			r.rp.withdrawAsks()
		}
		if len(jr.Deploy) > 0 && r.firstDeploy < 0 {
			r.firstDeploy = p.e.now()
		}
	}
	for _, ev := range rd.Events {
		if ev.Kind != admission.DriverGranted {
			continue
		}
		r := p.byName[ev.Job]
		if r.ended {
			continue
		}
		r.driverSlot = int32(ev.Slot) // a driver is no task: firstDeploy waits for one
		p.e.occupyDriver(r.i, r.driverSlot)
		startup := p.cfg.Jobs[r.i].Job.Submission().Driver.Startup
		p.e.model.cal.add(timed{at: laterBy(p.e.now(), startup), order: p.e.model.cal.nextOrder(), kind: jobTimer, task: int32(r.i), version: jobStart})
	}
	if p.e.detailed() {
		p.keptChanged()
	}
	return true
}

// keptChanged hands out (Config.Detail) the changes of the slots the
// admission keeps for jobs since the last decision: Unreserve for those
// no longer kept, then Reserve for those newly kept.
func (p *jobsPolicy) keptChanged() {
	p.keptNow = p.m.Kept(p.keptNow[:0])
	if len(p.keptNow) == 0 && len(p.kept) == 0 {
		return
	}
	now := map[int32]admission.KeptSlot{}
	for _, k := range p.keptNow {
		now[int32(k.Slot)] = k
	}
	for _, k := range p.keptOrder {
		if n, ok := now[int32(k.Slot)]; !ok || n != k {
			p.e.emitDetail(runfile.Event{At: p.e.now(), Kind: runfile.Unreserve, Job: k.Job, Slot: int(k.Slot), Region: runfile.NoRegion, Reason: keptReason(k)})
		}
	}
	p.keptOrder = p.keptOrder[:0]
	for _, k := range p.keptNow {
		if old, ok := p.kept[int32(k.Slot)]; !ok || old != k {
			p.e.emitDetail(runfile.Event{At: p.e.now(), Kind: runfile.Reserve, Job: k.Job, Slot: int(k.Slot), Region: runfile.NoRegion, Reason: keptReason(k)})
		}
		p.keptOrder = append(p.keptOrder, k)
	}
	p.kept = now
}

// keptReason is the Reason of a Reserve: why the slot is kept.
func keptReason(k admission.KeptSlot) string {
	if k.Placeholder {
		return "gang"
	}
	return "claim"
}

// ended records the end of a job the scheduler reports.
func (p *jobsPolicy) ended(end multijob.JobEnd) {
	r := p.byName[end.Job]
	switch end.Outcome {
	case multijob.Finished:
		p.end(r, runfile.Finished, "")
	case multijob.Killed:
		by := ""
		if ke := (*admission.KilledError)(nil); errors.As(end.Err, &ke) {
			by = ke.By.Name
		}
		p.end(r, runfile.Killed, fmt.Sprintf("killed: by %s", by))
	case multijob.Rejected:
		p.end(r, runfile.Failed, fmt.Sprintf("rejected: %v", end.Err))
	default:
		p.end(r, runfile.Failed, failedReason(end.Err))
	}
}
