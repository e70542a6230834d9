package admission

import (
	"fmt"
	"strings"
	"time"
)

// Policy orders the jobs of one queue for grants.
type Policy uint8

// The queue policies (docs/job-file.md).
const (
	// FIFO serves jobs by submission time.
	FIFO Policy = iota
	// Priority serves jobs by priority (highest first), then submission
	// time.
	Priority
	// FairShare serves first the job furthest below its priority-weighted
	// share of the queue's slots; what a job does not use goes to the
	// others.
	FairShare
	// StateAware is FIFO with at most one job of the queue starting at a
	// time (YuniKorn's StateAware).
	StateAware
)

var policyNames = [...]string{"fifo", "priority", "fairshare", "stateaware"}

// String returns "fifo", "priority", "fairshare" or "stateaware".
func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// ParsePolicy reads a policy name, case-insensitively; "fair" is accepted
// for fairshare. An unknown name returns ErrUnknownPolicy.
func ParsePolicy(s string) (Policy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "fifo":
		return FIFO, nil
	case "priority":
		return Priority, nil
	case "fairshare", "fair":
		return FairShare, nil
	case "stateaware", "state-aware":
		return StateAware, nil
	}
	return 0, fmt.Errorf("%w %q (valid: fifo, priority, fairshare, stateaware)", ErrUnknownPolicy, s)
}

// DefaultStartingTimeout is how long a job may stay starting under
// StateAware before the next job of its queue may start (YuniKorn's
// hard-coded 5 minutes, configurable here).
const DefaultStartingTimeout = 5 * time.Minute

// QueueConfig configures one queue.
type QueueConfig struct {
	// Name is the queue's full name, e.g. "root.etl".
	Name string
	// Policy orders its jobs.
	Policy Policy
	// MaxRunningJobs limits the jobs counted running (from their first
	// grant until they end) in the queue and the queues under it (as
	// YuniKorn's maxApplications); 0 means unlimited. Jobs beyond it wait
	// and are admitted in policy order (across its children, in their
	// fair order).
	MaxRunningJobs int
	// StartingTimeout: under StateAware, how long a job stays starting at
	// most; 0 means DefaultStartingTimeout, NoStartingWait that a job
	// leaves starting at its first grant (the queue is then fifo).
	StartingTimeout time.Duration
	// Preempt lets a higher-priority job's claim take this queue's jobs'
	// slots by force (the cluster file's reclaimTimeoutMs; false: never preempt,
	// slots asked back come back when their tasks end): a slot in use by
	// a job of lower priority than the claimant is revoked, cancelling
	// its task, after ReclaimTimeout (0: at once) if its task has not
	// ended by then. A job never preempts one of equal or higher
	// priority, and drivers are never preempted.
	Preempt bool
	// ReclaimTimeout is how long a preempted slot's task may still run.
	ReclaimTimeout time.Duration
	// GuaranteedSlots is the queue's guaranteed share of the cluster, in
	// slots (its subtree included): across sibling queues, those below
	// their guarantee are served first, and a queue below it that
	// preempts (Preempt) takes slots of lower-priority jobs back from
	// queues above theirs, never taking one below its guarantee. 0: none.
	GuaranteedSlots int
	// MaxSlots caps the slots the queue and its subtree hold at once
	// (drivers, placeholders and reserved slots count); 0: unlimited. It
	// may not be over a parent's (New: *MaxOverParentError).
	MaxSlots int
}

// NoStartingWait is the StartingTimeout of a queue whose jobs leave
// starting at once (a configured timeout of 0 ms).
const NoStartingWait time.Duration = -1

// validate checks the limits.
func (q QueueConfig) validate() error {
	if !validQueueName(q.Name) {
		return &ConfigError{Queue: q.Name, Field: "name", Value: q.Name, Err: fmt.Errorf("%w: a queue name is \"root\" or \"root.\" followed by dot-separated non-empty parts", ErrBadQueueName)}
	}
	if q.MaxRunningJobs < 0 {
		return &ConfigError{Queue: q.Name, Field: "maxRunningJobs", Value: fmt.Sprint(q.MaxRunningJobs), Err: fmt.Errorf("%w: must be >= 0", ErrBadLimit)}
	}
	if q.StartingTimeout < 0 && q.StartingTimeout != NoStartingWait {
		return &ConfigError{Queue: q.Name, Field: "startingTimeoutMs", Value: fmt.Sprint(q.StartingTimeout.Milliseconds()), Err: fmt.Errorf("%w: must be >= 0", ErrBadLimit)}
	}
	if q.ReclaimTimeout < 0 {
		return &ConfigError{Queue: q.Name, Field: "reclaimTimeoutMs", Value: fmt.Sprint(q.ReclaimTimeout.Milliseconds()), Err: fmt.Errorf("%w: must be >= 0", ErrBadLimit)}
	}
	if q.GuaranteedSlots < 0 {
		return &ConfigError{Queue: q.Name, Field: "guaranteedSlots", Value: fmt.Sprint(q.GuaranteedSlots), Err: fmt.Errorf("%w: must be >= 0", ErrBadLimit)}
	}
	if q.MaxSlots < 0 {
		return &ConfigError{Queue: q.Name, Field: "maxSlots", Value: fmt.Sprint(q.MaxSlots), Err: fmt.Errorf("%w: must be >= 0 (0: unlimited)", ErrBadLimit)}
	}
	if int(q.Policy) >= len(policyNames) {
		return &ConfigError{Queue: q.Name, Field: "policy", Value: q.Policy.String(), Err: ErrUnknownPolicy}
	}
	return nil
}

// validQueueName reports whether name is "root" or "root.a.b" with
// non-empty parts.
func validQueueName(name string) bool {
	parts := strings.Split(name, ".")
	if parts[0] != "root" {
		return false
	}
	for _, p := range parts[1:] {
		if p == "" || strings.TrimSpace(p) != p {
			return false
		}
	}
	return true
}
