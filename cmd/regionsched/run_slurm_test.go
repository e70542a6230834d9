package main

// regionsched run --slurm against a running slurmctld
// (scripts/slurm-up.sh): skipped when there is none, failed when
// REGIONSCHED_SLURM=require. Tasks sleep a tenth of their durationMs.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/regionsched/regionsched/admission/slurm"
	"github.com/regionsched/regionsched/admission/slurm/slurmtest"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

var runSeq atomic.Int64

// runSlurmJobs runs jobs on the cluster with a run id of the test (a
// job named like an earlier one gets its index after its name), checks
// that every allocation is gone afterwards, and returns the outcomes and
// the trace.
func runSlurmJobs(t *testing.T, conf string, cfg slurmRunConfig, graphs ...*topology.JobGraph) ([]slurmOutcome, []runfile.Event) {
	t.Helper()
	cfg.Client = &slurm.ExecClient{Conf: conf}
	cfg.RunID = fmt.Sprintf("t%dx%d", os.Getpid(), runSeq.Add(1))
	if cfg.Scale == 0 {
		cfg.Scale = 0.1
	}
	cfg.IdleTimeout = 200 * time.Millisecond
	cfg.Logger = zaptest.NewLogger(t, zaptest.Level(zap.DebugLevel))
	var mu sync.Mutex
	var events []runfile.Event
	cfg.Trace = func(e runfile.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var jobs []slurmJob
	seen := map[string]bool{}
	for i, g := range graphs {
		name := g.Name()
		if seen[name] {
			name += "-" + strconv.Itoa(i)
		}
		seen[name] = true
		jobs = append(jobs, slurmJob{Name: name, Job: g})
	}
	outs := runOnSlurm(ctx, cfg, jobs)
	slurmtest.NoLiveJobs(t, conf, "rs-")
	return outs, events
}

// finishedEvery checks that every task of the job finished (its last
// attempt) and that no slot held two tasks of different regions at once.
func finishedEvery(t *testing.T, job *topology.JobGraph, events []runfile.Event) {
	t.Helper()
	finished := map[string]bool{}
	for _, e := range events {
		if e.Kind == runfile.Finish {
			finished[e.Job+"/"+e.Task] = true
		}
	}
	assert.Len(t, finished, job.NumSubtasks()*len(jobsIn(events)), "every task finished")
}

// jobsIn returns the job names of a trace.
func jobsIn(events []runfile.Event) map[string]bool {
	jobs := map[string]bool{}
	for _, e := range events {
		jobs[e.Job] = true
	}
	return jobs
}

func TestSlurmRunsFLIP119InEveryMode(t *testing.T) {
	conf := slurmtest.Require(t)
	job := flip119(t)
	for _, name := range modeNames {
		mode, err := exchange.ParseMode(name)
		require.NoError(t, err)
		minimum := region.FromJob(job, mode).MinimumSlots()
		for _, part := range []string{"low", "cpus" + strconv.Itoa(minimum)} {
			t.Run(name+"/"+part, func(t *testing.T) {
				var nodes sync.Map
				outs, events := runSlurmJobs(t, conf, slurmRunConfig{Mode: mode, Partition: part,
					OnDeploy: func(_, task string, p slurm.Placement) { nodes.Store(task, p.Node) }}, job)
				require.Len(t, outs, 1)
				require.NoError(t, outs[0].Err, "%s on partition %s", name, part)
				finishedEvery(t, job, events)
				assert.GreaterOrEqual(t, outs[0].Steps, 12)
				if part != "low" {
					nodes.Range(func(_, node any) bool {
						assert.Equal(t, "n4", node, "the partition of %d CPUs is on n4", minimum)
						return true
					})
				}
				t.Logf("%s on %s: %s, %d allocations", name, part, runMillis(outs[0].End), len(outs[0].Allocations))
			})
		}
	}
}

func TestSlurmTwoJobsCompeteWithoutDeadlock(t *testing.T) {
	conf := slurmtest.Require(t)
	for _, tc := range []struct {
		mode exchange.Mode
		part string
	}{
		{exchange.AllPipelined, "cpus4"},           // one region of 4 slots each: one job at a time
		{exchange.PointwisePipelinedOnly, "cpus2"}, // regions of 2 slots
		{exchange.AllBlocking, "low"},
	} {
		t.Run(tc.mode.String()+"/"+tc.part, func(t *testing.T) {
			a, b := flip119(t), flip119(t)
			outs, events := runSlurmJobs(t, conf, slurmRunConfig{Mode: tc.mode, Partition: tc.part}, a, b)
			require.Len(t, outs, 2)
			for _, o := range outs {
				require.NoError(t, o.Err)
			}
			finished := 0
			for _, e := range events {
				if e.Kind == runfile.Finish {
					finished++
				}
			}
			assert.GreaterOrEqual(t, finished, 24)
			t.Logf("two jobs: %s and %s", runMillis(outs[0].End), runMillis(outs[1].End))
		})
	}
}

func TestSlurmJobLargerThanThePartitionFailsAtOnce(t *testing.T) {
	conf := slurmtest.Require(t)
	outs, events := runSlurmJobs(t, conf, slurmRunConfig{Mode: exchange.AllPipelined, Partition: "cpus2"}, flip119(t))
	require.Len(t, outs, 1)
	var tl *slurm.TooLargeError
	require.ErrorAs(t, outs[0].Err, &tl, "the cluster knows the partition and rejects the job")
	assert.Contains(t, tl.Error(), "region 0", "names the region")
	assert.Equal(t, "cpus2", tl.Partition)
	assert.Less(t, outs[0].End, 2*time.Second, "at once")
	for _, e := range events {
		assert.NotEqual(t, runfile.Deploy, e.Kind)
	}
}

func TestSlurmPreemptedRegionsRestart(t *testing.T) {
	conf := slurmtest.Require(t)
	var once sync.Once
	var high string
	outs, _ := runSlurmJobs(t, conf, slurmRunConfig{Mode: exchange.AllPipelined, Partition: "low", Scale: 1,
		OnDeploy: func(string, string, slurm.Placement) {
			once.Do(func() {
				// A job of the high tier that needs the whole cluster.
				out, err := slurmtest.Command(conf, "sbatch", "--parsable", "--partition=high", "--ntasks=16", "--job-name=rso-high",
					"--output=/dev/null", "--chdir=/", "--wrap=exec sleep 1")
				assert.NoError(t, err, out)
				high = strings.TrimSpace(out)
			})
		}}, flip119(t))
	require.Len(t, outs, 1)
	require.NoError(t, outs[0].Err, "the job still finishes")
	assert.NotEmpty(t, high)
	assert.GreaterOrEqual(t, outs[0].Stats.Failovers, 1, "the preempted region failed over")
	assert.GreaterOrEqual(t, outs[0].Stats.RegionRestarts, 1)
	assert.GreaterOrEqual(t, len(outs[0].Allocations), 2, "a new allocation after the preemption")
}

func TestSlurmSurvivesAControllerRestart(t *testing.T) {
	conf := slurmtest.Require(t)
	pidFile := filepath.Join(filepath.Dir(filepath.Dir(conf)), "run", "slurmctld.pid")
	if _, err := os.Stat(pidFile); err != nil {
		slurmtest.Missing(t, "the cluster is not scripts/slurm-up.sh's (no "+pidFile+"): its controller is not ours to stop")
	}
	restart := func() {
		if out, err := exec.Command("slurmctld", "-i", "-f", conf).CombinedOutput(); err != nil {
			t.Errorf("restarting slurmctld: %v: %s", err, out)
		}
	}
	t.Cleanup(func() {
		if _, err := slurmtest.Command(conf, "sinfo", "-h"); err != nil {
			restart()
		}
	})
	// The test has node n5 (partition "fault") to itself: a step that
	// ends while slurmctld is down keeps its node completing for a minute
	// or two. A run shortly before may still hold it.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		out, err := slurmtest.Command(conf, "sinfo", "-h", "-p", "fault", "-o", "%T")
		require.NoError(t, err, out)
		if strings.TrimSpace(out) == "" {
			slurmtest.Missing(t, "the cluster has no partition fault (scripts/slurm-up.sh makes one)")
		}
		if strings.TrimSpace(out) == "idle" {
			break
		}
		require.True(t, time.Now().Before(deadline), "partition fault is %s, not idle, for 3 minutes", strings.TrimSpace(out))
		time.Sleep(time.Second)
	}
	var once sync.Once
	var deploys atomic.Int64
	var outages []error
	var mu sync.Mutex
	var printed bytes.Buffer
	notes := &noticePrinter{w: &printed}
	stopped := make(chan struct{})
	outs, events := runSlurmJobs(t, conf, slurmRunConfig{Mode: exchange.AllBlocking, Partition: "fault", Scale: 0.3,
		Notify: func(n slurm.Notice) {
			notes.print(n)
			if n.Kind == slurm.OutageBegan {
				mu.Lock()
				outages = append(outages, n.Err)
				mu.Unlock()
			}
		},
		OnDeploy: func(string, string, slurm.Placement) {
			if deploys.Add(1) != 3 {
				return
			}
			once.Do(func() {
				go func() {
					defer close(stopped)
					data, err := os.ReadFile(pidFile)
					if !assert.NoError(t, err) {
						return
					}
					pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
					// Stopped as an operator stops it (SIGTERM: it saves its
					// state); SIGKILL loses the jobs submitted since the last
					// save, and Slurm then reuses their ids.
					if !assert.NoError(t, syscall.Kill(pid, syscall.SIGTERM)) {
						return
					}
					for syscall.Kill(pid, 0) == nil {
						time.Sleep(50 * time.Millisecond)
					}
					time.Sleep(5 * time.Second) // the outage
					restart()
				}()
			})
		}}, flip119(t))
	<-stopped
	require.Len(t, outs, 1)
	require.NoError(t, outs[0].Err, "the job finishes after the restart")
	assert.Positive(t, outs[0].Outages, "the poller reported the outage")
	mu.Lock()
	assert.NotEmpty(t, outages, "an outage notice")
	notes.summary()
	text := printed.String()
	t.Logf("printed:\n%s", text)
	assert.Equal(t, 1, strings.Count(text, "slurm: controller unreachable"), "one line when it stops answering")
	assert.Equal(t, 1, strings.Count(text, "controller answering again after"), "one line when it is back")
	assert.Regexp(t, `slurm outages: 1, \d+(\.\d+)?s in all`, text)
	assert.NotContains(t, text, "goroutine", "no stack trace")
	for _, err := range outages {
		assert.True(t, errors.Is(err, slurm.ErrUnreachable), "%v", err)
	}
	mu.Unlock()
	// No slot granted twice: each slot id is deployed into by one task at
	// a time and every task finished.
	finishedEvery(t, flip119(t), events)
	busy := map[int]string{}
	for _, e := range events {
		switch e.Kind {
		case runfile.Deploy:
			assert.Empty(t, busy[e.Slot], "slot %d given to %s while %s runs in it", e.Slot, e.Task, busy[e.Slot])
			busy[e.Slot] = e.Task
		case runfile.Finish, runfile.Fail, runfile.Cancel:
			delete(busy, e.Slot)
		}
	}
}

func TestSlurmRunCommand(t *testing.T) {
	conf := slurmtest.Require(t)
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	if os.Geteuid() != 0 {
		slurmtest.Missing(t, "needs root to submit as nobody (runuser)")
	}
	// The allocations are nobody's (--user nobody); the job runs for about
	// 10 s, so that every change is asked and audited while it runs (a
	// Slurm job's next change waits for the audit of the one before). A
	// job starts at about
	// 4.29e9: nobody may lower its own job's priority (Slurm applies it,
	// though scontrol exits 1: "not persistent"), not raise it; root may.
	events := writeTemp(t, "events.jsonl", `{"t": 100, "event": "set-priority", "job": "flip119-example", "priority": 4294967293, "by": "nobody"}
{"t": 200, "event": "set-priority", "job": "flip119-example", "priority": 100000, "by": "nobody"}
{"t": 600, "event": "set-priority", "job": "flip119-example", "priority": 12345, "by": "root"}
`)
	res := execCLI(t, "", "run", "--slurm", "--slurm-conf", conf, "--user", "nobody", "--mode", "pointwise-pipelined-only", "--duration-scale", "0.5",
		"--trace", trace, "--events", events, "--audit", audit, flip119Path)
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "job flip119-example: finished at")
	assert.Contains(t, res.stdout, "finished: every job")
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	kinds := map[string]int{}
	for _, l := range lines {
		var ev struct {
			T     int64  `json:"t"`
			Event string `json:"event"`
			Task  string `json:"task"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		kinds[ev.Event]++
	}
	assert.Equal(t, 12, kinds["request"])
	assert.Equal(t, 12, kinds["deploy"])
	assert.Equal(t, 12, kinds["finish"])
	assert.Positive(t, kinds["release"])

	data, err = os.ReadFile(audit)
	require.NoError(t, err)
	byWhom := map[string][]auditLine{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var a auditLine
		require.NoError(t, json.Unmarshal([]byte(l), &a), l)
		byWhom[a.By] = append(byWhom[a.By], a)
	}
	var raise, lower int
	for _, a := range byWhom["nobody"] {
		assert.Positive(t, a.SlurmJob)
		switch a.New {
		case 4294967293:
			raise++
			assert.False(t, a.Accepted, "nobody may not raise: %+v", a)
			assert.Contains(t, a.Reason, "permission denied", "%+v", a)
		case 100000:
			lower++
			assert.True(t, a.Accepted, "nobody may lower its own job, whatever scontrol's exit status: %+v", a)
		}
	}
	assert.Positive(t, raise, "audited: %s", data)
	assert.Positive(t, lower, "audited: %s", data)
	require.NotEmpty(t, byWhom["root"], "audited: %s", data)
	applied := 0
	for _, a := range byWhom["root"] {
		assert.Equal(t, int64(12345), a.New)
		if a.Accepted {
			applied++
		} else {
			// An allocation that ended between the poll and scontrol.
			assert.Contains(t, a.Reason, "finished", "root's change is refused only for an allocation gone: %+v", a)
		}
	}
	assert.Positive(t, applied, "root may: %s", data)
	slurmtest.NoLiveJobs(t, conf, "rs-")
}
