package main

// run --kubernetes and leftovers --kubernetes run the program of the
// Kubernetes backend: here a fake one, a shell script that says what it
// got.

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeKubernetesProgram writes a regionsched-kubernetes script into dir:
// it prints its arguments and standard input, says something on standard
// error, and exits with 3.
func fakeKubernetesProgram(t *testing.T, dir, script string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, kubernetesProgram), []byte("#!/bin/sh\n"+script), 0o755))
}

const echoScript = `echo "args: $*"
echo "stdin: $(cat)"
echo "to stderr" >&2
exit 3
`

func TestKubernetesForwarded(t *testing.T) {
	dir := t.TempDir()
	fakeKubernetesProgram(t, dir, echoScript)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, args := range [][]string{
		{"run", "--kubernetes", "--kubeconfig", "kc", "--namespace", "batch", "job.json"},
		{"--mode", "all-pipelined", "run", "--trace", "-", "--kubernetes=true", "a.json", "b.json"},
		{"leftovers", "--kubernetes", "--run", "vm-12-abc", "--delete"},
	} {
		res := execCLI(t, "the input", args...)
		assert.Equal(t, 3, res.code, "its exit code: %v", args)
		assert.Equal(t, "args: "+strings.Join(args, " ")+"\nstdin: the input\n", res.stdout, "the same arguments, and standard input")
		assert.Equal(t, "to stderr\n", res.stderr)
	}
	// Not for Kubernetes: regionsched's own commands.
	for _, args := range [][]string{
		{"run", "--kubernetes=false", flip119Path},
		{"run", "--slurm", "--duration-scale", "0", flip119Path, "--", "--kubernetes"},
		{"simulate", "--slots", "2", "--kubernetes", flip119Path},
	} {
		res := execCLI(t, "", args...)
		assert.Equal(t, exitBadInput, res.code, "%v", args)
		assert.NotContains(t, res.stdout, "args:", "%v", args)
	}
}

func TestKubernetesProgramMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, cmd := range []string{"run", "leftovers"} {
		res := execCLI(t, "", cmd, "--kubernetes")
		assert.Equal(t, exitBadInput, res.code)
		assert.Empty(t, res.stdout)
		assert.Contains(t, res.stderr, "regionsched "+cmd+": regionsched-kubernetes not found")
		assert.Contains(t, res.stderr, "make build")
		assert.Contains(t, res.stderr, "go install ./cmd/regionsched-kubernetes in the kubernetes directory")
		_, err := findKubernetesProgram()
		assert.ErrorIs(t, err, errNoKubernetesProgram)
	}
}

// The program beside regionsched is found first, and the signals
// regionsched gets go to it; its exit code comes back.
func TestKubernetesBesideAndSignals(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "regionsched")
	data, err := os.ReadFile(regionschedBinary(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	fakeKubernetesProgram(t, dir, `trap 'echo "got TERM"; exit 7' TERM
trap 'echo "got INT"; exit 8' INT
echo "ready $*"
while :; do sleep 0.05; done
`)
	onPath := t.TempDir()
	fakeKubernetesProgram(t, onPath, echoScript) // not the one run: the one beside comes first
	for sig, want := range map[syscall.Signal]struct {
		line string
		code int
	}{syscall.SIGTERM: {"got TERM", 7}, syscall.SIGINT: {"got INT", 8}} {
		cmd := exec.Command(bin, "run", "--kubernetes", "job.json")
		cmd.Env = append(os.Environ(), "PATH="+onPath+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		r := bufio.NewReader(out)
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "ready run --kubernetes job.json\n", line)
		require.NoError(t, cmd.Process.Signal(sig))
		rest, err := io.ReadAll(r)
		require.NoError(t, err)
		assert.Equal(t, want.line+"\n", string(rest))
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("regionsched did not exit after %v", sig)
		}
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "%v", err)
		assert.Equal(t, want.code, ee.ExitCode(), "%v", sig)
	}
}
