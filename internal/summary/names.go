package summary

import (
	"cmp"
	"slices"
	"strings"
)

// CompareNames orders job names in the lists of a verdict line, so that
// a run's verdict reads the same whatever the order of its job files:
// natural order, a run of digits compared by its value ("j2" before
// "j10"), then byte by byte.
func CompareNames(a, b string) int {
	x, y := a, b
	for x != "" && y != "" {
		dx, dy := digits(x), digits(y)
		if dx > 0 && dy > 0 {
			nx, ny := strings.TrimLeft(x[:dx], "0"), strings.TrimLeft(y[:dy], "0")
			if len(nx) != len(ny) {
				return cmp.Compare(len(nx), len(ny))
			}
			if c := strings.Compare(nx, ny); c != 0 {
				return c
			}
			x, y = x[dx:], y[dy:]
			continue
		}
		if x[0] != y[0] {
			return cmp.Compare(x[0], y[0])
		}
		x, y = x[1:], y[1:]
	}
	if len(x) != len(y) {
		return cmp.Compare(len(x), len(y))
	}
	return strings.Compare(a, b) // ("j01" and "j1")
}

// SortByJob sorts task names ("job:task") by their jobs (CompareNames),
// keeping the order of each job's tasks.
func SortByJob(tasks []string) {
	slices.SortStableFunc(tasks, func(a, b string) int {
		return CompareNames(jobOf(a), jobOf(b))
	})
}

// jobOf is the job part of a task name "job:task".
func jobOf(task string) string {
	if i := strings.IndexByte(task, ':'); i >= 0 {
		return task[:i]
	}
	return task
}

// digits is the length of the run of ASCII digits s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
