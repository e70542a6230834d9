package multijob

import (
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/slotpool"
)

// ErrNotQueues means an input only the in-process admission takes
// (Config.Admission) given to a Scheduler over another cluster
// (Config.Cluster), which observes its slots itself.
var ErrNotQueues = errors.New("multijob: the jobs' cluster is not the in-process admission")

// AddSlots adds slots to the cluster at time now
// (admission.Queues.AddSlots): a node that joined. The jobs waiting get
// them in the next Ready, by the queues' policies.
//
// Errors (nothing changes): a *scheduler.TimeError; ErrNotQueues; the
// admission's *slotpool.SlotError for an id it has.
func (s *Scheduler) AddSlots(now time.Time, slots ...slotpool.Slot) error {
	if err := s.queuesInput(now); err != nil {
		return err
	}
	return s.q.AddSlots(now, slots...)
}

// RemoveSlots takes slots out of the cluster at time now
// (admission.Queues.RemoveSlots): a node lost. The jobs whose tasks ran
// in them learn it at once, so the slots their restarted regions give
// back are decided in the next Ready together with the removal and the
// other inputs of the instant. That Ready carries what follows: the
// tasks in them fail over (their regions restart), a
// job whose driver ran in one fails with an *admission.DriverLostError,
// and one that no longer fits the cluster with an
// *admission.CapacityLostError.
//
// Errors (nothing changes): a *scheduler.TimeError; ErrNotQueues; the
// admission's *slotpool.SlotError for an id it does not have.
func (s *Scheduler) RemoveSlots(now time.Time, ids ...slotpool.SlotID) error {
	if err := s.queuesInput(now); err != nil {
		return err
	}
	if err := s.q.RemoveSlots(now, ids...); err != nil {
		return err
	}
	// The pools whose tasks ran in them learn it now: their regions
	// restart and give back the slots they held with them, inputs of this
	// instant like the removal, decided together with it (Ready).
	for _, j := range s.jobs {
		if j.end == nil && j.sched != nil && !j.port.State().Terminal() && j.port.Pending() {
			if err := j.sched.Admit(now); err != nil {
				s.log.Warn("a job's scheduler refused the admission's messages", zap.String("job", j.spec.Name), zap.Error(err))
			}
			s.after(now, j)
		}
	}
	return nil
}

// DriverLost says at time now that the driver of a job is gone while its
// slot is not (admission.Queues.DriverLost: its pod or process ended):
// the job fails with an *admission.DriverLostError saying why, its
// tasks are cancelled in the next Ready, and its slots go back.
//
// Errors (nothing changes): a *scheduler.TimeError; ErrNotQueues; a
// *JobError wrapping ErrUnknownJob, ErrJobEnded or
// admission.ErrNoDriver.
func (s *Scheduler) DriverLost(now time.Time, job, why string) error {
	j, ok := s.byName[job]
	switch {
	case !ok:
		return &JobError{Op: "driver-lost", Job: job, Err: ErrUnknownJob}
	case j.end != nil:
		return &JobError{Op: "driver-lost", Job: job, Err: ErrJobEnded}
	}
	if err := s.queuesInput(now); err != nil {
		return err
	}
	if err := s.q.DriverLost(now, job, why); err != nil {
		return &JobError{Op: "driver-lost", Job: job, Err: err}
	}
	return nil
}

// queuesInput checks an input of the in-process admission's own at now,
// and takes its time.
func (s *Scheduler) queuesInput(now time.Time) error {
	if err := s.checkTime(now); err != nil {
		return err
	}
	if s.q == nil {
		return ErrNotQueues
	}
	s.advance(now)
	return nil
}
