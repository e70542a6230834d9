package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/simulator"
)

// readEvents reads an events file (SPEC.md section 5): JSON Lines of
// {"t": ms, "event": "set-priority" | "kill", "job", "priority", "by"},
// sorted by time (stably: lines of the same time keep their order). A bad
// line is refused, naming its line and field.
func readEvents(path string) ([]simulator.JobEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--events: %w", err)
	}
	defer f.Close()
	var evs []simulator.JobEvent
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var ev struct {
			T        *int64 `json:"t"`
			Event    string `json:"event"`
			Job      string `json:"job"`
			Priority *int64 `json:"priority"`
			By       string `json:"by"`
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ev); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		out := simulator.JobEvent{Job: ev.Job, By: ev.By}
		switch strings.ToLower(ev.Event) {
		case "set-priority":
			out.Action = admission.ActionSetPriority
			if ev.Priority == nil {
				return nil, fmt.Errorf("%s line %d: field \"priority\": missing (a set-priority event needs it)", path, n)
			}
			out.Priority = int(*ev.Priority)
		case "kill":
			out.Action = admission.ActionKill
			if ev.Priority != nil {
				return nil, fmt.Errorf("%s line %d: field \"priority\": a kill event has none", path, n)
			}
		default:
			return nil, fmt.Errorf("%s line %d: field \"event\": %q is not an event (valid: set-priority, kill)", path, n, ev.Event)
		}
		switch {
		case ev.T == nil || *ev.T < 0:
			return nil, fmt.Errorf("%s line %d: field \"t\": must be given, a time in ms >= 0", path, n)
		case ev.Job == "":
			return nil, fmt.Errorf("%s line %d: field \"job\": must be given", path, n)
		case ev.By == "":
			return nil, fmt.Errorf("%s line %d: field \"by\": must be given", path, n)
		}
		out.At = time.Duration(*ev.T) * time.Millisecond
		evs = append(evs, out)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--events: %w", err)
	}
	slices.SortStableFunc(evs, func(a, b simulator.JobEvent) int { return cmp.Compare(a.At, b.At) })
	return evs, nil
}

// users maps the cluster file's users to their roles (none without a
// cluster file: every change is refused).
func (r *jobsRun) users() (map[string]admission.Role, error) {
	out := map[string]admission.Role{}
	if r.cluster == nil {
		return out, nil
	}
	for i, u := range r.cluster.Users {
		role, err := admission.ParseRole(u.Role)
		if err != nil { // decodeCluster admits only valid roles
			return nil, badInput(fmt.Errorf("cluster file %s: users[%d].role: %w", r.clusterPath, i, err))
		}
		out[u.Name] = role
	}
	return out, nil
}
