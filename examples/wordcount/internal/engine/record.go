package engine

import (
	"sort"
	"strings"
	"unicode"
)

// Record is what flows on an edge: a key and a count. A line of text is a
// record whose Key is the line (and N is 0); a word count is a record
// whose Key is the word.
type Record struct {
	Key string
	N   int64
}

// WordCount is one line of a result.
type WordCount struct {
	Word  string
	Count int64
}

// Words splits a line into lower-case words: maximal runs of letters and
// digits.
func Words(line string) []string {
	return strings.FieldsFunc(strings.ToLower(line), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Rank orders counts by count, largest first, then by word, and keeps the
// first k (all of them if k <= 0).
func Rank(counts map[string]int64, k int) []WordCount {
	out := make([]WordCount, 0, len(counts))
	for w, n := range counts {
		out = append(out, WordCount{Word: w, Count: n})
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
