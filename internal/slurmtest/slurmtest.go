// Package slurmtest finds the Slurm cluster the integration tests run
// against, and skips them (or, with REGIONSCHED_SLURM=require, fails
// them) when there is none:
//
//	func TestOnSlurm(t *testing.T) {
//		conf := slurmtest.Require(t) // the slurm.conf to use
//		client := &slurm.ExecClient{Conf: conf}
//		...
//		slurmtest.NoLiveJobs(t, conf, "rs-mytest-") // nothing leaked
//	}
//
// The cluster is the one SLURM_CONF names, or else the one
// scripts/slurm-up.sh started (make slurm-up) under REGIONSCHED_SLURM_DIR
// (default /tmp/regionsched-slurm).
package slurmtest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Env is the environment variable that makes a missing cluster a
// failure when set to "require" (.ci/run sets it).
const Env = "REGIONSCHED_SLURM"

// DefaultDir is where scripts/slurm-up.sh puts its cluster.
const DefaultDir = "/tmp/regionsched-slurm"

// Dir returns the directory of scripts/slurm-up.sh's cluster.
func Dir() string {
	if d := os.Getenv("REGIONSCHED_SLURM_DIR"); d != "" {
		return d
	}
	return DefaultDir
}

// Conf returns the slurm.conf the tests use: SLURM_CONF, or the one of
// scripts/slurm-up.sh if it exists; "" if neither.
func Conf() string {
	if c := os.Getenv("SLURM_CONF"); c != "" {
		return c
	}
	c := filepath.Join(Dir(), "etc", "slurm.conf")
	if _, err := os.Stat(c); err == nil {
		return c
	}
	return ""
}

// Require returns the slurm.conf of a reachable cluster (sinfo answers),
// or skips the test saying why (fails it when REGIONSCHED_SLURM=require).
// The test then has the cluster to itself until it ends: tests of
// different packages (which go test runs at once) take turns, so that
// one's preemption does not hit another's allocations.
func Require(t testing.TB) string {
	t.Helper()
	conf, why := probe()
	if why == "" {
		lock(t, conf)
		return conf
	}
	if os.Getenv(Env) == "require" {
		t.Fatalf("%s=require: %s", Env, why)
	}
	t.Skip(why)
	return ""
}

// Missing skips a test that lacks something it needs on the cluster or
// the machine (root, a user, a partition) and says what; with
// REGIONSCHED_SLURM=require it fails instead: a CI run that must test
// against Slurm tests everything.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(Env) == "require" {
		t.Fatalf("%s=require: %s", Env, why)
	}
	t.Skip(why)
}

var (
	probeOnce sync.Once
	probeConf string
	probeWhy  string
)

// probe finds the cluster once per test binary (an unreachable
// controller takes seconds to say so): its slurm.conf, or why there is
// none.
func probe() (conf, why string) {
	probeOnce.Do(func() {
		probeConf = Conf()
		if probeConf == "" {
			probeWhy = "no Slurm cluster: SLURM_CONF is not set and " + filepath.Join(Dir(), "etc", "slurm.conf") + " does not exist (make slurm-up starts one)"
		} else if out, err := Command(probeConf, "sinfo", "-h", "-o", "%P"); err != nil {
			probeWhy = "no Slurm cluster reachable with " + probeConf + ": sinfo: " + err.Error() + ": " + strings.TrimSpace(out)
		}
	})
	return probeConf, probeWhy
}

// lock takes the test lock of the cluster of conf (a file lock in the
// temporary directory, one per slurm.conf) until the test ends.
func lock(t testing.TB, conf string) {
	t.Helper()
	sum := sha256.Sum256([]byte(conf))
	name := fmt.Sprintf("regionsched-slurm-tests-%x.lock", sum[:6])
	f, err := os.OpenFile(filepath.Join(os.TempDir(), name), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("slurm test lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("slurm test lock: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}

// Command runs a Slurm command against conf with a 15 s timeout and
// returns its combined output.
func Command(conf, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// LiveJobs returns "id name state" of the jobs whose name starts with
// prefix and that have not ended, completing ones included (cancelled,
// Slurm is still cleaning up their nodes).
func LiveJobs(t testing.TB, conf, prefix string) []string {
	t.Helper()
	out, err := Command(conf, "squeue", "-h", "-t", "all", "-o", "%i %j %T")
	if err != nil {
		t.Fatalf("squeue: %v: %s", err, out)
	}
	var live []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || !strings.HasPrefix(f[1], prefix) {
			continue
		}
		switch f[2] {
		case "PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING":
			live = append(live, line)
		}
	}
	return live
}

// NoLiveJobs fails the test if jobs named prefix* are still pending or
// running 20 s from now (allocations cancelled at the end take a moment).
// Jobs still COMPLETING then were cancelled and are only logged: after a
// controller restart, Slurm 22.05 completes a job whose step ended
// during the outage only when that step's slurmstepd retries (about a
// minute later).
func NoLiveJobs(t testing.TB, conf, prefix string) {
	t.Helper()
	start := time.Now()
	for {
		live := LiveJobs(t, conf, prefix)
		if len(live) == 0 {
			return
		}
		completing := 0
		for _, l := range live {
			if strings.HasSuffix(l, " COMPLETING") {
				completing++
			}
		}
		if since := time.Since(start); since > 20*time.Second || (since > 5*time.Second && completing == len(live)) {
			var held []string
			for _, l := range live {
				if !strings.HasSuffix(l, " COMPLETING") {
					held = append(held, l)
				}
			}
			if len(held) > 0 {
				t.Errorf("Slurm jobs leaked: %v", held)
			} else {
				t.Logf("cancelled, still completing in Slurm: %v", live)
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
