package strategy

import "github.com/regionsched/regionsched/region"

// Reset makes s the strategy New(rs, opts...) returns, reusing s's
// tables where they are large enough: a caller that runs one job after
// another (the simulator, run after run) allocates them once. With
// WithReusedDecisions, the Decisions s handed out share its storage and
// must not be read after Reset; without it, they are the caller's.
func (s *Strategy) Reset(rs *region.Regions, opts ...Option) {
	old := *s
	s.init(&old, rs, opts)
}
