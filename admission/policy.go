package admission

import (
	"fmt"
	"strings"
	"time"
)

// Policy orders the jobs of one queue for grants.
type Policy uint8

// The queue policies (SPEC.md section 5).
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
	// grant until they end); 0 means unlimited. Jobs beyond it wait and
	// are admitted in policy order.
	MaxRunningJobs int
	// StartingTimeout: under StateAware, how long a job stays starting at
	// most; 0 means DefaultStartingTimeout.
	StartingTimeout time.Duration
}

// validate checks the limits.
func (q QueueConfig) validate() error {
	if q.Name == "" || !strings.HasPrefix(q.Name, "root") {
		return &ConfigError{Queue: q.Name, Field: "name", Value: q.Name, Err: fmt.Errorf("%w: a queue name starts with \"root\"", ErrBadLimit)}
	}
	if q.MaxRunningJobs < 0 {
		return &ConfigError{Queue: q.Name, Field: "maxRunningJobs", Value: fmt.Sprint(q.MaxRunningJobs), Err: fmt.Errorf("%w: must be >= 0", ErrBadLimit)}
	}
	if q.StartingTimeout < 0 {
		return &ConfigError{Queue: q.Name, Field: "startingTimeoutMs", Value: fmt.Sprint(q.StartingTimeout.Milliseconds()), Err: fmt.Errorf("%w: must be >= 0", ErrBadLimit)}
	}
	if int(q.Policy) >= len(policyNames) {
		return &ConfigError{Queue: q.Name, Field: "policy", Value: q.Policy.String(), Err: ErrUnknownPolicy}
	}
	return nil
}
