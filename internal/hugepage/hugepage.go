// Package hugepage lets a batch program ask Linux to back the memory its
// Go heap is about to grow into with transparent huge pages.
//
// A simulation of millions of subtasks keeps a few hundred bytes per
// subtask and touches each record a few times at moments far apart. With
// 4 KiB pages every first touch of a page is a page fault, and most later
// touches miss the TLB, which costs the more under virtualization: on this
// project's machine a 2,000,000-subtask run took 100,000 page faults and
// a fifth of its time in the kernel. Where transparent huge pages are in
// "madvise" mode (the default of many distributions), only memory a
// program advised gets them, and the Go runtime advises none of its heap.
//
// ReserveHeap is for a program's main package, once, before it builds a
// large model: it is not for libraries, since it runs a garbage
// collection and changes how the process's memory is backed for the rest
// of its life. The advice is best effort; where it is not available
// (another OS, huge pages turned off) nothing changes.
package hugepage

import "runtime"

// hugePage is the size of a transparent huge page on the platforms that
// have them (x86-64, and arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// ReserveHeap makes the next n bytes of Go heap growth eligible for
// transparent huge pages: it allocates n bytes it never touches (so they
// take address space, not memory), advises the whole huge pages inside
// them, and frees them with a garbage collection. The runtime hands out
// the lowest free addresses first, so the heap the program builds next
// reuses that advised range, and its first touches fault in 2 MiB pages.
// It reports whether the kernel accepted the advice (it does even where
// huge pages are turned off system-wide; then nothing changes). Reserving
// less than two huge pages does nothing, and so does a process whose
// address space is limited (see enabled): untouched as it is, the ballast
// counts against such a limit, and the runtime cannot survive a failed
// heap mapping.
//
// Memory the runtime hands out again from the ballast's range is zeroed
// by it, hence resident at once: capacity a program reserves but never
// fills costs memory there, where fresh pages would only cost address
// space.
func ReserveHeap(n int) bool {
	if n < 2*hugePage || !enabled() {
		return false
	}
	ballast := make([]byte, n)
	ok := advise(ballast)
	ballast = nil
	runtime.GC() // the ballast's pages go back to the heap, still advised
	return ok
}

// inner returns the offset and length of the whole huge pages inside
// [p, p+n); the length is zero if there are none.
func inner(p, n uintptr) (off, length uintptr) {
	beg := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + n) &^ (hugePage - 1)
	if beg >= end {
		return 0, 0
	}
	return beg - p, end - beg
}
