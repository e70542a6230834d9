package admission

import (
	"errors"
	"fmt"
	"strings"
)

// Role is what a principal may do to jobs (YuniKorn-style user and admin roles).
type Role uint8

// The roles.
const (
	// RoleUser may set priorities 1 ... MaxUserPriority on, and kill, the
	// jobs whose user is theirs.
	RoleUser Role = iota + 1
	// RoleAdmin may set priorities 1 ... MaxPriority on, and kill, any
	// job.
	RoleAdmin
)

// The priority ranges (docs/job-file.md).
const (
	// MinPriority is the lowest priority.
	MinPriority = 1
	// MaxUserPriority is the highest priority a user may set.
	MaxUserPriority = 5000
	// MaxPriority is the highest priority, an admin's to set.
	MaxPriority = 10000
	// DefaultPriority is the priority of a job that names none.
	DefaultPriority = 5000
)

var roleNames = [...]string{"", "user", "admin"}

// String returns "user" or "admin".
func (r Role) String() string {
	if r > 0 && int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// ParseRole reads "user" or "admin", case-insensitively; anything else
// returns ErrUnknownRole.
func ParseRole(s string) (Role, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "user":
		return RoleUser, nil
	case "admin":
		return RoleAdmin, nil
	}
	return 0, fmt.Errorf("%w %q (valid: user, admin)", ErrUnknownRole, s)
}

// Principal is who asks for a change: a name and a role. The zero
// Principal (no role) may change nothing.
type Principal struct {
	Name string
	Role Role
}

// Action is a change a principal asks for.
type Action uint8

// The actions.
const (
	// ActionSetPriority changes a job's priority.
	ActionSetPriority Action = iota + 1
	// ActionKill ends a job at once.
	ActionKill
)

var actionNames = [...]string{"", "set-priority", "kill"}

// String returns "set-priority" or "kill".
func (a Action) String() string {
	if a > 0 && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// Sentinel errors of authorization, matched with errors.Is.
var (
	// ErrUnknownRole: a role name that does not exist.
	ErrUnknownRole = errors.New("admission: unknown role")
	// ErrNotAuthorized: the principal may not do that to that job.
	ErrNotAuthorized = errors.New("admission: not authorized")
	// ErrBadPriority: a priority outside 1 ... 10000.
	ErrBadPriority = errors.New("admission: priority out of range")
)

// RefusedError is a change that was refused: who asked, what, on which
// job, and why. It wraps ErrNotAuthorized, ErrBadPriority or
// ErrUnknownJob.
type RefusedError struct {
	By     Principal
	Action Action
	Job    string
	// Priority is the priority asked for (ActionSetPriority).
	Priority int
	Reason   string
	Err      error
}

// Error says who was refused what and why.
func (e *RefusedError) Error() string {
	what := e.Action.String()
	if e.Action == ActionSetPriority {
		what = fmt.Sprintf("set-priority %d", e.Priority)
	}
	by := principalName(e.By)
	if e.By.Role != 0 {
		by += " (" + e.By.Role.String() + ")"
	}
	return fmt.Sprintf("admission: %s on job %q by %s refused: %s", what, e.Job, by, e.Reason)
}

// Unwrap returns the sentinel.
func (e *RefusedError) Unwrap() error { return e.Err }

// authorize checks that by may do action to a job owned by owner (with
// priority prio for ActionSetPriority); nil or a *RefusedError.
func authorize(by Principal, action Action, job, owner string, prio int) error {
	refuse := func(err error, format string, args ...any) error {
		return &RefusedError{By: by, Action: action, Job: job, Priority: prio, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	if action == ActionSetPriority && (prio < MinPriority || prio > MaxPriority) {
		return refuse(ErrBadPriority, "priority %d is outside %d ... %d", prio, MinPriority, MaxPriority)
	}
	switch by.Role {
	case RoleAdmin:
		return nil
	case RoleUser:
		if owner != by.Name {
			return refuse(ErrNotAuthorized, "role user may change only their own jobs; the job is %s's", owner)
		}
		if action == ActionSetPriority && prio > MaxUserPriority {
			return refuse(ErrNotAuthorized, "role user may set priorities %d ... %d", MinPriority, MaxUserPriority)
		}
		return nil
	}
	if by.Name == "" {
		return refuse(ErrNotAuthorized, "an anonymous principal has no role: only users given role user or admin may change jobs")
	}
	return refuse(ErrNotAuthorized, "%q has no role: only users given role user or admin may change jobs, and %q is not among the configured users", by.Name, by.Name)
}
