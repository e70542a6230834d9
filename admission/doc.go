// Package admission holds what sits behind slotpool's Admission seam: the
// queue-level side that decides which slots a pool gets and when it must
// give them back. A slotpool.Pool declares its demand as messages (Ask,
// AskRelease, SlotRelease) and takes the answers (Grant, Revoke, Reclaim,
// ReleaseConfirmed, Capacity) through Pool.Admit; an admission is the
// deterministic state machine on the other end, with no goroutines and no
// clock, so that a simulator can run both in virtual time.
//
// Two admissions live here (and a Slurm one in admission/slurm):
//
//   - StaticCluster: a fixed list of slots for one pool, granted to asks in
//     the order they arrive.
//   - Queues: one cluster shared by many jobs in hierarchical queues
//     (root.default, root.etl) with four policies (fifo, priority,
//     fairshare, stateaware) and maxRunningJobs, drivers, gangs with
//     placeholders, claims that keep jobs from deadlocking each other
//     (claim.go), dynamic priorities and kills authorized by role with an
//     audit sink (changes.go), and opt-in preemption with reclaim timeouts
//     (preempt.go). Each job gets a Port, the slotpool.Admission of its
//     pool; Queues.Pending says which ports have messages. With
//     Config.DecidePerInstant it decides once per instant, in Decide.
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
// carries the messages. A runtime with many jobs on one Queues uses
// package multijob, which owns the Queues and every job's scheduler and
// decides once per instant:
//
//	m, err := multijob.New(multijob.Config{Admission: admission.Config{Slots: slots, Queues: queues}})
//	err = m.Submit(now, multijob.JobSpec{Name: "etl", Queue: "root.etl", Regions: regions})
//	rd := m.Ready() // every job's deployments and cancels, the admission's events
package admission
