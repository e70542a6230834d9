package kubernetes

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// jobOf decodes a job file.
func jobOf(t *testing.T, name, text string) runfile.Job {
	t.Helper()
	g, err := topology.DecodeBytes([]byte(text))
	require.NoError(t, err)
	return runfile.Job{Name: name, Job: g}
}

// TestRunJobs runs two jobs on four fake one-slot nodes, the test playing
// KWOK on the mock clock: FLIP-119's job finishes; a job submitted at
// 300 ms is killed at 600 ms by an admin, after a priority change the
// admission refuses (its asker has no role); the trace names each job,
// the audit has the change, and no pod is left.
func TestRunJobs(t *testing.T) {
	c := watchedClientset()
	kwokNodes(t, c, "k1", "k2", "k3", "k4")
	c.PrependReactor("create", "pods", bindReactor(c))
	data, err := os.ReadFile("../examples/jobs/flip119.json")
	require.NoError(t, err)
	flip := jobOf(t, "flip119", string(data))
	late := jobOf(t, "late", `{"name": "late", "submitAtMs": 300, "vertices": [{"id": "scan", "parallelism": 1, "durationMs": 0}]}`)
	var trace []runfile.Event
	type audited struct {
		at  time.Duration
		rec admission.AuditRecord
	}
	var audit []audited
	clk := clock.NewMock()
	cfg := JobsConfig{
		Runner: RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024)},
		Mode:   exchange.PointwisePipelinedOnly,
		Events: []runfile.JobEvent{
			{At: 400 * time.Millisecond, Job: "late", By: "mallory", Action: admission.ActionSetPriority, Priority: 9000},
			{At: 500 * time.Millisecond, Job: "late", By: "alice", Action: admission.ActionSetPriority, Priority: 7000},
			{At: 600 * time.Millisecond, Job: "late", By: "alice", Action: admission.ActionKill},
		},
		Users: map[string]admission.Role{"alice": admission.RoleAdmin},
		Trace: func(ev runfile.Event) { trace = append(trace, ev) },
		Audit: func(at time.Duration, rec admission.AuditRecord) { audit = append(audit, audited{at, rec}) },
		Poll:  100 * time.Millisecond,
	}
	ctx := context.Background()
	j, err := startJobs(ctx, cfg, clk, []runfile.Job{flip, late})
	require.NoError(t, err)
	done := false
	for i := 0; i < 200 && !done; i++ {
		synced(t, j.r, c)
		done, err = j.step(ctx, clk.Now())
		require.NoError(t, err)
		kwok(t, c, nil)
		clk.Add(100 * time.Millisecond)
	}
	require.True(t, done, "the run did not end")
	res := j.finish(ctx, nil)
	assert.Equal(t, "r1", res.Run)
	assert.Equal(t, 4, res.Slots)
	assert.NoError(t, res.Stopped)
	require.Len(t, res.Jobs, 2)
	f, l := res.Jobs[0], res.Jobs[1]
	assert.NoError(t, f.Err)
	assert.Equal(t, 12, f.Pods)
	assert.Positive(t, f.Bulks)
	assert.GreaterOrEqual(t, f.FirstDeploy, time.Duration(0))
	assert.Greater(t, f.End, f.FirstDeploy)
	var killed *admission.KilledError
	require.ErrorAs(t, l.Err, &killed)
	assert.Equal(t, "alice", killed.By.Name)
	assert.GreaterOrEqual(t, l.End, 600*time.Millisecond)
	assert.GreaterOrEqual(t, l.FirstDeploy, 300*time.Millisecond, "submitted at 300 ms")

	kinds := map[string]map[runfile.Kind]int{}
	for _, ev := range trace {
		require.Contains(t, []string{"flip119", "late"}, ev.Job, "every event names its job: %+v", ev)
		if kinds[ev.Job] == nil {
			kinds[ev.Job] = map[runfile.Kind]int{}
		}
		kinds[ev.Job][ev.Kind]++
	}
	assert.Equal(t, 12, kinds["flip119"][runfile.Deploy])
	assert.Equal(t, 12, kinds["flip119"][runfile.Finish])
	assert.Equal(t, 12, kinds["flip119"][runfile.Request])
	assert.Equal(t, 1, kinds["late"][runfile.Deploy])
	assert.Equal(t, 1, kinds["late"][runfile.Cancel], "the kill deletes its pod")
	assert.Zero(t, kinds["late"][runfile.Finish])
	assert.Equal(t, 1, kinds["late"][runfile.Refused], "the refused change is traced, as in the simulator")

	// What became of each event, for the summary's event lines.
	require.Len(t, res.Events, 3)
	assert.Equal(t, cfg.Events[0], res.Events[0].JobEvent)
	assert.False(t, res.Events[0].Applied)
	assert.Contains(t, res.Events[0].Reason, `"mallory" has no role`)
	assert.Equal(t, EventOutcome{JobEvent: cfg.Events[1], Old: 5000, Applied: true}, res.Events[1], "the priority before it: the job file's default")
	assert.Equal(t, EventOutcome{JobEvent: cfg.Events[2], Applied: true}, res.Events[2])
	for _, ev := range trace {
		if ev.Kind == runfile.Refused {
			assert.Equal(t, runfile.Event{At: 400 * time.Millisecond, Kind: runfile.Refused, Job: "late", By: "mallory", Reason: "set-priority: " + res.Events[0].Reason,
				Slot: runfile.NoSlot, Region: runfile.NoRegion}, ev)
		}
	}
	assert.Empty(t, f.Restarts, "nothing failed")

	require.Len(t, audit, 3, "the refused change, the applied one and the kill")
	assert.Equal(t, 400*time.Millisecond, audit[0].at)
	assert.False(t, audit[0].rec.Accepted)
	assert.True(t, audit[1].rec.Accepted)
	assert.Equal(t, admission.ActionKill, audit[2].rec.Action)
	assert.True(t, audit[2].rec.Accepted)

	left, err := Leftovers(context.Background(), c, "default", "r1")
	require.NoError(t, err)
	assert.Empty(t, left)
}

// Two jobs of one name: nothing runs.
func TestRunJobsRefused(t *testing.T) {
	c := watchedClientset()
	kwokNodes(t, c, "k1")
	cfg := JobsConfig{Runner: RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024)}}
	a := jobOf(t, "a", `{"vertices": [{"id": "a", "parallelism": 1}]}`)
	_, err := RunJobs(context.Background(), cfg, clock.NewMock(), a, a)
	assert.ErrorContains(t, err, "a name of its own")
	left, err := Leftovers(context.Background(), c, "default", "")
	require.NoError(t, err)
	assert.Empty(t, left)
}

// floodJobs reads the four job files of the driver flood.
func floodJobs(t *testing.T) []runfile.Job {
	t.Helper()
	var jobs []runfile.Job
	for i := 1; i <= 4; i++ {
		data, err := os.ReadFile("../examples/jobs/flood/spark-" + strconv.Itoa(i) + ".json")
		require.NoError(t, err)
		jobs = append(jobs, jobOf(t, "spark-"+strconv.Itoa(i), string(data)))
	}
	return jobs
}

// runFloodJobs runs the driver flood through RunJobs's turns on 4 fake
// one-slot nodes under policy, the test playing KWOK on the mock clock,
// until every job ended or a turn stops the run; it returns the trace
// and why the run stopped.
func runFloodJobs(t *testing.T, policy admission.Policy, scale float64) (JobsResult, []runfile.Event, error) {
	t.Helper()
	c := watchedClientset()
	kwokNodes(t, c, "k1", "k2", "k3", "k4")
	c.PrependReactor("create", "pods", bindReactor(c))
	var trace []runfile.Event
	cfg := JobsConfig{
		Runner: RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024), Scale: scale,
			Jobs: multijob.Config{Admission: admission.Config{DefaultPolicy: policy}}},
		Mode:  exchange.AllBlocking,
		Trace: func(ev runfile.Event) { trace = append(trace, ev) },
	}
	clk := clock.NewMock()
	ctx := context.Background()
	j, err := startJobs(ctx, cfg, clk, floodJobs(t))
	require.NoError(t, err)
	done := false
	var stopped error
	for i := 0; i < 2000 && !done && stopped == nil; i++ {
		synced(t, j.r, c)
		done, stopped = j.step(ctx, clk.Now())
		kwok(t, c, nil)
		clk.Add(50 * time.Millisecond)
	}
	require.True(t, done || stopped != nil, "the run did not end")
	res := j.finish(ctx, stopped)
	left, err := Leftovers(ctx, c, "default", "r1")
	require.NoError(t, err)
	assert.Empty(t, left, "no pod of the run is left")
	return res, trace, stopped
}

// TestRunJobsDriversStateAware: RunJobs runs the flood's drivers as pods:
// each job's first request comes its driver's startupMs (1000 ms, times
// the scale of 0.5) after its driver's pod was bound, the trace has each
// driver's deploy, finish and release (task "driver", no region), and
// under stateaware all four jobs finish.
func TestRunJobsDriversStateAware(t *testing.T) {
	res, trace, stopped := runFloodJobs(t, admission.StateAware, 0.5)
	require.NoError(t, stopped)
	require.Len(t, res.Jobs, 4)
	deployed := map[string]time.Duration{}
	firstRequest := map[string]time.Duration{}
	kinds := map[string]map[runfile.Kind]int{}
	for _, ev := range trace {
		if ev.Task == runfile.DriverTask && ev.Region == runfile.NoRegion {
			if kinds[ev.Job] == nil {
				kinds[ev.Job] = map[runfile.Kind]int{}
			}
			kinds[ev.Job][ev.Kind]++
			if ev.Kind == runfile.Deploy {
				deployed[ev.Job] = ev.At
			}
			continue
		}
		if _, ok := firstRequest[ev.Job]; !ok && ev.Kind == runfile.Request {
			firstRequest[ev.Job] = ev.At
		}
	}
	for _, jr := range res.Jobs {
		assert.NoError(t, jr.Err, jr.Name)
		assert.Equal(t, map[runfile.Kind]int{runfile.Deploy: 1, runfile.Finish: 1, runfile.Release: 1}, kinds[jr.Name], jr.Name)
		assert.GreaterOrEqual(t, firstRequest[jr.Name]-deployed[jr.Name], 500*time.Millisecond, "%s: the driver's startup, scaled", jr.Name)
		assert.Less(t, firstRequest[jr.Name]-deployed[jr.Name], 700*time.Millisecond, "%s: the driver's startup, scaled", jr.Name)
		assert.Equal(t, 9, jr.Pods, "%s: the driver's pod is not a task's", jr.Name)
		assert.Greater(t, jr.FirstDeploy, deployed[jr.Name], "%s: its first task's pod comes after its driver", jr.Name)
	}
}

// TestRunJobsDriversFIFODeadlocks: under fifo the four drivers take the
// four nodes and the run stops on a *DeadlockError naming them, as the
// simulator does; every job is reported with that error.
func TestRunJobsDriversFIFODeadlocks(t *testing.T) {
	res, trace, stopped := runFloodJobs(t, admission.FIFO, 0.5)
	var de *DeadlockError
	require.ErrorAs(t, stopped, &de)
	assert.Equal(t, []string{"spark-1:driver", "spark-2:driver", "spark-3:driver", "spark-4:driver"}, de.Holding)
	assert.Len(t, de.Waiting, 24)
	for _, jr := range res.Jobs {
		assert.ErrorIs(t, jr.Err, ErrDeadlock, jr.Name)
		assert.Zero(t, jr.Pods, jr.Name)
	}
	for _, ev := range trace {
		if ev.Kind == runfile.Deploy {
			assert.Equal(t, runfile.DriverTask, ev.Task, "only drivers are deployed")
		}
	}
}

func TestNewRunID(t *testing.T) {
	id := NewRunID()
	require.NoError(t, CheckRun(id))
	alive, where := RunnerAlive(id)
	assert.True(t, alive, where)
	assert.Contains(t, where, "process "+strconv.Itoa(os.Getpid()))
	parts := strings.Split(id, "-")
	gone := strings.Join(parts[:len(parts)-2], "-") + "-999999999-x"
	alive, where = RunnerAlive(gone)
	assert.False(t, alive)
	assert.Equal(t, "gone (no process 999999999 on this host)", where)
	alive, where = RunnerAlive("otherhost-12-x")
	assert.True(t, alive, "another host's runner is taken for alive")
	assert.Contains(t, where, "otherhost")
	_, where = RunnerAlive("nonsense")
	assert.Contains(t, where, "unknown")
	assert.False(t, errors.Is(CheckRun(id), ErrBadLabel))
}

// A run whose context ends (SIGTERM) stops at once: the jobs not ended
// say why, and any pod bound in the one turn it took is deleted.
func TestRunJobsCanceled(t *testing.T) {
	c := watchedClientset()
	kwokNodes(t, c, "k1", "k2")
	c.PrependReactor("create", "pods", bindReactor(c))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := jobOf(t, "a", `{"vertices": [{"id": "a", "parallelism": 2, "durationMs": 0}]}`)
	res, err := RunJobs(ctx, JobsConfig{Runner: RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024)}}, clock.NewMock(), a)
	require.NoError(t, err)
	assert.ErrorIs(t, res.Stopped, context.Canceled)
	require.Len(t, res.Jobs, 1)
	assert.ErrorIs(t, res.Jobs[0].Err, context.Canceled)
	left, err := Leftovers(context.Background(), c, "default", "r1")
	require.NoError(t, err)
	assert.Empty(t, left)
}

// A task reading a hybrid result whose pod Succeeds before its
// producer's finishes after it: the scheduler refuses the early finish,
// and the Runner tells it again once the producer finished.
func TestRunJobsHybridFinishOrder(t *testing.T) {
	c := watchedClientset()
	kwokNodes(t, c, "k1", "k2")
	c.PrependReactor("create", "pods", bindReactor(c))
	ctx := context.Background()
	h := jobOf(t, "h", `{"vertices": [{"id": "A", "parallelism": 1, "durationMs": 100}, {"id": "B", "parallelism": 1, "durationMs": 100}],
		"edges": [{"source": "A", "target": "B", "shipStrategy": "forward"}]}`)
	clk := clock.NewMock()
	j, err := startJobs(ctx, JobsConfig{Runner: RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024)}, Mode: exchange.AllHybridFull}, clk, []runfile.Job{h})
	require.NoError(t, err)
	consumer := PodName(TaskRef{Run: "r1", Job: "h", Task: 1})
	producer := PodName(TaskRef{Run: "r1", Job: "h", Task: 0})
	setPhase := func(name string, phase corev1.PodPhase) {
		p, err := c.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		p.Status.Phase = phase
		_, err = c.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	step := func() bool {
		clk.Add(100 * time.Millisecond)
		synced(t, j.r, c)
		done, err := j.step(ctx, clk.Now())
		require.NoError(t, err)
		return done
	}
	require.False(t, step()) // both deployed: a hybrid exchange runs its ends together
	setPhase(producer, corev1.PodRunning)
	setPhase(consumer, corev1.PodSucceeded) // Pending to Succeeded between two looks
	require.False(t, step(), "the consumer's finish comes before its producer's")
	require.False(t, step())
	setPhase(producer, corev1.PodSucceeded)
	require.True(t, step(), "once the producer finished, so does the consumer")
	res := j.finish(ctx, nil)
	assert.NoError(t, res.Jobs[0].Err)
}
