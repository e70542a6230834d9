package hugepage

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// madvHugePage is Linux's MADV_HUGEPAGE.
const madvHugePage = 14

// enabled reports whether the program may ask for huge pages: not when
// GODEBUG's disablethp says the Go heap should have none, and not when
// there is no room for the ballast (roomForBallast).
func enabled() bool {
	return !thpDisabled(os.Getenv("GODEBUG")) && roomForBallast()
}

// thpDisabled reports whether a GODEBUG value turns huge pages off, read
// as the runtime reads it: the last disablethp setting wins, and any value
// but 0 turns them off. (A //go:debug default of the main package is not
// seen here.)
func thpDisabled(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if v, ok := strings.CutPrefix(kv, "disablethp="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				off = n != 0
			}
		}
	}
	return off
}

// roomForBallast reports whether an untouched ballast costs nothing but
// address space: not when the address space is limited (ulimit -v) or the
// kernel refuses to overcommit (vm.overcommit_memory=2), where it could
// exhaust what the process may map.
func roomForBallast() bool {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil || lim.Cur != ^uint64(0) {
		return false
	}
	mode, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	return err != nil || strings.TrimSpace(string(mode)) != "2"
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
