// Package admission holds what sits behind slotpool's Admission seam: the
// queue-level side that decides which slots a pool gets and when it must
// give them back. A slotpool.Pool declares its demand as messages (Ask,
// AskRelease, SlotRelease) and takes the answers (Grant, Revoke, Reclaim,
// ReleaseConfirmed, Capacity) through Pool.Admit; an admission is the
// deterministic state machine on the other end, with no goroutines and no
// clock, so that a simulator can run both in virtual time.
//
// For now the package has StaticCluster: a fixed list of slots for one
// pool, granted to asks in the order they arrive. Queue policies that
// share a cluster among many jobs (fifo, priority, fair share, gangs with
// placeholders, preemption with reclaim timeouts) and an admission backed
// by a Slurm cluster belong here too; the pool needs no change for them.
//
// # Use
//
// In process, couple a pool (Config.Admission set) with an admission by
// slotpool.NewLink: Link.Ready carries the messages both ways until both
// sides are quiet and returns the pool's other events, and Link.Tick and
// Link.NextDeadline cover the timers of both.
//
//	cluster, err := admission.NewStaticCluster(resource.FitsEveryDimension, slots...)
//	pool := slotpool.New(slotpool.Config{Admission: true})
//	link := slotpool.NewLink(pool, cluster, logger)
//	_ = pool.Submit(now, bulk)
//	for _, ev := range link.Ready(now) { /* Fulfilled, Failed, Lost */ }
//
// A runtime built on package scheduler does not link anything itself: it
// sets the scheduler's Config.Admission, and the scheduler's driver
// carries the messages.
package admission
