package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runCLI runs the program with args and returns its exit status and
// outputs.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(testContext(t), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// formatted is the expected standard output for the reference.
func formatted(t *testing.T, k int) string {
	var b strings.Builder
	for _, wc := range reference(text(t), k) {
		fmt.Fprintf(&b, "%d %s\n", wc.Count, wc.Word)
	}
	return b.String()
}

var timelineLine = regexp.MustCompile(`(?m)^(\d+) +(\d+) +[\d.]+ms +[\d.]+ms +(\S.*?) +\[[\d ]+\] +(\S.*)$`)

// TestCLIDefaultJob runs the package documentation's command: the default graph, a
// failure, the top 10 on standard output and one line per region attempt
// on standard error.
func TestCLIDefaultJob(t *testing.T) {
	code, out, errOut := runCLI(t, "--slots", "2", "--mode", "pointwise-pipelined-only", "--fail", "counter#1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := formatted(t, 10); out != want {
		t.Fatalf("standard output:\n%s\nwant\n%s", out, want)
	}
	lines := timelineLine.FindAllStringSubmatch(errOut, -1)
	// 7 regions, and counter#1's region again.
	if len(lines) != 8 || !strings.Contains(errOut, "failed: counter#1") {
		t.Fatalf("timeline of %d region attempts:\n%s", len(lines), errOut)
	}
	for _, l := range lines {
		if l[3] == "failed: counter#1" && !strings.Contains(l[4], "counter#1") {
			t.Fatalf("failed region does not list counter#1: %q", l[0])
		}
	}
}

// TestCLIJobFile runs another graph given with --job, printing every word.
func TestCLIJobFile(t *testing.T) {
	job := filepath.Join(t.TempDir(), "job.json")
	graph := `{"name": "small", "vertices": [
  {"id": "text-source", "parallelism": 1}, {"id": "tokenizer", "parallelism": 3},
  {"id": "counter", "parallelism": 2}, {"id": "result-sink", "parallelism": 1}],
 "edges": [
  {"source": "text-source", "target": "tokenizer", "shipStrategy": "rebalance"},
  {"source": "tokenizer", "target": "counter", "shipStrategy": "hash"},
  {"source": "counter", "target": "result-sink", "shipStrategy": "rebalance"}]}`
	if err := os.WriteFile(job, []byte(graph), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "--job", job, "--mode", "all-pipelined", "--slots", "3", "--top", "0", "--fail", "tokenizer#2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := formatted(t, 0); out != want {
		t.Fatalf("standard output differs from the reference (%d bytes, want %d)", len(out), len(want))
	}
}

// TestCLIErrors: bad usage exits 2, too few slots exits 1 with the
// scheduler's verdict.
func TestCLIErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--mode", "sideways"}, 2, "sideways"},
		{[]string{"--fail", "counter#9"}, 2, "counter#9"},
		{[]string{"--slots", "0"}, 2, "slots"},
		{[]string{"--job", "no-such-file.json"}, 2, "no-such-file.json"},
		{[]string{"extra"}, 2, "extra"},
		{[]string{"--mode", "all-pipelined", "--slots", "3"}, 1, "needs 4 slots at once"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out, errOut, tc.code, tc.msg)
		}
	}
}
