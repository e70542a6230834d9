package multijob

import (
	"errors"
	"fmt"
	"slices"

	"github.com/regionsched/regionsched/admission"
)

// ErrJobNotEnded means Forget of a job that has not ended, or whose end
// a Ready has not handed out yet (Ready.Ended and the job's last
// JobReady, with the cancels of a killed job's tasks).
var ErrJobNotEnded = errors.New("multijob: job not ended, or its end not handed out by Ready yet")

// Forget drops an ended job once Ready has handed out its end: the
// Scheduler keeps nothing of it (its scheduler, regions and admission
// port go; the in-process admission keeps only a pointer's worth for its
// JobID, never given again), so a long-lived runtime holds memory for
// the jobs it runs, not for every job it ever ran, and the job's name may
// be submitted again. Over a Cluster that is an admission.Forgetter (the in-process
// admission) the cluster forgets it too; over another (a Slurm cluster,
// which a run ends with), the cluster keeps it and the name stays taken
// there. Afterwards every input naming the job fails with
// ErrUnknownJob, as for a name never submitted, Status included, and
// Jobs no longer lists it.
//
// Errors (nothing changes): a *JobError wrapping ErrUnknownJob, or
// ErrJobNotEnded; or the cluster's error, wrapped.
func (s *Scheduler) Forget(name string) error {
	const op = "forget"
	j, ok := s.byName[name]
	switch {
	case !ok:
		return &JobError{Op: op, Job: name, Err: ErrUnknownJob}
	case j.end == nil || j.dirty || (j.sched != nil && j.sched.HasReady()):
		return &JobError{Op: op, Job: name, Err: ErrJobNotEnded}
	}
	if f, ok := s.c.(admission.Forgetter); ok {
		if err := f.Forget(name); err != nil {
			if errors.Is(err, admission.ErrJobNotEnded) {
				err = fmt.Errorf("%w: %w", ErrJobNotEnded, err)
			}
			return &JobError{Op: op, Job: name, Err: err}
		}
	}
	delete(s.byName, name)
	delete(s.byID, j.port.ID())
	if i := slices.Index(s.jobs, j); i >= 0 {
		s.jobs = slices.Delete(s.jobs, i, i+1)
	}
	return nil
}
