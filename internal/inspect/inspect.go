// Package inspect lets the tests of packages built over an in-process
// admission (package multijob's) look inside it: check its invariants,
// list the slots it asked back, count its speculative asks. Package
// admission does not export these, as only tests need them; it registers
// them here when it is initialized, so a test reaches them through an
// admission.Queues it holds (multijob's export_test.go hands one out).
// Package multijob registers how to find the admission of a
// multijob.Scheduler (AdmissionOf), for the tests of packages built over
// one (package simulator's).
package inspect

import (
	"errors"

	"github.com/regionsched/regionsched/slotpool"
)

// ErrNotQueues means the value given is not an in-process admission
// (*admission.Queues), or package admission is not linked in.
var ErrNotQueues = errors.New("inspect: not an in-process admission")

// AskedBack is a slot the admission asked back from the job it is granted
// to, which that job still holds: a task of the job may still run in it.
type AskedBack struct {
	// Slot is the slot asked back.
	Slot slotpool.SlotID
	// From names the job that holds it.
	From string
	// For names the job it goes to when it comes back: the claimant of a
	// claim or a preemption ("" if none: it is free when it comes back).
	For string
	// Preempted: asked back by a preemption, whose Revoke cancels the
	// job's tasks in it (at once or after its queue's reclaim timeout);
	// otherwise by a claim, and it comes back when its task ends.
	Preempted bool
}

// Hooks is what package admission registers.
type Hooks struct {
	// CheckInvariants checks the admission's state (see package
	// admission's invariants.go); ok is false if q is not an admission.
	CheckInvariants func(q any) (ok bool, err error)
	// AskedBack appends to dst the slots asked back, in slot order.
	AskedBack func(q any, dst []AskedBack) ([]AskedBack, bool)
	// SpeculativeAsks counts the speculative asks waiting for a slot.
	SpeculativeAsks func(q any) (int, bool)
}

var hooks Hooks

// Register sets the hooks; package admission calls it once, when it is
// initialized.
func Register(h Hooks) { hooks = h }

// admissionOf is what package multijob registers (RegisterAdmissionOf).
var admissionOf func(s any) (q any, ok bool)

// RegisterAdmissionOf sets how AdmissionOf finds the admission of a
// scheduler; package multijob calls it once, when it is initialized.
func RegisterAdmissionOf(f func(s any) (q any, ok bool)) { admissionOf = f }

// AdmissionOf returns the in-process admission (an *admission.Queues) of
// s, a *multijob.Scheduler, for the functions above; false if s is not
// one, or runs over another admission.Cluster.
func AdmissionOf(s any) (any, bool) {
	if admissionOf == nil {
		return nil, false
	}
	return admissionOf(s)
}

// CheckInvariants checks the invariants of q, an *admission.Queues:
// nil, the first violation found, or ErrNotQueues. Call it when the
// admission is quiet (after its Decide, and after the pools took what it
// granted).
func CheckInvariants(q any) error {
	if hooks.CheckInvariants == nil {
		return ErrNotQueues
	}
	ok, err := hooks.CheckInvariants(q)
	if !ok {
		return ErrNotQueues
	}
	return err
}

// AskedBackSlots appends to dst the slots q (an *admission.Queues) asked
// back from the jobs that hold them, in slot order; nothing if q is not
// one.
func AskedBackSlots(q any, dst []AskedBack) []AskedBack {
	if hooks.AskedBack == nil {
		return dst
	}
	out, _ := hooks.AskedBack(q, dst)
	return out
}

// SpeculativeAsks returns how many speculative asks wait for a slot in q
// (an *admission.Queues), and false if q is not one.
func SpeculativeAsks(q any) (int, bool) {
	if hooks.SpeculativeAsks == nil {
		return 0, false
	}
	return hooks.SpeculativeAsks(q)
}
