package scheduler

// slabChunk is the least number of entries in a chunk of a slab.
const slabChunk = 256

// slab carves the lists of the Ready values the scheduler hands out from
// shared chunks, so that a Ready of a few entries costs no allocation of
// its own: a runtime that takes a Ready after every input (the simulator)
// takes millions. The list being built is the end of the current chunk;
// once handed out it is the caller's, like any slice of a Ready: its
// capacity ends with it (an append by the caller copies it), and the slab
// never writes it again. A chunk lives as long as any list carved from it.
type slab[T any] struct {
	chunk []T // the list being built is chunk[open:]
	open  int
}

// add appends x to the list being built.
func (s *slab[T]) add(x T) {
	if len(s.chunk) == cap(s.chunk) {
		n := len(s.chunk) - s.open
		c := make([]T, n, max(2*n, slabChunk))
		copy(c, s.chunk[s.open:])
		s.chunk, s.open = c, 0
	}
	s.chunk = append(s.chunk, x)
}

// list returns the list being built, to read or change in place.
func (s *slab[T]) list() []T { return s.chunk[s.open:] }

// take hands out the list being built (nil if it is empty) and starts
// the next one.
func (s *slab[T]) take() []T {
	n := len(s.chunk)
	if s.open == n {
		return nil
	}
	l := s.chunk[s.open:n:n]
	s.open = n
	return l
}
