package main

// The command against the control plane of scripts/k8s-up.sh (etcd,
// kube-apiserver, KWOK): skipped when there is none, failed when
// REGIONSCHED_K8S=require. Runs that must be signalled run in a child
// process: this test binary again, as the command (TestMain).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"

	"github.com/regionsched/regionsched/internal/plural"
	rsk8s "github.com/regionsched/regionsched/kubernetes"
	"github.com/regionsched/regionsched/kubernetes/internal/k8stest"
)

// asCommand is the variable that makes this test binary the command.
const asCommand = "REGIONSCHED_K8S_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asCommand) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// flip119 is FLIP-119's example job (12 tasks of 1 s), relative to this
// package.
const flip119 = "../../../examples/jobs/flip119.json"

// cliResult is what one run of the command produced.
type cliResult struct {
	code           int
	stdout, stderr string
}

// execCLI runs the command in process.
func execCLI(t *testing.T, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// fakeNodes makes n KWOK nodes of one cpu and 1Gi for the test and returns
// the flags that run on them alone.
func fakeNodes(t *testing.T, c kubernetes.Interface, n int) []string {
	t.Helper()
	sel := "regionsched.io/test=" + k8stest.Prefix() + "-" + strings.ToLower(t.Name()[len("TestIntegration"):])
	var nodes []k8stest.Node
	for i := 1; i <= n; i++ {
		nodes = append(nodes, k8stest.Node{Name: fmt.Sprintf("%s-%s-n%d", k8stest.Prefix(), strings.ToLower(t.Name()[len("TestIntegration"):]), i),
			CPU: "1", Memory: "1Gi", Pods: "110"})
	}
	k8stest.FakeNodes(t, c, nodes...)
	// FakeNodes labels the nodes of every test of the process alike: a
	// label of this test's own picks them.
	ctx := context.Background()
	for _, nd := range nodes {
		node, err := c.CoreV1().Nodes().Get(ctx, nd.Name, getOptions)
		require.NoError(t, err)
		k, v, _ := strings.Cut(sel, "=")
		node.Labels[k] = v
		_, err = c.CoreV1().Nodes().Update(ctx, node, updateOptions)
		require.NoError(t, err)
	}
	return []string{"--kubeconfig", k8stest.Kubeconfig(), "--node-selector", sel}
}

// runIDOf reads the run id from the first line of a run's summary.
var runIDLine = regexp.MustCompile(`^run ([a-z0-9-]+): pods labelled`)

func runIDOf(t *testing.T, summary string) string {
	t.Helper()
	m := runIDLine.FindStringSubmatch(summary)
	require.NotNil(t, m, "no run id in %q", summary)
	return m[1]
}

// noPodsOf fails the test if a pod of the run is left.
func noPodsOf(t *testing.T, c kubernetes.Interface, run string) {
	t.Helper()
	left, err := rsk8s.Leftovers(context.Background(), c, "default", run)
	require.NoError(t, err)
	assert.Empty(t, left, "pods of run %s left", run)
}

// TestIntegrationCLIRun: FLIP-119's job on 4 nodes of one slot each
// finishes, with the trace and the summary of run --slurm, and leaves no
// pod.
func TestIntegrationCLIRun(t *testing.T) {
	c := k8stest.Client(t)
	flags := fakeNodes(t, c, 4)
	trace := t.TempDir() + "/trace.jsonl"
	res := execCLI(t, append(append([]string{"run", "--kubernetes", "--mode", "pointwise-pipelined-only", "--duration-scale", "0.5", "--poll", "50ms",
		"--trace", trace}, flags...), flip119)...)
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	t.Logf("summary:\n%s", res.stdout)
	run := runIDOf(t, res.stdout)
	// One job: simulate's summary of one job, its figures from the trace,
	// the pods on a line of their own.
	assert.Regexp(t, `(?m)^job "flip119-example" on Kubernetes: mode pointwise-pipelined-only, policy region, 4 slots$`, res.stdout)
	assert.Regexp(t, `(?m)^kubernetes: job flip119-example: 12 task runs as pods in \d+ bulks, each bulk bound all together$`, res.stdout)
	assert.Regexp(t, `(?m)^makespan:          \d+ ms of real time, until the last event$`, res.stdout)
	assert.Regexp(t, `(?m)^slot utilization:  \d+\.\d% of slot time with work progressing$`, res.stdout)
	assert.Regexp(t, `(?m)^held waiting:      \d+\.\d% of slot time held with no task in it$`, res.stdout)
	assert.Regexp(t, `(?m)^regions scheduled: \d+ deployments of 6 regions$`, res.stdout)
	assert.Contains(t, res.stdout, "\nrestarts:          0 (regions restarted: 0)\n")
	assert.Regexp(t, `finished: all 12 tasks finished at \d+ ms\n$`, res.stdout)
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	kinds := map[string]int{}
	var last int64
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			T     int64  `json:"t"`
			Event string `json:"event"`
			Task  string `json:"task"`
			Slot  *int   `json:"slot"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		assert.GreaterOrEqual(t, ev.T, last, "in time order: %s", l)
		last = ev.T
		assert.Regexp(t, `^[ABCD]#\d$`, ev.Task, l)
		kinds[ev.Event]++
	}
	assert.Equal(t, 12, kinds["request"])
	assert.Equal(t, 12, kinds["deploy"])
	assert.Equal(t, 12, kinds["finish"])
	assert.Positive(t, kinds["release"])
	assert.Zero(t, kinds["fail"]+kinds["cancel"])
	// At least a region of A, B and C, then the D task that reads it
	// through the blocking edge, each of 500 ms; how many regions run
	// side by side depends on the nodes and on when KWOK moves each pod.
	assert.GreaterOrEqual(t, last, int64(1000), "a region, then a task reading it, of 500 ms each")
	noPodsOf(t, c, run)
}

// TestIntegrationCLIRunDrivers: the driver flood's four job files (each
// job with a driver) on 4 nodes of one slot under stateaware: every job
// finishes, and the trace has each job's driver (task "driver"), deployed
// before its job's tasks and finished and released after them.
func TestIntegrationCLIRunDrivers(t *testing.T) {
	c := k8stest.Client(t)
	flags := fakeNodes(t, c, 4)
	trace := t.TempDir() + "/trace.jsonl"
	args := append([]string{"run", "--kubernetes", "--mode", "all-blocking", "--queue-policy", "stateaware", "--duration-scale", "0.2", "--poll", "50ms",
		"--trace", trace}, flags...)
	for i := 1; i <= 4; i++ {
		args = append(args, fmt.Sprintf("../../../examples/jobs/flood/spark-%d.json", i))
	}
	res := execCLI(t, args...)
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	t.Logf("summary:\n%s", res.stdout)
	// Several jobs: a line per job, the drivers' share of the slot time.
	assert.Regexp(t, `(?m)^4 jobs on Kubernetes: mode all-blocking, policy region, queue policy stateaware, 4 slots$`, res.stdout)
	for i := 1; i <= 4; i++ {
		assert.Regexp(t, fmt.Sprintf(`(?m)^job "spark-%d": submitted \d+ ms, first deploy \d+ ms, finished \d+ ms, wait \d+ ms, makespan \d+ ms; finished$`, i), res.stdout)
	}
	assert.Regexp(t, `(?m)^drivers:           \d+\.\d% of slot time held by job drivers$`, res.stdout)
	assert.Regexp(t, `finished: all 4 jobs finished at \d+ ms\n$`, res.stdout)
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	type span struct{ driverDeploy, firstTask, lastTask, driverFinish, driverRelease int64 }
	spans := map[string]*span{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			T     int64  `json:"t"`
			Event string `json:"event"`
			Job   string `json:"job"`
			Task  string `json:"task"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		sp := spans[ev.Job]
		if sp == nil {
			sp = &span{driverDeploy: -1, firstTask: -1, driverFinish: -1, driverRelease: -1}
			spans[ev.Job] = sp
		}
		switch {
		case ev.Task == "driver" && ev.Event == "deploy":
			sp.driverDeploy = ev.T
		case ev.Task == "driver" && ev.Event == "finish":
			sp.driverFinish = ev.T
		case ev.Task == "driver" && ev.Event == "release":
			sp.driverRelease = ev.T
		case ev.Task == "driver":
			t.Errorf("a driver's %s: %s", ev.Event, l)
		case ev.Event == "deploy" && sp.firstTask < 0:
			sp.firstTask = ev.T
		case ev.Event == "finish":
			sp.lastTask = ev.T
		}
	}
	require.Len(t, spans, 4)
	for job, sp := range spans {
		assert.GreaterOrEqual(t, sp.driverDeploy, int64(0), "%s: its driver is deployed", job)
		assert.GreaterOrEqual(t, sp.firstTask, sp.driverDeploy+200, "%s: its tasks come its driver's startup (1000 ms, scaled) after it", job)
		assert.GreaterOrEqual(t, sp.driverFinish, sp.lastTask, "%s: its driver finishes with the job", job)
		assert.Equal(t, sp.driverFinish, sp.driverRelease, "%s: its driver's slot is released", job)
	}
	noPodsOf(t, c, runIDOf(t, res.stdout))
}

// startRun starts the command as a child process, running FLIP-119 with
// tasks of 20 s, and returns it and its run id once its first pods are
// bound.
func startRun(t *testing.T, c kubernetes.Interface, flags []string) (*exec.Cmd, string, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append(append([]string{"run", "--duration-scale", "20", "--poll", "50ms"}, flags...), flip119)...)
	cmd.Env = append(os.Environ(), asCommand+"=1")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	first, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "stderr: %s", stderr.String())
	go io.Copy(io.Discard, out) //nolint:errcheck // the rest of the summary
	run := runIDOf(t, first)
	k8stest.WaitFor(t, 30*time.Second, "the run's first pods", func() bool {
		left, err := rsk8s.Leftovers(context.Background(), c, "default", run)
		return err == nil && len(left) > 0
	})
	return cmd, run, stderr
}

// TestIntegrationCLISIGTERM: a run told to stop in the middle deletes its
// pods before it exits, within seconds, and exits 1.
func TestIntegrationCLISIGTERM(t *testing.T) {
	c := k8stest.Client(t)
	cmd, run, stderr := startRun(t, c, fakeNodes(t, c, 4))
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	took := time.Since(start)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", stderr)
	assert.Equal(t, 1, ee.ExitCode(), "stderr: %s", stderr)
	assert.Less(t, took, 10*time.Second)
	t.Logf("SIGTERM to exit with every pod deleted: %v", took)
	noPodsOf(t, c, run)
}

// TestIntegrationCLISIGKILL: the pods of a runner killed outright are
// found by leftovers, its runner gone, and deleted by leftovers --delete.
func TestIntegrationCLISIGKILL(t *testing.T) {
	c := k8stest.Client(t)
	flags := fakeNodes(t, c, 4)
	cmd, run, _ := startRun(t, c, flags)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	left, err := rsk8s.Leftovers(context.Background(), c, "default", run)
	require.NoError(t, err)
	require.NotEmpty(t, left)

	res := execCLI(t, "leftovers", "--kubernetes", "--kubeconfig", k8stest.Kubeconfig(), "--run", run)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, fmt.Sprintf("run %s: %s, runner gone (no process %d on this host)", run, plural.Count(len(left), "pod"), cmd.Process.Pid))
	noPodsLeft, err := rsk8s.Leftovers(context.Background(), c, "default", run)
	require.NoError(t, err)
	assert.Len(t, noPodsLeft, len(left), "listing deletes nothing")

	res = execCLI(t, "leftovers", "--kubeconfig", k8stest.Kubeconfig(), "--run", run, "--delete")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "deleted "+plural.Count(len(left), "pod"))
	noPodsOf(t, c, run)
	res = execCLI(t, "leftovers", "--kubeconfig", k8stest.Kubeconfig(), "--run", run)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, "no pod of a regionsched run is left in namespace default\n", res.stdout)
}

// TestIntegrationCLIPreemptEvents: the preempt example on 2 one-slot
// nodes, with its events file: the summary is simulate's, its event lines
// (the change applied, the kill refused) and its restarts (each slot
// reclaimed a failover that restarts its region) too.
func TestIntegrationCLIPreemptEvents(t *testing.T) {
	c := k8stest.Client(t)
	flags := fakeNodes(t, c, 2)
	const dir = "../../../examples/jobs/preempt/"
	res := execCLI(t, append(append([]string{"run", "--poll", "50ms", "--cluster", dir + "cluster.json", "--events", dir + "events.jsonl"}, flags...),
		dir+"low.json", dir+"high.json", dir+"urgent.json")...)
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	t.Logf("summary:\n%s", res.stdout)
	noPodsOf(t, c, runIDOf(t, res.stdout))
	assert.Contains(t, res.stdout, "\nevent 2200 ms: alice set-priority urgent 500 -> 9500: applied\n")
	assert.Contains(t, res.stdout, "\nevent 3000 ms: mallory kill low: refused: \"mallory\" has no role")
	assert.Contains(t, res.stdout, "\nrestarts:          2 (regions restarted: 2)\n")
	assert.Contains(t, res.stdout, "\nreclaims:          2 (slots reclaimed: 2, withdrawn before the timeout: 0)\n")
	assert.NotContains(t, res.stdout, "failed: restarted", "the failovers of several jobs are counted, not listed, as in simulate")
	assert.Regexp(t, `finished: all 3 jobs finished at \d+ ms\n$`, res.stdout)
}
