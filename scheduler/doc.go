// Package scheduler is what a dataflow runtime drives to run one job: a
// deterministic state machine that takes the decisions of the region
// scheduling strategy inside it (which regions to deploy, which to restart
// after a failure, which partitions nobody needs any more), turns each
// region into one all-or-nothing bulk of slot requests to the job's slot
// pool (its rules and settings are package slotpool's) — one request per
// slot the region needs after slot sharing, with that slot's resource
// profile (package region) — and tells the runtime which tasks to deploy
// in which slot once the bulk is fulfilled, which to cancel when regions
// restart, which slots went back, and when the job finished or failed.
//
// A runtime drives one job with a Scheduler and its Ready values, or with
// a Driver, which runs a Scheduler on its own goroutine with a clock (both
// below); many jobs on one cluster with package multijob; tests with
// packages regiontest and simulator. The strategy and the slot pool inside
// the Scheduler are its own (under internal/); an admission plugs in
// through package slotpool's Admission.
//
// # The Ready loop
//
// Modelled on etcd's raft RawNode: the Scheduler has no goroutines, no
// clock and no callbacks. Inputs are methods that take the current time;
// outputs accumulate and are handed out as one Ready value, which the
// runtime applies after every input, in field order (cancel, release,
// deploy). The loop reads the Ready of every input, the last one
// included: the input that ends the job also releases its last slots, and
// its Ready says the job ended (the Example runs this loop as written):
//
//	s, err := scheduler.New(region.FromJob(job, mode), scheduler.Config{}) // err: an invalid Config (Config.Validate)
//	s.SetCapacity(now, cluster)        // optional: regions that can never fit fail at once
//	s.Offer(now, slotpool.Slots(4)...) // 4 slots of any size; or plug an admission in Config.Admission
//	s.Start(now)                       // source regions ask for slots
//	for {
//		rd := s.Ready() // what the last input caused
//		for _, t := range rd.Cancel { /* stop t.Task */ }
//		for _, r := range rd.Released { /* slot r.Slot is free again */ }
//		for _, d := range rd.Deploy { /* start d.Task, attempt d.Attempt, in d.Slot */ }
//		if ended, err := rd.Job.Ended(); ended {
//			return err // nil: finished; else why it failed (a *RegionError)
//		}
//		// Wait for the next thing the runtime observes, and report it:
//		s.TaskFinished(now, v, attempt) // or
//		s.TaskFailed(now, v, attempt, lostPartitions...) // or
//		s.SlotLost(now, slot) // or, at rd.Deadline (s.NextDeadline()):
//		s.Tick(now)
//	}
//
// The slices of a Ready are valid until the next call of Ready, and
// read-only: the scheduler then reuses their storage, so copy what you
// keep (rd.Clone() copies it all).
//
// Names for users: s.TaskName(v) is "src#0", as is
// s.Regions().Topology().VertexName(v).
//
// Same inputs, same Ready values: the virtual-time simulator (package
// simulator) and the tests drive it without a clock. Bad input returns a
// typed error and changes nothing; time going backwards is refused with a
// *TimeError. Reports about an attempt that a restart replaced are
// ignored (they are normal after a failover).
//
// # The driver
//
// A runtime with real goroutines and a real clock uses Driver instead: it
// owns one goroutine and one clock.Clock, takes inputs from any goroutine,
// hands Ready values out through a channel (clones: a Ready received is
// the receiver's) and fires the timeouts itself (its timer only posts to
// the loop):
//
//	d := scheduler.StartDriver(ctx, s, scheduler.DriverConfig{Clock: clock.New()})
//	defer d.Stop()
//	d.Start(ctx)
//	for rd := range d.Ready() { ... d.TaskFinished(ctx, v, attempt) ... }
//
// # Slot sharing across hybrid edges
//
// A hybrid result is read while it is written, so its consumers usually
// start while their producers run. A region whose inputs become
// consumable then goes into its producers' slots instead of asking the
// pool, when every slot it needs finds one there: a slot of a running
// producer it reads through a hybrid edge (first the one of its own
// subtask index, as Flink prefers local inputs), of the same slot sharing
// group, holding no subtask of the same job vertex, and large enough for
// what every task in it needs together; tasks that never finish keep
// slots of their own, as region.Check counts them. All or nothing, like a bulk: a
// region never holds a shared slot while it waits for others, so sharing
// takes no slot from anyone and adds no wait. Its Deployments say Shared,
// and no Request is handed out for it. The slot stays until the last task
// in it ended (its producer's and its consumers'), and goes back as the
// slot of the region whose bulk got it (Ready.Released).
//
// A consumer that shares reads its host's results, directly or through
// another consumer in the slot, so a failover that restarts the host
// restarts it too; a consumer that fails alone leaves the slot to the
// others; a lost slot fails every task in it. Config.DisableHybridSlotSharing
// turns sharing off: every region then asks the pool for all its slots.
// Stats.RegionsShared counts the deployments that shared.
//
// # Admission
//
// The pool declares its demand to an admission exactly when the scheduler
// has one. With Config.Admission, an in-process queue-level admission
// (package admission) grants the pool its slots inside the scheduler's
// calls. With Config.ExternalAdmission, the pool's asks and releases come
// out in Ready.ToAdmission for an admission elsewhere (package
// package slurm's Adapter), whose answers go in through Admit. Without
// either, the pool has the slots the runtime offers. A Config with both
// is refused: New returns its *ConfigError (Config.Validate) and no
// scheduler.
package scheduler
