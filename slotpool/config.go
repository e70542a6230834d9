package slotpool

import (
	"time"

	"github.com/regionsched/regionsched/resource"
)

// DefaultTimeout is the fulfillability timeout used when Config.Timeout is
// zero (Flink's default slot request timeout).
const DefaultTimeout = 5 * time.Minute

// NoTimeout as Config.Timeout turns the fulfillability timeout off: an
// unfulfillable bulk waits (for an admission that decides who waits, or
// for a simulator that reports the wait as a deadlock).
const NoTimeout time.Duration = -1

// Config configures the slot pool of a job (scheduler.Config.Pool). Whether
// the pool declares its demand to an admission is not the pool's setting
// but the scheduler's: it does when the scheduler has one.
type Config struct {
	// Matching says when a slot serves a request: resource.FitsEveryDimension
	// (the zero value) or resource.ExactMatch.
	Matching resource.Matching
	// Timeout is how long a bulk may stay unfulfillable before it fails
	// (FLIP-119's allocationTimeout). Zero or negative: DefaultTimeout;
	// NoTimeout: never.
	Timeout time.Duration
	// IdleTimeout, if positive, gives a free slot back to the admission
	// (SlotRelease with ReasonStopped) once it has been free that long and
	// no waiting bulk has a request it can serve; if some waiting bulk
	// could use it, its idle timer starts again. Zero keeps idle slots.
	// Without an admission the SlotRelease comes out in the scheduler's
	// Ready.ToAdmission, for the runtime that offered the slot.
	IdleTimeout time.Duration
	// ReturnFreed gives a slot back to the admission (SlotRelease with
	// ReasonStopped) as soon as its tasks end, instead of to the pool's own
	// waiting bulks: with many jobs on one admission, which job a freed
	// slot goes to is the admission's decision, and the job's next region
	// asks for it like any other job. It needs an admission
	// (scheduler.Config.Admission or ExternalAdmission); without one the
	// scheduler's Config is refused.
	ReturnFreed bool
}
