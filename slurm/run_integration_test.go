package slurm

// Run against a running slurmctld (scripts/slurm-up.sh): skipped when
// there is none, failed when REGIONSCHED_SLURM=require. Tasks sleep a
// tenth of their durationMs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/slurmtest"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// ms formats a duration as whole milliseconds.
func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

var runSeq atomic.Int64

// runSlurmJobs runs jobs on the cluster with a run id of the test (a
// job named like an earlier one gets its index after its name), checks
// that every allocation is gone afterwards, and returns the outcomes and
// the trace.
func runSlurmJobs(t *testing.T, conf string, cfg RunConfig, graphs ...*topology.JobGraph) ([]JobResult, []runfile.Event) {
	t.Helper()
	res, events := runSlurm(t, conf, cfg, graphs...)
	return res.Jobs, events
}

// runSlurm is runSlurmJobs returning the whole Result.
func runSlurm(t *testing.T, conf string, cfg RunConfig, graphs ...*topology.JobGraph) (Result, []runfile.Event) {
	t.Helper()
	cfg.Client = &ExecClient{Conf: conf}
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
	var jobs []runfile.Job
	seen := map[string]bool{}
	for i, g := range graphs {
		name := g.Name()
		if seen[name] {
			name += "-" + strconv.Itoa(i)
		}
		seen[name] = true
		jobs = append(jobs, runfile.Job{Name: name, Job: g})
	}
	res, err := Run(ctx, cfg, jobs...)
	require.NoError(t, err)
	require.Len(t, res.Jobs, len(jobs))
	slurmtest.NoLiveJobs(t, conf, "rs-")
	return res, events
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
	for _, mode := range exchange.Modes() {
		name := mode.String()
		minimum := region.FromJob(job, mode).MinimumSlots()
		for _, part := range []string{"low", "cpus" + strconv.Itoa(minimum)} {
			t.Run(name+"/"+part, func(t *testing.T) {
				var nodes sync.Map
				outs, events := runSlurmJobs(t, conf, RunConfig{Mode: mode, Partition: part,
					onDeploy: func(_, task string, p slotPlacement) { nodes.Store(task, p.Node) }}, job)
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
				t.Logf("%s on %s: %s, %d allocations", name, part, ms(outs[0].End), len(outs[0].Allocations))
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
			outs, events := runSlurmJobs(t, conf, RunConfig{Mode: tc.mode, Partition: tc.part}, a, b)
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
			t.Logf("two jobs: %s and %s", ms(outs[0].End), ms(outs[1].End))
		})
	}
}

func TestSlurmJobLargerThanThePartitionFailsAtOnce(t *testing.T) {
	conf := slurmtest.Require(t)
	outs, events := runSlurmJobs(t, conf, RunConfig{Mode: exchange.AllPipelined, Partition: "cpus2"}, flip119(t))
	require.Len(t, outs, 1)
	var tl *TooLargeError
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
	outs, _ := runSlurmJobs(t, conf, RunConfig{Mode: exchange.AllPipelined, Partition: "low", Scale: 1,
		onDeploy: func(string, string, slotPlacement) {
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
	var kinds []NoticeKind
	stopped := make(chan struct{})
	res, events := runSlurm(t, conf, RunConfig{Mode: exchange.AllBlocking, Partition: "fault", Scale: 0.3,
		Notify: func(n Notice) {
			mu.Lock()
			kinds = append(kinds, n.Kind)
			mu.Unlock()
			if n.Kind == OutageBegan {
				mu.Lock()
				outages = append(outages, n.Err)
				mu.Unlock()
			}
		},
		onDeploy: func(string, string, slotPlacement) {
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
	outs := res.Jobs
	require.Len(t, outs, 1)
	require.NoError(t, outs[0].Err, "the job finishes after the restart")
	assert.Positive(t, res.Outages, "the poller reported the outage")
	mu.Lock()
	assert.NotEmpty(t, outages, "an outage notice")
	t.Logf("notices: %v", kinds)
	assert.Equal(t, 1, countKind(kinds, OutageBegan), "one notice when it stops answering")
	assert.Equal(t, 1, countKind(kinds, OutageEnded), "one when it is back")
	// Waiting notices may follow: a node whose step ended while
	// slurmctld was down stays completing a while after it is back.
	outageKinds := slices.DeleteFunc(slices.Clone(kinds), func(k NoticeKind) bool { return k == Waiting })
	assert.Equal(t, OutageEnded, outageKinds[len(outageKinds)-1], "the outage ended")
	for _, err := range outages {
		assert.True(t, errors.Is(err, ErrUnreachable), "%v", err)
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

func drainN4(t *testing.T, conf string) {
	t.Helper()
	out, err := slurmtest.Command(conf, "scontrol", "update", "NodeName=n4", "State=DRAIN", "Reason=regionsched-test")
	assert.NoError(t, err, out)
	t.Cleanup(func() {
		out, err := slurmtest.Command(conf, "scontrol", "update", "NodeName=n4", "State=RESUME")
		assert.NoError(t, err, out)
	})
}

func TestSlurmDrainedNodeFailsTheRegion(t *testing.T) {
	conf := slurmtest.Require(t)
	var once sync.Once
	outs, _ := runSlurmJobs(t, conf, RunConfig{Mode: exchange.AllBlocking, Partition: "cpus4", Scale: 1, PartitionEvery: 300 * time.Millisecond,
		onDeploy: func(string, string, slotPlacement) { once.Do(func() { drainN4(t, conf) }) }}, flip119(t))
	require.Len(t, outs, 1)
	var tl *TooLargeError
	require.ErrorAs(t, outs[0].Err, &tl, "a region that can no longer fit fails the job")
	require.NotEmpty(t, tl.Unavailable)
	assert.Contains(t, tl.Unavailable[0], "n4", "names the node")
	assert.Contains(t, tl.Error(), "(out of service: n4 (drain")
	t.Logf("failed after %s: %v", ms(outs[0].End), tl)
}

func TestSlurmWaitShowsThePendingReason(t *testing.T) {
	conf := slurmtest.Require(t)
	// A job of another user holds the one CPU of partition cpus1 for 4 s.
	out, err := slurmtest.Command(conf, "sbatch", "--parsable", "--partition=cpus1", "--ntasks=1", "--job-name=rso-blocker",
		"--output=/dev/null", "--chdir=/", "--wrap=exec sleep 4")
	require.NoError(t, err, out)
	var mu sync.Mutex
	var waits []Notice
	outs, _ := runSlurmJobs(t, conf, RunConfig{Mode: exchange.AllBlocking, Partition: "cpus1", WaitNotice: time.Second, Notify: func(n Notice) {
		if n.Kind == Waiting {
			mu.Lock()
			waits = append(waits, n)
			mu.Unlock()
		}
	}}, flip119(t))
	require.NoError(t, outs[0].Err)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, waits, "a notice of the allocation that waits")
	// Told again whenever the reason changes (the node may be busy
	// completing an earlier test's job for a moment: ReqNodeNotAvail);
	// the blocker's CPU is among the reasons.
	blocked := false
	for _, w := range waits {
		assert.Equal(t, "flip119-example", w.Job)
		assert.Regexp(t, regexp.MustCompile(`^rs-flip119-example-\S+-a\d+$`), w.Wait.Name)
		assert.Positive(t, w.Wait.Job)
		assert.GreaterOrEqual(t, w.Duration, time.Second, "told once it waited WaitNotice")
		assert.NotEmpty(t, w.Wait.Reason)
		blocked = blocked || regexp.MustCompile(`^(Resources|Priority)`).MatchString(w.Wait.Reason)
	}
	assert.True(t, blocked, "a notice says the allocation waits for resources or priority: %+v", waits)
}

// countingRunner counts the squeue runs of an ExecClient.
type countingRunner struct{ squeues atomic.Int64 }

func (c *countingRunner) run(ctx context.Context, env []string, name string, args ...string) ([]byte, []byte, error) {
	if name == "squeue" {
		c.squeues.Add(1)
	}
	return runCommand(ctx, env, name, args...)
}

// runCommand runs a process and returns its standard output and error.
func runCommand(ctx context.Context, env []string, name string, args ...string) ([]byte, []byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.Bytes(), stderr.Bytes(), err
}

func TestSlurmOneQueryPerPollForEveryJob(t *testing.T) {
	conf := slurmtest.Require(t)
	counter := &countingRunner{}
	var pl *poller
	cfg := RunConfig{Mode: exchange.AllBlocking, Partition: "low", Client: &ExecClient{Conf: conf, exec: counter.run},
		Scale: 0.1, IdleTimeout: 200 * time.Millisecond, RunID: fmt.Sprintf("q%dx%d", os.Getpid(), runSeq.Add(1)),
		onStart: func(p *poller) { pl = p }}
	var jobs []runfile.Job
	for i := range 4 {
		jobs = append(jobs, runfile.Job{Name: fmt.Sprintf("j%d", i), Job: flip119(t)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	outs := runJobs(t, ctx, cfg, jobs)
	took := time.Since(start)
	for _, o := range outs {
		require.NoError(t, o.Err)
	}
	require.NotNil(t, pl)
	queries := int64(pl.Queries())
	assert.Equal(t, queries, counter.squeues.Load(), "every squeue is one poll of the whole run")
	assert.LessOrEqual(t, queries, int64(took/(50*time.Millisecond))+2, "at most one poll per PollMin (50 ms) in %s", took)
	t.Logf("4 jobs: %d squeue calls in %s", queries, took)
	slurmtest.NoLiveJobs(t, conf, "rs-")
}

// countKind counts the notices of kind k.
func countKind(kinds []NoticeKind, k NoticeKind) int {
	n := 0
	for _, x := range kinds {
		if x == k {
			n++
		}
	}
	return n
}
