package main

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"go.uber.org/goleak"

	"github.com/regionsched/regionsched/examples/wordcount/internal/engine"
	"github.com/regionsched/regionsched/topology"
)

// TestMain fails the package if a test leaves a goroutine behind (a task,
// an input reader, the driver's loop or its timer).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// safetyNet bounds every run: a hang fails the test instead of the whole
// package. Runs take milliseconds; nothing waits for it.
const safetyNet = 20 * time.Second

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyNet)
	t.Cleanup(cancel)
	return ctx
}

// reference is the single-threaded word count the runtime must agree
// with: lower-cased runs of letters and digits, counted, ordered by count
// (largest first) then word, the first k (all if k <= 0).
func reference(lines []string, k int) []engine.WordCount {
	counts := map[string]int64{}
	for _, line := range lines {
		notWord := func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
		for _, w := range strings.FieldsFunc(strings.ToLower(line), notWord) {
			counts[w]++
		}
	}
	var out []engine.WordCount
	for w, n := range counts {
		out = append(out, engine.WordCount{Word: w, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Word < out[j].Word
	})
	if k > 0 && len(out) > k {
		out = out[:k]
	}
	return out
}

// text is the program's built-in input.
func text(t testing.TB) []string {
	t.Helper()
	lines, err := loadText()
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// wordcountJob is examples/jobs/wordcount.json.
func wordcountJob(t testing.TB) *topology.JobGraph {
	t.Helper()
	job, err := loadJob("../jobs/wordcount.json")
	if err != nil {
		t.Fatal(err)
	}
	return job
}

func TestReferenceIsNotTrivial(t *testing.T) {
	ref := reference(text(t), 0)
	if len(ref) < 200 || ref[0] != (engine.WordCount{Word: "the", Count: 41}) {
		t.Fatalf("reference of the built-in text: %d words, first %v", len(ref), ref[:min(3, len(ref))])
	}
}
