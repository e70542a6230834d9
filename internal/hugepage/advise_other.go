//go:build !linux

package hugepage

// enabled is false where there are no transparent huge pages to ask for.
func enabled() bool { return false }

// advise does nothing where there are no transparent huge pages.
func advise([]byte) bool { return false }
