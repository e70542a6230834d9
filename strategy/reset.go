package strategy

import "github.com/regionsched/regionsched/region"

// Reset makes s the strategy New(rs, opts...) returns, reusing s's
// tables where they are large enough: a caller that runs one job after
// another (the simulator, run after run) allocates them once. Decisions
// s handed out before must not be used after Reset.
func (s *Strategy) Reset(rs *region.Regions, opts ...Option) {
	old := *s
	s.init(&old, rs, opts)
}
