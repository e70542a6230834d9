// Package slurm puts a real cluster behind the slot pool's admission seam
// (slotpool.Admission): Slurm, talked to through its commands.
//
// Every all-or-nothing ask of the pool becomes one Slurm batch job that
// only holds an allocation (its script sleeps): one component per task
// group, so a gang of several profiles is a heterogeneous job; CPUs come
// from cpuMillis (rounded up per slot), memory from memoryMB, gres from the
// extended resources (see Map). When Slurm starts the job, the allocation's
// slots are granted to the pool, each knowing the node it lives on; a task
// runs in its slot as a job step (srun --jobid=J --overlap -w NODE). A
// released slot is confirmed and returns to Slurm when every slot of its
// allocation is released (scancel); an ask withdrawn before the grant
// cancels its pending job; an allocation Slurm preempts (partition
// priority tiers) is reclaimed as soon as Slurm decides it (PreemptTime:
// the pool gives back each slot whose tasks are done, during the
// partition's GraceTime) and what is left is revoked with
// slotpool.ReasonPreempted when the job ends; an ask larger
// than the partition could ever hold is refused at once with a
// *TooLargeError. Queues map to partitions (Config.Partitions). Priority
// changes run scontrol as the caller's identity, so that Slurm itself
// decides who may raise a priority; each change or refusal goes to an
// Auditor.
//
// The package has two layers. Core is the deterministic state machine
// (no goroutine, clock or process: time comes in as a value): it takes
// the pool's messages, hands out the commands to run (Core.Commands) and
// takes back their results and the observed job states
// (Core.Submitted, Core.Observe). Client runs the commands (ExecClient:
// sbatch --parsable, scancel, squeue --json, scontrol, srun, each with a
// timeout). Adapter owns a goroutine and a clock and connects the two:
// it polls with exponential backoff while anything is pending, and when
// slurmctld is unreachable it logs an *OutageError, keeps its state and
// retries with backoff; nothing is granted twice, because a job is
// known by its unique name and granted once.
//
// A runtime holding a scheduler.Driver (whose scheduler has
// Config.ExternalAdmission set) uses it like this:
//
//	ad, err := slurm.StartAdapter(ctx, slurm.AdapterConfig{Core: slurm.Config{Name: "etl"}, Client: &slurm.ExecClient{}, Sink: driver})
//	...
//	for rd := range driver.Ready() {
//		ad.Handle(ctx, rd.ToAdmission...)
//		for _, d := range rd.Deploy {
//			p, _ := ad.Placement(d.Slot) // job, het group and node of the slot
//			// run the task: client.RunStep(ctx, p, argv, out, errOut)
//		}
//	}
//	ad.Stop(ctx) // cancels what is still allocated
//
// cmd/regionsched's "run --slurm" is such a runtime. scripts/slurm-up.sh
// starts a private test cluster (docs/slurm.md).
package slurm
