package hugepage

import (
	"os"
	"strings"
	"syscall"
	"unsafe"
)

// madvHugePage is Linux's MADV_HUGEPAGE.
const madvHugePage = 14

// enabled reports whether the program may ask for huge pages: not when
// GODEBUG=disablethp=1 says the Go heap should have none.
func enabled() bool {
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if strings.TrimSpace(kv) == "disablethp=1" {
			return false
		}
	}
	return true
}

// advise marks the whole huge pages inside b for transparent huge pages
// and reports whether the kernel accepted it.
func advise(b []byte) bool {
	off, length := inner(uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if length == 0 {
		return false
	}
	return syscall.Madvise(b[off:off+length], madvHugePage) == nil
}
