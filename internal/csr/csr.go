// Package csr provides compressed sparse rows: many short lists of values
// stored in one slice, row i being Adj[Start[i]:Start[i+1]]. Two slices
// replace one slice header per row, which keeps adjacency lists of
// millions of rows (regions, partition groups) small and cache-friendly.
package csr

// CSR is a list of rows of values of type T: the entries of row i are
// Adj[Start[i]:Start[i+1]]. Start has one element more than there are
// rows and is non-decreasing; Start[0] is 0. The zero value has no rows.
type CSR[T any] struct {
	Start []int32
	Adj   []T
}

// Row returns the entries of row i (aliasing Adj).
func (c CSR[T]) Row(i int32) []T { return c.Adj[c.Start[i]:c.Start[i+1]] }

// Rows returns the number of rows.
func (c CSR[T]) Rows() int { return max(len(c.Start)-1, 0) }

// Build makes a CSR of the given number of rows from a two-pass producer:
// emit is called twice and must call add with the same sequence of
// (row, value) pairs both times, first to count the entries of each row,
// then to fill them in. Each row keeps its values in order of emission.
// Rows must be in [0, rows). Cost O(rows + pairs); two allocations plus a
// scratch slice of rows cursors.
func Build[R ~int32, T any](rows int, emit func(add func(row R, v T))) CSR[T] {
	c := CSR[T]{Start: make([]int32, rows+1)}
	emit(func(row R, _ T) { c.Start[row+1]++ })
	for i := range rows {
		c.Start[i+1] += c.Start[i]
	}
	c.Adj = make([]T, c.Start[rows])
	fill := make([]int32, rows)
	copy(fill, c.Start[:rows])
	emit(func(row R, v T) {
		c.Adj[fill[row]] = v
		fill[row]++
	})
	return c
}
