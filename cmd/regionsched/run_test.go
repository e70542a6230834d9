package main

// The run command without Slurm: its flags, and the runtime on an
// in-memory Slurm (every job runs at once on node n1, steps end at once).

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission/slurm"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// memSlurm is a slurm.Client whose jobs start at once on node n1 and
// whose steps print their node and end at once.
type memSlurm struct {
	mu    sync.Mutex
	cpus  int
	jobs  []slurm.JobStatus
	parts []string // the partition of every submit
	// operator may set priorities; anybody else is refused.
	operator string
	// hold, if set, keeps every step running until it is closed.
	hold   chan struct{}
	steps  int
	stepOn string // the node steps claim to run on ("" = theirs)
}

func (m *memSlurm) Submit(_ context.Context, name string, req slurm.JobRequest) (slurm.JobID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := slurm.JobID(len(m.jobs) + 1)
	m.parts = append(m.parts, req.Partition)
	cpus := 0
	for _, c := range req.Components {
		cpus += c.CPUs()
	}
	m.jobs = append(m.jobs, slurm.JobStatus{ID: id, Name: name, State: "RUNNING", Nodes: []slurm.NodeCPUs{{Node: "n1", CPUs: cpus}}})
	return id, nil
}

func (m *memSlurm) Cancel(_ context.Context, name string, job slurm.JobID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.jobs {
		if m.jobs[i].ID == job || (job == 0 && m.jobs[i].Name == name) {
			m.jobs[i].State = "CANCELLED"
		}
	}
	return nil
}

func (m *memSlurm) Query(context.Context, []string) ([]slurm.JobStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]slurm.JobStatus(nil), m.jobs...), nil
}

func (m *memSlurm) Partition(_ context.Context, name string) (slurm.Partition, error) {
	if name == "" {
		name = "mem"
	}
	return slurm.Partition{Name: name, Nodes: []slurm.Node{{Name: "n1", CPUs: m.cpus}}}, nil
}

func (m *memSlurm) SetPriority(_ context.Context, principal string, job slurm.JobID, priority int64) error {
	if principal != m.operator {
		return &slurm.CommandError{Command: "scontrol", Stderr: "Access/permission denied", Err: slurm.ErrPermissionDenied}
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

func (m *memSlurm) RunStep(ctx context.Context, p slurm.Placement, _ []string, stdout, _ io.Writer) error {
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

func flip119(t *testing.T) *topology.JobGraph {
	t.Helper()
	job, err := loadJob(flip119Path, nil)
	require.NoError(t, err)
	return job
}

func TestRunOnMemorySlurm(t *testing.T) {
	for _, mode := range modeNames {
		t.Run(mode, func(t *testing.T) {
			m, err := exchange.ParseMode(mode)
			require.NoError(t, err)
			mem := &memSlurm{cpus: 4}
			var events []runfile.Event
			outs := runOnSlurm(context.Background(), slurmRunConfig{Mode: m, Client: mem, Scale: 0, RunID: "u",
				Trace: func(e runfile.Event) { events = append(events, e) }}, []slurmJob{{Name: "flip119-example", Job: flip119(t)}})
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
	outs := runOnSlurm(context.Background(), slurmRunConfig{Mode: exchange.AllPipelined, Client: mem, RunID: "u",
		Trace: func(e runfile.Event) { mu.Lock(); jobs[e.Job]++; mu.Unlock() }}, []slurmJob{{Name: "a", Job: flip119(t)}, {Name: "b", Job: flip119(t)}})
	require.Len(t, outs, 2)
	for _, o := range outs {
		assert.NoError(t, o.Err)
	}
	assert.Len(t, jobs, 2, "each job named in the trace")
	assert.Zero(t, mem.live())
}

func TestRunCatchesAStepOnTheWrongNode(t *testing.T) {
	mem := &memSlurm{cpus: 4, stepOn: "n9"}
	outs := runOnSlurm(context.Background(), slurmRunConfig{Mode: exchange.AllBlocking, Client: mem, RunID: "u"}, []slurmJob{{Name: "flip119-example", Job: flip119(t)}})
	require.Error(t, outs[0].Err)
	assert.Contains(t, outs[0].Err.Error(), `ran on node "n9"`)
}

func TestRunTooLargeForMemorySlurm(t *testing.T) {
	mem := &memSlurm{cpus: 2}
	outs := runOnSlurm(context.Background(), slurmRunConfig{Mode: exchange.AllPipelined, Client: mem, RunID: "u"}, []slurmJob{{Name: "flip119-example", Job: flip119(t)}})
	require.Error(t, outs[0].Err)
	assert.Contains(t, outs[0].Err.Error(), "region 0")
	assert.Zero(t, mem.steps)
	var b strings.Builder
	err := printOutcomes(&b, outs)
	assert.Error(t, err)
	assert.Contains(t, b.String(), "failed: flip119-example")
}

func TestRunFlags(t *testing.T) {
	res := execCLI(t, "", "run", flip119Path)
	assert.Equal(t, exitBadInput, res.code)
	assert.Contains(t, res.stderr, "--slurm")
	res = execCLI(t, "", "run", "--slurm", "--duration-scale", "0", flip119Path)
	assert.Equal(t, exitBadInput, res.code)
	assert.Contains(t, res.stderr, "--duration-scale")
	res = execCLI(t, "", "run", "--slurm")
	assert.Equal(t, exitBadInput, res.code)
	res = execCLI(t, "", "run", "--slurm", "--slurm-conf", "/nonexistent/slurm.conf", "--timeout", "20s", flip119Path)
	assert.Equal(t, exitBadInput, res.code)
	assert.Contains(t, res.stderr, "--slurm-conf")
}

func TestSlurmJobName(t *testing.T) {
	assert.Equal(t, "rs-my-job-r1-j0", slurm.JobBaseName("my job", "r1", 0))
	assert.Len(t, slurm.JobBaseName(strings.Repeat("x", 100), "r", 1), 3+40+1+1+3)
}

func TestRunMapsTheQueueToAPartition(t *testing.T) {
	job, err := topology.DecodeBytes([]byte(`{"name": "q", "queue": "root.etl", "submitAtMs": 5,
		"vertices": [{"id": "A", "parallelism": 2, "durationMs": 1}], "edges": []}`))
	require.NoError(t, err)
	mem := &memSlurm{cpus: 4}
	outs := runOnSlurm(context.Background(), slurmRunConfig{Mode: exchange.AllBlocking, Client: mem, RunID: "u", Partition: "low",
		Partitions: map[string]string{"root.etl": "batch"}}, []slurmJob{{Name: "q", Job: job}, {Name: "flip119-example", Job: flip119(t)}})
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
	_, err := slurmPartitions(context.Background(), slurmRunConfig{Client: unknownPartitions{mem}, Partitions: map[string]string{"root.etl": "nope"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `partition "nope"`)
}

// unknownPartitions is a memSlurm that knows only its default partition.
type unknownPartitions struct{ *memSlurm }

func (u unknownPartitions) Partition(ctx context.Context, name string) (slurm.Partition, error) {
	if name != "" {
		return slurm.Partition{}, &slurm.CommandError{Command: "scontrol", Stderr: "Partition " + name + " not found", Err: slurm.ErrRejected}
	}
	return u.memSlurm.Partition(ctx, name)
}

func TestRunJobSlurmCanNeverHold(t *testing.T) {
	// Three subtasks of 2 CPUs in one region: 3 slots fit the pool's
	// count of 4 one-CPU slots, but not Slurm's 4 CPUs.
	job, err := topology.DecodeBytes([]byte(`{"name": "wide", "vertices": [
		{"id": "A", "parallelism": 3, "resources": {"cpuMillis": 2000}}, {"id": "B", "parallelism": 3}],
		"edges": [{"source": "A", "target": "B", "shipStrategy": "rebalance"}]}`))
	require.NoError(t, err)
	mem := &memSlurm{cpus: 4}
	outs := runOnSlurm(context.Background(), slurmRunConfig{Mode: exchange.AllPipelined, Client: mem, RunID: "u"}, []slurmJob{{Name: "wide", Job: job}})
	var tl *slurm.TooLargeError
	require.ErrorAs(t, outs[0].Err, &tl)
	assert.Contains(t, tl.Need, "3 slots")
	assert.Equal(t, "room for 2", tl.Have)
	assert.Zero(t, mem.steps)
}

func TestRunAppliesPriorityEvents(t *testing.T) {
	events := writeTemp(t, "events.jsonl", `{"t": 0, "event": "set-priority", "job": "flip119-example", "priority": 9000, "by": "alice"}
{"t": 0, "event": "set-priority", "job": "flip119-example", "priority": 7000, "by": "root"}
`)
	evs, err := readSlurmEvents(events, []string{"flip119-example"})
	require.NoError(t, err)
	require.Len(t, evs, 2)
	// The steps run until both changes are audited (the job holds its
	// allocation meanwhile).
	mem := &memSlurm{cpus: 1, operator: "root", hold: make(chan struct{})}
	var audit []slurm.AuditRecord
	outs := runOnSlurm(context.Background(), slurmRunConfig{Mode: exchange.AllBlocking, Client: mem, RunID: "u", Events: evs,
		Audit: func(job string, _ time.Duration, rec slurm.AuditRecord) {
			assert.Equal(t, "flip119-example", job)
			audit = append(audit, rec)
			if rec.Principal == "root" && len(audit) > 1 && audit[len(audit)-2].Principal != "root" {
				close(mem.hold) // root's first record: alice's came before
			}
		}}, []slurmJob{{Name: "flip119-example", Job: flip119(t)}})
	require.NoError(t, outs[0].Err)
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

func TestReadSlurmEvents(t *testing.T) {
	evs, err := readSlurmEvents(writeTemp(t, "e.jsonl", `{"t": 0, "event": "kill", "job": "a", "by": "b"}
{"t": 5, "event": "set-priority", "job": "a", "priority": 4294967293, "by": "b"}
`), []string{"a"})
	require.NoError(t, err)
	require.Len(t, evs, 2, "a kill is run too")
	assert.Equal(t, 4294967293, evs[1].Priority, "Slurm's range")
	for content, want := range map[string]string{
		`{"event": "set-priority", "job": "a", "priority": 1, "by": "b"}`:                  `line 1: field "t": missing`,
		`{"t": 1, "event": "set-priority", "job": "a", "by": "b"}`:                         `line 1: field "priority": missing`,
		`{"t": 1, "event": "set-priority", "priority": 5, "by": "b"}`:                      `line 1: field "job": missing`,
		`{"t": 1, "event": "set-priority", "job": "a", "priority": 5, "x": 1}`:             `line 1: field "x": unknown field: valid fields: t, event, job, priority, by`,
		`{"t": 1, "event": "set-priority", "job": "z", "priority": 5, "by": "b"}`:          `"z"`,
		`{"t": 1, "event": "set-priority", "job": "a", "priority": 4294967294, "by": "b"}`: `4294967293`,
	} {
		_, err := readSlurmEvents(writeTemp(t, "e.jsonl", content), []string{"a"})
		require.Error(t, err, content)
		assert.Contains(t, err.Error(), want)
	}
}
