package simulator

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/regionsched/regionsched/topology"
)

// ErrBadFailure means a failure injection is malformed, names an unknown
// subtask, names one subtask twice, or could never fire (a point at or
// beyond the subtask's duration: it finishes first).
var ErrBadFailure = errors.New("invalid failure injection")

// Failure makes the first attempt of a subtask that runs fail once it has
// made After of progress (docs/cli.md, --fail ID#i@MS). Attempts
// canceled before they ran (their region was restarted by another
// failure before it got slots) do not count; if the first attempt that
// runs is canceled before reaching the point, the failure does not fire.
type Failure struct {
	Task  topology.ExecutionVertexID
	After time.Duration
}

// ParseFailure parses "ID#i@MS" against the topology.
func ParseFailure(t *topology.ExecutionTopology, spec string) (Failure, error) {
	at := strings.LastIndexByte(spec, '@') // ids may contain '@'
	if at < 0 {
		return Failure{}, fmt.Errorf("%w: %q is not of the form ID#i@MS (e.g. A#1@500)", ErrBadFailure, spec)
	}
	name, ms := spec[:at], spec[at+1:]
	v, err := t.ParseVertexName(name)
	if err != nil {
		return Failure{}, fmt.Errorf("%w: %q: %v", ErrBadFailure, spec, err)
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n < 0 || n > int64(never/time.Millisecond) {
		return Failure{}, fmt.Errorf("%w: %q: %q is not a non-negative number of milliseconds", ErrBadFailure, spec, ms)
	}
	return Failure{Task: v, After: time.Duration(n) * time.Millisecond}, nil
}
