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
	code := run(testContext(t), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// runCLIWithInput is runCLI with stdin as standard input.
func runCLIWithInput(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(testContext(t), args, strings.NewReader(stdin), &stdout, &stderr)
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

// TestCLIHybridOutputIsTheSame: --mode all-hybrid-full (and Flink's names of
// both hybrid modes) runs, and standard output is byte for byte that of
// every other mode, on one slot and on enough slots for the consumers to
// read their producers' results live, with and without a failure.
func TestCLIHybridOutputIsTheSame(t *testing.T) {
	want := ""
	for _, mode := range []string{"all-blocking", "all-pipelined", "pointwise-pipelined-only", "all-hybrid-full",
		"ALL_EXCHANGES_HYBRID_FULL", "ALL_EXCHANGES_HYBRID_SELECTIVE"} {
		for _, args := range [][]string{{"--slots", "15"}, {"--slots", "4", "--fail", "counter#1"}, {"--slots", "1"}} {
			if (mode == "all-pipelined" || mode == "pointwise-pipelined-only") && args[1] == "1" {
				continue // their largest regions need 4 and 2 slots
			}
			code, out, errOut := runCLI(t, append([]string{"--mode", mode, "--top", "0"}, args...)...)
			if code != 0 {
				t.Fatalf("%s %v: exit %d: %s", mode, args, code, errOut)
			}
			if want == "" {
				want = out
				if want != formatted(t, 0) {
					t.Fatalf("%s %v: output differs from the reference", mode, args)
				}
			}
			if out != want {
				t.Fatalf("%s %v: output differs from all-blocking's (%d bytes, want %d)", mode, args, len(out), len(want))
			}
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

// TestCLIInput counts the text of --input FILE, and of standard input
// for --input -, instead of the built-in text.
func TestCLIInput(t *testing.T) {
	const text = "The cat and the dog.\r\nA cat, the end\n\nthe"
	lines := []string{"The cat and the dog.", "A cat, the end", "", "the"}
	want := func(k int) string {
		var b strings.Builder
		for _, wc := range reference(lines, k) {
			fmt.Fprintf(&b, "%d %s\n", wc.Count, wc.Word)
		}
		return b.String()
	}
	if got := want(3); got != "4 the\n2 cat\n1 a\n" {
		t.Fatalf("reference of the test text: %q", got)
	}
	file := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--input", file}, {"--input", "-"}} {
		code, out, errOut := runCLIWithInput(t, text, append(args, "--top", "3", "--mode", "pointwise-pipelined-only")...)
		if code != 0 || out != want(3) {
			t.Errorf("%v: exit %d, stdout %q, want %q; stderr:\n%s", args, code, out, want(3), errOut)
		}
	}
	code, out, errOut := runCLIWithInput(t, "", "--input", "-", "--top", "0")
	if code != 0 || out != "" {
		t.Errorf("empty input: exit %d, stdout %q; stderr:\n%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "--input", filepath.Join(t.TempDir(), "missing.txt"))
	if code != 2 || !strings.Contains(errOut, "--input") || !strings.Contains(errOut, "missing.txt") {
		t.Errorf("missing input: exit %d, stderr %q", code, errOut)
	}
}

// TestCLIFailSyntax: --fail takes simulate's ID#i@MS, and per job
// wc-2:ID#i@MS; a bad time or subtask is bad usage naming the form.
func TestCLIFailSyntax(t *testing.T) {
	code, out, errOut := runCLI(t, "--slots", "2", "--mode", "pointwise-pipelined-only", "--fail", "counter#1@0")
	if code != 0 || out != formatted(t, 10) || !strings.Contains(errOut, "failed: counter#1") || !strings.Contains(errOut, ", 1 failover, ") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "--jobs", "2", "--slots", "2", "--fail", "wc-2:counter#1@0", "--top", "1")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	summaries := 0 // job priority submitted first-deploy ended outcome deployments failovers restarts peak
	for _, l := range strings.Split(errOut, "\n") {
		f := strings.Fields(l)
		if len(f) == 10 && (f[0] == "wc-1" || f[0] == "wc-2") {
			summaries++
			if want := map[string]string{"wc-1": "0", "wc-2": "1"}[f[0]]; f[7] != want {
				t.Errorf("%s: %s failovers, want %s", f[0], f[7], want)
			}
		}
	}
	if summaries != 2 {
		t.Errorf("%d job summary lines, want 2:\n%s", summaries, errOut)
	}
	for _, tc := range []struct{ fail, msg string }{
		{"counter#1@x", `--fail "counter#1@x": "x" is not a non-negative number of milliseconds (the form is ID#i@MS, e.g. counter#1@5)`},
		{"counter#1@-5", `"-5" is not a non-negative number of milliseconds`},
		{"counter#9@5", `--fail "counter#9@5"`},
		{"wc-3:counter#1@5", `no job "wc-3"`},
	} {
		args := []string{"--fail", tc.fail}
		if strings.HasPrefix(tc.fail, "wc-") {
			args = append(args, "--jobs", "2")
		}
		code, out, errOut := runCLI(t, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.msg) {
			t.Errorf("--fail %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.fail, code, out, errOut, tc.msg)
		}
	}
}
