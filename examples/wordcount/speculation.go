package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/regionsched/regionsched/scheduler"
)

// speculationOf is the scheduler's speculative execution of the command
// line: off without --speculation, else Flink's defaults with the lower
// bound and check interval given. --speculation and --slow run one job.
func speculationOf(on bool, lowerBound, every time.Duration, jobs, slow int) (scheduler.Speculation, error) {
	if jobs > 1 && (on || slow > 0) {
		return scheduler.Speculation{}, fmt.Errorf("--speculation and --slow run one job, not --jobs %d", jobs)
	}
	if !on {
		return scheduler.Speculation{}, nil
	}
	c := scheduler.DefaultSpeculation()
	c.BaselineLowerBound, c.CheckInterval = lowerBound, every
	if err := c.Validate(); err != nil {
		var se *scheduler.SpeculationError
		if errors.As(err, &se) {
			flag := map[string]string{"BaselineLowerBound": "--speculation-baseline-lower-bound", "CheckInterval": "--speculation-check-interval"}[se.Field]
			return scheduler.Speculation{}, fmt.Errorf("%s %s: must be %s", flag, se.Value, se.Valid)
		}
		return scheduler.Speculation{}, err
	}
	return c, nil
}
