package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/regionsched/regionsched/runfile"
)

// readEventsFor reads the events file at path (runfile.ReadEvents): the
// error of a bad line is a *runfile.EventError naming the file, the line
// and the field.
func readEventsFor(path string, jobs []string, maxPriority int64) ([]runfile.JobEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--events: %w", err)
	}
	defer f.Close()
	evs, err := runfile.ReadEvents(f, path, jobs, maxPriority)
	var bad *runfile.EventError
	if err != nil && !errors.As(err, &bad) {
		return nil, fmt.Errorf("--events %s: %w", path, err)
	}
	return evs, err
}
