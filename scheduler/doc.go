// Package scheduler is the glue a dataflow runtime uses to run one job:
// it takes the region scheduling strategy's decisions (package strategy),
// turns each region into one all-or-nothing bulk of slot requests (package
// slotpool) — one request per slot the region needs after slot sharing,
// with that slot's resource profile (package region) — deploys the
// region's subtasks through the runtime's Deployer when the bulk is
// fulfilled, reports task states back to the strategy, releases a shared
// slot when its last task finishes, and fails over on a task failure or a
// lost slot: it cancels the tasks of the regions to restart, returns their
// slots and schedules the regions again.
//
// Like the strategy and the pool, a Scheduler is a deterministic state
// machine with no goroutines and no clock: every call takes the current
// time, and timeouts fire when the caller calls Tick at NextDeadline. The
// runtime owns the event loop (a real one, or the virtual-time simulator
// of package simulator) and calls the Scheduler on every event:
//
//	s := scheduler.New(region.FromJob(job, mode), deployer, scheduler.Config{})
//	s.SetCapacity(now, cluster)         // optional: bulks that can never fit fail at once
//	s.Offer(now, slots...)              // or plug an admission in Config.Admission
//	s.Start(now)                        // source regions ask for slots
//	// then, as the runtime observes them:
//	s.TaskFinished(now, v, attempt)
//	s.TaskFailed(now, v, attempt, lostPartitions...)
//	s.SlotLost(now, slot)
//	s.Tick(now)                         // at s.NextDeadline()
//	s.State()                           // Running, Finished or Failed (Err says why)
//
// The Deployer's methods are called synchronously from inside these calls
// and must not call back into the Scheduler; a runtime reports the outcome
// of a deployment later, as a new event. Cancel must stop the task before
// the runtime reuses its slot: the Scheduler returns the slot to the pool
// right after calling Cancel.
package scheduler
