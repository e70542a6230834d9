// Package simulator is the example executor: a discrete-event simulation
// of a dataflow job in virtual time, driving the real scheduler (package
// scheduler, with its strategy and slot pool; package multijob for several
// jobs) through their Ready values — there is no second implementation of
// the scheduling rules here. It is
// deterministic for a seed: the seed orders the offer of the cluster's
// slots and the eager policy's grants. Events due at the same time (the
// ends of a wave of tasks that started together and run as long) are
// handled in the order they were scheduled (the task whose end was
// scheduled first, usually the one deployed first, ends first), unless
// Config.Ties is TiesSeeded: then the seed orders
// them too, and each seed tries another interleaving of a wave's ends, as
// property tests over seeds (and package regiontest) want.
//
// Semantics: a task needs a slot; a deployed task
// makes progress only while every blocking partition it reads is finished
// and all its pipelined producers and consumers and its hybrid producers
// are deployed; its duration advances only then; it cannot finish before
// its pipelined and hybrid producers finish; a shared slot is returned
// when its last task ends. A hybrid exchange is so a pipelined one without
// back pressure: a consumer deployed while its producer runs works beside
// it (reading what is written, live or persisted) and finishes no earlier
// than the producer, and the producer never waits for its consumers. An
// unbounded task never finishes; a bounded task reading it through a
// pipelined or full hybrid exchange does its work and keeps running with
// it. With speculative execution (Config.Speculation), a consumer of a
// full hybrid result whose producer may be speculated (the scheduler's
// ReadsFinishedOnly) is deployed as before but reads that input only
// once every producer of its partition group finished, from the winning
// attempts: it makes no progress until then. That is conservative:
// Flink's reading of the finished partitions of a partially finished
// input is not modelled. A run whose
// only unfinished tasks are these (and tasks that can never start behind
// them) ends runfile.Steady. Deadlock is a state with no pending event and an
// unfinished job otherwise; it is detected and reported with the tasks
// that hold slots while waiting, never waited on. Stale calendar events
// (of a task that paused, was canceled or failed since; of a withdrawn
// pool deadline) are dropped without moving the clock.
//
// Two policies: Region (the library: regions, FIFO atomic bulks, slot
// sharing, region failover) and Eager, the baseline of a scheduler without
// regions or bulks: every task asks for its own slot as soon as its
// blocking inputs are finished and its pipelined and hybrid producers are
// deployed, and free slots go to pending tasks in seeded random order. Eager
// reproduces FLIP-119's deadlocks.
//
//	res, err := simulator.Run(simulator.Config{
//		Regions: region.FromJob(job, exchange.AllPipelined),
//		Cluster: []resource.Count{{Profile: resource.Unknown, N: 4}},
//		Seed:    1,
//		Record:  true, // keep the trace for runfile.WriteTrace (or a timeline picture)
//	})
//	fmt.Println(res.Verdict, res.Makespan, res.Reason)
//
// A long run's trace need not be kept: Config.OnEvent (JobsConfig.OnEvent
// for several jobs) hands every event over as it happens, to a
// runfile.TraceWriter for the JSON Lines trace and to the Recorder of package
// timeline (github.com/regionsched/regionsched/timeline), which draws the
// run's picture; memory then does not grow with the trace.
package simulator
