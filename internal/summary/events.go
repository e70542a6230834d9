package summary

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/plural"
)

// EventOutcome is what became of one event of an events file: applied
// or refused, and why.
type EventOutcome struct {
	// At is the event's time (its "t"), By who asked, Action what, Job
	// of which job, Priority the priority asked (a set-priority).
	At       time.Duration
	By       string
	Action   admission.Action
	Job      string
	Priority int
	// Old is the job's priority before an applied set-priority.
	Old int
	// Applied says whether it took effect; Reason says why not.
	Applied bool
	Reason  string
}

// EventLine is an event's line of the summary: "event 4000 ms: alice
// set-priority etl 3000 -> 9000: applied", "event 100 ms: bob kill etl:
// refused: role user may change only their own jobs; the job is alice's".
func EventLine(o EventOutcome) string {
	what := fmt.Sprintf("event %d ms: %s %s %s", o.At.Milliseconds(), o.By, o.Action, o.Job)
	if o.Action == admission.ActionSetPriority {
		if o.Applied {
			what += fmt.Sprintf(" %d -> %d", o.Old, o.Priority)
		} else {
			what += fmt.Sprintf(" -> %d", o.Priority)
		}
	}
	if o.Applied {
		return what + ": applied"
	}
	return what + ": refused: " + o.Reason
}

// Restart is one failover of a job's scheduler: a task failed (or was
// the first one stopped in a slot lost or reclaimed) and the regions its
// failover strategy restarted.
type Restart struct {
	// Job names the job ("" in a run of one job).
	Job string
	// At is the time of the failover, Task the failed task ("C#0"),
	// Regions the regions restarted, ascending.
	At      time.Duration
	Task    string
	Regions []int
}

// RestartLine is a failover's line under the restarts of the summary of
// one job: "  at 4000 ms C#0 failed: restarted regions 1-3".
func RestartLine(r Restart) string {
	return fmt.Sprintf("  at %d ms %s failed: restarted %s %s", r.At.Milliseconds(), r.Task,
		plural.Of(len(r.Regions), "region", "regions"), Ranges(r.Regions))
}

// Ranges renders sorted ids compactly: "0-3, 7, 9-12", or "-" if none.
func Ranges(ids []int) string {
	if len(ids) == 0 {
		return "-"
	}
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(ids[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return b.String()
}

// RestartCounts are the restarts line's figures of failovers: how many
// there were, and the regions they restarted.
func RestartCounts(restarts []Restart) (failovers, regionRestarts int) {
	for _, r := range restarts {
		regionRestarts += len(r.Regions)
	}
	return len(restarts), regionRestarts
}

// ImplicitQueues lists, in order of first use, the queues of jobQueues
// (each job's queue, "" for one that names none: DefaultQueue) that
// queues, the queues configured, do not configure, when some are
// configured: the admission creates them with the default policy.
func ImplicitQueues(jobQueues []string, queues []admission.QueueConfig) []string {
	if len(queues) == 0 {
		return nil
	}
	var out []string
	for _, q := range jobQueues {
		if q == "" {
			q = DefaultQueue
		}
		if !slices.ContainsFunc(queues, func(c admission.QueueConfig) bool { return c.Name == q }) && !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out
}

// DefaultQueue is the queue of a job that names none.
const DefaultQueue = "root.default"

// ImplicitQueuesLine is the line that names the queues the admission
// created with the default policy (ImplicitQueues): "not in the cluster
// file's queues, so created with --queue-policy fifo: root.urgent".
func ImplicitQueuesLine(defaultPolicy admission.Policy, implicit []string) string {
	return fmt.Sprintf("not in the cluster file's queues, so created with --queue-policy %s: %s", defaultPolicy, strings.Join(implicit, ", "))
}

// EagerDeployedLine is the "regions scheduled:" line of a run without
// regions (simulate --policy eager): none, and the task deployments made
// one by one instead ("regions scheduled: none (eager: 12 deployments of
// 12 tasks, one by one)"); of, if not "", says of how many tasks.
func EagerDeployedLine(deployments int, of string) string {
	s := pad("regions scheduled:") + " none (eager: " + plural.Count(deployments, "deployment")
	if of != "" {
		s += " of " + of
	}
	return s + ", one by one)"
}
