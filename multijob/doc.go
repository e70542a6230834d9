// Package multijob runs many jobs on one cluster: one scheduler per job
// (package scheduler) behind one cluster-level admission
// (admission.Cluster) that they share; it is the way to run several
// jobs. It is the multi-job counterpart of scheduler.Scheduler and
// scheduler.Driver, with the same shape: a deterministic Scheduler with
// no goroutines and no clock (inputs are methods that take the current
// time; outputs come out of Ready as one value), and a thin Driver that
// runs one on its own goroutine with a clock.
//
// What it is told reuses the lower layers' types: a JobSpec holds the
// admission.JobSpec (name, queue, user, priority, driver, gang) beside
// the job's regions; Config.Admission configures the in-process
// admission (admission.Config), and Config.Jobs is the scheduler.Config
// of every job's scheduler.
//
// # Decisions per instant
//
// Inputs only record what happened: a job submitted, a task that ended,
// a priority changed, a kill. The admission decides in Ready, over
// everything waiting, by its queues' policies. So everything that
// happens at one instant is applied before the admission decides, and
// the order in which simultaneous inputs arrive never decides who gets a
// slot. A slot whose tasks ended goes back to the admission (not to its
// job's next region), which grants it by the policy like any other. A
// job's priority counts within its queue only: across queues the
// in-process admission serves sibling queues in their fair order (those
// below their guarantee first), not by name (package admission).
//
// # The Ready loop
//
//	s, err := multijob.New(multijob.Config{Admission: admission.Config{Slots: slots, Queues: queues}})
//	s.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "etl", Queue: "root.etl"}, Regions: rs})
//	for {
//		rd := s.Ready() // the admission decides, the jobs take their grants
//		for _, jr := range rd.Jobs {
//			for _, c := range jr.Cancel { /* stop c.Task of job jr.Job */ }
//		}
//		for _, end := range rd.Ended { /* stop end.Job's driver; end.Outcome, end.Err */ }
//		// a long-lived runtime: s.Forget(end.Job) once this Ready is applied
//		for _, jr := range rd.Jobs {
//			for _, d := range jr.Deploy { /* start d.Task of jr.Job in d.Slot */ }
//		}
//		for _, ev := range rd.Events {
//			// admission.DriverGranted: deploy ev.Job's driver in ev.Slot;
//			// once it is up: s.StartJob(now, ev.Job)
//		}
//		// ... then, as the runtime observes them, all the inputs of the
//		// next instant:
//		s.TaskFinished(now, job, v, attempt)
//		s.TaskFailed(now, job, v, attempt, lostPartitions...)
//		s.Submit(now, spec); s.Kill(now, by, job); s.SetPriority(now, by, job, p)
//		s.Tick(now) // at rd.Deadline / s.NextDeadline()
//	}
//
// The slices of a Ready, and of every job's Ready in it, are valid until
// the next call of Ready, and read-only: copy what you keep (rd.Clone()
// copies it all).
//
// Cancel every job's tasks before deploying any: a slot one job gives up
// may be granted to another in the same Ready. The end of a job is told
// to the admission here, not by the caller; a job the admission rejects
// or fails (a hard gang that timed out) is reported in Ready.Ended, not
// as an error. Bad input (an unknown job, a duplicate name, time going
// backwards) returns a typed error and changes nothing.
//
// A job that ended stays known (Status, Jobs, inputs refused with
// ErrJobEnded) until the runtime calls Forget: a runtime that runs for
// days forgets each job once the Ready with its end is applied, so that
// it holds the jobs it runs, not every job it ever ran, and a job's name
// (a nightly job's, say) can be submitted again.
//
// # The cluster
//
// The admission the jobs share is a seam, admission.Cluster: by default
// the in-process queues Config.Admission configures (admission.Queues);
// with Config.Cluster, any other, such as a Slurm cluster (package
// package slurm), which decides outside the process. Such a cluster
// takes what it observes through input methods of its own, which the
// runtime calls through ClusterInput (Driver.ClusterInput with a
// driver), so that the Scheduler stays deterministic: slurm.Poller runs
// the cluster's commands, polls, and feeds the results back that way.
//
// # The driver
//
// A runtime with real goroutines and a real clock uses Driver: it owns
// one goroutine and one clock.Clock, takes inputs from any goroutine and,
// each turn of its loop, applies every input queued since the last
// decision, then calls Ready once and sends the value on a channel (a
// clone: a Ready received is the receiver's); its one timer only posts a
// tick to the loop:
//
//	d := multijob.StartDriver(ctx, s, multijob.DriverConfig{Clock: clock.New()})
//	defer d.Stop()
//	d.Submit(ctx, etl, adhoc) // one input: the two jobs arrive at one instant
//	for rd := range d.Ready() { ... d.TaskFinished(ctx, job, v, attempt) ... }
//
// Jobs that must start together go in one Submit: two calls are two
// inputs, which a loop that is idle takes in two turns, so the first job
// may get the slots before the second arrives. Jobs given to the
// Scheduler before StartDriver are decided together in the first turn.
package multijob
