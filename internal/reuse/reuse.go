// Package reuse hands out slices made from the storage of an earlier
// use, for the Reset methods of the state machines (strategy.Strategy,
// scheduler.Scheduler): a caller that runs one job after another on the
// same objects allocates their tables once, not once per job.
package reuse

// Zeroed returns a slice of n zero values: old's storage if its capacity
// holds n (its first n cleared, the rest left as it was), else new
// storage. old must not be used after.
func Zeroed[T any](old []T, n int) []T {
	if cap(old) < n {
		return make([]T, n)
	}
	s := old[:n]
	clear(s)
	return s
}

// Emptied returns old with length 0, its elements up to its capacity
// cleared so that it keeps nothing alive: the storage of a buffer that
// appends grow. old must not be used after.
func Emptied[T any](old []T) []T {
	clear(old[:cap(old)])
	return old[:0]
}
