package engine

import (
	"context"
	"errors"
	"testing"
)

// TestPipeStallsProducer: a pipelined channel holds pipeCapacity records;
// the next send blocks until the consumer reads (here: until the
// producer's context ends), so a producer never runs ahead of a consumer
// that does not run.
func TestPipeStallsProducer(t *testing.T) {
	e := &engine{pipes: map[pipeKey]*pipe{}}
	ch := e.pipeFor(0, 7, 0)
	if e.pipeFor(0, 7, 0) != ch || e.pipeFor(0, 7, 1) == ch {
		t.Fatal("one channel per consumer and region attempt")
	}
	p := pipeTarget{ch: e.pipeFor(0, 7, 2)}
	for i := range pipeCapacity {
		if err := p.send(context.Background(), Record{Key: "w", N: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.send(ctx, Record{Key: "w"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("send into a full channel: %v, want it to block until canceled", err)
	}
}

// TestWordsAndRank pins the tokenizer and the order of a result.
func TestWordsAndRank(t *testing.T) {
	if got := Words(`"Oh dear! Oh dear! I shall be late!" - people's 1865`); len(got) != 11 || got[0] != "oh" || got[8] != "people" || got[9] != "s" || got[10] != "1865" {
		t.Fatalf("Words: %q", got)
	}
	got := Rank(map[string]int64{"b": 2, "a": 2, "c": 3, "d": 1}, 3)
	want := []WordCount{{"c", 3}, {"a", 2}, {"b", 2}}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("Rank: %v, want %v", got, want)
	}
}
