package summary_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/runfile"
)

func TestJobLines(t *testing.T) {
	assert.Equal(t, `job "etl": submitted 2000 ms, first deploy 3000 ms, finished 7000 ms, wait 1000 ms, makespan 5000 ms; finished`,
		summary.JobLine(summary.Job{Name: "etl", Submitted: 2000 * ms, FirstDeploy: 3000 * ms, Finished: 7000 * ms}))
	assert.Equal(t, `job "mine": submitted 0 ms, first deploy 1000 ms, finished -, wait 1000 ms, makespan -; killed at 1500 ms: by bob`,
		summary.JobLine(summary.Job{Name: "mine", FirstDeploy: 1000 * ms, Finished: 1500 * ms, Verdict: runfile.Killed, Reason: "killed: by bob"}))
	assert.Equal(t, `job "s": submitted 100 ms, first deploy -, finished -, wait -, makespan -; never finished (deadlock; stuck starting)`,
		summary.JobLine(summary.Job{Name: "s", Submitted: 100 * ms, FirstDeploy: -1, Finished: -1, Verdict: runfile.Deadlock, State: admission.JobStarting}))
	assert.Equal(t, "never finished (deadlock)", summary.JobOutcome(summary.Job{Verdict: runfile.Deadlock, Finished: -1}))
	assert.Equal(t, "failed", summary.JobOutcome(summary.Job{Verdict: runfile.Failed, Finished: -1}))
}

func TestFigureLines(t *testing.T) {
	assert.Equal(t, "makespan:          19000 ms of real time, until the last event", summary.MakespanLine(19000*ms, summary.RealTime))
	assert.Equal(t, "makespan:          1000 ms of virtual time, until the deadlock", summary.DeadlockMakespanLine(1000*ms, summary.VirtualTime))
	assert.Equal(t, "slot utilization:  90.8% of slot time with work progressing", summary.UtilizationLine(0.9075))
	assert.Equal(t, "held waiting:      0.0% of slot time held by tasks that could not progress", summary.HeldWaitingLine(0))
	assert.Equal(t, "held waiting:      2.5% of slot time held with no task in it", summary.HeldIdleLine(0.025))
	assert.Equal(t, "drivers:           25.0% of slot time held by job drivers", summary.DriversLine(0.25))
	assert.Equal(t, "regions scheduled: 12 deployments of 12 regions (2 into their hybrid producers' slots)", summary.DeployedLine("regions scheduled:", 12, "12 regions", 2))
	assert.Equal(t, "tasks deployed:    1 deployment", summary.DeployedLine("tasks deployed:", 1, "", 0))
	assert.Equal(t, "restarts:          6 (regions restarted: 6)", summary.RestartsLine(6, 6))
	assert.Equal(t, "reclaims:          2 (slots reclaimed: 6, withdrawn before the timeout: 0)", summary.ReclaimsLine(2, 6, 0))
	assert.Equal(t, "queues root.a fifo guaranteed 2 max 4, any other queue priority",
		summary.AdmissionText([]admission.QueueConfig{{Name: "root.a", GuaranteedSlots: 2, MaxSlots: 4}}, admission.Priority))
	assert.Equal(t, "queue policy fairshare", summary.AdmissionText(nil, admission.FairShare))
}

func TestPrintQueues(t *testing.T) {
	var b strings.Builder
	summary.PrintQueues(&b, []summary.Queue{{Name: "root.default", Peak: 4, Share: 0.5}})
	assert.Empty(t, b.String(), "one queue without capacities: not tenants")
	summary.PrintQueues(&b, []summary.Queue{{Name: "root.a", Peak: 2, Share: 0.25}, {Name: "root.b", Peak: 1, Share: 0.125}, {Name: "root.c"}})
	assert.Equal(t, "queue root.a: guaranteed 0, max unlimited, peak 2 slots, 25.0% of slot time\nqueue root.b: guaranteed 0, max unlimited, peak 1 slot, 12.5% of slot time\n", b.String())
	b.Reset()
	summary.PrintQueues(&b, []summary.Queue{{Name: "root.p", Max: 3, Peak: 2, Share: 0.5}, {Name: "root.p.x", Peak: 2, Share: 0.5}})
	assert.Equal(t, "queue root.p: guaranteed 0, max 3, peak 2 slots, 50.0% of slot time\nqueue root.p.x: guaranteed 0, max unlimited, peak 2 slots, 50.0% of slot time\n", b.String())
}

func TestVerdicts(t *testing.T) {
	done := summary.Job{Name: "a", Finished: 1000 * ms}
	line, ok := summary.JobsVerdict([]summary.Job{done, {Name: "b", Finished: 3000 * ms}}, "")
	assert.True(t, ok)
	assert.Equal(t, "finished: all 2 jobs finished at 3000 ms", line)
	line, ok = summary.JobsVerdict([]summary.Job{done}, "")
	assert.True(t, ok)
	assert.Equal(t, "finished: the only job finished at 1000 ms", line)
	line, ok = summary.JobsVerdict([]summary.Job{done, {Name: "mine", Finished: 1500 * ms, Verdict: runfile.Killed, Reason: "killed: by bob"}}, "")
	assert.True(t, ok, "a killed job ended as asked")
	assert.Equal(t, "finished: 1 of 2 jobs finished at 1000 ms, mine killed at 1500 ms", line)
	line, ok = summary.JobsVerdict([]summary.Job{done, {Name: "etl", Finished: 300 * ms, Verdict: runfile.Failed, Reason: "failed: region 3 failed"}}, "")
	assert.False(t, ok)
	assert.Equal(t, "failed: 1 of 2 jobs: etl failed: region 3 failed", line)
	line, ok = summary.JobsVerdict([]summary.Job{done, {Name: "s", Finished: -1, Verdict: runfile.Deadlock}}, "deadlock: at 5 ms job s never finishes: ...")
	assert.False(t, ok)
	assert.Equal(t, "deadlock: at 5 ms job s never finishes: ...", line)
	// A deadlock does not hide a job that was rejected (or failed) before it.
	big := summary.Job{Name: "big", Finished: 0, Verdict: runfile.Failed, Reason: "rejected: its gang of 3 slots can never be reserved"}
	line, ok = summary.JobsVerdict([]summary.Job{big, done, {Name: "s", Finished: -1, Verdict: runfile.Deadlock}}, "deadlock: at 5 ms job s never finishes: ...")
	assert.False(t, ok)
	assert.Equal(t, "deadlock: at 5 ms job s never finishes: ...; failed: 1 of 3 jobs: big rejected: its gang of 3 slots can never be reserved", line)

	line, ok = summary.JobVerdict(summary.Job{Finished: 4000 * ms}, 12, "")
	assert.True(t, ok)
	assert.Equal(t, "finished: all 12 tasks finished at 4000 ms", line)
	line, ok = summary.JobVerdict(summary.Job{Finished: 40 * ms, Verdict: runfile.Failed, Reason: "failed: region 0 needs 4 slots"}, 12, "")
	assert.False(t, ok)
	assert.Equal(t, "failed: region 0 needs 4 slots", line)
}
