package slurm

// The runtime on an in-memory Slurm (every job runs at once on node n1,
// steps end at once).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// flip119Path is FLIP-119's example job.
const flip119Path = "../examples/jobs/flip119.json"

// flip119 reads FLIP-119's example job.
func flip119(t *testing.T) *topology.JobGraph {
	t.Helper()
	data, err := os.ReadFile(flip119Path)
	require.NoError(t, err)
	job, err := topology.DecodeBytes(data)
	require.NoError(t, err)
	return job
}

// runJobs runs jobs with Run, which must start, and returns the jobs'
// outcomes.
func runJobs(t *testing.T, ctx context.Context, cfg RunConfig, jobs []runfile.Job) []JobResult {
	t.Helper()
	res, err := Run(ctx, cfg, jobs...)
	require.NoError(t, err)
	require.Len(t, res.Jobs, len(jobs))
	return res.Jobs
}

// memSlurm is a Client whose jobs start at once on node n1 and
// whose steps print their node and end at once; a step in a job no
// longer running is refused, as srun refuses it.
type memSlurm struct {
	mu    sync.Mutex
	cpus  int
	jobs  []jobStatus
	parts []string // the partition of every submit
	// operator may set priorities; anybody else is refused.
	operator string
	// hold, if set, keeps every step running until it is closed.
	hold   chan struct{}
	steps  int
	stepOn string     // the node steps claim to run on ("" = theirs)
	argvs  [][]string // every step's command line
}

func (m *memSlurm) submit(_ context.Context, name string, req jobRequest) (JobID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := JobID(len(m.jobs) + 1)
	m.parts = append(m.parts, req.Partition)
	cpus := 0
	for _, c := range req.Components {
		cpus += c.CPUs()
	}
	m.jobs = append(m.jobs, jobStatus{ID: id, Name: name, State: "RUNNING", Nodes: []nodeCPUs{{Node: "n1", CPUs: cpus}}})
	return id, nil
}

func (m *memSlurm) Cancel(_ context.Context, name string, job JobID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.jobs {
		if m.jobs[i].ID == job || (job == 0 && m.jobs[i].Name == name) {
			m.jobs[i].State = "CANCELLED"
		}
	}
	return nil
}

func (m *memSlurm) query(context.Context, []string) ([]jobStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]jobStatus(nil), m.jobs...), nil
}

func (m *memSlurm) partition(_ context.Context, name string) (partition, error) {
	if name == "" {
		name = "mem"
	}
	return partition{Name: name, Nodes: []node{{Name: "n1", CPUs: m.cpus}}}, nil
}

func (m *memSlurm) setPriority(_ context.Context, principal string, job JobID, priority int64) error {
	if principal != m.operator {
		return &CommandError{Command: "scontrol", Stderr: "Access/permission denied", Err: ErrPermissionDenied}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.jobs {
		if m.jobs[i].ID == job {
			m.jobs[i].Priority = priority
		}
	}
	return nil
}

func (m *memSlurm) runStep(ctx context.Context, p slotPlacement, argv []string, stdout, _ io.Writer) error {
	m.mu.Lock()
	m.argvs = append(m.argvs, argv)
	for _, j := range m.jobs {
		if j.ID == p.Job && j.State != "RUNNING" {
			// As srun in an allocation that ended: the step never starts.
			m.mu.Unlock()
			return fmt.Errorf("srun: error: Unable to confirm allocation for job %d: %w", p.Job, ErrStepRefused)
		}
	}
	m.mu.Unlock()
	if m.hold != nil {
		select {
		case <-m.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.mu.Lock()
	m.steps++
	node := p.Node
	if m.stepOn != "" {
		node = m.stepOn
	}
	m.mu.Unlock()
	_, err := fmt.Fprintln(stdout, node)
	if err == nil && len(argv) > 0 && argv[len(argv)-1] == "--fail" {
		return &CommandError{Command: "srun", Stderr: "exit code 1", Err: errors.New("exit status 1")}
	}
	if err == nil && len(argv) > 0 && argv[len(argv)-1] == "--talk" {
		_, err = fmt.Fprintln(stdout, "what the task printed")
	}
	return err
}

// live counts the jobs not cancelled.
func (m *memSlurm) live() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, j := range m.jobs {
		if j.State != "CANCELLED" {
			n++
		}
	}
	return n
}

func TestRunOnMemorySlurm(t *testing.T) {
	for _, m := range exchange.Modes() {
		t.Run(m.String(), func(t *testing.T) {
			mem := &memSlurm{cpus: 4}
			var events []runfile.Event
			outs := runJobs(t, context.Background(), RunConfig{Mode: m, client: mem, Scale: 0, RunID: "u",
				Trace: func(e runfile.Event) { events = append(events, e) }}, []runfile.Job{{Name: "flip119-example", Job: flip119(t)}})
			require.Len(t, outs, 1)
			require.NoError(t, outs[0].Err)
			assert.Equal(t, 12, outs[0].Steps)
			assert.Equal(t, 12, mem.steps)
			assert.Zero(t, mem.live(), "every allocation cancelled at the end")
			kinds := map[runfile.Kind]int{}
			shared := 0
			for _, e := range events {
				kinds[e.Kind]++
				assert.Empty(t, e.Job, "one job: no job field")
				if e.Shared {
					shared++
				}
			}
			if !m.IsHybrid() {
				assert.Zero(t, shared, "only hybrid consumers share their producers' slots")
			}
			assert.Equal(t, 12, kinds[runfile.Request], "a task asks for a slot (or goes into its producers')")
			assert.Equal(t, 12, kinds[runfile.Deploy])
			assert.Equal(t, 12, kinds[runfile.Finish])
		})
	}
}

func TestRunTwoJobsOnMemorySlurm(t *testing.T) {
	mem := &memSlurm{cpus: 4}
	var mu sync.Mutex
	jobs := map[string]int{}
	outs := runJobs(t, context.Background(), RunConfig{Mode: exchange.AllPipelined, client: mem, RunID: "u",
		Trace: func(e runfile.Event) { mu.Lock(); jobs[e.Job]++; mu.Unlock() }}, []runfile.Job{{Name: "a", Job: flip119(t)}, {Name: "b", Job: flip119(t)}})
	require.Len(t, outs, 2)
	for _, o := range outs {
		assert.NoError(t, o.Err)
	}
	assert.Len(t, jobs, 2, "each job named in the trace")
	assert.Zero(t, mem.live())
}

func TestRunCatchesAStepOnTheWrongNode(t *testing.T) {
	mem := &memSlurm{cpus: 4, stepOn: "n9"}
	outs := runJobs(t, context.Background(), RunConfig{Mode: exchange.AllBlocking, client: mem, RunID: "u"}, []runfile.Job{{Name: "flip119-example", Job: flip119(t)}})
	require.Error(t, outs[0].Err)
	assert.Contains(t, outs[0].Err.Error(), `ran on node "n9"`)
}

func TestRunTooLargeForMemorySlurm(t *testing.T) {
	mem := &memSlurm{cpus: 2}
	outs := runJobs(t, context.Background(), RunConfig{Mode: exchange.AllPipelined, client: mem, RunID: "u"}, []runfile.Job{{Name: "flip119-example", Job: flip119(t)}})
	require.Error(t, outs[0].Err)
	assert.Contains(t, outs[0].Err.Error(), "region 0")
	assert.Zero(t, mem.steps)
}

func TestRunMapsTheQueueToAPartition(t *testing.T) {
	job, err := topology.DecodeBytes([]byte(`{"name": "q", "queue": "root.etl", "submitAtMs": 5,
		"vertices": [{"id": "A", "parallelism": 2, "durationMs": 1}], "edges": []}`))
	require.NoError(t, err)
	mem := &memSlurm{cpus: 4}
	outs := runJobs(t, context.Background(), RunConfig{Mode: exchange.AllBlocking, client: mem, RunID: "u", Partition: "low",
		Partitions: map[string]string{"root.etl": "batch"}}, []runfile.Job{{Name: "q", Job: job}, {Name: "flip119-example", Job: flip119(t)}})
	for _, o := range outs {
		require.NoError(t, o.Err)
	}
	assert.Contains(t, mem.parts, "batch", "the job of queue root.etl")
	assert.Contains(t, mem.parts, "low", "FLIP-119's queue root.default is not mapped")
	assert.GreaterOrEqual(t, outs[0].FirstDeploy, 5*time.Millisecond, "not before submitAtMs")
}

// A queue mapped to a partition Slurm does not have is bad input, before
// anything is submitted.
func TestRunUnknownQueuePartition(t *testing.T) {
	mem := &memSlurm{cpus: 4, parts: nil}
	_, err := runPartitions(context.Background(), RunConfig{client: unknownPartitions{mem}, Partitions: map[string]string{"root.etl": "nope"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `partition "nope"`)
}

// unknownPartitions is a memSlurm that knows only its default partition.
type unknownPartitions struct{ *memSlurm }

func (u unknownPartitions) partition(ctx context.Context, name string) (partition, error) {
	if name != "" {
		return partition{}, &CommandError{Command: "scontrol", Stderr: "partition " + name + " not found", Err: ErrRejected}
	}
	return u.memSlurm.partition(ctx, name)
}

func TestRunJobSlurmCanNeverHold(t *testing.T) {
	// Three subtasks of 2 CPUs in one region: 3 slots fit the pool's
	// count of 4 one-CPU slots, but not Slurm's 4 CPUs.
	job, err := topology.DecodeBytes([]byte(`{"name": "wide", "vertices": [
		{"id": "A", "parallelism": 3, "resources": {"cpuMillis": 2000}}, {"id": "B", "parallelism": 3}],
		"edges": [{"source": "A", "target": "B", "shipStrategy": "rebalance"}]}`))
	require.NoError(t, err)
	mem := &memSlurm{cpus: 4}
	outs := runJobs(t, context.Background(), RunConfig{Mode: exchange.AllPipelined, client: mem, RunID: "u"}, []runfile.Job{{Name: "wide", Job: job}})
	var tl *TooLargeError
	require.ErrorAs(t, outs[0].Err, &tl)
	assert.Contains(t, tl.Need, "3 slots")
	assert.Equal(t, "room for 2", tl.Have)
	assert.Zero(t, mem.steps)
}

func TestRunAppliesPriorityEvents(t *testing.T) {
	evs := []runfile.JobEvent{
		{At: 0, Action: admission.ActionSetPriority, Job: "flip119-example", Priority: 9000, By: "alice"},
		{At: 0, Action: admission.ActionSetPriority, Job: "flip119-example", Priority: 0, By: "root"},
		{At: 0, Action: admission.ActionSetPriority, Job: "flip119-example", Priority: 7000, By: "root"},
	}
	// The steps run until both changes are audited (the job holds its
	// allocation meanwhile).
	mem := &memSlurm{cpus: 1, operator: "root", hold: make(chan struct{})}
	var audit []AuditRecord
	res, err := Run(context.Background(), RunConfig{Mode: exchange.AllBlocking, client: mem, RunID: "u", Events: evs,
		Audit: func(job string, _ time.Duration, rec AuditRecord) {
			assert.Equal(t, "flip119-example", job)
			audit = append(audit, rec)
			if rec.Principal == "root" && len(audit) > 1 && audit[len(audit)-2].Principal != "root" {
				close(mem.hold) // root's first record: alice's came before
			}
		}}, runfile.Job{Name: "flip119-example", Job: flip119(t)})
	require.NoError(t, err)
	outs := res.Jobs
	require.NoError(t, outs[0].Err)
	// What became of each event, for the summary: Slurm's answers, or
	// the refusal of a priority scontrol cannot set.
	require.Len(t, res.Events, 3)
	for i, ev := range evs {
		assert.Equal(t, ev, res.Events[i].JobEvent)
	}
	assert.False(t, res.Events[0].Applied)
	assert.Equal(t, "Access/permission denied", res.Events[0].Reason)
	assert.False(t, res.Events[1].Applied)
	assert.Equal(t, fmt.Sprintf("a Slurm priority is 1 ... %d", MaxPriority), res.Events[1].Reason)
	assert.True(t, res.Events[2].Applied, res.Events[2].Reason)
	assert.Empty(t, res.Events[2].Reason)
	require.NotEmpty(t, audit)
	byWhom := map[string]int{}
	for _, rec := range audit {
		byWhom[rec.Principal]++
		if rec.Principal == "alice" {
			assert.False(t, rec.Accepted, "an ordinary user's raise is refused")
			assert.Equal(t, "Access/permission denied", rec.Reason)
			assert.Equal(t, int64(9000), rec.New)
		} else {
			assert.True(t, rec.Accepted, "root's is applied")
			assert.Equal(t, int64(7000), rec.New)
		}
	}
	assert.Positive(t, byWhom["alice"], "refused for the Slurm jobs the job had then: %v", byWhom)
	assert.Equal(t, len(outs[0].Allocations), byWhom["root"], "root's change went to every Slurm job of the job, the later ones too: %v", byWhom)
}

func TestJobBaseName(t *testing.T) {
	assert.Equal(t, "rs-my-job-r1-j0", jobBaseName("my job", "r1", 0))
	assert.Len(t, jobBaseName(strings.Repeat("x", 100), "r", 1), 3+40+1+1+3)
}

// A task's step prints its node, then runs the task's command: a sleep
// for the task's duration (times Scale), or RunConfig.Command's, whose
// output does not confuse the check of the node.
func TestRunStepCommand(t *testing.T) {
	mem := &memSlurm{cpus: 4}
	outs := runJobs(t, context.Background(), RunConfig{Mode: exchange.AllBlocking, client: mem, RunID: "u", Scale: 0.5},
		[]runfile.Job{{Name: "flip119-example", Job: flip119(t)}})
	require.NoError(t, outs[0].Err)
	require.NotEmpty(t, mem.argvs)
	assert.Equal(t, []string{"/bin/sh", "-c", `echo "$SLURMD_NODENAME"; exec "$@"`, "step", "sleep"}, mem.argvs[0][:5])

	mem = &memSlurm{cpus: 4}
	var mu sync.Mutex
	tasks := map[string]time.Duration{}
	outs = runJobs(t, context.Background(), RunConfig{Mode: exchange.AllBlocking, client: mem, RunID: "u", Scale: 2,
		Command: func(job, task string, d time.Duration) []string {
			mu.Lock()
			defer mu.Unlock()
			tasks[job+"/"+task] = d
			return []string{"/opt/etl/run", task, "--talk"}
		}}, []runfile.Job{{Name: "flip119-example", Job: flip119(t)}})
	require.NoError(t, outs[0].Err, "the task's own output after the node's line is fine")
	assert.Len(t, tasks, 12, "every task's command asked for")
	for _, argv := range mem.argvs {
		assert.Equal(t, []string{"/bin/sh", "-c", `echo "$SLURMD_NODENAME"; exec "$@"`, "step", "/opt/etl/run"}, argv[:5])
		assert.Equal(t, "--talk", argv[len(argv)-1])
	}
	job := flip119(t)
	for name, d := range tasks {
		vertex, _, _ := strings.Cut(strings.TrimPrefix(name, "flip119-example/"), "#")
		i, ok := job.VertexIndex(vertex)
		require.True(t, ok, name)
		assert.Equal(t, 2*job.Vertex(i).Duration, d, "%s: its duration times Scale", name)
	}
}

// failsOnce is a RunConfig.Command whose step of task fails the first
// time it runs (memSlurm fails a step whose command ends in --fail); the
// others succeed.
func failsOnce(task string) func(job, task string, d time.Duration) []string {
	var mu sync.Mutex
	failed := false
	return func(_, name string, _ time.Duration) []string {
		mu.Lock()
		defer mu.Unlock()
		if name == task && !failed {
			failed = true
			return []string{"true", "--fail"}
		}
		return []string{"true"}
	}
}

// A task that fails restarts its region; the run records the failover
// (the failed task and the regions restarted), as many as its scheduler
// counts.
func TestRunRecordsRestarts(t *testing.T) {
	mem := &memSlurm{cpus: 4}
	outs := runJobs(t, context.Background(), RunConfig{Mode: exchange.AllBlocking, client: mem, RunID: "u",
		Command: failsOnce("C#0")}, []runfile.Job{{Name: "flip119-example", Job: flip119(t)}})
	require.NoError(t, outs[0].Err)
	require.Len(t, outs[0].Restarts, 1)
	assert.Equal(t, outs[0].Stats.Failovers, len(outs[0].Restarts))
	r := outs[0].Restarts[0]
	assert.Equal(t, "C#0", r.Task)
	assert.Len(t, r.Regions, outs[0].Stats.RegionRestarts)
	assert.Contains(t, r.Regions, 4, "C#0's own region (all-blocking: one task a region)")
}

// An event for a job before its submitAtMs is refused, as simulate
// refuses it: the outcome says when the job arrives, a priority change is
// audited as refused, and the job runs as if nothing was asked.
func TestRunRefusesEventsBeforeArrival(t *testing.T) {
	job, err := topology.DecodeBytes([]byte(`{"name": "late", "submitAtMs": 50, "vertices": [{"id": "a", "parallelism": 1, "durationMs": 10}]}`))
	require.NoError(t, err)
	evs := []runfile.JobEvent{
		{At: 0, Action: admission.ActionKill, Job: "late", By: "root"},
		{At: 10 * time.Millisecond, Action: admission.ActionSetPriority, Job: "late", Priority: 7000, By: "root"},
	}
	var audit []AuditRecord
	var refused []runfile.Event
	res, err := Run(context.Background(), RunConfig{Mode: exchange.AllBlocking, client: &memSlurm{cpus: 1, operator: "root"}, RunID: "u", Events: evs,
		Audit: func(_ string, _ time.Duration, rec AuditRecord) { audit = append(audit, rec) },
		Trace: func(ev runfile.Event) {
			if ev.Kind == runfile.Refused {
				refused = append(refused, ev)
			}
		}}, runfile.Job{Name: "late", Job: job})
	require.NoError(t, err)
	require.NoError(t, res.Jobs[0].Err, "the kill was refused")
	const why = "the job has not arrived yet (it arrives at 50 ms)"
	require.Len(t, res.Events, 2)
	for i := range evs {
		assert.False(t, res.Events[i].Applied)
		assert.Equal(t, why, res.Events[i].Reason)
	}
	require.Len(t, refused, 2, "each refusal traced, as simulate traces it")
	assert.Equal(t, "kill: "+why, refused[0].Reason)
	assert.Equal(t, "set-priority: "+why, refused[1].Reason)
	require.Len(t, audit, 1, "the priority change")
	assert.False(t, audit[0].Accepted)
	assert.Equal(t, why, audit[0].Reason)
	assert.Equal(t, int64(7000), audit[0].New)
}

// The trace of a run on Slurm ends every request as the simulator's
// does: in a deploy or a withdrawal (its region restarted, or the task
// asked again for another attempt), or it still waits when the run ends.
// A withdrawal ends a request that is open, with its attempt. Here C#0
// fails, on 4 CPUs.
func TestRunTraceEndsEveryRequest(t *testing.T) {
	for _, m := range exchange.Modes() {
		t.Run(m.String(), func(t *testing.T) {
			mem := &memSlurm{cpus: 4}
			var mu sync.Mutex
			var events []runfile.Event
			outs := runJobs(t, context.Background(), RunConfig{Mode: m, client: mem, RunID: "u",
				Trace:   func(e runfile.Event) { mu.Lock(); events = append(events, e); mu.Unlock() },
				Command: failsOnce("C#0")}, []runfile.Job{{Name: "flip119-example", Job: flip119(t)}})
			require.NoError(t, outs[0].Err)
			require.Len(t, outs[0].Restarts, 1)
			assert.Zero(t, mem.live(), "every allocation cancelled at the end")
			mu.Lock()
			defer mu.Unlock()
			open := map[string]int{}
			for i, e := range events {
				switch e.Kind {
				case runfile.Request:
					_, again := open[e.Task]
					assert.False(t, again && open[e.Task] == e.Attempt, "event %d (%+v): asked twice", i, e)
					assert.False(t, again, "event %d (%+v): asked again before the open request was withdrawn", i, e)
					open[e.Task] = e.Attempt
				case runfile.Withdraw:
					a, ok := open[e.Task]
					assert.True(t, ok && a == e.Attempt, "event %d (%+v): withdraws no open request (open: %v)", i, e, open)
					delete(open, e.Task)
				case runfile.Deploy:
					delete(open, e.Task)
				}
			}
			assert.Empty(t, open, "every request ends in a deploy or a withdrawal")
			if t.Failed() {
				for _, e := range events {
					t.Logf("%v %s %s@%d slot %d shared %v", e.At, e.Kind, e.Task, e.Attempt, e.Slot, e.Shared)
				}
			}
		})
	}
}
