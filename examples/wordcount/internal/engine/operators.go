package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// The operators a vertex can run, named by its id (or the part of the id
// before the first '.', so that a graph may hold two counters,
// "counter.left" and "counter.right").
const (
	// TextSource emits the input lines: subtask i of p takes lines i,
	// i+p, i+2p, ... It must have no input.
	TextSource = "text-source"
	// Tokenizer splits each line into words (Words) and emits (word, 1).
	Tokenizer = "tokenizer"
	// Counter sums the counts of each word and emits (word, sum) once its
	// input ended.
	Counter = "counter"
	// TopK sums the counts of each word and emits the Config.TopK largest
	// (all of them if TopK <= 0) once its input ended. With a hash edge
	// before it (or a forward one from a counter fed by one), each subtask
	// sees all of its words, and the top k of their union is the job's.
	TopK = "top-k"
	// ResultSink sums the counts of each word and emits them once its input
	// ended; placed last, its output is the job's result.
	ResultSink = "result-sink"
)

// Operators lists the operator names in the order of a typical pipeline.
func Operators() []string { return []string{TextSource, Tokenizer, Counter, TopK, ResultSink} }

// operator is the code of one subtask: it reads its input through io
// and emits through io until its input ended.
type operator func(ctx context.Context, io *taskIO) error

// operatorSpec is an operator and whether it is a source (takes no
// input; every other operator needs one).
type operatorSpec struct {
	run    operator
	source bool
}

// operatorOf returns the operator of a vertex id.
func operatorOf(id string, text []string, topK int) (operatorSpec, error) {
	name, _, _ := strings.Cut(id, ".")
	switch name {
	case TextSource:
		return operatorSpec{run: func(ctx context.Context, io *taskIO) error { return emitLines(ctx, io, text) }, source: true}, nil
	case Tokenizer:
		return operatorSpec{run: tokenize}, nil
	case Counter, ResultSink:
		return operatorSpec{run: func(ctx context.Context, io *taskIO) error { return sum(ctx, io, 0) }}, nil
	case TopK:
		return operatorSpec{run: func(ctx context.Context, io *taskIO) error { return sum(ctx, io, max(topK, 0)) }}, nil
	}
	return operatorSpec{}, fmt.Errorf("vertex %q: no operator %q (valid: %s)", id, name, strings.Join(Operators(), ", "))
}

// emitLines is the text source.
func emitLines(ctx context.Context, io *taskIO, text []string) error {
	for i := io.subtask; i < len(text); i += io.parallelism {
		if err := io.emit(ctx, Record{Key: text[i]}); err != nil {
			return err
		}
	}
	return nil
}

// tokenize is the tokenizer.
func tokenize(ctx context.Context, io *taskIO) error {
	for {
		rec, ok, err := io.next(ctx)
		if !ok {
			return err
		}
		for _, w := range Words(rec.Key) {
			if err := io.emit(ctx, Record{Key: w, N: 1}); err != nil {
				return err
			}
		}
	}
}

// sum adds up the counts of each key and, once the input ended, emits the
// sums: the k largest if k > 0, else all of them in key order.
func sum(ctx context.Context, io *taskIO, k int) error {
	counts := map[string]int64{}
	for {
		rec, ok, err := io.next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		counts[rec.Key] += rec.N
	}
	var out []Record
	if k > 0 {
		for _, wc := range Rank(counts, k) {
			out = append(out, Record{Key: wc.Word, N: wc.Count})
		}
	} else {
		for w, n := range counts {
			out = append(out, Record{Key: w, N: n})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	}
	for _, r := range out {
		if err := io.emit(ctx, r); err != nil {
			return err
		}
	}
	return nil
}
