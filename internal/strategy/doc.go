// Package strategy decides what runs when inside one job: the pipelined
// region scheduling strategy of FLIP-119, region failover (Flink's
// RestartPipelinedRegionFailoverStrategy) and the release of blocking
// result partitions nobody needs any more.
//
// # Rules
//
//   - A region is scheduled once every blocking partition group it
//     consumes is finished, counting only the partitions produced outside
//     the region (a cross-region group, partly produced by the consuming
//     region itself, FLINK-22017, never blocks it). Source regions are
//     scheduled at Start. Pipelined partitions never gate anything: they
//     live inside regions.
//   - A hybrid partition group (exchange.HybridFull, HybridSelective) is
//     consumable once every producer region of it but the consumer itself
//     is deployed (its first member reported deploying, running or
//     finished, or MarkDeploying); a selective one also needs a share of
//     its partitions finished (WithSelectiveShare, default
//     DefaultSelectiveShare). A region is scheduled once each group it
//     reads is finished (blocking) or consumable (hybrid): its tasks read
//     the hybrid results while they are written, which is what lets a job
//     cut into regions like a blocking one overlap producers and
//     consumers when it has the slots.
//   - A task never finishes before the hybrid producers it reads: such a
//     finish is refused with an *EarlyFinishError and changes nothing.
//   - For a failed subtask, the regions to restart are its region, the
//     producer regions of every input partition that is unavailable (lost
//     according to the runtime, or released by this strategy), and every
//     consumer region of a restarted region, transitively. The consumer
//     regions of a hybrid producer that run are reading it live: they are
//     among them. A restarted region that read a selective hybrid result
//     live restarts that result's producer regions too (only what it did
//     not read in time was persisted); a full hybrid result is persisted
//     whole and read again.
//   - A restarted region's finished partitions count as unfinished until
//     they finish again; the region is scheduled again when its inputs are
//     finished again (at once if they are).
//   - A finished blocking or hybrid partition is released once every
//     consumer region of its group has finished.
//
// Every event costs O(1) amortized plus what it decides: per partition
// group a count of producer regions with unfinished partitions, per region
// a count of unsatisfied inputs (see Strategy), never a rescan of the
// consumers per partition. 10,000 producers finishing an all-to-all
// blocking edge into 10,000 consumers cost O(20,000).
//
// # API: call a method, get decisions
//
// Like etcd-raft, the Strategy is a deterministic state machine without
// goroutines, clock or randomness, and it returns its decisions instead of
// calling the runtime: Start, UpdateState and Restart return a Decisions
// value (regions to allocate slots for and deploy, in ascending id order,
// which is topological; partitions to release), valid until the next of
// those calls, and RegionsToRestart is a query. We chose this over an injected operations interface (Flink's
// SchedulerOperations) because a callback made while the strategy is in
// the middle of an event can re-enter it (a deployment that fails at once
// reports a state change before the first event is done); returned
// decisions are applied by the caller after the strategy is consistent
// again, make the event loop the only place where effects happen, and make
// tests plain comparisons of values. For tests of code that drives a
// strategy, package strategytest has Recorder, which wraps a Strategy
// with the same methods and records every call and its decisions (this
// package's own tests use it).
//
//	s := strategy.New(region.FromJob(job, exchange.AllBlocking), strategy.WithLogger(log))
//	d, _ := s.Start()
//	deploy(d.Deploy) // one slot bulk per region, in order
//	// when a region's slots come and its tasks are deployed:
//	_, d, _ = s.MarkDeploying(r) // consumers of r's hybrid results may start
//	deploy(d.Deploy)
//	// for every state change the runtime observes:
//	d, err := s.UpdateState(v, attempt, strategy.TaskFinished)
//	deploy(d.Deploy)
//	release(d.Release)
//	// on a failure of v (lost: partitions of a lost machine, if any):
//	regions, _ := s.RegionsToRestart(v, lost...)
//	cancelTasksOf(regions)
//	d, _ = s.Restart(regions)
//	deploy(d.Deploy)
//
// # Stale events
//
// Every region has an Attempt, 0 at first and incremented by each Restart
// of the region; Decisions.Deploy carries it and every state report must
// carry the attempt it belongs to. A report of an older attempt (a late
// "finished" or "canceled" from a task of the run that Restart replaced)
// changes nothing and returns an *AttemptError that unwraps to
// ErrStaleAttempt, which a runtime may log and drop. So a canceled task's
// late "finished" can neither complete a partition of the new run nor
// count a member twice. Invalid calls (unknown ids, a transition the
// vertex's state does not allow, events before Start) return typed errors
// and change nothing; the strategy never panics on them.
package strategy
