package simulator

import "github.com/regionsched/regionsched/multijob"

// OnDecided makes f run after every decision of the multi-job runs that
// follow, until the returned function is called (see decided). Tests that
// set it do not run in parallel.
func OnDecided(f func(m *multijob.Scheduler)) (restore func()) {
	old := decided
	decided = f
	return func() { decided = old }
}
