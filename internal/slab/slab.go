// Package slab carves lists handed out one after another from shared
// chunks, so that a short list costs no allocation of its own.
package slab

// minChunk is the least number of entries in a chunk.
const minChunk = 256

// Slab builds one list at a time at the end of its current chunk. A list
// handed out (Take) is the caller's: its capacity ends with it, so an
// append by the caller copies it, and the slab never writes it again. A
// chunk lives as long as any list carved from it. The zero Slab is empty.
//
// The scheduler's Ready values and the strategy's Decisions are built
// in slabs: a runtime that applies one after every input (the simulator)
// takes millions of lists of one entry or two.
type Slab[T any] struct {
	chunk []T // the list being built is chunk[open:]
	open  int
}

// Add appends x to the list being built.
func (s *Slab[T]) Add(x T) {
	if len(s.chunk) == cap(s.chunk) {
		n := len(s.chunk) - s.open
		c := make([]T, n, max(2*n, minChunk))
		copy(c, s.chunk[s.open:])
		s.chunk, s.open = c, 0
	}
	s.chunk = append(s.chunk, x)
}

// List returns the list being built, to read or change in place.
func (s *Slab[T]) List() []T { return s.chunk[s.open:] }

// Take hands out the list being built (nil if it is empty) and starts
// the next one.
func (s *Slab[T]) Take() []T {
	n := len(s.chunk)
	if s.open == n {
		return nil
	}
	l := s.chunk[s.open:n:n]
	s.open = n
	return l
}
