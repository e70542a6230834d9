// Package schedreuse lets a caller that runs one job after another (the
// simulator, run after run) make a scheduler over the tables of one it
// ran before, so that they are allocated once, not once per job, without
// a method for it in the scheduler's exported API.
package schedreuse

// New is set by package scheduler when it is initialized, to a
//
//	func(old *scheduler.Scheduler, rs *region.Regions, cfg scheduler.Config) (*scheduler.Scheduler, error)
//
// that returns what scheduler.New(rs, cfg) returns, its per-region,
// per-group and per-task tables taken from old where they have room (old
// nil: none). old must not be used after, and no Ready it handed out
// read after. It is an any so that this package, which package scheduler
// imports, need not import it.
var New any

// Ready is set by package scheduler when it is initialized, to a
//
//	func(s *scheduler.Scheduler) *scheduler.Ready
//
// that hands out what s.Ready() returns without copying it: the
// scheduler's storage of that Ready, valid and read-only until the next
// call of Ready (or of this function) on s; its empty lists may be empty
// but not nil. For a caller that applies a Ready after every input (the
// simulator), which then does not copy the struct of some 250 bytes every
// time.
var Ready any
