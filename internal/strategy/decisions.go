package strategy

import (
	"slices"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// Deployment asks the runtime to allocate slots for every member of a
// region at once (one bulk) and deploy them. State reports for the members
// must carry Attempt.
type Deployment struct {
	Region  region.ID
	Attempt Attempt
}

// Decisions is what one call asks the runtime to do. Its slices are valid
// until the next call of Start, UpdateState or Restart, and read-only:
// copy what you keep. The zero value means nothing to do.
type Decisions struct {
	// Deploy lists the regions that became ready, in ascending id order,
	// which is a topological order (producers before consumers).
	Deploy []Deployment
	// Release lists finished blocking result partitions that no consumer
	// needs any more (every consumer region finished), ascending. Each is
	// reported once per run of its producer.
	Release []topology.ResultPartitionID
}

// IsEmpty reports whether there is nothing to do.
func (d Decisions) IsEmpty() bool { return len(d.Deploy) == 0 && len(d.Release) == 0 }

// takeDecisions schedules the regions that became ready during the
// current call, in ascending id order, and hands the decisions over in d
// (empty on entry): the caller's result, filled in place. Returned by
// value, the 48-byte struct was copied into UpdateState's result in
// 16-byte loads of the 8-byte stores just made, which cannot be forwarded
// and stalled on every finish.
func (s *Strategy) takeDecisions(d *Decisions) {
	if len(s.ready) > 0 {
		if !slices.IsSorted(s.ready) {
			slices.Sort(s.ready)
		}
		s.deploy = s.deploy[:0] // the previous call's: no longer read
		for _, r := range s.ready {
			s.schedule(r)
			s.deploy = append(s.deploy, Deployment{Region: r, Attempt: s.region[r].attempt})
		}
		d.Deploy = s.deploy
		s.ready = s.ready[:0]
	}
	if len(s.release) > 0 {
		if !slices.IsSorted(s.release) {
			slices.Sort(s.release)
		}
		d.Release = s.release
		s.release = s.release[:0] // the next call writes over it
	}
}
