package main

import (
	"github.com/regionsched/regionsched/internal/runcli"
	"github.com/regionsched/regionsched/runfile"
)

// readEventsFor reads the events file at path (runfile.ReadEvents): the
// error of a bad line is a *runfile.EventError naming the file, the line
// and the field.
func readEventsFor(path string, jobs []string, maxPriority int64) ([]runfile.JobEvent, error) {
	return runcli.ReadEvents(path, jobs, maxPriority)
}
