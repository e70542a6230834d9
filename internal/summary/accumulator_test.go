package summary_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

const ms = time.Millisecond

// ev is a trace event of a task of job, in slot slot (runfile.NoSlot for
// a request).
func ev(at int, kind runfile.Kind, job, task string, region, slot, attempt int) runfile.Event {
	return runfile.Event{At: time.Duration(at) * ms, Kind: kind, Job: job, Task: task, Region: region, Slot: slot, Attempt: attempt}
}

// One job on 2 slots: a task runs from 0 to 1000 ms in slot 1, its slot
// is released at 1500 ms (held waiting 500 ms); another runs from 500 to
// 2000 ms in slot 2. Slot time 2 x 2000 ms: work 2500 ms, held 500 ms.
func TestAccumulatorOneJob(t *testing.T) {
	a := summary.NewAccumulator([]string{"etl"}, nil)
	for _, e := range []runfile.Event{
		ev(0, runfile.Request, "", "A#0", 0, runfile.NoSlot, 0),
		ev(0, runfile.Deploy, "", "A#0", 0, 1, 0),
		ev(500, runfile.Request, "", "B#0", 1, runfile.NoSlot, 0),
		ev(500, runfile.Deploy, "", "B#0", 1, 2, 0),
		ev(1000, runfile.Finish, "", "A#0", 0, 1, 0),
		ev(1500, runfile.Release, "", "A#0", 0, 1, 0),
		ev(2000, runfile.Finish, "", "B#0", 1, 2, 0),
		ev(2000, runfile.Release, "", "B#0", 1, 2, 0),
	} {
		a.Event(e)
	}
	f := a.Figures(0, 2, nil)
	assert.Equal(t, 2000*ms, f.Makespan)
	assert.InDelta(t, 2500.0/4000, f.WorkUtilization, 1e-9)
	assert.InDelta(t, 500.0/4000, f.HeldWaiting, 1e-9)
	assert.Zero(t, f.DriverHeld)
	assert.Equal(t, 2, f.Deployments)
	assert.Zero(t, f.Failovers)
	assert.Zero(t, f.RegionRestarts)
	assert.Equal(t, 0*ms, a.FirstDeploy("etl"))
	assert.Equal(t, []summary.Queue{{Name: "root.default", Peak: 2, Share: 3000.0 / 4000}}, f.Queues)

	// A run that ended later than its last event: the figures' time is
	// its end.
	assert.Equal(t, 4000*ms, a.Figures(4000*ms, 2, nil).Makespan)
}

// A failure, its region's restart and a cancel of a task restarted with
// it; a region of two tasks deployed once per attempt; a shared deploy.
func TestAccumulatorRestarts(t *testing.T) {
	a := summary.NewAccumulator([]string{"etl"}, nil)
	for _, e := range []runfile.Event{
		ev(0, runfile.Deploy, "", "A#0", 0, 1, 0),
		ev(0, runfile.Deploy, "", "A#1", 0, 2, 0),
		ev(100, runfile.Fail, "", "A#0", 0, 1, 0),
		ev(100, runfile.Cancel, "", "A#1", 0, 2, 0),
		ev(100, runfile.Release, "", "A#0", 0, 1, 0),
		ev(100, runfile.Release, "", "A#1", 0, 2, 0),
		ev(200, runfile.Deploy, "", "A#0", 0, 3, 1),
		ev(200, runfile.Deploy, "", "A#1", 0, 4, 1),
		ev(300, runfile.Finish, "", "A#0", 0, 3, 1),
		ev(300, runfile.Finish, "", "A#1", 0, 4, 1),
		{At: 300 * ms, Kind: runfile.Deploy, Task: "B#0", Region: 1, Slot: 3, Shared: true},
		ev(400, runfile.Finish, "", "B#0", 1, 3, 0),
		ev(400, runfile.Release, "", "B#0", 1, 3, 0),
		ev(400, runfile.Release, "", "A#1", 0, 4, 1),
		ev(450, runfile.Finish, "", "Z#0", 0, 9, 0), // never deployed: ignored
	} {
		a.Event(e)
	}
	f := a.Figures(0, 4, nil)
	assert.Equal(t, 3, f.Deployments, "region 0 twice, region 1 once")
	assert.Equal(t, 1, f.Shared)
	assert.Equal(t, 1, f.Failovers)
	assert.Equal(t, 1, f.RegionRestarts)
	// work: 2 x 100 (first attempt) + 2 x 100 (second) + 100 (B#0) = 500;
	// held: slot 4 from 300 to 400 = 100; slot time 4 x 450.
	assert.InDelta(t, 500.0/1800, f.WorkUtilization, 1e-9)
	assert.InDelta(t, 100.0/1800, f.HeldWaiting, 1e-9)
}

// Several jobs in queues with capacities, a driver, a reclaim; events of
// a job not of the run are ignored, as are trace events out of order by
// a little (counted at the last event's time).
func TestAccumulatorJobsAndQueues(t *testing.T) {
	a := summary.NewAccumulator([]string{"small", "big"}, map[string]string{"small": "root.t.small", "big": "root.big"})
	for _, e := range []runfile.Event{
		{At: 0, Kind: runfile.Deploy, Job: "small", Task: runfile.DriverTask, Region: runfile.NoRegion, Slot: 1},
		ev(100, runfile.Deploy, "small", "A#0", 0, 2, 0),
		ev(100, runfile.Deploy, "small", "A#1", 0, 3, 0),
		{At: 200 * ms, Kind: runfile.Reclaim, Job: "big", Victim: "small", Slots: 1, Slot: runfile.NoSlot, Region: runfile.NoRegion},
		ev(200, runfile.Cancel, "small", "A#1", 0, 3, 0),
		ev(200, runfile.Release, "small", "A#1", 0, 3, 0),
		ev(200, runfile.Deploy, "big", "X#0", 0, 3, 0), // Kubernetes numbers slots across jobs
		ev(190, runfile.Deploy, "other", "X#0", 0, 7, 0),
		ev(300, runfile.Finish, "big", "X#0", 0, 3, 0),
		ev(300, runfile.Release, "big", "X#0", 0, 3, 0),
		ev(400, runfile.Finish, "small", "A#0", 0, 2, 0),
		ev(400, runfile.Release, "small", "A#0", 0, 2, 0),
		{At: 400 * ms, Kind: runfile.Finish, Job: "small", Task: runfile.DriverTask, Region: runfile.NoRegion, Slot: 1},
		{At: 400 * ms, Kind: runfile.Release, Job: "small", Task: runfile.DriverTask, Region: runfile.NoRegion, Slot: 1},
	} {
		a.Event(e)
	}
	f := a.Figures(0, 4, []admission.QueueConfig{{Name: "root.big", GuaranteedSlots: 2}, {Name: "root.t", MaxSlots: 3}, {Name: "root.idle", GuaranteedSlots: 1}})
	assert.Equal(t, 400*ms, f.Makespan)
	assert.Equal(t, 1, f.Reclaims)
	assert.Equal(t, 1, f.ReclaimedSlots)
	// slot time 1600: driver 400; work: A#0 300 + A#1 100 + X#0 100.
	assert.InDelta(t, 400.0/1600, f.DriverHeld, 1e-9)
	assert.InDelta(t, 500.0/1600, f.WorkUtilization, 1e-9)
	assert.Zero(t, f.HeldWaiting)
	assert.Equal(t, 100*ms, a.FirstDeploy("small"), "a driver is no task")
	assert.Equal(t, 200*ms, a.FirstDeploy("big"))
	assert.Negative(t, a.FirstDeploy("other"), "not a job of the run")
	assert.Equal(t, []summary.Queue{
		{Name: "root.big", Guaranteed: 2, Peak: 1, Share: 100.0 / 1600},
		{Name: "root.idle", Guaranteed: 1},
		{Name: "root.t", Max: 3, Peak: 3, Share: 800.0 / 1600},
		{Name: "root.t.small", Peak: 3, Share: 800.0 / 1600},
	}, f.Queues)
}

// root has a line of its own only when configured with a guarantee or a
// maximum: it holds every slot held.
func TestAccumulatorRootQueue(t *testing.T) {
	for _, root := range []admission.QueueConfig{{Name: "root", MaxSlots: 2}, {Name: "root"}} {
		a := summary.NewAccumulator([]string{"x", "y"}, map[string]string{"x": "root.a", "y": "root.b"})
		for _, e := range []runfile.Event{
			ev(0, runfile.Deploy, "x", "A#0", 0, 0, 0),
			ev(100, runfile.Deploy, "y", "A#0", 0, 1, 0),
			ev(200, runfile.Finish, "x", "A#0", 0, 0, 0),
			ev(200, runfile.Release, "x", "A#0", 0, 0, 0),
			ev(400, runfile.Finish, "y", "A#0", 0, 1, 0),
			ev(400, runfile.Release, "y", "A#0", 0, 1, 0),
		} {
			a.Event(e)
		}
		f := a.Figures(0, 2, []admission.QueueConfig{root})
		want := []summary.Queue{
			{Name: "root", Max: 2, Peak: 2, Share: 500.0 / 800},
			{Name: "root.a", Peak: 1, Share: 200.0 / 800},
			{Name: "root.b", Peak: 1, Share: 300.0 / 800},
		}
		if root.MaxSlots == 0 {
			want = want[1:]
		}
		assert.Equal(t, want, f.Queues, "%+v", root)
	}
}

// A run without slots or events has no shares (no division by zero).
func TestAccumulatorEmpty(t *testing.T) {
	f := summary.NewAccumulator(nil, nil).Figures(0, 0, nil)
	assert.Zero(t, f.Makespan)
	assert.Zero(t, f.WorkUtilization)
	assert.Empty(t, f.Queues)
}

// Fed a simulation's trace events, the accumulator gives the figures the
// simulator gives, where the trace tells them: every job's first deploy,
// the makespan, the deployments, the regions restarted and the reclaims,
// the queues' peaks and, in all-blocking mode (a deployed task makes
// progress until it ends), the shares of slot time. (The restarts differ:
// the tasks of slots reclaimed are cancelled, and a restart here is a
// task's failure.)
func TestAccumulatorAgreesWithTheSimulator(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "scenarios", "tenants")
	data, err := os.ReadFile(filepath.Join(dir, "cluster.json"))
	require.NoError(t, err)
	cf, err := runfile.DecodeCluster(data)
	require.NoError(t, err)
	queues, err := cf.QueueConfigs(admission.FIFO)
	require.NoError(t, err)
	var jobs []runfile.Job
	for _, n := range []string{"small-burst", "big-etl", "big-report"} {
		f, err := os.Open(filepath.Join(dir, n+".json"))
		require.NoError(t, err)
		g, err := topology.Decode(f)
		f.Close()
		require.NoError(t, err)
		jobs = append(jobs, runfile.Job{Name: g.Name(), Job: g})
	}
	jobQueue := map[string]string{}
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i], jobQueue[j.Name] = j.Name, j.Job.Submission().Queue
	}
	a := summary.NewAccumulator(names, jobQueue)
	res, per, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Mode: exchange.AllBlocking, Cluster: cf.Counts(), Queues: queues,
		DefaultPolicy: admission.FIFO, Seed: 1, OnEvent: a.Event})
	require.NoError(t, err)
	f := a.Figures(0, res.Slots, queues)
	assert.Equal(t, res.Makespan, f.Makespan)
	assert.Equal(t, res.RegionsScheduled, f.Deployments)
	assert.Zero(t, f.Failovers, "no task failed")
	assert.Equal(t, 6, res.Failovers, "the simulator counts the slots reclaimed")
	assert.Equal(t, res.RegionRestarts, f.RegionRestarts)
	assert.Equal(t, res.Reclaims, f.Reclaims)
	assert.Equal(t, res.ReclaimedSlots, f.ReclaimedSlots)
	assert.InDelta(t, res.WorkUtilization, f.WorkUtilization, 1e-9)
	assert.InDelta(t, res.HeldWaiting, f.HeldWaiting, 1e-9)
	for _, j := range per {
		assert.Equal(t, j.FirstDeploy, a.FirstDeploy(j.Name), j.Name)
	}
	var want []simulator.QueueStat // the queues a summary lists (the admission's root.default held nothing)
	for _, q := range res.Queues {
		if q.Peak > 0 || q.Guaranteed > 0 || q.Max > 0 {
			want = append(want, q)
		}
	}
	require.Len(t, f.Queues, len(want))
	for i, q := range want {
		assert.Equal(t, summary.Queue{Name: q.Name, Guaranteed: q.Guaranteed, Max: q.Max, Peak: q.Peak, Share: f.Queues[i].Share}, f.Queues[i])
		assert.InDelta(t, q.Share, f.Queues[i].Share, 1e-9, q.Name)
	}
}

// With the cluster's slot ids, a slot taken from a job (revoked: its
// task cancelled, no release traced) and deployed into by another is no
// longer the first job's.
func TestAccumulatorClusterSlotIDs(t *testing.T) {
	events := []runfile.Event{
		ev(0, runfile.Deploy, "low", "A#0", 0, 1, 0),
		ev(100, runfile.Cancel, "low", "A#0", 0, 1, 0),
		ev(100, runfile.Deploy, "high", "B#0", 0, 1, 0),
		ev(200, runfile.Finish, "high", "B#0", 0, 1, 0),
		ev(200, runfile.Release, "high", "B#0", 0, 1, 0),
	}
	run := func(cluster bool) summary.Figures {
		a := summary.NewAccumulator([]string{"low", "high"}, nil)
		if cluster {
			a.ClusterSlotIDs()
		}
		for _, e := range events {
			a.Event(e)
		}
		return a.Figures(0, 1, nil)
	}
	assert.InDelta(t, 1.0, run(true).WorkUtilization, 1e-9)
	assert.Zero(t, run(true).HeldWaiting)
	perJob := run(false) // slot 1 of low is another slot than slot 1 of high
	assert.InDelta(t, 1.0, perJob.WorkUtilization, 1e-9)
	assert.InDelta(t, 0.5, perJob.HeldWaiting, 1e-9, "low's slot held from 100 ms on, never released")
}
