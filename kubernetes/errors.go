package kubernetes

import (
	"errors"
	"fmt"

	"github.com/regionsched/regionsched/scheduler"
)

// The sentinel errors of the package; the struct errors below wrap them
// and name the culprit.
var (
	// ErrNotOurs: the pod carries no regionsched.io/run label.
	ErrNotOurs = errors.New("kubernetes: not a pod of regionsched")
	// ErrBadLabel: a label or annotation of a pod of regionsched does not
	// hold what it should.
	ErrBadLabel = errors.New("kubernetes: bad label")
	// ErrBadRun: a run id that cannot be a label value and a pod name part.
	ErrBadRun = errors.New("kubernetes: bad run id")
	// ErrBulkNotBound: a bulk's pods could not all be created and bound;
	// none is left.
	ErrBulkNotBound = errors.New("kubernetes: bulk not bound")
	// ErrBadSlotShape: a slot shape that no node can be divided by.
	ErrBadSlotShape = errors.New("kubernetes: bad slot shape")
	// ErrUnknownSlot: a slot the inventory does not have.
	ErrUnknownSlot = errors.New("kubernetes: unknown slot")
)

// RunError is a run id refused by CheckRun.
type RunError struct {
	Run string
}

// Error names the run id and what a valid one looks like.
func (e *RunError) Error() string {
	return fmt.Sprintf("%v %q: want 1 to 40 lower-case letters, digits and '-', starting and ending with a letter or digit", ErrBadRun, e.Run)
}

// Unwrap returns ErrBadRun.
func (e *RunError) Unwrap() error { return ErrBadRun }

// LabelError says which label (or annotation) of which pod is wrong.
type LabelError struct {
	Pod   string
	Label string
	Value string
	Err   error // ErrNotOurs or ErrBadLabel
}

// Error names the pod, the label and its value.
func (e *LabelError) Error() string {
	return fmt.Sprintf("%v: pod %q: %s=%q", e.Err, e.Pod, e.Label, e.Value)
}

// Unwrap returns ErrNotOurs or ErrBadLabel.
func (e *LabelError) Unwrap() error { return e.Err }

// BulkError says why a bulk was not bound: which pod, on which node, at
// which step. Every pod of the bulk created before is deleted again
// (Cleanup says whether that deletion failed, in which case the pods are
// leftovers of the run).
type BulkError struct {
	Job     string
	Region  scheduler.RegionID
	Attempt scheduler.Attempt
	Pod     string
	Node    string
	Op      string // "create", "bind", "check" or "canceled"
	Err     error
	Cleanup error
}

// Error names the bulk, the pod, the node and the step.
func (e *BulkError) Error() string {
	s := fmt.Sprintf("%v: job %q region %d attempt %d: %s pod %q on node %q: %v",
		ErrBulkNotBound, e.Job, e.Region, e.Attempt, e.Op, e.Pod, e.Node, e.Err)
	if e.Cleanup != nil {
		s += fmt.Sprintf(" (and deleting its pods failed: %v)", e.Cleanup)
	}
	return s
}

// Unwrap returns ErrBulkNotBound and the API server's error.
func (e *BulkError) Unwrap() []error { return []error{ErrBulkNotBound, e.Err} }

// ShapeError is a slot shape refused by NewInventory.
type ShapeError struct {
	Shape string
	Why   string
}

// Error names the shape and why it is refused.
func (e *ShapeError) Error() string {
	return fmt.Sprintf("%v %s: %s", ErrBadSlotShape, e.Shape, e.Why)
}

// Unwrap returns ErrBadSlotShape.
func (e *ShapeError) Unwrap() error { return ErrBadSlotShape }
