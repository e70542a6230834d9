package simulator_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
)

// openRequests pairs the requests of a trace with the deploys and
// withdrawals ending them and returns those still open at the end, by
// job and task.
func openRequests(events []runfile.Event) map[[2]string]runfile.Event {
	open := map[[2]string]runfile.Event{}
	for _, e := range events {
		k := [2]string{e.Job, e.Task}
		switch e.Kind {
		case runfile.Request:
			open[k] = e
		case runfile.Deploy, runfile.Withdraw:
			delete(open, k)
		}
	}
	return open
}

// A job that ends while its tasks wait for slots (killed, at its arrival
// too, or failed on a slot request that timed out) withdraws its open requests when it ends:
// one Withdraw per task, at the end, with the attempt of its request and
// no slot. The other job's requests are untouched, the trace reads back,
// and a run without a trace counts the same trace events.
func TestEndedJobWithdrawsItsRequests(t *testing.T) {
	jobs := func() []runfile.Job {
		return []runfile.Job{
			decodeJob(t, `{"name":"a","priority":5000,"vertices":[{"id":"x","parallelism":1,"durationMs":3000}]}`),
			decodeJob(t, `{"name":"b","priority":1000,"submitAtMs":500,"vertices":[{"id":"y","parallelism":2,"durationMs":1000}]}`),
		}
	}
	queues := []admission.QueueConfig{{Name: "root.default", Policy: admission.Priority}}
	for name, tc := range map[string]struct {
		cfg     simulator.JobsConfig
		at      time.Duration
		verdict runfile.Verdict
	}{
		"killed": {cfg: simulator.JobsConfig{Queues: queues, Users: map[string]admission.Role{"alice": admission.RoleAdmin},
			Events: []runfile.JobEvent{{At: 1500 * time.Millisecond, Action: admission.ActionKill, Job: "b", By: "alice"}}},
			at: 1500 * time.Millisecond, verdict: runfile.Killed},
		"failed on a timeout": {cfg: simulator.JobsConfig{Queues: queues, Timeout: time.Second},
			at: 1500 * time.Millisecond, verdict: runfile.Failed},
		"killed at its arrival": {cfg: simulator.JobsConfig{Queues: queues, Users: map[string]admission.Role{"alice": admission.RoleAdmin},
			Events: []runfile.JobEvent{{At: 500 * time.Millisecond, Action: admission.ActionKill, Job: "b", By: "alice"}}},
			at: 500 * time.Millisecond, verdict: runfile.Killed},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Jobs, cfg.Cluster, cfg.Record = jobs(), slots(1), true
			res, jr, err := simulator.RunJobs(cfg)
			require.NoError(t, err)
			require.Len(t, jr, 2)
			assert.Equal(t, runfile.Finished, jr[0].Verdict)
			require.Equal(t, tc.verdict, jr[1].Verdict, jr[1].Reason)

			withdrawn := only(res.Events, runfile.Withdraw)
			assert.Equal(t, []runfile.Event{
				{At: tc.at, Kind: runfile.Withdraw, Job: "b", Task: "y#0", Region: 0, Slot: runfile.NoSlot},
				{At: tc.at, Kind: runfile.Withdraw, Job: "b", Task: "y#1", Region: 1, Slot: runfile.NoSlot},
			}, withdrawn)
			assert.Empty(t, openRequests(res.Events), "every request ends in a deploy or a withdrawal")
			for _, e := range only(res.Events, runfile.Request) {
				if e.Job == "b" {
					assert.Equal(t, 500*time.Millisecond, e.At)
				}
			}

			var trace bytes.Buffer
			require.NoError(t, runfile.WriteTrace(&trace, res.Events))
			assert.Contains(t, trace.String(), fmt.Sprintf(`{"t": %d, "event": "withdraw", "job": "b", "task": "y#0", "region": 0, "attempt": 0}`+"\n", tc.at.Milliseconds()))
			requireReadBack(t, trace.Bytes(), res.Events)

			cfg.Jobs, cfg.Record = jobs(), false
			quiet, _, err := simulator.RunJobs(cfg)
			require.NoError(t, err)
			assert.Equal(t, res.TraceEvents, quiet.TraceEvents, "the withdrawals count without a trace too")
			assert.Equal(t, len(res.Events), res.TraceEvents)
		})
	}
}

// Jobs that wait for slots and finish withdraw nothing: every request
// ends in a deploy.
func TestFinishedJobsWithdrawNothing(t *testing.T) {
	jobs := []runfile.Job{
		decodeJob(t, `{"name":"a","vertices":[{"id":"x","parallelism":2,"durationMs":1000}]}`),
		decodeJob(t, `{"name":"b","submitAtMs":200,"vertices":[{"id":"y","parallelism":3,"durationMs":1000}]}`),
	}
	res, jr, err := simulator.RunJobs(simulator.JobsConfig{Jobs: jobs, Cluster: slots(1), Record: true})
	require.NoError(t, err)
	for _, j := range jr {
		require.Equal(t, runfile.Finished, j.Verdict, j.Reason)
	}
	assert.Empty(t, only(res.Events, runfile.Withdraw))
	assert.Empty(t, openRequests(res.Events))
}

// A preemption at once (reclaimTimeoutMs 0) of the slot granted at the
// same instant retracts that grant: the job it was granted to waits on
// with its first attempt's request, nothing of it restarts, and no
// reclaim is reported (it never had the slot). Here j1 comes first in the
// fifo order and j3, of higher priority, takes the one slot.
func TestPreemptionOfTheInstantsGrantRetractsIt(t *testing.T) {
	res, jr, err := simulator.RunJobs(simulator.JobsConfig{
		Jobs: []runfile.Job{
			decodeJob(t, `{"name":"j1","vertices":[{"id":"v0","parallelism":1,"durationMs":1000}]}`),
			decodeJob(t, `{"name":"j3","priority":7000,"vertices":[{"id":"v0","parallelism":1,"durationMs":1000}]}`),
		},
		Cluster: slots(1), Record: true,
		Queues: []admission.QueueConfig{{Name: "root.default", Preempt: true}},
	})
	require.NoError(t, err)
	require.Len(t, jr, 2)
	assert.Equal(t, 1000*time.Millisecond, jr[0].FirstDeploy, "j1 runs after j3")
	var at0 []string
	for _, e := range res.Events {
		if e.At == 0 {
			at0 = append(at0, fmt.Sprintf("%s %s %s@%d", e.Kind, e.Job, e.Task, e.Attempt))
		}
	}
	assert.Equal(t, []string{"request j1 v0#0@0", "request j3 v0#0@0", "deploy j3 v0#0@0"}, at0)
	assert.Contains(t, res.Events, runfile.Event{At: time.Second, Kind: runfile.Deploy, Job: "j1", Task: "v0#0", Slot: 0, Attempt: 0},
		"j1's first attempt runs once j3 is done")
	assert.Zero(t, res.Reclaims, "no reclaim: j1 never had the slot")
	assert.Zero(t, res.Failovers, "nothing restarts")
	assert.Empty(t, res.Restarts)
	assert.Empty(t, only(res.Events, runfile.Withdraw, runfile.Cancel))
	assert.Empty(t, openRequests(res.Events))
	assert.Equal(t, len(only(res.Events, runfile.Deploy)), res.RegionsScheduled, "a deployment per deploy event")
}

// The same holds when a claim asked the slot back first: on 5 slots of a
// fairshare queue with a reclaim timeout of 0, j1 (9000) runs two 300 ms
// tasks from 0 and j2 (5000) waits from 100 for a region of 4 slots. At
// 300 j1's tasks end and its next 4 regions ask together with j2: the
// fair order grants j2 its 4 slots first, j1 one, and j1, below its
// share, claims one of j2's and then preempts it at once. That grant is
// retracted too: j2 keeps its first attempt's request and runs at 800
// once j1 is done, no reclaim is reported, nothing restarts.
func TestPreemptionOfAClaimedGrantOfTheInstantRetractsIt(t *testing.T) {
	res, jr, err := simulator.RunJobs(simulator.JobsConfig{
		Jobs: []runfile.Job{
			decodeJob(t, `{"name":"j1","priority":9000,"vertices":[{"id":"v0","parallelism":2,"durationMs":300},{"id":"v1","parallelism":4,"durationMs":500}],
				"edges":[{"source":"v0","target":"v1","shipStrategy":"rescale","exchange":"blocking"}]}`),
			decodeJob(t, `{"name":"j2","priority":5000,"submitAtMs":100,"vertices":[{"id":"v0","parallelism":4,"durationMs":500},{"id":"v1","parallelism":1,"durationMs":100}],
				"edges":[{"source":"v0","target":"v1","shipStrategy":"hash","exchange":"pipelined"}]}`),
		},
		Cluster: slots(5), Record: true,
		Queues: []admission.QueueConfig{{Name: "root.default", Policy: admission.FairShare, Preempt: true}},
	})
	require.NoError(t, err)
	require.Len(t, jr, 2)
	assert.Equal(t, 800*time.Millisecond, jr[0].Finished)
	assert.Equal(t, 800*time.Millisecond, jr[1].FirstDeploy, "j2 runs once j1 is done")
	assert.Equal(t, 1300*time.Millisecond, jr[1].Finished)
	for _, e := range res.Events {
		if e.Job == "j2" && e.Kind == runfile.Deploy {
			assert.Zero(t, e.Attempt, "j2's first attempt runs: %+v", e)
		}
	}
	assert.Zero(t, res.Reclaims, "no reclaim: j2 never had the slot")
	assert.Empty(t, res.Restarts)
	assert.Empty(t, only(res.Events, runfile.Withdraw, runfile.Cancel))
	assert.Empty(t, openRequests(res.Events))
}

// And when a claim of another job, of another queue, asked the slot
// back first: on 5 slots, root.a (fairshare, reclaimTimeoutMs 0) and
// root.b (fairshare, 500 ms); j1 of root.b runs one task 300-600 ms; at
// 500 j3 of root.b (a driver) and j4 (5000) and j5 (1000) of root.a
// arrive, each region one slot. The decision at 500 grants j5 a slot,
// j3's driver claims it across queues, and j4 preempts it at once: j5's
// grant is retracted (j3's claim loses the slot, as it would to a
// revoke). j5 keeps its first attempt's request and runs at 600, when
// j1's slot comes back; nothing restarts, no reclaim is reported.
func TestPreemptionOfASlotAnotherQueueClaimedRetractsItsGrant(t *testing.T) {
	res, jr, err := simulator.RunJobs(simulator.JobsConfig{
		Jobs: []runfile.Job{
			decodeJob(t, `{"name":"j1","submitAtMs":300,"priority":7000,"queue":"root.b","vertices":[{"id":"v0","parallelism":1,"durationMs":300}]}`),
			decodeJob(t, `{"name":"j3","submitAtMs":500,"priority":1000,"queue":"root.b","driver":{"startupMs":200},"vertices":[{"id":"v0","parallelism":2,"durationMs":1500}]}`),
			decodeJob(t, `{"name":"j4","submitAtMs":500,"priority":5000,"queue":"root.a","vertices":[{"id":"v0","parallelism":4,"durationMs":500}]}`),
			decodeJob(t, `{"name":"j5","submitAtMs":500,"priority":1000,"queue":"root.a","vertices":[{"id":"v0","parallelism":1,"durationMs":1500}]}`),
		},
		Cluster: slots(5), Record: true,
		Queues: []admission.QueueConfig{{Name: "root.a", Policy: admission.FairShare, Preempt: true},
			{Name: "root.b", Policy: admission.FairShare, Preempt: true, ReclaimTimeout: 500 * time.Millisecond}},
	})
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	byName := map[string]simulator.JobResult{}
	for _, r := range jr {
		byName[r.Name] = r
	}
	assert.Equal(t, 500*time.Millisecond, byName["j4"].FirstDeploy)
	assert.Equal(t, 600*time.Millisecond, byName["j5"].FirstDeploy)
	assert.Zero(t, res.Reclaims, "no reclaim: j5 never had the slot")
	assert.Empty(t, res.Restarts)
	assert.Empty(t, only(res.Events, runfile.Withdraw, runfile.Cancel))
	assert.Empty(t, openRequests(res.Events))
}

// In a run of one job, a failover that restarts a region waiting for a
// slot withdraws its request before the next attempt asks: B#0 asks at 0
// (its hybrid producer A#0 is deployed; hybrid slot sharing is off, so it
// waits for the one slot), A#0 fails at 500 and restarts both regions.
// The trace withdraws attempt 0 of B#0 at 500 before the Ready's
// requests, no request is left open, and a run without a trace counts
// the same trace events.
func TestFailoverWithdrawsTheRestartedRegionsRequest(t *testing.T) {
	job := decodeJob(t, `{"name":"w","vertices":[{"id":"A","parallelism":1},{"id":"B","parallelism":1}],
		"edges":[{"source":"A","target":"B","shipStrategy":"forward","exchange":"hybrid-full"}]}`)
	rs := region.FromJob(job.Job, exchange.AllBlocking)
	a0, err := rs.Topology().ParseVertexName("A#0")
	require.NoError(t, err)
	cfg := simulator.Config{Regions: rs, Cluster: slots(1), Seed: 1, Record: true, DisableHybridSlotSharing: true,
		Failures: []simulator.Failure{{Task: a0, After: 500 * time.Millisecond}}}
	res := run(t, cfg)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	requireTrace(t, rs, slots(1), simulator.RegionPolicy, res)

	var at500 []string
	for _, e := range res.Events {
		if e.At == 500*time.Millisecond {
			at500 = append(at500, fmt.Sprintf("%s %s@%d", e.Kind, e.Task, e.Attempt))
		}
	}
	assert.Equal(t, []string{
		"fail A#0@0", "release A#0@0",
		"withdraw B#0@0", "request A#0@1", "deploy A#0@1", "request B#0@1",
	}, at500)
	assert.Empty(t, openRequests(res.Events), "every request ends in a deploy or a withdrawal")

	var trace bytes.Buffer
	require.NoError(t, runfile.WriteTrace(&trace, res.Events))
	assert.Contains(t, trace.String(), `{"t": 500, "event": "withdraw", "task": "B#0", "region": 1, "attempt": 0}`+"\n")
	requireReadBack(t, trace.Bytes(), res.Events)

	cfg.Record = false
	quiet := run(t, cfg)
	assert.Equal(t, res.TraceEvents, quiet.TraceEvents, "the withdrawal counts without a trace too")
	assert.Equal(t, len(res.Events), res.TraceEvents)
}

// A failover withdraws the requests of the regions it restarts at once,
// not when their next attempts ask: v2#1 (a region of its own, reading
// v0 over a blocking edge) waits for a slot from 300 ms; v1#0 fails at
// 1000 ms and restarts v0's region and both of v2's, and slot 0 is free
// until v0 has run again at 1300 ms. The trace withdraws v2#1's attempt
// 0 at 1000 ms, after the failover's cancels and releases, so no request
// of it waits beside the free slot; attempt 1 asks at 1300 ms and runs
// once v2#0 is done.
func TestFailoverWithdrawsAWaitingRequestAtOnce(t *testing.T) {
	job := decodeJob(t, `{"name":"s","vertices":[{"id":"v0","parallelism":1,"durationMs":300},
		{"id":"v1","parallelism":1,"durationMs":3000},{"id":"v2","parallelism":2,"durationMs":1500}],
		"edges":[{"source":"v0","target":"v1","shipStrategy":"forward","exchange":"pipelined"},
		{"source":"v0","target":"v2","shipStrategy":"rebalance","exchange":"blocking"}]}`)
	rs := region.FromJob(job.Job, exchange.AllBlocking)
	v1, err := rs.Topology().ParseVertexName("v1#0")
	require.NoError(t, err)
	cfg := simulator.Config{Regions: rs, Cluster: slots(2), Seed: 1, Record: true,
		Failures: []simulator.Failure{{Task: v1, After: time.Second}}}
	res := run(t, cfg)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	requireTrace(t, rs, slots(2), simulator.RegionPolicy, res)

	var v21 []string
	for _, e := range res.Events {
		if e.Task == "v2#1" && (e.Kind == runfile.Request || e.Kind == runfile.Withdraw || e.Kind == runfile.Deploy) {
			v21 = append(v21, fmt.Sprintf("%s@%d %v", e.Kind, e.Attempt, e.At))
		}
	}
	assert.Equal(t, []string{"request@0 300ms", "withdraw@0 1s", "request@1 1.3s", "deploy@1 2.8s"}, v21)
	var at1000 []string
	for _, e := range res.Events {
		if e.At == time.Second {
			at1000 = append(at1000, fmt.Sprintf("%s %s@%d", e.Kind, e.Task, e.Attempt))
		}
	}
	assert.Equal(t, []string{
		"fail v1#0@0", "release v1#0@0", "cancel v2#0@0", "release v2#0@0",
		"withdraw v2#1@0", "request v0#0@1", "request v1#0@1", "deploy v0#0@1", "deploy v1#0@1",
	}, at1000)
	assert.Empty(t, openRequests(res.Events))

	cfg.Record = false
	quiet := run(t, cfg)
	assert.Equal(t, res.TraceEvents, quiet.TraceEvents, "the withdrawal counts without a trace too")
}

// In a run of several jobs, every input of an instant is applied before
// its Ready: a region may ask and restart within one Ready. Its request
// is withdrawn at once, not when its next attempt asks. Here low's v0
// ends at 500 ms, so its v2 regions (reading v0 over a blocking edge) ask
// for slots; high arrives then and preempts v1, which runs beside v0 in
// its region: the region restarts, and with it the v2 regions, whose
// input is to be written again. Their requests end at 500 ms, and they
// ask again at 2000 ms.
func TestRestartInTheInstantOfTheRequestWithdrawsIt(t *testing.T) {
	cfg := simulator.JobsConfig{
		Jobs: []runfile.Job{
			decodeJob(t, `{"name":"low","priority":3000,"vertices":[{"id":"v0","parallelism":2,"durationMs":500},
				{"id":"v1","parallelism":1,"durationMs":1000},{"id":"v2","parallelism":3,"durationMs":300}],
				"edges":[{"source":"v0","target":"v1","shipStrategy":"rescale","exchange":"pipelined"},
				{"source":"v0","target":"v2","shipStrategy":"hash"}]}`),
			decodeJob(t, `{"name":"high","priority":7000,"submitAtMs":500,"vertices":[{"id":"v0","parallelism":3,"durationMs":1000}]}`),
		},
		Cluster: slots(3), Record: true,
		Queues: []admission.QueueConfig{{Name: "root.default", Policy: admission.Priority, Preempt: true}},
	}
	res, _, err := simulator.RunJobs(cfg)
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	var v20 []string
	for _, e := range res.Events {
		if e.Job == "low" && e.Task == "v2#0" && (e.Kind == runfile.Request || e.Kind == runfile.Withdraw || e.Kind == runfile.Deploy) {
			v20 = append(v20, fmt.Sprintf("%s@%d %v", e.Kind, e.Attempt, e.At))
		}
	}
	assert.Equal(t, []string{"request@0 500ms", "withdraw@0 500ms", "request@1 2s", "deploy@1 2s"}, v20)
	assert.Empty(t, openRequests(res.Events))

	cfg.Record = false
	quiet, _, err := simulator.RunJobs(cfg)
	require.NoError(t, err)
	assert.Equal(t, res.TraceEvents, quiet.TraceEvents, "the withdrawals count without a trace too")
}

// A reclaim takes the free slots a lower-priority job's claim keeps
// before it cancels a task. On 7 slots of a fifo queue with a reclaim
// timeout of 0: j4 (3000) runs a pipelined region of two tasks from 0;
// j2 (1000) starts its driver at 100 and from 1100 waits for a region of
// 5 slots, which the free slots and j1's claim-asked slot would make;
// j1 (3000) runs one 10 s task from 500; j3 (9000) starts its driver at
// 500 and from 1500 needs one slot. j3 takes one of the slots j2's claim
// keeps free: nothing is cancelled, nothing restarts, j4 ends at 3000.
func TestReclaimTakesALowerClaimsFreeSlotFirst(t *testing.T) {
	res, jr, err := simulator.RunJobs(simulator.JobsConfig{
		Jobs: []runfile.Job{
			decodeJob(t, `{"name":"j1","submitAtMs":500,"priority":3000,"vertices":[{"id":"v0","parallelism":1,"durationMs":10000}]}`),
			decodeJob(t, `{"name":"j2","submitAtMs":100,"priority":1000,"driver":{"startupMs":1000},
				"vertices":[{"id":"v0","parallelism":4,"durationMs":3000},{"id":"v1","parallelism":1,"durationMs":1500},{"id":"v2","parallelism":1,"durationMs":500}],
				"edges":[{"source":"v0","target":"v1","shipStrategy":"hash"},{"source":"v0","target":"v2","shipStrategy":"hash","exchange":"pipelined"}]}`),
			decodeJob(t, `{"name":"j3","submitAtMs":500,"priority":9000,"driver":{"startupMs":1000},"vertices":[{"id":"v0","parallelism":1,"durationMs":1500}]}`),
			decodeJob(t, `{"name":"j4","priority":3000,"vertices":[{"id":"v0","parallelism":1,"durationMs":500},{"id":"v1","parallelism":1,"durationMs":3000}],
				"edges":[{"source":"v0","target":"v1","shipStrategy":"rebalance","exchange":"pipelined"}]}`),
		},
		Cluster: slots(7), Record: true,
		Queues: []admission.QueueConfig{{Name: "root.default", Preempt: true}},
	})
	require.NoError(t, err)
	require.Len(t, jr, 4)
	byName := map[string]simulator.JobResult{}
	for _, r := range jr {
		byName[r.Name] = r
	}
	assert.Equal(t, 3000*time.Millisecond, byName["j4"].Finished, "j4 runs on")
	assert.Equal(t, 1500*time.Millisecond, byName["j3"].FirstDeploy, "j3 runs at once")
	assert.Zero(t, res.Reclaims, "nothing reclaimed from a running task")
	assert.Empty(t, res.Restarts)
	assert.Empty(t, only(res.Events, runfile.Cancel))
	assert.Empty(t, openRequests(res.Events))
}
