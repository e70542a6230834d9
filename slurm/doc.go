// Package slurm puts a real cluster behind the admission seams: Slurm,
// talked to through its commands. slurmCluster is an admission.Cluster many
// jobs share (package multijob runs its jobs over it); Adapter is the
// slotpool.Admission of one job's scheduler.
//
// Every all-or-nothing ask of the pool becomes one Slurm batch job that
// only holds an allocation (its script sleeps): one component per task
// group, so a gang of several profiles is a heterogeneous job; CPUs come
// from cpuMillis (rounded up per slot), memory from memoryMB, gres from the
// extended resources (see mapGang). When Slurm starts the job, the allocation's
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
// *TooLargeError. Queues map to partitions (jobConfig.Partitions). Priority
// changes run scontrol as the caller's identity, so that Slurm itself
// decides who may raise a priority; each change or refusal goes to an
// Auditor.
//
// The package has two layers. jobCore is the deterministic state machine
// (no goroutine, clock or process: time comes in as a value): it takes
// the pool's messages, hands out the commands to run (jobCore.Commands) and
// takes back their results and the observed job states
// (jobCore.Submitted, jobCore.Observe). Client runs the commands (ExecClient:
// sbatch --parsable, scancel, squeue --json, scontrol, srun, each with a
// timeout). Adapter owns a goroutine and a clock and connects the two:
// it polls with exponential backoff while anything is pending, and when
// slurmctld is unreachable it logs an *OutageError, keeps its state and
// retries with backoff; nothing is granted twice, because a job is
// known by its unique name and granted once.
//
// slurmCluster gives each job a jobCore of its own and gathers their commands
// and the names they watch, so that one squeue per poll serves every job
// (slurmCluster.Watched); it rejects a job whose largest region can never fit
// its partition, fails one whose waiting region no longer fits when
// nodes are drained or down (SetPartition), audits priority changes by
// the priority Slurm reports afterwards, tags every allocation with the
// run (Tag, sbatch --comment) and gives it a time limit (sbatch --time),
// so that Slurm ends what a runtime that died left and
// ExecClient.Leftovers finds it. poller is its I/O layer: on one
// goroutine it runs the commands, polls, reads the partitions again and
// feeds the results to the slurmCluster through multijob.Driver.ClusterInput;
// it reports outages once when they begin and once when they end, and
// allocations that wait, with Slurm's reason (Notice). A runtime with
// many jobs uses them like this:
//
//	cl, err := slurm.NewCluster(slurm.ClusterConfig{Run: runID}, partitions)
//	s, err := multijob.New(multijob.Config{Cluster: cl})
//	d := multijob.StartDriver(ctx, s, multijob.DriverConfig{})
//	pl, err := slurm.StartPoller(ctx, slurm.PollerConfig{Cluster: cl, Inputs: d, Client: &slurm.ExecClient{}})
//	d.Submit(ctx, spec)
//	for rd := range d.Ready() {
//		for _, jr := range rd.Jobs {
//			for _, dep := range jr.Deploy {
//				p, _ := pl.Placement(ctx, jr.Job, dep.Slot) // job, het group and node
//				// run the task: client.runStep(ctx, p, argv, out, errOut)
//			}
//		}
//		pl.Poke() // the cluster may have commands to run
//	}
//	pl.Stop(ctx) // cancels everything the run still holds
//
// A runtime holding a scheduler.Driver for one job (whose scheduler has
// jobConfig.ExternalAdmission set) uses an Adapter like this:
//
//	ad, err := slurm.StartAdapter(ctx, slurm.AdapterConfig{Core: slurm.Config{Name: "etl"}, Client: &slurm.ExecClient{}, Sink: driver})
//	...
//	for rd := range driver.Ready() {
//		ad.Handle(ctx, rd.ToAdmission...)
//		for _, d := range rd.Deploy {
//			p, _ := ad.Placement(d.Slot) // job, het group and node of the slot
//			// run the task: client.runStep(ctx, p, argv, out, errOut)
//		}
//	}
//	ad.Stop(ctx) // cancels what is still allocated
//
// cmd/regionsched's "run --slurm" is the runtime with many jobs. scripts/slurm-up.sh
// starts a private test cluster (docs/slurm.md).
package slurm
