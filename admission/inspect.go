package admission

import "github.com/regionsched/regionsched/internal/inspect"

// Tests of packages over a Queues (package multijob's) reach what only
// tests need through package internal/inspect.
func init() {
	inspect.Register(inspect.Hooks{
		CheckInvariants: func(q any) (bool, error) {
			qs, ok := q.(*Queues)
			if !ok || qs == nil {
				return false, nil
			}
			return true, qs.checkInvariants()
		},
		AskedBack: func(q any, dst []inspect.AskedBack) ([]inspect.AskedBack, bool) {
			qs, ok := q.(*Queues)
			if !ok || qs == nil {
				return dst, false
			}
			return qs.askedBack(dst), true
		},
		SpeculativeAsks: func(q any) (int, bool) {
			qs, ok := q.(*Queues)
			if !ok || qs == nil {
				return 0, false
			}
			return qs.speculativeAsks(), true
		},
	})
}
