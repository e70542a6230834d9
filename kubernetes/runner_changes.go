package kubernetes

import (
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/multijob"
)

// SetPriority asks the admission to change a job's priority on behalf of
// by (multijob.Scheduler.SetPriority): applied or refused by its roles,
// and audited (admission.Config.Audit) either way.
func (r *Runner) SetPriority(now time.Time, by admission.Principal, job string, priority int) error {
	return r.s.SetPriority(now, by, job, priority)
}

// Kill asks the admission to kill a job on behalf of by
// (multijob.Scheduler.Kill): once applied, the next Step deletes its pods.
func (r *Runner) Kill(now time.Time, by admission.Principal, job string) error {
	return r.s.Kill(now, by, job)
}

// Status returns a snapshot of a job (multijob.Scheduler.Status).
func (r *Runner) Status(job string) (multijob.JobStatus, error) { return r.s.Status(job) }
