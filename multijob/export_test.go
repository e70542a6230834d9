package multijob

import "github.com/regionsched/regionsched/admission"

// Admission returns the in-process admission the jobs share, for tests
// (package internal/inspect reads it), or nil if the Scheduler runs over
// another Cluster (Config.Cluster). Read it between calls of the
// Scheduler; every input goes through the Scheduler.
func (s *Scheduler) Admission() *admission.Queues { return s.q }
