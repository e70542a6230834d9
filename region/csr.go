package region

// csr is a compressed adjacency list: the entries of row i are
// adj[start[i]:start[i+1]].
type csr[T ~int32] struct {
	start []int32
	adj   []T
}

func (c csr[T]) of(i int32) []T { return c.adj[c.start[i]:c.start[i+1]] }

// rows returns the number of rows.
func (c csr[T]) rows() int { return len(c.start) - 1 }

// buildCSR makes a csr with `rows` rows from a two-pass producer: emit is
// called twice with the same sequence of (row, value) pairs, first to
// count, then to fill; rows keep the order of emission.
func buildCSR[T ~int32](rows int, emit func(add func(row int32, v T))) csr[T] {
	c := csr[T]{start: make([]int32, rows+1)}
	emit(func(row int32, _ T) { c.start[row+1]++ })
	for i := 0; i < rows; i++ {
		c.start[i+1] += c.start[i]
	}
	c.adj = make([]T, c.start[rows])
	fill := make([]int32, rows)
	copy(fill, c.start[:rows])
	emit(func(row int32, v T) {
		c.adj[fill[row]] = v
		fill[row]++
	})
	return c
}
