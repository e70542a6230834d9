// Package slurm runs jobs on a real Slurm cluster, talked to through its
// commands (sbatch, scancel, squeue --json, scontrol, sinfo, srun).
//
// Run is the runtime: the jobs share the cluster through a
// multijob.Scheduler whose admission is Slurm, every region's bulk of
// slots becomes one all-or-nothing Slurm job that only holds an
// allocation, and every task runs as a job step in its slot's allocation
// on its slot's node (srun --jobid=J --overlap -w NODE). Slurm decides
// who gets the cluster. A Go program hands Run its jobs and gets their
// outcomes back, the trace events and notices as they happen (RunConfig),
// and cancels ctx to stop (on SIGINT or SIGTERM, say): every allocation of
// the run is cancelled before Run returns.
//
// Inside, one deterministic state machine (no goroutine, clock or
// process) is the admission.Cluster the scheduler runs over: it turns
// each job's all-or-nothing asks into sbatch commands (CPUs from
// cpuMillis, memory from memoryMB, gres from the extended resources; a
// heterogeneous job when the slots differ), grants the slots when Slurm
// runs the job, cancels an allocation when its last slot comes back,
// revokes what Slurm preempts, rejects a job whose largest region can
// never fit its partition (a *TooLargeError naming the region), and fails
// one whose waiting region no longer fits when nodes are drained or down.
// A thin poller runs its commands and one squeue per poll for every job of
// the run, reads the partitions again, and feeds the answers back through
// multijob.Driver.ClusterInput; while slurmctld is unreachable it keeps
// the state and retries with backoff, and reports each outage once when
// it begins and once when it ends (Notice). Nothing is granted twice: a
// Slurm job is known by its unique name and granted once.
//
// Every allocation is tagged with the run (Tag, sbatch --comment) and has
// a time limit (sbatch --time), so that Slurm ends what a runner killed
// outright left, and ExecClient.Leftovers finds it (RunnerAlive tells
// whether its runner still lives). Priority changes run scontrol as the
// caller's identity, so that Slurm itself decides who may change a
// priority; each answer goes to the audit, judged by the priority Slurm
// reports afterwards.
//
// A runtime that holds one job's scheduler.Driver itself (its scheduler
// made with Config.ExternalAdmission) uses an Adapter instead: the
// slotpool.Admission of that job's pool, with its own polling goroutine:
//
//	ad, err := slurm.StartAdapter(ctx, slurm.AdapterConfig{Name: "etl-" + slurm.NewRunID(), Sink: driver})
//	...
//	for rd := range driver.Ready() {
//		ad.Handle(ctx, rd.ToAdmission...)
//		for _, d := range rd.Deploy {
//			p, _ := ad.Placement(d.Slot) // job, het group and node of the slot
//			// run the task as a step: srun --jobid=p.Job --overlap -w p.Node ...
//		}
//	}
//	ad.Stop(ctx) // cancels what is still allocated
//
// cmd/regionsched's "run --slurm" is Run with flags; scripts/slurm-up.sh
// starts a private test cluster (docs/slurm.md).
package slurm
