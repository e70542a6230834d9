package multijob

import (
	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// JobStatus is a read-only snapshot of one job.
type JobStatus struct {
	// Name names the job.
	Name string
	// Admission is the job's state in the admission (accepted, starting,
	// running, completed, failed, rejected).
	Admission admission.JobState
	// Granted counts the slots the admission gave it (its driver's
	// included) and it has not given back.
	Granted int
	// DriverSlot is its driver's slot, if it has one (HasDriverSlot).
	DriverSlot    slotpool.SlotID
	HasDriverSlot bool
	// Started: its scheduler was started (its regions may ask for slots).
	Started bool
	// End says how it ended, if it did.
	End *JobEnd
	// Scheduler is its scheduler's status: job state, waiting and
	// deployed regions, counts (zero for a job rejected at once).
	Scheduler scheduler.Status
	// Speculation counts its speculative attempts (JobSpec.Speculation):
	// asked for, started, won.
	Speculation scheduler.SpeculationStats
}

// Status returns a snapshot of a job. It costs O(the job's regions).
//
// Errors: a *JobError wrapping ErrUnknownJob.
func (s *Scheduler) Status(name string) (JobStatus, error) {
	j, ok := s.byName[name]
	if !ok {
		return JobStatus{}, &JobError{Op: "status", Job: name, Err: ErrUnknownJob}
	}
	st := JobStatus{Name: name, Admission: j.port.State(), Granted: j.port.Granted(), Started: j.started}
	st.DriverSlot, st.HasDriverSlot = j.port.DriverSlot()
	if j.end != nil {
		end := *j.end
		st.End = &end
	}
	if j.sched != nil {
		st.Scheduler = j.sched.Status()
		st.Speculation = j.sched.SpeculationStats()
	}
	return st, nil
}

// Jobs returns the names of the jobs submitted, in submission order.
func (s *Scheduler) Jobs() []string {
	out := make([]string, len(s.jobs))
	for i, j := range s.jobs {
		out[i] = j.spec.Name
	}
	return out
}

// Regions returns a job's regions (immutable, as submitted), or nil if
// no job of that name was submitted: the runtime names its tasks by
// them (Regions(job).Topology().VertexName(task)).
func (s *Scheduler) Regions(name string) *region.Regions {
	if j, ok := s.byName[name]; ok {
		return j.spec.Regions
	}
	return nil
}

// Kept appends to dst the slots the admission keeps for jobs with
// nothing of theirs in them, gang placeholders and slots reserved for
// claims (admission.Queues.Kept): a slot kept sits idle, and no other job
// may take it. Over a Cluster that is not in process it appends nothing.
func (s *Scheduler) Kept(dst []admission.KeptSlot) []admission.KeptSlot {
	if s.q == nil {
		return dst // another cluster keeps no slot idle for a job
	}
	return s.q.Kept(dst)
}
