// Package admission holds what sits behind slotpool's Admission seam: the
// queue-level side that decides which slots the pool of a job gets and
// when it must give them back. The pool (inside the job's scheduler)
// declares its demand as messages (slotpool.Ask, AskRelease, SlotRelease)
// and takes the answers (Grant, Revoke, Reclaim, ReleaseConfirmed,
// Capacity); an admission is the deterministic state machine on the other
// end, with no goroutines and no clock, so that a simulator can run both
// in virtual time.
//
// Two admissions live here (and a Slurm one in package slurm):
//
//   - StaticCluster: a fixed list of slots for one pool, granted to asks in
//     the order they arrive: a single job's scheduler takes it as its
//     Config.Admission.
//   - Queues: one cluster shared by many jobs in hierarchical queues
//     (root.default, root.etl) with four policies (fifo, priority,
//     fairshare, stateaware) and maxRunningJobs, drivers, gangs with
//     placeholders, claims that keep jobs from deadlocking each other
//     (claim.go), dynamic priorities and kills authorized by role with an
//     audit sink (changes.go), and opt-in preemption with reclaim timeouts
//     (preempt.go). Its inputs only record what happened; it decides
//     once per instant, in Decide, so the order of simultaneous inputs
//     never decides who gets a slot. Queues are tenants (queuetree.go,
//     queuesort.go): each may have guaranteed and maximum slots, names
//     make a hierarchy (root.prod.etl in root.prod), and every grant goes
//     to the first queue in YuniKorn's fair order, recursively from root:
//     sibling queues below their guarantee first, the lowest held /
//     guaranteed first, then the fewest held above their guarantee, ties
//     by name. No queue, with its children, holds more than its
//     maximum. A job's priority counts within its queue, and in
//     preemptions: a preempting queue below its guarantee takes slots of
//     lower-priority jobs of queues above theirs, up to its guarantee
//     (preempt_tenants.go).
//
// Cluster is the seam many jobs share: Queues is one, a Slurm cluster
// (package slurm's) another, where Slurm decides. Its Submit returns
// each job's JobPort, the slotpool.Admission of the job's pool.
//
// # Use
//
// A single job's scheduler (package scheduler) takes a StaticCluster as
// its Config.Admission: the scheduler carries the messages between its
// pool and the admission inside its own calls, until both are quiet
// (Example):
//
//	cluster, err := admission.NewStaticCluster(resource.FitsEveryDimension, slots...)
//	s, err := scheduler.New(regions, scheduler.Config{Admission: cluster})
//	err = s.Start(now) // the source regions ask the cluster; its grants deploy them
//	rd := s.Ready()
//
// Many jobs run on a Cluster through package multijob, which owns every
// job's scheduler, wires each to its JobPort, and calls Decide once per
// instant; Config configures the in-process Queues it makes (or it takes
// any Cluster, such as a Slurm one):
//
//	m, err := multijob.New(multijob.Config{Admission: admission.Config{Slots: slots, Queues: queues}})
//	err = m.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "etl", Queue: "root.etl"}, Regions: regions})
//	rd := m.Ready() // every job's deployments and cancels, the admission's events
package admission
