package simulator_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// floodJobs loads the four jobs with drivers of examples/jobs/flood.
func floodJobs(t *testing.T) []runfile.Job {
	t.Helper()
	paths, err := filepath.Glob("../examples/jobs/flood/spark-*.json")
	require.NoError(t, err)
	require.Len(t, paths, 4)
	var jobs []runfile.Job
	for _, p := range paths {
		f, err := os.Open(p)
		require.NoError(t, err)
		g, err := topology.Decode(f)
		require.NoError(t, f.Close())
		require.NoError(t, err)
		jobs = append(jobs, runfile.Job{Name: g.Name(), Job: g})
	}
	return jobs
}

// TestDriverFlood: four jobs with drivers on a cluster that fits one
// driver plus one region. fifo deadlocks with every slot held by a
// driver; stateaware and maxRunningJobs 1 finish all four.
func TestDriverFlood(t *testing.T) {
	run := func(queue admission.QueueConfig) (*simulator.Result, []simulator.JobResult) {
		res, jobs, err := simulator.RunJobs(simulator.JobsConfig{Jobs: floodJobs(t), Mode: exchange.AllBlocking,
			Cluster: []resource.Count{{Profile: resource.Unknown, N: 4}}, Queues: []admission.QueueConfig{queue}, Record: true})
		require.NoError(t, err)
		return res, jobs
	}
	res, jobs := run(admission.QueueConfig{Name: "root.default", Policy: admission.FIFO})
	assert.Equal(t, runfile.Deadlock, res.Verdict, res.Reason)
	assert.Contains(t, res.Reason, "deadlock: ")
	assert.Contains(t, res.Reason, "spark-1:driver, spark-2:driver, spark-3:driver, spark-4:driver hold slots while waiting")
	for _, j := range jobs {
		assert.Equal(t, runfile.Deadlock, j.Verdict, j.Name)
	}

	for _, q := range []admission.QueueConfig{
		{Name: "root.default", Policy: admission.StateAware},
		{Name: "root.default", Policy: admission.FIFO, MaxRunningJobs: 1},
	} {
		res, jobs := run(q)
		require.Equal(t, runfile.Finished, res.Verdict, "%+v: %s", q, res.Reason)
		for _, j := range jobs {
			assert.Equal(t, runfile.Finished, j.Verdict, j.Name)
			assert.Equal(t, admission.JobCompleted, j.State, j.Name)
		}
		// Never two jobs starting at once: a driver is deployed only once
		// the previous job's first region was.
		var driverAt, firstRegionAt []int64
		seen := map[string]bool{}
		for _, ev := range res.Events {
			if ev.Kind != runfile.Deploy {
				continue
			}
			if ev.Task == "driver" {
				driverAt = append(driverAt, ev.At.Milliseconds())
			} else if !seen[ev.Job] {
				seen[ev.Job] = true
				firstRegionAt = append(firstRegionAt, ev.At.Milliseconds())
			}
		}
		require.Len(t, driverAt, 4)
		require.Len(t, firstRegionAt, 4)
		for i := 1; i < 4; i++ {
			assert.GreaterOrEqual(t, driverAt[i], firstRegionAt[i-1], "%+v: driver %d before job %d's first region", q, i, i-1)
		}
	}
}

// bigRegionJob is A(p) -hash, pipelined-> B(p) -forward, blocking-> C(p):
// its first region needs p slots at once.
func bigRegionJob(t *testing.T, name string, p int, sub topology.Submission) runfile.Job {
	t.Helper()
	g, err := topology.NewBuilder(name).
		AddVertex(topology.JobVertex{ID: "A", Parallelism: p}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: p, Duration: 1500 * time.Millisecond}).
		AddVertex(topology.JobVertex{ID: "C", Parallelism: p, Duration: 500 * time.Millisecond}).
		ConnectPinned("A", "B", exchange.Hash, exchange.PipelinedBounded).
		ConnectPinned("B", "C", exchange.Forward, exchange.Blocking).
		SetSubmission(sub).
		Build()
	require.NoError(t, err)
	return runfile.Job{Name: name, Job: g}
}

// TestRegionsNeedingMostOfTheCluster: three jobs whose first regions need
// 7 of 10 slots. Behind the admission every job finishes for every seed;
// the eager baseline, every task of every job asking for its own slot,
// deadlocks for some seeds.
func TestRegionsNeedingMostOfTheCluster(t *testing.T) {
	var jobs []runfile.Job
	for _, n := range []string{"x", "y", "z"} {
		jobs = append(jobs, bigRegionJob(t, n, 7, topology.DefaultSubmission()))
	}
	cluster := []resource.Count{{Profile: resource.Unknown, N: 10}}
	eagerDeadlocks := 0
	for seed := uint64(1); seed <= 30; seed++ {
		res, per, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Mode: exchange.AllBlocking, Cluster: cluster, Seed: seed, Ties: tiesFor(seed)})
		require.NoError(t, err)
		require.Equal(t, runfile.Finished, res.Verdict, "seed %d: %s", seed, res.Reason)
		for _, j := range per {
			assert.Equal(t, runfile.Finished, j.Verdict, "seed %d job %s", seed, j.Name)
			assert.GreaterOrEqual(t, j.FirstDeploy, j.Submitted)
			assert.Greater(t, j.Finished, j.FirstDeploy)
		}
		eager, _, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Mode: exchange.AllBlocking, Cluster: cluster, Seed: seed, Ties: tiesFor(seed),
			Policy: simulator.EagerPolicy})
		require.NoError(t, err)
		if eager.Verdict == runfile.Deadlock {
			eagerDeadlocks++
			assert.Contains(t, eager.Reason, "deadlock: ", "seed %d", seed)
		}
	}
	assert.Positive(t, eagerDeadlocks, "the eager baseline deadlocks for some seeds")
	t.Logf("eager deadlocked for %d of 30 seeds", eagerDeadlocks)
}

// TestPriorityGoesFirst: on one slot, of two jobs submitted at the same
// time the one of higher priority runs first under the priority policy;
// under fifo jobs submitted at the same instant go by name, never by the
// order the inputs came in ("high" before "low", though "low" is listed
// first).
func TestPriorityGoesFirst(t *testing.T) {
	low, high := topology.DefaultSubmission(), topology.DefaultSubmission()
	low.Priority, high.Priority = 100, 9000
	jobs := []runfile.Job{bigRegionJob(t, "low", 1, low), bigRegionJob(t, "high", 1, high)}
	for _, tc := range []struct {
		policy admission.Policy
		first  string
	}{{admission.Priority, "high"}, {admission.FIFO, "high"}, {admission.FairShare, "high"}} {
		res, per, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Mode: exchange.AllBlocking,
			Cluster: []resource.Count{{Profile: resource.Unknown, N: 1}}, DefaultPolicy: tc.policy})
		require.NoError(t, err)
		require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
		byName := map[string]simulator.JobResult{}
		for _, j := range per {
			byName[j.Name] = j
		}
		other := "low"
		if tc.first == "low" {
			other = "high"
		}
		assert.Zero(t, byName[tc.first].Wait(), "%v: %s starts at once", tc.policy, tc.first)
		assert.Less(t, byName[tc.first].FirstDeploy, byName[other].FirstDeploy, "%v", tc.policy)
	}
}

// TestFreedSlotsGoBackToTheAdmission: under fairshare a job of priority
// 1000 holds all 4 slots when one of priority 3000 arrives (100 ms); when
// the first job's tasks end (1000 ms) the slots go back to the admission,
// which gives them to the job below its share, not to the first job's
// own next tasks; from then on the shares are 1 + 3.
func TestFreedSlotsGoBackToTheAdmission(t *testing.T) {
	job := func(name string, prio int, at time.Duration) runfile.Job {
		sub := topology.DefaultSubmission()
		sub.Priority, sub.SubmitAt = prio, at
		g, err := topology.NewBuilder(name).
			AddVertex(topology.JobVertex{ID: "A", Parallelism: 8, Duration: time.Second}).
			SetSubmission(sub).
			Build()
		require.NoError(t, err)
		return runfile.Job{Name: name, Job: g}
	}
	res, _, err := simulator.RunJobs(simulator.JobsConfig{Jobs: []runfile.Job{job("p1", 1000, 0), job("p3", 3000, 100*time.Millisecond)},
		Mode: exchange.AllBlocking, Cluster: slots(4), DefaultPolicy: admission.FairShare, Record: true})
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	deploys := map[time.Duration]map[string]int{}
	for _, ev := range res.Events {
		if ev.Kind == runfile.Deploy {
			if deploys[ev.At] == nil {
				deploys[ev.At] = map[string]int{}
			}
			deploys[ev.At][ev.Job]++
		}
	}
	assert.Equal(t, map[string]int{"p1": 4}, deploys[0])
	// p1 held all four, above its share of one: of its four freed slots
	// three go to p3 (its share) and one back to p1, from 1 s on.
	assert.Equal(t, map[string]int{"p1": 1, "p3": 3}, deploys[time.Second], "p1 is above its share: its freed slots go to p3 first")
	assert.Equal(t, map[string]int{"p1": 1, "p3": 3}, deploys[2*time.Second])
}

// TestQueuesAreNotServedByName: a job's priority counts only within its
// queue, and across queues the fair order of sibling queues decides, not
// their names. On 2 slots a fair-share queue keeps two 1000-priority jobs
// busy with tasks of 100 ms; a job of one slot arrives at 50 ms alone in
// a queue of its own. Whether that queue is root.urgent (after
// root.shared by name) or root.aaa (before it), it gets the first freed
// slot, at 100 ms: root.shared holds more than it.
func TestQueuesAreNotServedByName(t *testing.T) {
	job := func(name, queue string, prio, tasks int, at time.Duration) runfile.Job {
		sub := topology.DefaultSubmission()
		sub.Queue, sub.Priority, sub.SubmitAt = queue, prio, at
		g, err := topology.NewBuilder(name).
			AddVertex(topology.JobVertex{ID: "A", Parallelism: tasks, Duration: 100 * time.Millisecond}).
			SetSubmission(sub).
			Build()
		require.NoError(t, err)
		return runfile.Job{Name: name, Job: g}
	}
	firstDeploy := func(urgentQueue string) time.Duration {
		jobs := []runfile.Job{job("busy-1", "root.shared", 1000, 10, 0), job("busy-2", "root.shared", 1000, 10, 0),
			job("urgent", urgentQueue, 9000, 1, 50*time.Millisecond)}
		queues := []admission.QueueConfig{{Name: "root.shared", Policy: admission.FairShare}, {Name: urgentQueue, Policy: admission.Priority}}
		res, per, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Mode: exchange.AllBlocking,
			Cluster: slots(2), Queues: queues, DefaultPolicy: admission.FIFO})
		require.NoError(t, err)
		require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
		for _, j := range per {
			if j.Name == "urgent" {
				return j.FirstDeploy
			}
		}
		t.Fatal("no result for the urgent job")
		return 0
	}
	assert.Equal(t, 100*time.Millisecond, firstDeploy("root.aaa"), "a queue first by name takes the first freed slot")
	assert.Equal(t, 100*time.Millisecond, firstDeploy("root.urgent"), "a queue last by name too: root.shared holds more")
}

// A job that finishes ends with its last task, an input of the instant:
// its driver's finish and release come before the events of the decision
// over that instant. On 3 slots of a fifo queue with a reclaim timeout
// of 0, a (driver and one 1 s task) and low (one 5 s task) run from 0;
// high (9000) arrives at 1000 for a region of 3 slots, as a finishes: it
// takes a's two slots and reclaims low's.
func TestFinishedJobsDriverLeavesBeforeTheDecision(t *testing.T) {
	res, _, err := simulator.RunJobs(simulator.JobsConfig{
		Jobs: []runfile.Job{
			decodeJob(t, `{"name":"a","driver":{"startupMs":0},"vertices":[{"id":"v","parallelism":1,"durationMs":1000}]}`),
			decodeJob(t, `{"name":"low","priority":1000,"vertices":[{"id":"v","parallelism":1,"durationMs":5000}]}`),
			decodeJob(t, `{"name":"high","priority":9000,"submitAtMs":1000,"vertices":[{"id":"v","parallelism":3,"durationMs":1000}]}`),
		},
		Cluster: slots(3), Record: true,
		Queues: []admission.QueueConfig{{Name: "root.default", Preempt: true}},
	})
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	var at1000 []string
	for _, e := range res.Events {
		if e.At == time.Second && e.Kind != runfile.Request {
			at1000 = append(at1000, e.Kind.String()+" "+e.Job+" "+e.Task)
		}
	}
	require.GreaterOrEqual(t, len(at1000), 6, "%v", at1000)
	assert.Equal(t, []string{"finish a v#0", "release a v#0", "finish a driver", "release a driver", "reclaim high ", "cancel low v#0"}, at1000[:6])
}

// A driver with no startup time starts its job at the instant of its
// grant, and the admission decides the job's first region with the rest
// of that instant: on 2 slots of a priority queue that reclaims at once,
// high's driver and region take both, and low (arrived with it) waits
// for high to end instead of deploying and being reclaimed at once.
func TestDriverUpAtOnceDecidedWithItsFirstRegion(t *testing.T) {
	res, jobs, err := simulator.RunJobs(simulator.JobsConfig{
		Jobs: []runfile.Job{
			decodeJob(t, `{"name":"high","priority":9000,"driver":{"startupMs":0},"vertices":[{"id":"v","parallelism":1,"durationMs":100}]}`),
			decodeJob(t, `{"name":"low","priority":1000,"vertices":[{"id":"v","parallelism":1,"durationMs":100}]}`),
		},
		Cluster: slots(2), Record: true,
		Queues: []admission.QueueConfig{{Name: "root.default", Policy: admission.Priority, Preempt: true}},
	})
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	for _, e := range res.Events {
		assert.True(t, e.Kind != runfile.Reclaim && e.Kind != runfile.Cancel, "%+v", e)
	}
	require.Len(t, jobs, 2)
	assert.Equal(t, 100*time.Millisecond, jobs[1].FirstDeploy, "low waits for high")
	assert.Zero(t, res.RegionRestarts)
}
