package runcli_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/runcli"
	"github.com/regionsched/regionsched/runfile"
)

const jobText = `{"name": "etl", "vertices": [{"id": "A", "parallelism": 1}]}`

// fakeBackend runs nothing: it records its input, traces one deploy,
// audits one change and says how the jobs ended.
type fakeBackend struct {
	in       runcli.Input
	deadline bool
	err      error // Run's
	fail     bool  // a job fails
}

func (f *fakeBackend) backend() runcli.Backend {
	return runcli.Backend{
		MaxPriority: 7,
		Run: func(ctx context.Context, in runcli.Input) (runcli.Result, error) {
			f.in = in
			_, f.deadline = ctx.Deadline()
			if f.err != nil {
				return runcli.Result{}, f.err
			}
			in.Trace(runfile.Event{At: 5 * time.Millisecond, Kind: runfile.Deploy, Task: "A#0", Slot: 1})
			if in.Audit != nil {
				in.Audit(runcli.AuditLine{T: 3, By: "alice", Job: "etl", Old: 1, New: 7, Accepted: true})
			}
			o := runcli.Outcome{Name: "etl", End: 1500 * time.Millisecond, Work: "1 task run"}
			if f.fail {
				o.Err = errors.New("region 0 failed")
			} else {
				in.Trace(runfile.Event{At: 1500 * time.Millisecond, Kind: runfile.Finish, Task: "A#0", Slot: 1})
				in.Trace(runfile.Event{At: 1500 * time.Millisecond, Kind: runfile.Release, Task: "A#0", Slot: 1})
			}
			return runcli.Result{Jobs: []runcli.Outcome{o}, Slots: 2}, nil
		},
		Interrupted: "interrupted",
	}
}

// execute runs "x run ARGS" over the fake backend.
func execute(t *testing.T, f *fakeBackend, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var flags runcli.Flags
	root := &cobra.Command{Use: "x", SilenceUsage: true, SilenceErrors: true}
	c := &cobra.Command{Use: "run", RunE: func(c *cobra.Command, args []string) error {
		return flags.Execute(c, args, strings.NewReader(jobText), f.backend())
	}}
	flags.Add(c, "events", "audit")
	root.AddCommand(c)
	var out, errOut bytes.Buffer
	code = runcli.Main(root, append([]string{"run"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestExecute(t *testing.T) {
	dir := t.TempDir()
	trace, audit, events := filepath.Join(dir, "trace.jsonl"), filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "events.jsonl")
	require.NoError(t, os.WriteFile(events, []byte(`{"t": 10, "event": "set-priority", "job": "etl", "priority": 7, "by": "alice"}`+"\n"), 0o644))
	f := &fakeBackend{}
	code, stdout, stderr := execute(t, f, "--trace", trace, "--audit", audit, "--events", events, "--duration-scale", "0.5", "--verbose", "-")
	require.Equal(t, runcli.ExitOK, code, stderr)
	// An events file (or an audit): the summary of several jobs, as simulate
	// prints it.
	assert.Equal(t, `1 job: mode all-blocking, policy region, admission by the cluster, 2 slots
job "etl": submitted 0 ms, first deploy 5 ms, finished 1500 ms, wait 5 ms, makespan 1500 ms; finished
cluster: job etl: 1 task run
makespan:          1500 ms of real time, until the last event
slot utilization:  49.8% of slot time with work progressing
held waiting:      0.0% of slot time held with no task in it
regions scheduled: 1 deployment
restarts:          0 (regions restarted: 0)
finished: the only job finished at 1500 ms
`, stdout)
	assert.Equal(t, 0.5, f.in.Scale)
	assert.True(t, f.in.Several, "events: a run of several jobs in simulate's sense")
	assert.NotNil(t, f.in.Logger)
	assert.True(t, f.deadline, "--timeout bounds the run")
	require.Len(t, f.in.Jobs, 1)
	assert.Equal(t, "etl", f.in.Jobs[0].Name)
	require.Len(t, f.in.Events, 1)
	assert.Equal(t, admission.ActionSetPriority, f.in.Events[0].Action)
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), `{"t": 5, "event": "deploy", "task": "A#0", "region": 0, "slot": 1, "attempt": 0}`+"\n"), string(data))
	data, err = os.ReadFile(audit)
	require.NoError(t, err)
	assert.Equal(t, `{"t":3,"by":"alice","job":"etl","old":1,"new":7,"accepted":true}`+"\n", string(data))

	// The trace on standard output: the summary goes to standard error.
	f = &fakeBackend{}
	code, stdout, stderr = execute(t, f, "--trace", "-", "-")
	require.Equal(t, runcli.ExitOK, code, stderr)
	assert.False(t, f.in.Several, "one job file alone")
	assert.Contains(t, stdout, `"event": "deploy"`)
	assert.Equal(t, `job "etl": mode all-blocking, policy region, 2 slots
cluster: job etl: 1 task run
makespan:          1500 ms of real time, until the last event
slot utilization:  49.8% of slot time with work progressing
held waiting:      0.0% of slot time held with no task in it
regions scheduled: 1 deployment of 1 region
restarts:          0 (regions restarted: 0)
finished: the only task finished at 1500 ms
`, stderr, "one job: the summary of one job, as simulate prints it")
}

func TestExecuteVerdicts(t *testing.T) {
	code, stdout, stderr := execute(t, &fakeBackend{fail: true}, "-")
	assert.Equal(t, runcli.ExitNegative, code)
	assert.Equal(t, `job "etl": mode all-blocking, policy region, 2 slots
cluster: job etl: 1 task run
makespan:          1500 ms of real time, until the last event
slot utilization:  49.8% of slot time with work progressing
held waiting:      0.0% of slot time held with no task in it
regions scheduled: 1 deployment of 1 region
restarts:          0 (regions restarted: 0)
failed: region 0 failed
`, stdout)
	assert.Empty(t, stderr, "a verdict is printed once")

	code, _, stderr = execute(t, &fakeBackend{err: errors.New("no cluster reachable")}, "-")
	assert.Equal(t, runcli.ExitBadInput, code)
	assert.Equal(t, "x run: no cluster reachable\n", stderr)

	for args, want := range map[string]string{
		"--duration-scale 0 -":          "--duration-scale must be positive",
		"/nonexistent.json":             "job file: open /nonexistent.json",
		"- -":                           "given twice",
		"--events /nonexistent.jsonl -": "--events",
		"--nonsense -":                  "unknown flag: --nonsense",
	} {
		code, _, stderr := execute(t, &fakeBackend{}, strings.Fields(args)...)
		assert.Equal(t, runcli.ExitBadInput, code, args)
		assert.Contains(t, stderr, want, args)
	}
	// An events file's priority above the backend's range.
	events := filepath.Join(t.TempDir(), "e.jsonl")
	require.NoError(t, os.WriteFile(events, []byte(`{"t": 1, "event": "set-priority", "job": "etl", "priority": 8, "by": "a"}`+"\n"), 0o644))
	code, _, stderr = execute(t, &fakeBackend{}, "--events", events, "-")
	assert.Equal(t, runcli.ExitBadInput, code)
	assert.Contains(t, stderr, "line 1")
}

func TestLoadJobs(t *testing.T) {
	dir := t.TempDir()
	unnamed := filepath.Join(dir, "wordcount.json")
	require.NoError(t, os.WriteFile(unnamed, []byte(`{"vertices": [{"id": "A", "parallelism": 1}]}`), 0o644))
	jobs, err := runcli.LoadJobs([]string{unnamed, "-"}, strings.NewReader(jobText))
	require.NoError(t, err)
	assert.Equal(t, []string{"wordcount", "etl"}, runcli.JobNames(jobs))
	_, err = runcli.LoadJobs([]string{"-", "-"}, strings.NewReader(jobText))
	var ee *runcli.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, runcli.ExitBadInput, ee.Code)
	same := filepath.Join(dir, "etl.json")
	require.NoError(t, os.WriteFile(same, []byte(jobText), 0o644))
	_, err = runcli.LoadJobs([]string{same, "-"}, strings.NewReader(jobText))
	assert.ErrorContains(t, err, `both name the job "etl"`)
	assert.Equal(t, "stdin", runcli.JobNameOf("-"))
}

// A run of several jobs prints simulate's summary of several jobs: the
// job lines, the backend's facts on lines of their own, the figures of
// the trace (a reclaim, queues with capacities) and the verdict; a killed
// job is no failure, a failed one is.
func TestExecuteJobsSummary(t *testing.T) {
	dir := t.TempDir()
	paths := queueJobs(t, dir, []string{"etl", "adhoc"}, map[string]string{"etl": "root.prod", "adhoc": "root.dev"})
	run := func(t *testing.T, adhocErr error) (int, string) {
		t.Helper()
		b := runcli.Backend{Name: "Fake", Run: func(_ context.Context, in runcli.Input) (runcli.Result, error) {
			for _, e := range []runfile.Event{
				{At: 0, Kind: runfile.Deploy, Job: "adhoc", Task: "A#0", Slot: 1},
				{At: 200 * time.Millisecond, Kind: runfile.Reclaim, Job: "etl", Victim: "adhoc", Slots: 1, Slot: runfile.NoSlot, Region: runfile.NoRegion},
				{At: 200 * time.Millisecond, Kind: runfile.Cancel, Job: "adhoc", Task: "A#0", Slot: 1},
				{At: 200 * time.Millisecond, Kind: runfile.Release, Job: "adhoc", Task: "A#0", Slot: 1},
				{At: 300 * time.Millisecond, Kind: runfile.Deploy, Job: "etl", Task: "A#0", Slot: 1},
				{At: 1000 * time.Millisecond, Kind: runfile.Finish, Job: "etl", Task: "A#0", Slot: 1},
				{At: 1000 * time.Millisecond, Kind: runfile.Release, Job: "etl", Task: "A#0", Slot: 1},
			} {
				in.Trace(e)
			}
			return runcli.Result{Slots: 2, Admission: "queue policy fifo", Queues: []admission.QueueConfig{{Name: "root.prod", GuaranteedSlots: 1}},
				Jobs: []runcli.Outcome{{Name: "etl", End: 1000 * time.Millisecond, Work: "1 pod"}, {Name: "adhoc", End: 200 * time.Millisecond, Err: adhocErr}}}, nil
		}}
		code, stdout, stderr := executeFiles(t, b, paths...)
		assert.Empty(t, stderr)
		return code, stdout
	}
	code, stdout := run(t, &admission.KilledError{Job: "adhoc", By: admission.Principal{Name: "bob"}})
	assert.Equal(t, runcli.ExitOK, code)
	assert.Equal(t, `2 jobs on Fake: mode all-blocking, policy region, queue policy fifo, 2 slots
not in the cluster file's queues, so created with --queue-policy fifo: root.dev
job "etl": submitted 0 ms, first deploy 300 ms, finished 1000 ms, wait 300 ms, makespan 1000 ms; finished
job "adhoc": submitted 0 ms, first deploy 0 ms, finished -, wait 0 ms, makespan -; killed at 200 ms: by bob
fake: job etl: 1 pod
makespan:          1000 ms of real time, until the last event
slot utilization:  45.0% of slot time with work progressing
held waiting:      0.0% of slot time held with no task in it
regions scheduled: 2 deployments
restarts:          0 (regions restarted: 0)
reclaims:          1 (slots reclaimed: 1, withdrawn before the timeout: 0)
queue root.dev: guaranteed 0, max unlimited, peak 1 slot, 10.0% of slot time
queue root.prod: guaranteed 1, max unlimited, peak 1 slot, 35.0% of slot time
finished: 1 of 2 jobs finished at 1000 ms, adhoc killed at 200 ms
`, stdout)

	code, stdout = run(t, errors.New("its slot's allocation was cancelled"))
	assert.Equal(t, runcli.ExitNegative, code)
	assert.Contains(t, stdout, `job "adhoc": submitted 0 ms, first deploy 0 ms, finished -, wait 0 ms, makespan -; failed at 200 ms: its slot's allocation was cancelled`+"\n")
	assert.True(t, strings.HasSuffix(stdout, "\nfailed: 1 of 2 jobs: adhoc failed: its slot's allocation was cancelled\n"), stdout)
}

// A --queue-policy given on the command line makes one job file a run of
// several jobs, as in simulate: the summary of several jobs.
func TestExecuteQueuePolicyIsSeveral(t *testing.T) {
	f := &fakeBackend{}
	var flags runcli.Flags
	root := &cobra.Command{Use: "x", SilenceUsage: true, SilenceErrors: true}
	c := &cobra.Command{Use: "run", RunE: func(c *cobra.Command, args []string) error {
		return flags.Execute(c, args, strings.NewReader(jobText), f.backend())
	}}
	flags.Add(c, "events", "audit")
	c.Flags().String("queue-policy", "fifo", "queue policy")
	root.AddCommand(c)
	var out, errOut bytes.Buffer
	code := runcli.Main(root, []string{"run", "--queue-policy", "priority", "-"}, &out, &errOut)
	require.Equal(t, runcli.ExitOK, code, errOut.String())
	assert.True(t, f.in.Several)
	assert.Contains(t, out.String(), `job "etl": submitted 0 ms, first deploy 5 ms`)
	assert.Contains(t, out.String(), "finished: the only job finished at 1500 ms")
}
