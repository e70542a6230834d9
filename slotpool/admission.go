package slotpool

import (
	"fmt"
	"time"

	"github.com/regionsched/regionsched/resource"
)

// The messages of the admission protocol (see the package comment) and
// the Admission interface.

// Reason says why a slot or an ask is given up.
type Reason uint8

// The reasons, after YuniKorn's TerminationType.
const (
	// ReasonStopped: no longer needed (STOPPED_BY_RM).
	ReasonStopped Reason = iota + 1
	// ReasonTimeout: given up after a timeout (TIMEOUT).
	ReasonTimeout
	// ReasonPreempted: taken back by the admission (PREEMPTED_BY_SCHEDULER).
	ReasonPreempted
	// ReasonPlaceholderReplaced: a placeholder slot swapped for a real one
	// (PLACEHOLDER_REPLACED).
	ReasonPlaceholderReplaced
	// ReasonLost: the slot's machine is gone (Scheduler.SlotLost). Never
	// sent to an admission.
	ReasonLost
)

var reasonNames = [...]string{"", "stopped", "timeout", "preempted", "placeholder-replaced", "lost"}

// String returns "stopped", "timeout", "preempted", "placeholder-replaced"
// or "lost".
func (r Reason) String() string {
	if r > 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// AskID names an ask; the pool numbers them 1, 2, ...
type AskID int64

// TaskGroup is MinMembers slots of one profile (YuniKorn's task group:
// minMember pods of minResource each).
type TaskGroup struct {
	Profile    resource.Profile
	MinMembers int
}

// Gang is the demand of one ask.
type Gang struct {
	Groups []TaskGroup
	// AllOrNothing asks the admission to grant every group's MinMembers
	// together or nothing; otherwise it may grant slots as they come.
	AllOrNothing bool
}

// Counts returns the gang as resource counts, for resource.Assign.
func (g Gang) Counts() []resource.Count {
	return g.AppendCounts(make([]resource.Count, 0, len(g.Groups)))
}

// AppendCounts appends Counts to dst and returns the extended slice, for
// a caller that reuses its storage.
func (g Gang) AppendCounts(dst []resource.Count) []resource.Count {
	for _, tg := range g.Groups {
		dst = append(dst, resource.Count{Profile: tg.Profile, N: tg.MinMembers})
	}
	return dst
}

// ToAdmission is a message from the pool to the admission: Ask,
// AskRelease or SlotRelease.
type ToAdmission interface{ isToAdmission() }

// Ask declares demand for the bulk Bulk.
type Ask struct {
	ID   AskID
	Bulk BulkID
	Gang Gang
	// Head marks the ask of the pool's head (its oldest waiting bulk): it
	// asks for exactly what the head lacks, so granting it completes the
	// head and a region deploys. An admission that breaks cross-job
	// deadlocks claims for this ask.
	Head bool
	// Holding lists the slots the bulk holds, unused, when it asks (only
	// the head holds slots; its ask is for what it lacks beyond them). An
	// admission that breaks cross-job deadlocks may reclaim these first:
	// they come back at once, and nothing runs in them.
	Holding []SlotID
	// Speculative marks the ask of a speculative attempt of a task
	// (scheduler.Speculation) whose pool has no free slot for it: one
	// group of one slot, for Bulk, a bulk of its own that never waits in
	// the pool's queue. An admission grants it only while no regular ask
	// that the slot could serve waits, of any job it serves (so a
	// speculative attempt never takes a slot a waiting region needs), and
	// never on the nodes of Avoid nor one of the slots of AvoidSlots. The
	// pool withdraws it (AskRelease) once the attempt is no longer wanted,
	// and gives its slot back (SlotRelease) when the attempt ends. An
	// admission that cannot tell whether a regular ask waits refuses it
	// (Handle returns an error wrapping ErrSpeculativeAsk).
	Speculative bool
	// Avoid lists the nodes (Slot.Node) a speculative ask's slot must not
	// be on: the nodes found slow. AvoidSlots lists, for slots without a
	// node, the slots themselves.
	Avoid      []string
	AvoidSlots []SlotID
}

// AskRelease withdraws what is not granted yet of an ask.
type AskRelease struct {
	ID     AskID
	Reason Reason
}

// SlotRelease gives a slot back to the admission, or confirms a Revoke.
type SlotRelease struct {
	Slot   SlotID
	Reason Reason
}

func (Ask) isToAdmission()         {}
func (AskRelease) isToAdmission()  {}
func (SlotRelease) isToAdmission() {}

// FromAdmission is a message from the admission to the pool: Grant,
// Revoke, Reclaim, ReleaseConfirmed or Capacity.
type FromAdmission interface{ isFromAdmission() }

// Grant gives slots to the pool in answer to an ask (Ask may name an ask
// already withdrawn: the slots are then surplus, but still offered).
type Grant struct {
	Ask   AskID
	Slots []Slot
}

// Revoke takes a slot back at once.
type Revoke struct {
	Slot   SlotID
	Reason Reason
}

// Reclaim asks for a slot back as soon as no task runs in it. The ask
// stands until the slot is back: the admission sends it once per grant of
// the slot, and a pool gives the slot back when its task ends even if the
// admission no longer needs it by then (it is then free again).
type Reclaim struct {
	Slot SlotID
}

// ReleaseConfirmed is the echo of a SlotRelease.
type ReleaseConfirmed struct {
	Slot   SlotID
	Reason Reason
}

// Capacity declares what the admission could ever grant the pool; nil
// Slots means unknown.
type Capacity struct {
	Slots []resource.Count
}

func (Grant) isFromAdmission()            {}
func (Revoke) isFromAdmission()           {}
func (Reclaim) isFromAdmission()          {}
func (ReleaseConfirmed) isFromAdmission() {}
func (Capacity) isFromAdmission()         {}

// Admission is the pool-facing side of a queue-level admission: a
// deterministic state machine like the pool. Package admission holds
// StaticCluster and the ports of the multi-job Queues, package
// slurm a Slurm cluster's. A scheduler carries the messages
// between its pool and the admission of scheduler.Config.Admission.
type Admission interface {
	// Handle takes one message from the pool. An error means the message
	// made no sense to the admission (it is ignored).
	Handle(now time.Time, msg ToAdmission) error
	// Ready returns the messages for the pool since the last call, in
	// order, and forgets them. The slice may be valid only until the next
	// call of Ready (an admission may reuse its storage): a caller reads
	// it before asking again.
	Ready() []FromAdmission
	// Tick fires the admission's timers due at now.
	Tick(now time.Time)
	// NextDeadline returns when Tick next has work to do.
	NextDeadline() (time.Time, bool)
}
