package resource

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Profile is an amount of resources: CPU in millicores, memory in MB and
// named extended resources, or Unknown. The zero value is Unknown.
// Profiles are immutable and comparable.
type Profile struct {
	known bool
	// over marks the amounts of a sum (Add) that went beyond
	// math.MaxInt64 and are kept at it (overCPU, overMemory,
	// overExtended): such a sum needs more than any slot offers.
	over      uint8
	cpuMillis int64
	memoryMB  int64
	// ext is the canonical encoding of the extended resources:
	// "name=value" pairs sorted by name, joined by ";", zero values omitted.
	// A string keeps Profile comparable and cheap to copy.
	ext string
}

// The bits of Profile.over: the dimensions whose sum overflowed.
const (
	overCPU uint8 = 1 << iota
	overMemory
	overExtended
)

// Unknown is the profile of a subtask or slot whose size is not specified:
// an unknown request fits any slot and an unknown slot serves any request.
var Unknown = Profile{}

// New returns a known profile. It panics on negative amounts, which are a
// programmer error (decoders reject them with ErrNegative instead).
func New(cpuMillis, memoryMB int64) Profile {
	if cpuMillis < 0 || memoryMB < 0 {
		panic(fmt.Sprintf("resource.New: negative amount (cpuMillis=%d, memoryMB=%d)", cpuMillis, memoryMB))
	}
	return Profile{known: true, cpuMillis: cpuMillis, memoryMB: memoryMB}
}

// WithExtended returns p with the named extended resource set to n (n = 0
// removes it). On an Unknown profile it returns a known profile with only
// that resource; an Overflowed p stays Overflowed. It panics on a negative n or an empty or malformed name
// (names may not contain '=' or ';').
func (p Profile) WithExtended(name string, n int64) Profile {
	if n < 0 || name == "" || strings.ContainsAny(name, "=;") {
		panic(fmt.Sprintf("resource.WithExtended: invalid %q=%d", name, n))
	}
	m := p.Extended()
	if n == 0 {
		delete(m, name)
	} else {
		if m == nil {
			m = map[string]int64{}
		}
		m[name] = n
	}
	p.known = true
	p.ext = encodeExtended(m)
	return p
}

// IsUnknown reports whether p is Unknown.
func (p Profile) IsUnknown() bool { return !p.known }

// CPUMillis returns the CPU amount in millicores (0 for Unknown).
func (p Profile) CPUMillis() int64 { return p.cpuMillis }

// MemoryMB returns the memory amount in MB (0 for Unknown).
func (p Profile) MemoryMB() int64 { return p.memoryMB }

// Extended returns a fresh map of the extended resources, nil if none.
func (p Profile) Extended() map[string]int64 {
	if p.ext == "" {
		return nil
	}
	m := make(map[string]int64)
	forEachExtended(p.ext, func(name string, v int64) { m[name] = v })
	return m
}

// ExtendedValue returns the amount of one extended resource (0 if absent).
func (p Profile) ExtendedValue(name string) int64 {
	var out int64
	forEachExtended(p.ext, func(n string, v int64) {
		if n == name {
			out = v
		}
	})
	return out
}

// Add returns the sum of two profiles. Unknown + Unknown is Unknown; an
// Unknown part of a sum with a known profile counts as zero, so the sum is
// the known lower bound of what both together need. An amount of the sum
// beyond math.MaxInt64 neither wraps around (to a negative sum that would
// fit every slot) nor is taken for math.MaxInt64 (which a slot may
// offer): it is kept at math.MaxInt64 and the sum is Overflowed, which
// fits no known slot. So is every sum with an Overflowed part.
func (p Profile) Add(q Profile) Profile {
	if !p.known {
		return q
	}
	if !q.known {
		return p
	}
	r := Profile{known: true, over: p.over | q.over}
	var over bool
	if r.cpuMillis, over = addOver(p.cpuMillis, q.cpuMillis); over {
		r.over |= overCPU
	}
	if r.memoryMB, over = addOver(p.memoryMB, q.memoryMB); over {
		r.over |= overMemory
	}
	switch {
	case p.ext == "":
		r.ext = q.ext
	case q.ext == "":
		r.ext = p.ext
	default:
		m := p.Extended()
		forEachExtended(q.ext, func(n string, v int64) {
			if m[n], over = addOver(m[n], v); over {
				r.over |= overExtended
			}
		})
		r.ext = encodeExtended(m)
	}
	return r
}

// Overflowed reports whether p is a sum (Add) of which some amount went
// beyond math.MaxInt64: p's amounts there read math.MaxInt64, but it
// needs more, so it fits no known slot.
func (p Profile) Overflowed() bool { return p.over != 0 }

// addOver adds two non-negative amounts; beyond math.MaxInt64 it returns
// math.MaxInt64 and true.
func addOver(a, b int64) (int64, bool) {
	if a > math.MaxInt64-b {
		return math.MaxInt64, true
	}
	return a + b, false
}

// FitsIn reports whether a request of profile p can run in a slot of
// profile slot: either is Unknown, or slot is at least as large in every
// dimension (a missing extended resource counts as zero). An Overflowed
// request needs more than any slot offers: it fits only an Unknown slot.
func (p Profile) FitsIn(slot Profile) bool {
	if !p.known || !slot.known {
		return true
	}
	if p.over != 0 || p.cpuMillis > slot.cpuMillis || p.memoryMB > slot.memoryMB {
		return false
	}
	return p.ext == "" || extendedFitsIn(p.ext, slot.ext)
}

// extendedFitsIn reports whether every amount of encoding req is at most
// the amount of the same name in encoding slot (zero if absent). Both
// encodings are sorted by name, so one merge walk over them suffices:
// O(len(req) + len(slot)), no allocation.
func extendedFitsIn(req, slot string) bool {
	var sn, sv string // the slot's current pair; sn == "" before the first
	for req != "" {
		var rn, rv string
		rn, rv, req = nextPair(req)
		for (sn == "" || sn < rn) && slot != "" {
			sn, sv, slot = nextPair(slot)
		}
		need := parseAmount(rv)
		if need == 0 {
			continue
		}
		if sn != rn || need > parseAmount(sv) {
			return false
		}
	}
	return true
}

// String renders the profile, e.g. "{cpu=500m mem=512MB gpu=1}" or
// "unknown". An amount of an Overflowed sum beyond math.MaxInt64 reads
// ">" instead of "=": "{cpu>9223372036854775807m mem=0MB}".
func (p Profile) String() string {
	if !p.known {
		return "unknown"
	}
	rel := func(bit uint8, v int64) string {
		if p.over&bit != 0 && v == math.MaxInt64 {
			return ">"
		}
		return "="
	}
	var b strings.Builder
	fmt.Fprintf(&b, "{cpu%s%dm mem%s%dMB", rel(overCPU, p.cpuMillis), p.cpuMillis, rel(overMemory, p.memoryMB), p.memoryMB)
	forEachExtended(p.ext, func(n string, v int64) { fmt.Fprintf(&b, " %s%s%d", n, rel(overExtended, v), v) })
	b.WriteByte('}')
	return b.String()
}

// CompareAmounts orders profiles by their amounts: CPU, then memory, then
// the total of the extended resources (saturating at math.MaxInt64), then
// the canonical encoding of the extended resources, then the dimensions
// an Overflowed sum went beyond math.MaxInt64 in (none first), so that
// only equal profiles compare equal. It returns -1, 0 or +1 and never
// allocates.
//
// A known profile that fits in another never comes after it (unless both
// extended totals saturate). Unknown is not special-cased: its amounts
// are all zero, so it compares like New(0, 0); a caller with its own rule
// for Unknown applies it first.
func CompareAmounts(a, b Profile) int {
	switch {
	case a.cpuMillis != b.cpuMillis:
		return cmp.Compare(a.cpuMillis, b.cpuMillis)
	case a.memoryMB != b.memoryMB:
		return cmp.Compare(a.memoryMB, b.memoryMB)
	case a.ext == b.ext:
		return cmp.Compare(a.over, b.over)
	}
	if c := cmp.Compare(extendedTotal(a.ext), extendedTotal(b.ext)); c != 0 {
		return c
	}
	return strings.Compare(a.ext, b.ext)
}

// CompareSize orders slot profiles from small to large, as Assign
// prefers small slots: known before Unknown (an Unknown slot can serve
// anything, so it is the most valuable), then by CompareAmounts.
func CompareSize(a, b Profile) int {
	if a.known != b.known {
		if a.known {
			return -1
		}
		return 1
	}
	return CompareAmounts(a, b)
}

// extendedTotal sums the amounts of an encoding, saturating at
// math.MaxInt64.
func extendedTotal(ext string) int64 {
	var t int64
	for ext != "" {
		var v int64
		_, v, ext = nextExtended(ext)
		t, _ = addOver(t, v)
	}
	return t
}

func encodeExtended(m map[string]int64) string {
	names := make([]string, 0, len(m))
	for n, v := range m {
		if v != 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(m[n], 10))
	}
	return b.String()
}

func forEachExtended(ext string, f func(name string, v int64)) {
	for ext != "" {
		var name string
		var v int64
		name, v, ext = nextExtended(ext)
		f(name, v)
	}
}

// nextExtended splits the first "name=value" pair off a non-empty
// encoding and returns its name, its value and the rest of the encoding.
func nextExtended(ext string) (name string, v int64, rest string) {
	name, val, rest := nextPair(ext)
	return name, parseAmount(val), rest
}

// nextPair splits the first "name=value" pair off a non-empty encoding
// without parsing the value.
func nextPair(ext string) (name, val, rest string) {
	eq, end := -1, len(ext)
	for i := 0; i < len(ext); i++ { // pairs are short: a loop beats strings.Cut
		if c := ext[i]; c == '=' && eq < 0 {
			eq = i
		} else if c == ';' {
			end = i
			break
		}
	}
	if end < len(ext) {
		rest = ext[end+1:]
	}
	if eq < 0 {
		return ext[:end], "", rest
	}
	return ext[:eq], ext[eq+1 : end], rest
}

// parseAmount parses the value of a pair: a short run of decimal digits
// (every canonical amount below 10^18) directly, anything else as
// strconv.ParseInt does, ignoring its error.
func parseAmount(val string) int64 {
	if len(val) == 0 || len(val) > 18 {
		v, _ := strconv.ParseInt(val, 10, 64)
		return v
	}
	var v int64
	for i := 0; i < len(val); i++ {
		d := val[i] - '0'
		if d > 9 {
			v, _ := strconv.ParseInt(val, 10, 64)
			return v
		}
		v = v*10 + int64(d)
	}
	return v
}
