package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// ErrInjected is the error of an attempt that failed on purpose
// (Config.Fail).
var ErrInjected = errors.New("injected failure")

// taskIO is what an operator sees of its task: its subtask index, one
// merged stream of input records and the routes of its output.
type taskIO struct {
	subtask, parallelism int

	in     <-chan Record // every input merged; nil for a source
	result *[]Record     // set for a vertex without out-edges: what it emits is the job's result
	outs   []*output     // one per out-edge

	// failAfter > 0 makes the attempt fail once it processed that many
	// records (input records, or emitted ones for a source), or at the
	// end of its input if it has fewer. failTimed makes it fail at the
	// first record it handles once it has run failAfterTime (since
	// started, on clock), or at the end of its input if that comes first.
	failAfter     int
	processed     int
	failTimed     bool
	failAfterTime time.Duration
	started       time.Time
	clock         clock.Clock
}

// failArmed reports whether the attempt is to fail (Config.Fail).
func (t *taskIO) failArmed() bool { return t.failAfter > 0 || t.failTimed }

// failDue reports whether an armed attempt fails now, before the next
// record.
func (t *taskIO) failDue() bool {
	if t.failTimed {
		return t.clock.Since(t.started) >= t.failAfterTime
	}
	return t.failAfter > 0 && t.processed >= t.failAfter
}

// failure is a parsed entry of Config.Fail.
type failure struct {
	task  scheduler.TaskID
	timed bool          // "ID#i@MS": after a time, not a count of records
	after time.Duration // the time, if timed
}

// parseFail checks an entry of Config.Fail against the job's subtasks:
// "ID#i@MS" (fail after MS ms of running, as regionsched simulate --fail
// has it) or "ID#i" (after Config.FailAfter records). An id may contain
// '@': only a last '@' followed by digits marks the time.
func parseFail(t *topology.ExecutionTopology, spec string) (failure, error) {
	name, ms, timed := spec, "", false
	if at := strings.LastIndexByte(spec, '@'); at >= 0 {
		if _, err := t.ParseVertexName(spec); err != nil { // not a subtask as a whole: the part after '@' is the time
			name, ms, timed = spec[:at], spec[at+1:], true
		}
	}
	v, err := t.ParseVertexName(name)
	if err != nil {
		return failure{}, fmt.Errorf("--fail %q: %w (the form is ID#i@MS, e.g. counter#1@5, or ID#i)", spec, err)
	}
	f := failure{task: v, timed: timed}
	if timed {
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil || n < 0 || n > int64(time.Duration(1<<63-1)/time.Millisecond) {
			return failure{}, fmt.Errorf("--fail %q: %q is not a non-negative number of milliseconds (the form is ID#i@MS, e.g. %s@5)", spec, ms, name)
		}
		f.after = time.Duration(n) * time.Millisecond
	}
	return f, nil
}

// next returns the next input record, false at the end of the input, or
// an error (the context's cause: canceled, or an input that could not be
// read; or ErrInjected).
func (t *taskIO) next(ctx context.Context) (Record, bool, error) {
	if t.failArmed() && t.failDue() {
		return Record{}, false, ErrInjected
	}
	select {
	case rec, ok := <-t.in:
		if !ok {
			if t.failArmed() {
				return Record{}, false, ErrInjected
			}
			return Record{}, false, nil
		}
		t.processed++
		return rec, true, nil
	case <-ctx.Done():
		return Record{}, false, context.Cause(ctx)
	}
}

// emit routes a record to every out-edge (or to the result); it blocks
// while a pipelined consumer's channel is full.
func (t *taskIO) emit(ctx context.Context, rec Record) error {
	if t.in == nil && t.failArmed() {
		if t.failDue() {
			return ErrInjected
		}
		t.processed++
	}
	if t.result != nil {
		*t.result = append(*t.result, rec)
	}
	for _, o := range t.outs {
		if err := o.write(ctx, rec); err != nil {
			return err
		}
	}
	return nil
}
