package main

// regionsched run --slurm as an operator sees it, against a running
// slurmctld: signals, SIGKILL and leftovers, drained nodes, pending
// reasons, one query per poll. Skipped without a cluster, failed when
// REGIONSCHED_SLURM=require.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/internal/slurmtest"
	"github.com/regionsched/regionsched/slurm"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// regionschedBinary builds the command once per test binary.
func regionschedBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "regionsched-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "regionsched")
		out, err := exec.Command("go", "build", "-buildvcs=false", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

// startedRun is a regionsched run --slurm started as a process.
type startedRun struct {
	cmd  *exec.Cmd
	id   string // the run id it printed
	out  *lockedBuffer
	done chan error
}

// lockedBuffer is a buffer written by a process and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startRun starts regionsched run --slurm with args and waits until it
// printed its run id and holds at least one allocation.
func startRun(t *testing.T, conf string, args ...string) *startedRun {
	t.Helper()
	cmd := exec.Command(regionschedBinary(t), append([]string{"run", "--slurm", "--slurm-conf", conf}, args...)...)
	out := &lockedBuffer{}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = io.MultiWriter(out, pw), out
	require.NoError(t, cmd.Start())
	r := &startedRun{cmd: cmd, out: out, done: make(chan error, 1)}
	go func() {
		err := cmd.Wait()
		pw.Close()
		r.done <- err
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})
	sc := bufio.NewScanner(pr)
	require.True(t, sc.Scan(), "the first line: %s", out.String())
	line := sc.Text()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	f := strings.Fields(line)
	require.True(t, len(f) > 1 && f[0] == "run", "the first line names the run: %q", line)
	r.id = strings.TrimSuffix(f[1], ":")
	deadline := time.Now().Add(30 * time.Second)
	for len(taggedJobs(t, conf, r.id)) == 0 {
		require.True(t, time.Now().Before(deadline), "no allocation of run %s in 30 s: %s", r.id, out.String())
		time.Sleep(100 * time.Millisecond)
	}
	return r
}

// taggedJobs lists the live Slurm jobs of a run, by its tag.
func taggedJobs(t *testing.T, conf, run string) []slurm.Leftover {
	t.Helper()
	left, err := (&slurm.ExecClient{Conf: conf}).Leftovers(context.Background(), run)
	require.NoError(t, err)
	return left
}

// waitNoTagged waits up to limit for the run to have no live Slurm job.
func waitNoTagged(t *testing.T, conf, run string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		left := taggedJobs(t, conf, run)
		if len(left) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("run %s still has Slurm jobs after %s: %+v", run, limit, left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestSlurmSignalsCancelEverything(t *testing.T) {
	conf := slurmtest.Require(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			r := startRun(t, conf, "--mode", "all-blocking", "--duration-scale", "1", flip119Path)
			require.NoError(t, r.cmd.Process.Signal(sig))
			select {
			case err := <-r.done:
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, r.out.String())
				assert.Equal(t, exitNegative, ee.ExitCode(), r.out.String())
			case <-time.After(30 * time.Second):
				t.Fatalf("still running 30 s after %v: %s", sig, r.out.String())
			}
			assert.Contains(t, r.out.String(), "interrupted: every allocation of the run was cancelled")
			// A cancelled job stays COMPLETING until slurmd has ended its
			// processes: seconds on a machine busy with other work.
			took := waitNoTagged(t, conf, r.id, 30*time.Second)
			t.Logf("%v: no allocation left %s after the exit", sig, took)
		})
	}
}

func TestSlurmSIGKILLLeavesWhatTheTimeLimitAndLeftoversEnd(t *testing.T) {
	conf := slurmtest.Require(t)
	// Two runs killed at once: Slurm ends the first one's allocations at
	// their time limit, leftovers cancels the second one's.
	timed := startRun(t, conf, "--mode", "all-pipelined", "--partition", "cpus4", "--duration-scale", "10", "--time-limit", "1m", flip119Path)
	left := startRun(t, conf, "--mode", "all-blocking", "--partition", "low", "--duration-scale", "10", flip119Path)
	require.NoError(t, timed.cmd.Process.Kill())
	require.NoError(t, left.cmd.Process.Kill())
	<-timed.done
	<-left.done

	for _, j := range taggedJobs(t, conf, timed.id) {
		out, err := slurmtest.Command(conf, "squeue", "-h", "-j", fmt.Sprint(j.Job), "-o", "%l")
		require.NoError(t, err, out)
		assert.Equal(t, "1:00", strings.TrimSpace(out), "job %d has the time limit asked", j.Job)
	}
	res := execCLI(t, "", "leftovers", "--slurm", "--slurm-conf", conf)
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "run "+timed.id+": ")
	assert.Contains(t, res.stdout, "run "+left.id+": ")
	assert.Contains(t, res.stdout, "runner gone")
	res = execCLI(t, "", "leftovers", "--slurm", "--slurm-conf", conf, "--run", left.id, "--cancel")
	require.Equal(t, exitOK, res.code, res.stderr+res.stdout)
	assert.Contains(t, res.stdout, "cancelled")
	assert.NotContains(t, res.stdout, timed.id, "--run keeps to its run")
	waitNoTagged(t, conf, left.id, 30*time.Second)
	assert.NotEmpty(t, taggedJobs(t, conf, timed.id), "the other run's allocations wait for their time limit")
	took := waitNoTagged(t, conf, timed.id, 3*time.Minute)
	t.Logf("the allocations of the killed run ended at their time limit, %s after the kill", took)
	res = execCLI(t, "", "leftovers", "--slurm", "--slurm-conf", conf, "--run", timed.id)
	assert.Contains(t, res.stdout, "no Slurm job of a regionsched run is left")
}

// drainN4 drains node n4 for the test and resumes it afterwards.
// The noticePrinter prints an outage as two lines and a summary, and
// the command's logger writes no stack trace.
func TestNoticesAndWarningsArePlainLines(t *testing.T) {
	var b bytes.Buffer
	n := &noticePrinter{w: &b}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n.print(slurm.Notice{Kind: slurm.OutageBegan, At: t0, Op: "query", Err: &slurm.CommandError{Command: "squeue", Args: []string{"--json"},
		Stderr: "squeue: error: Unable to contact slurm controller (connect failure)\n", Err: slurm.ErrUnreachable}})
	n.print(slurm.Notice{Kind: slurm.OutageEnded, At: t0.Add(5 * time.Second), Duration: 5123 * time.Millisecond, Failures: 4})
	n.print(slurm.Notice{Kind: slurm.Waiting, Job: "etl", Wait: slurm.Wait{Name: "rs-etl-r-j0-a2", Job: 17, Reason: "Resources"}, Duration: 6 * time.Second})
	n.summary()
	assert.Equal(t, `slurm: controller unreachable (squeue: error: Unable to contact slurm controller (connect failure)); retrying
slurm: controller answering again after 5.123s (4 commands failed meanwhile)
slurm: job etl: allocation rs-etl-r-j0-a2 (Slurm job 17) pending for 6s: Resources
slurm outages: 1, 5.123s in all
`, b.String())

	var logged bytes.Buffer
	stderrLogger(&logged).Warn("slurm controller unreachable", zap.Error(fmt.Errorf("boom")))
	assert.Equal(t, 1, strings.Count(logged.String(), "\n"), "one line, no stack trace: %q", logged.String())
}
