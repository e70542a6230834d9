package admission

import (
	"errors"
	"fmt"
	"slices"
)

// ErrJobNotEnded: Forget of a job that has not ended yet.
var ErrJobNotEnded = errors.New("admission: job has not ended")

// Forgetter is implemented by a Cluster that can drop what it keeps of
// an ended job, so that a long-lived runtime's memory grows with the
// jobs it runs at once rather than with every job it ever ran, and a
// job's name can be submitted again: Queues is one. Package multijob
// calls it from Scheduler.Forget.
type Forgetter interface {
	Forget(job string) error
}

var _ Forgetter = (*Queues)(nil)

// Forget drops an ended job (completed, failed, killed or rejected): the
// admission keeps nothing of it but its JobID, which is never given to
// another job, and its name is free for a new Submit. The job's port
// stays usable and refuses every message, as an ended job's does; its
// events already returned by Events keep its name. Until a job is
// forgotten, inputs naming it (SetPriority, Kill) are refused with a
// reason that says how it ended; afterwards they fail with
// ErrUnknownJob, as for a name never submitted.
//
// Errors (nothing changes): ErrUnknownJob for a name not submitted (or
// forgotten already), ErrJobNotEnded for a job that has not ended.
func (q *Queues) Forget(job string) error {
	j, ok := q.byName[job]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownJob, job)
	}
	if !j.state.Terminal() {
		return fmt.Errorf("%w: job %q is %v", ErrJobNotEnded, job, j.state)
	}
	if j.listed {
		q.pending = slices.DeleteFunc(q.pending, func(id JobID) bool { return id == j.id })
		j.listed = false
	}
	for id, owner := range q.lostSlots {
		if owner == j.id {
			delete(q.lostSlots, id)
		}
	}
	j.out, j.spare, j.lostTo = nil, nil, nil
	delete(q.byName, job)
	q.jobs[j.id] = nil
	return nil
}
