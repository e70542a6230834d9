package scheduler

import "github.com/regionsched/regionsched/internal/schedreuse"

func init() { schedreuse.New = newScheduler }

// zeroed returns n zero values in old's storage if it has room for them,
// else in new storage.
func zeroed[T any](old []T, n int) []T {
	if cap(old) < n {
		return make([]T, n)
	}
	old = old[:n]
	clear(old)
	return old
}
