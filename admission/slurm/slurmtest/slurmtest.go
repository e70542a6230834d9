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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
func Require(t testing.TB) string {
	t.Helper()
	conf := Conf()
	why := ""
	if conf == "" {
		why = "no Slurm cluster: SLURM_CONF is not set and " + filepath.Join(Dir(), "etc", "slurm.conf") + " does not exist (make slurm-up starts one)"
	} else if out, err := Command(conf, "sinfo", "-h", "-o", "%P"); err != nil {
		why = "no Slurm cluster reachable with " + conf + ": sinfo: " + err.Error() + ": " + strings.TrimSpace(out)
	}
	if why == "" {
		return conf
	}
	if os.Getenv(Env) == "require" {
		t.Fatalf("%s=require: %s", Env, why)
	}
	t.Skip(why)
	return ""
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
// prefix and that have not ended (completing ones count: they still hold
// resources).
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

// NoLiveJobs fails the test if jobs named prefix* are still alive 20 s
// from now (allocations cancelled at the end take a moment to complete).
func NoLiveJobs(t testing.TB, conf, prefix string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		live := LiveJobs(t, conf, prefix)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("Slurm jobs leaked: %v", live)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
