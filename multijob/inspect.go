package multijob

import "github.com/regionsched/regionsched/internal/inspect"

// Tests of packages over a Scheduler (package simulator's) reach its
// in-process admission through package internal/inspect.
func init() {
	inspect.RegisterAdmissionOf(func(s any) (any, bool) {
		m, ok := s.(*Scheduler)
		if !ok || m == nil || m.q == nil {
			return nil, false
		}
		return m.q, true
	})
}
