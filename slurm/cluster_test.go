package slurm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// clusterRig is a slurmCluster under a multijob.Scheduler, and the test plays
// its Poller: it takes the commands, answers them and passes on what
// Slurm reports, at the instants it picks.
type clusterRig struct {
	t     *testing.T
	cl    *slurmCluster
	s     *multijob.Scheduler
	now   time.Time
	audit []AuditRecord
}

// root and alice are the principals of the priority changes: root is
// Slurm's operator, alice an ordinary user.
var (
	root  = admission.Principal{Name: "root"}
	alice = admission.Principal{Name: "alice"}
)

// newClusterRig returns a rig over a slurmCluster of run "r1" (unless cfg
// names one) on parts (default: the recorded partition "low", four nodes
// of 4 CPUs), its audit recorded.
func newClusterRig(t *testing.T, cfg clusterConfig, parts ...partition) *clusterRig {
	t.Helper()
	r := &clusterRig{t: t, now: t0}
	if cfg.Run == "" {
		cfg.Run = "r1"
	}
	cfg.Auditor = func(rec AuditRecord) { r.audit = append(r.audit, rec) }
	if len(parts) == 0 {
		parts = []partition{recordedPartition(t, "low")}
	}
	cl, err := newCluster(cfg, parts)
	require.NoError(t, err)
	s, err := multijob.New(multijob.Config{Cluster: cl})
	require.NoError(t, err)
	r.cl, r.s = cl, s
	return r
}

// pipelinedJob is a job of one region of n slots (src(n) and sink(n)
// pipelined, sharing slots): one ask, one Slurm job of n tasks.
func pipelinedJob(t *testing.T, n int) *region.Regions {
	t.Helper()
	g, err := topology.NewBuilder("pipelined").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: n}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: n}).
		Connect("src", "sink", exchange.Hash).
		Build()
	require.NoError(t, err)
	return region.FromJob(g, exchange.AllPipelined)
}

// blockingJob is a job of n source regions of one slot each (asked for
// at once: n Slurm jobs) and a sink region that waits for them.
func blockingJob(t *testing.T, n int) *region.Regions {
	t.Helper()
	g, err := topology.NewBuilder("blocking").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: n}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1}).
		Connect("src", "sink", exchange.Hash).
		Build()
	require.NoError(t, err)
	return region.FromJob(g, exchange.AllBlocking)
}

// submit submits a job at the rig's time and hands out the Ready.
func (r *clusterRig) submit(name, queue string, rs *region.Regions) multijob.Ready {
	r.t.Helper()
	require.NoError(r.t, r.s.Submit(r.now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: name, Queue: queue}, Regions: rs}))
	return r.ready()
}

// ready is the Scheduler's Ready, copied.
func (r *clusterRig) ready() multijob.Ready { return r.s.Ready().Clone() }

// at moves the rig's time to t0+d.
func (r *clusterRig) at(d time.Duration) { r.now = t0.Add(d) }

// input gives the slurmCluster an input of its own at the rig's time.
func (r *clusterRig) input(fn func(now time.Time)) {
	r.t.Helper()
	require.NoError(r.t, r.s.ClusterInput(r.now, func(now time.Time) error { fn(now); return nil }))
}

// commands are the slurmCluster's commands, plain.
func (r *clusterRig) commands() []slurmCommand { return plain(r.cl.Commands()) }

// plain returns a copy of cmds without the slurmCluster's record of a
// priority change, to compare with Commands written out.
func plain(cmds []slurmCommand) []slurmCommand {
	out := append([]slurmCommand(nil), cmds...)
	for i := range out {
		out[i].change = nil
	}
	return out
}

// sbatch answers the cmdSubmit commands of cmds with the job ids ids, in
// order (one per cmdSubmit), and returns the other commands.
func (r *clusterRig) sbatch(cmds []slurmCommand, ids ...JobID) []slurmCommand {
	r.t.Helper()
	var rest []slurmCommand
	for _, c := range cmds {
		if c.Kind != cmdSubmit {
			rest = append(rest, c)
			continue
		}
		require.NotEmpty(r.t, ids, "no job id left for %s", c.Name)
		id := ids[0]
		ids = ids[1:]
		r.input(func(now time.Time) { r.cl.Submitted(now, c.Name, id, nil) })
	}
	require.Empty(r.t, ids, "job ids left over")
	return rest
}

// observe passes statuses as the answer to a query of every watched
// name.
func (r *clusterRig) observe(statuses ...jobStatus) {
	r.t.Helper()
	r.input(func(now time.Time) { r.cl.Observe(now, r.cl.Watched(), statuses) })
}

// priorityDone answers the scontrol commands cmds with cmdErr.
func (r *clusterRig) priorityDone(cmds []slurmCommand, cmdErr error) {
	r.t.Helper()
	for _, c := range cmds {
		require.Equal(r.t, cmdSetPriority, c.Kind)
		r.input(func(now time.Time) { r.cl.PriorityDone(now, c, cmdErr) })
	}
}

// pendingJob is a status of a pending job of one component.
func pendingJob(id JobID, name string, priority int64) jobStatus {
	return jobStatus{ID: id, Name: name, State: "PENDING", Reason: "Resources", Priority: priority}
}

// ended returns the ends of rd by job name.
func ended(rd multijob.Ready) map[string]multijob.JobEnd {
	out := map[string]multijob.JobEnd{}
	for _, e := range rd.Ended {
		out[e.Job] = e
	}
	return out
}

// deployedSlots returns the slots a job deploys into in rd.
func deployedSlots(rd multijob.Ready, job string) []slotpool.SlotID {
	seen := map[slotpool.SlotID]bool{}
	var out []slotpool.SlotID
	for _, jr := range rd.Jobs {
		if jr.Job != job {
			continue
		}
		for _, d := range jr.Deploy {
			if !seen[d.Slot] {
				seen[d.Slot] = true
				out = append(out, d.Slot)
			}
		}
	}
	return out
}

// Every ask of every job becomes one sbatch: named after the job and the
// run, in its queue's partition, with the time limit, the run's tag and
// the extra options; Watched is every job's names, sorted.
func TestClusterSubmitsOneSbatchPerAsk(t *testing.T) {
	r := newClusterRig(t, clusterConfig{Partitions: map[string]string{"tight": "cpus2"}, ExtraArgs: []string{"--account=x"},
		TimeLimit: 90 * time.Second}, recordedPartition(t, "low"), recordedPartition(t, "cpus2"))
	r.submit("etl", "", pipelinedJob(t, 3))
	r.submit("b", "", blockingJob(t, 2))
	r.submit("c", "tight", pipelinedJob(t, 2))

	tag := "regionsched-run=r1"
	req := func(partition string, tasks int) jobRequest {
		return jobRequest{Partition: partition, Components: []component{{Profile: resource.Unknown, Tasks: tasks, CPUsPerTask: 1}},
			TimeLimit: 90 * time.Second, Comment: tag, Extra: []string{"--account=x"}}
	}
	cmds := r.commands()
	assert.Equal(t, []slurmCommand{
		{Kind: cmdSubmit, Name: "rs-etl-r1-j0-a1", Request: req("low", 3)},
		{Kind: cmdSubmit, Name: "rs-b-r1-j1-a1", Request: req("low", 1)},
		{Kind: cmdSubmit, Name: "rs-b-r1-j1-a2", Request: req("low", 1)},
		{Kind: cmdSubmit, Name: "rs-c-r1-j2-a1", Request: req("cpus2", 2)},
	}, cmds, "one sbatch per ask, in the queue's partition, tagged with the run")
	args := cmds[0].Request.SbatchArgs(cmds[0].Name)
	assert.Subset(t, args, []string{"--job-name=rs-etl-r1-j0-a1", "--time=2", "--comment=" + tag, "--account=x", "--partition=low", "--ntasks=3"})
	assert.Empty(t, r.commands(), "handed out once")
	assert.False(t, r.cl.HasCommands())

	assert.Equal(t, []string{"rs-b-r1-j1-a1", "rs-b-r1-j1-a2", "rs-c-r1-j2-a1", "rs-etl-r1-j0-a1"}, r.cl.Watched(), "every job's names, sorted")
	assert.Equal(t, []string{"cpus2", "low"}, r.cl.Partitions())
	assert.True(t, r.cl.Busy(), "waiting for the sbatch answers")
	assert.Equal(t, "rs-etl-r1-j0", jobBaseName("etl", "r1", 0))
	assert.Equal(t, "rs-a-b.c-r1-j3", jobBaseName("a b.c", "r1", 3), "made safe")
}

// An observation grants the job whose allocation is running, by the
// whole name, on the nodes Slurm chose; the other job, pending, gets
// nothing and waits with Slurm's reason.
func TestClusterObserveGrantsTheJobItNames(t *testing.T) {
	r := newClusterRig(t, clusterConfig{})
	// The second job's allocation name starts with the first one's:
	// statuses still go by the whole name.
	r.submit("x", "", pipelinedJob(t, 2))
	r.submit("x-r1-j0-a1", "", pipelinedJob(t, 1))
	xName, yName := "rs-x-r1-j0-a1", "rs-x-r1-j0-a1-r1-j1-a1"
	assert.Empty(t, r.sbatch(r.commands(), 11, 12))
	assert.Equal(t, []string{xName, yName}, r.cl.Watched())

	r.at(time.Second)
	r.observe(running(11, xName, nodeCPUs{"n1", 2}), pendingJob(12, yName, 1))
	rd := r.ready()
	slots := deployedSlots(rd, "x")
	require.Len(t, slots, 2, "x runs in its two slots")
	for _, s := range slots {
		p, ok := r.cl.placement("x", s)
		require.True(t, ok)
		assert.Equal(t, slotPlacement{Job: 11, HetGroup: -1, Node: "n1", CPUs: 1}, p)
	}
	assert.Empty(t, deployedSlots(rd, "x-r1-j0-a1"), "its job is pending")
	assert.Equal(t, 2, r.cl.byName["x"].Granted())
	assert.Zero(t, r.cl.byName["x-r1-j0-a1"].Granted())
	waits := r.cl.Waiting()
	require.Len(t, waits, 1)
	assert.Equal(t, jobWait{Job: "x-r1-j0-a1", Wait: Wait{Ask: 1, Name: yName, Job: 12, Since: t0, Reason: "Resources"}}, waits[0])

	r.at(2 * time.Second)
	r.observe(running(11, xName, nodeCPUs{"n1", 2}), running(12, yName, nodeCPUs{"n2", 1}))
	rd = r.ready()
	assert.Empty(t, deployedSlots(rd, "x"), "granted once")
	slots = deployedSlots(rd, "x-r1-j0-a1")
	require.Len(t, slots, 1)
	p, ok := r.cl.placement("x-r1-j0-a1", slots[0])
	require.True(t, ok)
	assert.Equal(t, JobID(12), p.Job)
	assert.Equal(t, "n2", p.Node)
	_, ok = r.cl.placement("x", slots[0]+100)
	assert.False(t, ok)
	assert.Empty(t, r.commands(), "nothing resubmitted, nothing cancelled")
	assert.Equal(t, []jobPriority{{Job: 11, Name: xName}}, r.cl.SlurmJobs("x"))
}

// priorityRig is a rig with the job "etl" whose one allocation is the
// pending Slurm job 11 of priority 100.
func priorityRig(t *testing.T) *clusterRig {
	t.Helper()
	r := newClusterRig(t, clusterConfig{})
	r.submit("etl", "", pipelinedJob(t, 2))
	r.sbatch(r.commands(), 11)
	r.observe(pendingJob(11, "rs-etl-r1-j0-a1", 100))
	return r
}

// A priority change runs scontrol as the principal and is audited by the
// priority Slurm reports at the next observation, whatever scontrol's
// exit status; a refusal carries Slurm's message.
func TestClusterPriorityAuditedByWhatSlurmReports(t *testing.T) {
	notPersistent := &CommandError{Command: "scontrol", Stderr: "Changes to job priority are not persistent, change nice instead for job 11\n",
		Err: ErrPermissionDenied}
	denied := &CommandError{Command: "scontrol", Stderr: "scontrol: error: Access/permission denied\n", Err: ErrPermissionDenied}
	for _, tc := range []struct {
		name     string
		cmdErr   error
		observed int64
		accepted bool
		reason   string
	}{
		{"applied", nil, 500, true, ""},
		{"applied though scontrol exited 1", notPersistent, 500, true, ""},
		{"refused: Slurm's message", denied, 100, false, "scontrol: error: Access/permission denied"},
		{"unchanged without an error", nil, 100, false, "Slurm reports priority 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := priorityRig(t)
			r.at(time.Second)
			require.NoError(t, r.s.SetPriority(r.now, alice, "etl", 500))
			cmds := r.cl.Commands()
			require.Equal(t, []slurmCommand{{Kind: cmdSetPriority, Name: "rs-etl-r1-j0-a1", Job: 11, Priority: 500, Principal: "alice"}}, plain(cmds),
				"scontrol run as the principal")
			r.at(2 * time.Second)
			r.priorityDone(cmds, tc.cmdErr)
			assert.Empty(t, r.audit, "judged by the priority Slurm reports next")
			assert.True(t, r.cl.Busy())

			r.at(3 * time.Second)
			r.observe(pendingJob(11, "rs-etl-r1-j0-a1", tc.observed))
			assert.Equal(t, []AuditRecord{{At: t0.Add(time.Second), Principal: "alice", Job: 11, RuntimeJob: "etl", Old: 100, New: 500,
				Accepted: tc.accepted, Reason: tc.reason}}, r.audit)
			r.observe(pendingJob(11, "rs-etl-r1-j0-a1", tc.observed))
			assert.Len(t, r.audit, 1, "audited once")
			assert.Empty(t, r.commands(), "not asked again")
		})
	}
}

// A priority change asked before the job has a Slurm job is run once
// Slurm reports one.
func TestClusterPriorityBeforeTheFirstAllocation(t *testing.T) {
	r := newClusterRig(t, clusterConfig{})
	r.submit("etl", "", pipelinedJob(t, 2))
	cmds := r.commands()
	require.NoError(t, r.s.SetPriority(r.now, root, "etl", 500))
	assert.Empty(t, r.commands(), "no Slurm job yet")
	r.sbatch(cmds, 11)
	r.observe(pendingJob(11, "rs-etl-r1-j0-a1", 100))
	assert.Equal(t, []slurmCommand{{Kind: cmdSetPriority, Name: "rs-etl-r1-j0-a1", Job: 11, Priority: 500, Principal: "root"}}, r.commands(),
		"asked once Slurm reported the job")
}

// An accepted priority change is asked again of the job's later Slurm
// jobs; a refused one is not.
func TestClusterPriorityFollowsLaterAllocationsOnlyIfAccepted(t *testing.T) {
	r := newClusterRig(t, clusterConfig{})
	r.submit("acc", "", pipelinedJob(t, 1))
	r.submit("ref", "", pipelinedJob(t, 1))
	acc, ref := "rs-acc-r1-j0-a1", "rs-ref-r1-j1-a1"
	r.sbatch(r.commands(), 11, 12)
	r.observe(pendingJob(11, acc, 100), pendingJob(12, ref, 100))

	r.at(time.Second)
	require.NoError(t, r.s.SetPriority(r.now, root, "acc", 500))
	require.NoError(t, r.s.SetPriority(r.now, alice, "ref", 500))
	cmds := r.cl.Commands()
	require.Len(t, cmds, 2)
	r.input(func(now time.Time) {
		r.cl.PriorityDone(now, cmds[0], nil)
		r.cl.PriorityDone(now, cmds[1], &CommandError{Command: "scontrol", Stderr: "Access/permission denied", Err: ErrPermissionDenied})
	})
	r.observe(pendingJob(11, acc, 500), pendingJob(12, ref, 100))
	require.Len(t, r.audit, 2)
	assert.True(t, r.audit[0].Accepted)
	assert.False(t, r.audit[1].Accepted)

	// An operator cancels both pending jobs: each ask is submitted again,
	// a new Slurm job.
	r.at(2 * time.Second)
	r.observe(jobStatus{ID: 11, Name: acc, State: "CANCELLED"}, jobStatus{ID: 12, Name: ref, State: "CANCELLED"})
	assert.Empty(t, r.sbatch(r.commands(), 21, 22))
	r.observe(jobStatus{ID: 11, Name: acc, State: "CANCELLED"}, pendingJob(21, acc, 100),
		jobStatus{ID: 12, Name: ref, State: "CANCELLED"}, pendingJob(22, ref, 100))
	assert.Equal(t, []slurmCommand{{Kind: cmdSetPriority, Name: acc, Job: 21, Priority: 500, Principal: "root"}}, r.commands(),
		"the accepted change follows the job's new allocation; the refused one is not asked again")
}

// Two priority changes at one instant are both run and audited in the
// order asked; two of one Slurm job run one after the other, each judged
// by the priority Slurm reports after it.
func TestClusterTwoPriorityChangesAtOneInstant(t *testing.T) {
	t.Run("of two jobs: both run, audited in order", func(t *testing.T) {
		r := newClusterRig(t, clusterConfig{})
		r.submit("a", "", pipelinedJob(t, 1))
		r.submit("b", "", pipelinedJob(t, 1))
		r.sbatch(r.commands(), 11, 12)
		r.observe(pendingJob(11, "rs-a-r1-j0-a1", 100), pendingJob(12, "rs-b-r1-j1-a1", 100))
		r.at(time.Second)
		require.NoError(t, r.s.SetPriority(r.now, root, "b", 700))
		require.NoError(t, r.s.SetPriority(r.now, root, "a", 500))
		cmds := r.cl.Commands()
		require.Len(t, cmds, 2)
		r.priorityDone(cmds, nil)
		r.observe(pendingJob(11, "rs-a-r1-j0-a1", 500), pendingJob(12, "rs-b-r1-j1-a1", 700))
		require.Len(t, r.audit, 2)
		assert.Equal(t, []string{"b", "a"}, []string{r.audit[0].RuntimeJob, r.audit[1].RuntimeJob}, "in the order asked")
		assert.True(t, r.audit[0].Accepted && r.audit[1].Accepted)
	})

	t.Run("of one job: the second waits for the first's audit", func(t *testing.T) {
		r := priorityRig(t)
		r.at(time.Second)
		require.NoError(t, r.s.SetPriority(r.now, root, "etl", 500))
		require.NoError(t, r.s.SetPriority(r.now, root, "etl", 700))
		cmds := r.cl.Commands()
		require.Len(t, cmds, 1, "one scontrol at a time for a Slurm job")
		assert.Equal(t, int64(500), cmds[0].Priority)
		r.priorityDone(cmds, nil)
		r.at(2 * time.Second)
		r.observe(pendingJob(11, "rs-etl-r1-j0-a1", 500))
		cmds = r.cl.Commands()
		require.Len(t, cmds, 1, "the second, once the first is audited")
		assert.Equal(t, int64(700), cmds[0].Priority)
		r.priorityDone(cmds, nil)
		r.at(3 * time.Second)
		r.observe(pendingJob(11, "rs-etl-r1-j0-a1", 700))
		assert.Equal(t, []AuditRecord{
			{At: t0.Add(time.Second), Principal: "root", Job: 11, RuntimeJob: "etl", Old: 100, New: 500, Accepted: true},
			{At: t0.Add(2 * time.Second), Principal: "root", Job: 11, RuntimeJob: "etl", Old: 500, New: 700, Accepted: true},
		}, r.audit, "each judged by the priority Slurm reported after it")
		assert.Empty(t, r.cl.Commands())
	})
}

// A change still waiting for the audit of the one before when its job
// ends is audited as refused, never dropped: every change asked for is
// audited once.
func TestClusterPriorityNotAskedBeforeTheEndIsAudited(t *testing.T) {
	r := priorityRig(t)
	r.at(time.Second)
	require.NoError(t, r.s.SetPriority(r.now, root, "etl", 500))
	require.NoError(t, r.s.SetPriority(r.now, alice, "etl", 700))
	cmds := r.cl.Commands()
	require.Len(t, cmds, 1, "the second waits for the first's audit")
	r.at(2 * time.Second)
	require.NoError(t, r.s.Kill(r.now, root, "etl"))
	assert.Equal(t, []AuditRecord{{At: t0.Add(2 * time.Second), Principal: "alice", RuntimeJob: "etl", New: 700,
		Reason: "not asked of Slurm: job etl failed first"}}, r.audit)
	r.priorityDone(cmds, nil)
	r.observe()
	require.Len(t, r.audit, 2, "the change asked is audited as before")
	assert.Equal(t, int64(500), r.audit[1].New)
}

// drained is the recorded partition "low" with node n4 drained.
func drained(t *testing.T) partition {
	t.Helper()
	p := recordedPartition(t, "low")
	p.Nodes = append([]node(nil), p.Nodes...)
	p.Nodes[3].State = "drained"
	return p
}

// A node drained fails the job whose pending ask no longer fits, with a
// *TooLargeError naming the node, and cancels its Slurm job; a job that
// still fits waits on, a granted one keeps its slots.
func TestClusterSetPartitionFailsWhatNoLongerFits(t *testing.T) {
	r := newClusterRig(t, clusterConfig{})
	r.submit("big", "", pipelinedJob(t, 16)) // the whole partition
	r.submit("small", "", pipelinedJob(t, 2))
	r.submit("held", "", pipelinedJob(t, 4))
	r.sbatch(r.commands(), 11, 12, 13)
	r.observe(pendingJob(11, "rs-big-r1-j0-a1", 1), pendingJob(12, "rs-small-r1-j1-a1", 1), running(13, "rs-held-r1-j2-a1", nodeCPUs{"n4", 4}))
	require.Len(t, deployedSlots(r.ready(), "held"), 4)

	r.at(time.Second)
	r.input(func(now time.Time) { r.cl.SetPartition(now, drained(t)) })
	rd := r.ready()
	ends := ended(rd)
	require.Len(t, ends, 1, "only the job that no longer fits")
	assert.Equal(t, multijob.Failed, ends["big"].Outcome)
	var tl *TooLargeError
	require.ErrorAs(t, ends["big"].Err, &tl)
	assert.Equal(t, []string{"n4 (drained)"}, tl.Unavailable)
	assert.Equal(t, "low", tl.Partition)
	assert.Equal(t, "room for 12", tl.Have)
	assert.Contains(t, tl.Error(), "n4 (drained)")
	assert.Equal(t, admission.JobFailed, r.cl.byName["big"].State())
	assert.Equal(t, admission.JobAccepted, r.cl.byName["small"].State())
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-big-r1-j0-a1", Job: 11}}, r.commands())
	assert.Equal(t, 4, r.cl.byName["held"].Granted(), "granted slots are Slurm's to keep")
	assert.Equal(t, "n4", r.cl.byName["held"].core.part.Nodes[3].Name)
	assert.False(t, r.cl.byName["held"].core.part.Nodes[3].InService(), "every job of the partition sees the new state")
}

// A job whose largest region can never fit the partition (or its nodes
// in service) is rejected at submit, the region named, nothing submitted.
func TestClusterRejectsAtSubmit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		part        partition
		slots       int
		have        string
		unavailable []string
	}{
		{"more than the partition", recordedPartition(t, "low"), 17, "room for 16", nil},
		{"more than the nodes in service", drained(t), 13, "room for 12", []string{"n4 (drained)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newClusterRig(t, clusterConfig{}, tc.part)
			rd := r.submit("huge", "", pipelinedJob(t, tc.slots))
			end, ok := ended(rd)["huge"]
			require.True(t, ok)
			assert.Equal(t, multijob.Rejected, end.Outcome)
			var tl *TooLargeError
			require.ErrorAs(t, end.Err, &tl)
			assert.Contains(t, tl.Region, "region 0", "names the job's largest region")
			assert.Contains(t, tl.Error(), "region 0")
			assert.Equal(t, tc.have, tl.Have)
			assert.Equal(t, tc.unavailable, tl.Unavailable)
			assert.Equal(t, admission.JobRejected, r.cl.byName["huge"].State())
			assert.Empty(t, r.commands(), "nothing submitted")
			assert.Empty(t, r.cl.Watched())
			require.NotEmpty(t, rd.Events)
			assert.Equal(t, admission.JobRejected, rd.Events[len(rd.Events)-1].To)
		})
	}
}

// A job with a driver or a gang, or a priority out of range, is refused
// and changes nothing.
func TestClusterRefusesDriversAndGangs(t *testing.T) {
	r := newClusterRig(t, clusterConfig{})
	driver := resource.New(1000, 0)
	for _, tc := range []struct {
		field string
		spec  multijob.JobSpec
	}{
		{"JobSpec.Driver", multijob.JobSpec{JobSpec: admission.JobSpec{Name: "d", Driver: &driver}, Regions: pipelinedJob(t, 1)}},
		{"JobSpec.Gang", multijob.JobSpec{JobSpec: admission.JobSpec{Name: "g", Gang: &admission.Gang{MinSlots: 2}}, Regions: pipelinedJob(t, 1)}},
	} {
		err := r.s.Submit(r.now, tc.spec)
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, tc.field)
		assert.Equal(t, tc.field, ce.Field)
		assert.ErrorIs(t, err, ErrBadConfig)
	}
	_, err := r.cl.Submit(r.now, admission.JobSpec{Name: "p", Priority: -1})
	assert.ErrorIs(t, err, admission.ErrBadPriority)
	r.submit("ok", "", pipelinedJob(t, 1))
	cmds := r.commands()
	require.Len(t, cmds, 1)
	assert.Equal(t, "rs-ok-r1-j0-a1", cmds[0].Name, "the refused specs took no index")
	_, err = r.cl.Submit(r.now, admission.JobSpec{Name: "ok"})
	assert.ErrorIs(t, err, ErrBadConfig, "a name twice")
}

// A kill cancels each of the job's allocations once (one whose sbatch
// has not answered by name, and whatever it started when it shows up),
// ends its port with an *admission.KilledError, and leaves the other jobs
// alone.
func TestClusterKillCancelsEveryAllocation(t *testing.T) {
	r := newClusterRig(t, clusterConfig{})
	r.submit("etl", "", blockingJob(t, 3)) // three sources: three Slurm jobs
	r.submit("other", "", pipelinedJob(t, 1))
	cmds := r.commands()
	require.Len(t, cmds, 4)
	a1, a2, a3 := "rs-etl-r1-j0-a1", "rs-etl-r1-j0-a2", "rs-etl-r1-j0-a3"
	// a3's sbatch is still running when the job is killed.
	r.sbatch([]slurmCommand{cmds[0], cmds[1], cmds[3]}, 11, 12, 14)
	r.observe(running(11, a1, nodeCPUs{"n1", 1}), pendingJob(12, a2, 1), pendingJob(14, "rs-other-r1-j1-a1", 1))
	require.Len(t, deployedSlots(r.ready(), "etl"), 1)

	r.at(time.Second)
	require.NoError(t, r.s.Kill(r.now, root, "etl"))
	rd := r.ready()
	end := ended(rd)["etl"]
	assert.Equal(t, multijob.Killed, end.Outcome)
	var ke *admission.KilledError
	require.ErrorAs(t, end.Err, &ke)
	assert.Equal(t, "root", ke.By.Name)
	port := r.cl.byName["etl"]
	assert.Equal(t, admission.JobFailed, port.State())
	require.ErrorAs(t, port.Err(), &ke)
	killCancels := r.commands()
	assert.ElementsMatch(t, []slurmCommand{{Kind: cmdCancel, Name: a1, Job: 11}, {Kind: cmdCancel, Name: a2, Job: 12}, {Kind: cmdCancel, Name: a3}}, killCancels,
		"each allocation once; the one without a job id by name")

	// The late sbatch answer is not adopted: whatever it started is
	// cancelled when it shows up.
	r.input(func(now time.Time) { r.cl.Submitted(now, a3, 13, nil) })
	r.observe(jobStatus{ID: 11, Name: a1, State: "CANCELLED"}, jobStatus{ID: 12, Name: a2, State: "CANCELLED"},
		pendingJob(13, a3, 1), pendingJob(14, "rs-other-r1-j1-a1", 1))
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: a3, Job: 13}}, r.commands())
	assert.Equal(t, admission.JobAccepted, r.cl.byName["other"].State(), "the other job goes on")

	err := r.s.SetPriority(r.now, root, "etl", 9)
	assert.ErrorIs(t, err, admission.ErrInvalidTransition, "the job ended")
	err = r.cl.Kill(r.now, root, "nobody")
	assert.ErrorIs(t, err, admission.ErrUnknownJob)
}

// Shutdown cancels every job's allocations, those whose cancel is in
// flight too.
func TestClusterShutdownCancelsAgain(t *testing.T) {
	r := newClusterRig(t, clusterConfig{})
	r.submit("etl", "", pipelinedJob(t, 1))
	r.submit("other", "", pipelinedJob(t, 1))
	r.sbatch(r.commands(), 11, 12)
	r.observe(pendingJob(11, "rs-etl-r1-j0-a1", 1), pendingJob(12, "rs-other-r1-j1-a1", 1))
	require.NoError(t, r.s.Kill(r.now, root, "etl"))
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-etl-r1-j0-a1", Job: 11}}, r.commands())
	// That cancel's outcome never came back: Shutdown issues it again.
	r.input(func(time.Time) { r.cl.Shutdown() })
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: "rs-etl-r1-j0-a1", Job: 11}, {Kind: cmdCancel, Name: "rs-other-r1-j1-a1", Job: 12}}, r.commands())
}

// runAll reports every deployment of rd running and finished, at the
// rig's time.
func (r *clusterRig) runAll(rd multijob.Ready) {
	r.t.Helper()
	for _, jr := range rd.Jobs {
		for _, d := range jr.Deploy {
			require.NoError(r.t, r.s.TaskRunning(r.now, jr.Job, d.Task, d.Attempt))
			require.NoError(r.t, r.s.TaskFinished(r.now, jr.Job, d.Task, d.Attempt))
		}
	}
}

// A job's life on Slurm: its regions' slots go back as they finish (each
// allocation cancelled once), a later region gets a new allocation which
// the job's accepted priority follows, and the job finishes.
func TestClusterJobRunsToItsEnd(t *testing.T) {
	r := newClusterRig(t, clusterConfig{})
	r.submit("etl", "", blockingJob(t, 2))
	a1, a2, a3 := "rs-etl-r1-j0-a1", "rs-etl-r1-j0-a2", "rs-etl-r1-j0-a3"
	r.sbatch(r.commands(), 11, 12)
	run := func(id JobID, name string, prio int64) jobStatus {
		s := running(id, name, nodeCPUs{"n1", 1})
		s.Priority = prio
		return s
	}
	r.observe(run(11, a1, 100), run(12, a2, 100))
	rd := r.ready()
	require.NoError(t, r.s.SetPriority(r.now, root, "etl", 500))
	r.priorityDone(r.cl.Commands(), nil)
	r.observe(run(11, a1, 500), run(12, a2, 500))
	require.Len(t, r.audit, 2)

	r.at(time.Second)
	r.runAll(rd)
	r.at(time.Second + time.Millisecond) // the pool gives idle slots back
	require.NoError(t, r.s.Tick(r.now))
	r.ready()
	rest := r.sbatch(r.commands(), 13)
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: a1, Job: 11}, {Kind: cmdCancel, Name: a2, Job: 12}}, rest, "each source's allocation once")
	r.observe(jobStatus{ID: 11, Name: a1, State: "CANCELLED"}, jobStatus{ID: 12, Name: a2, State: "CANCELLED"}, pendingJob(13, a3, 100))
	cmds := r.cl.Commands()
	assert.Equal(t, []slurmCommand{{Kind: cmdSetPriority, Name: a3, Job: 13, Priority: 500, Principal: "root"}}, plain(cmds),
		"the sink's allocation gets the accepted priority")
	r.priorityDone(cmds, nil)
	r.observe(run(13, a3, 500))
	require.Len(t, r.audit, 3)
	assert.True(t, r.audit[2].Accepted)

	r.at(2 * time.Second)
	r.runAll(r.ready())
	r.at(2*time.Second + time.Millisecond)
	require.NoError(t, r.s.Tick(r.now))
	rd = r.ready()
	require.Len(t, rd.Ended, 1)
	assert.Equal(t, multijob.Finished, rd.Ended[0].Outcome)
	assert.Equal(t, admission.JobCompleted, r.cl.byName["etl"].State())
	assert.Equal(t, []slurmCommand{{Kind: cmdCancel, Name: a3, Job: 13}}, r.commands(), "once")
	r.observe(jobStatus{ID: 13, Name: a3, State: "CANCELLED"})
	assert.Empty(t, r.cl.Watched())
	assert.False(t, r.cl.Busy())
}

// Of several missing partitions, newCluster names the same one every
// time: the first in name order.
func TestNewClusterNamesTheFirstMissingPartition(t *testing.T) {
	cfg := clusterConfig{Run: "r1", Partitions: map[string]string{"q1": "zeta", "q2": "alpha", "q3": "mid", "q4": "low"}}
	for range 20 {
		_, err := newCluster(cfg, []partition{recordedPartition(t, "low")})
		var ce *ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "Partitions", ce.Field)
		assert.Equal(t, "alpha", ce.Value)
	}
}

// A Ready's deployments still find their slots' allocation after a
// failover released those slots before the runtime applied it: a task
// deployed with them failed meanwhile, its region restarted and its
// slots went back to Slurm. The placements are forgotten at the second
// settle after the release.
func TestClusterDeployPlacementsOutliveTheRelease(t *testing.T) {
	r := newClusterRig(t, clusterConfig{})
	r.submit("x", "", pipelinedJob(t, 2))
	name := "rs-x-r1-j0-a1"
	r.sbatch(r.commands(), 11)
	r.observe(running(11, name, nodeCPUs{"n1", 2}))
	rd := r.ready()
	require.Len(t, rd.Jobs, 1)
	deps := rd.Jobs[0].Deploy
	require.Len(t, deps, 4, "src and sink in two slots")
	var refs []slotRef
	for _, s := range deployedSlots(rd, "x") {
		refs = append(refs, slotRef{Job: "x", Slot: s})
	}
	require.Len(t, refs, 2)

	// The runtime started the first task only; it failed.
	r.at(time.Second)
	require.NoError(t, r.s.TaskRunning(r.now, "x", deps[0].Task, deps[0].Attempt))
	require.NoError(t, r.s.TaskFailed(r.now, "x", deps[0].Task, deps[0].Attempt))
	later := r.ready()
	require.Len(t, later.Jobs, 1)
	require.Len(t, later.Jobs[0].Restarted, 1)
	assert.Len(t, later.Jobs[0].Cancel, 3, "the tasks deployed with it")
	assert.Contains(t, r.commands(), slurmCommand{Kind: cmdCancel, Name: name, Job: 11}, "the slots went back to Slurm")
	for _, ref := range refs {
		_, ok := r.cl.placement("x", ref.Slot)
		assert.False(t, ok, "slot %d released", ref.Slot)
	}

	var places map[slotRef]slotPlacement
	r.input(func(time.Time) { places = r.cl.deployPlacements(refs) })
	for _, ref := range refs {
		assert.Equal(t, slotPlacement{Job: 11, HetGroup: -1, Node: "n1", CPUs: 1}, places[ref], "slot %d: its allocation", ref.Slot)
	}
	r.input(func(time.Time) { places = r.cl.deployPlacements(refs) })
	assert.Len(t, places, len(refs), "still there at the first settle after the release")
	r.input(func(time.Time) { places = r.cl.deployPlacements(refs) })
	assert.Empty(t, places, "forgotten at the second")
}
