package engine

import (
	"context"
	"errors"
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
	// end of its input if it has fewer.
	failAfter int
	processed int
}

// next returns the next input record, false at the end of the input, or
// an error (the context's cause: canceled, or an input that could not be
// read; or ErrInjected).
func (t *taskIO) next(ctx context.Context) (Record, bool, error) {
	if t.failAfter > 0 && t.processed >= t.failAfter {
		return Record{}, false, ErrInjected
	}
	select {
	case rec, ok := <-t.in:
		if !ok {
			if t.failAfter > 0 {
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
	if t.in == nil && t.failAfter > 0 {
		if t.processed >= t.failAfter {
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
