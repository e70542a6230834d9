package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// run --kubernetes and leftovers --kubernetes are done by a program of
// their own, built from the module of the Kubernetes backend, so that
// this command compiles nothing of client-go: regionsched runs it with
// the same arguments, standard input, output and error, forwards SIGINT
// and SIGTERM to it, and exits with its exit code, as git and kubectl do
// with their plugins.

// kubernetesProgram is the program of the Kubernetes backend.
const kubernetesProgram = "regionsched-kubernetes"

// errNoKubernetesProgram is the error of a --kubernetes without the
// program of the Kubernetes backend.
var errNoKubernetesProgram = errors.New(kubernetesProgram + " not found")

// kubernetesCommand returns the command args ask of the Kubernetes
// backend's program, if they do: run or leftovers with --kubernetes
// (before any "--").
func kubernetesCommand(root *cobra.Command, args []string) (string, bool) {
	name := firstPositional(root, args)
	if name != "run" && name != "leftovers" {
		return "", false
	}
	for _, a := range args {
		if a == "--" {
			return "", false
		}
		if v, ok := strings.CutPrefix(a, "--kubernetes"); ok && (v == "" || strings.HasPrefix(v, "=")) {
			on, err := strconv.ParseBool(strings.TrimPrefix(v, "="))
			return name, v == "" || (err == nil && on)
		}
	}
	return "", false
}

// findKubernetesProgram looks for the program of the Kubernetes backend
// beside the running program, then on PATH.
func findKubernetesProgram() (string, error) {
	self, err := os.Executable()
	if err == nil {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		beside := filepath.Join(filepath.Dir(self), kubernetesProgram)
		if st, err := os.Stat(beside); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(kubernetesProgram); err == nil {
		return p, nil
	}
	where := "on PATH"
	if self != "" {
		where = "in " + filepath.Dir(self) + " nor on PATH"
	}
	return "", fmt.Errorf("%w %s: --kubernetes runs that program; build it with make build (it goes into bin/ beside regionsched), or with go install ./cmd/%s in the kubernetes directory of the source repository (its own Go module)",
		errNoKubernetesProgram, where, kubernetesProgram)
}

// runKubernetes runs the program of the Kubernetes backend with args (of
// its command name) and returns its exit code: SIGINT and SIGTERM this process gets go to it,
// and a program killed by a signal is 128 plus the signal's number, as
// shells say.
func runKubernetes(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	path, err := findKubernetesProgram()
	if err != nil {
		fmt.Fprintf(stderr, "regionsched %s: %v\n", name, err)
		return exitBadInput
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "regionsched %s: starting %s: %v\n", name, path, err)
		return exitBadInput
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	default:
		fmt.Fprintf(stderr, "regionsched %s: %s: %v\n", name, path, err)
		return exitBadInput
	}
}
