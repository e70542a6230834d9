package simulator

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/regionsched/regionsched/topology"
)

// ErrBadFailure means a failure injection spec is malformed or names an
// unknown subtask.
var ErrBadFailure = errors.New("invalid failure injection")

// Failure makes the first attempt of a subtask fail once it has made
// After of progress (SPEC.md section 4, --fail ID#i@MS). A failure point
// at or beyond the subtask's duration never fires: the attempt finishes
// first. If the subtask's region is restarted before the point is
// reached (another failure), the failure does not fire either: only the
// first attempt fails.
type Failure struct {
	Task  topology.ExecutionVertexID
	After time.Duration
}

// ParseFailure parses "ID#i@MS" against the topology.
func ParseFailure(t *topology.ExecutionTopology, spec string) (Failure, error) {
	name, ms, ok := strings.Cut(spec, "@")
	if !ok {
		return Failure{}, fmt.Errorf("%w: %q is not of the form ID#i@MS (e.g. A#1@500)", ErrBadFailure, spec)
	}
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
