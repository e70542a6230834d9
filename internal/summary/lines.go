package summary

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/runfile"
)

// Job is one job of a run, as its line of the summary says.
type Job struct {
	Name string
	// State is the job's final state in the admission, or the state it
	// was stuck in (JobNew when there is none to tell: an eager run, a
	// run on a cluster).
	State admission.JobState
	// Verdict is Finished, Failed (failed or rejected), Killed, Steady (a
	// stream that runs on) or Deadlock (never finished otherwise).
	Verdict runfile.Verdict
	// Reason says how it ended when it did not finish: "failed: ...",
	// "rejected: ...", "killed: by USER", "never finished", or what a
	// stream keeps running; "" if it finished.
	Reason string
	// Submitted, FirstDeploy and Finished are times since the start of
	// the run; FirstDeploy is when its first task got a slot and Finished
	// when it ended, negative if never.
	Submitted, FirstDeploy, Finished time.Duration
}

// Wait is the time from submission to the first deploy of a task
// (negative if no task was ever deployed).
func (j Job) Wait() time.Duration {
	if j.FirstDeploy < 0 {
		return -1
	}
	return j.FirstDeploy - j.Submitted
}

// Makespan is the time from submission to the end (negative if it never
// ended).
func (j Job) Makespan() time.Duration {
	if j.Finished < 0 {
		return -1
	}
	return j.Finished - j.Submitted
}

// Millis writes a time in ms ("1500 ms"), or "-" for one that never came
// (a negative time).
func Millis(t time.Duration) string {
	if t < 0 {
		return "-"
	}
	return fmt.Sprintf("%d ms", t.Milliseconds())
}

// JobLine is a job's line of the summary: its name, when it was
// submitted, first deployed and ended, its wait and makespan, and how it
// ended (JobOutcome). A job that did not finish has "-" for finished and
// makespan, and its outcome says when it ended.
func JobLine(j Job) string {
	finished, makespan := Millis(j.Finished), Millis(j.Makespan())
	if j.Verdict != runfile.Finished {
		finished, makespan = "-", "-"
	}
	return fmt.Sprintf("job %q: submitted %s, first deploy %s, finished %s, wait %s, makespan %s; %s",
		j.Name, Millis(j.Submitted), Millis(j.FirstDeploy), finished, Millis(j.Wait()), makespan, JobOutcome(j))
}

// JobOutcome says how a job ended: "finished", its failure, rejection or
// kill and when ("failed at 300 ms: ...", "killed at 1500 ms: by bob"),
// "running: ..." for a stream that runs on, or "never finished" and the
// admission state it was stuck in.
func JobOutcome(j Job) string {
	switch j.Verdict {
	case runfile.Finished:
		return "finished"
	case runfile.Deadlock:
		if j.State != admission.JobNew { // eager runs have no admission state
			return fmt.Sprintf("never finished (deadlock; stuck %s)", j.State)
		}
		return "never finished (deadlock)"
	}
	what, why, ok := strings.Cut(j.Reason, ": ") // "failed: ..." or "rejected: ..."
	if !ok || j.Finished < 0 {
		return cmp.Or(j.Reason, j.Verdict.String())
	}
	return fmt.Sprintf("%s at %s: %s", what, Millis(j.Finished), why)
}

// Clocks of the makespan line: a simulation's virtual time, a run's real
// time.
const (
	VirtualTime = "virtual time"
	RealTime    = "real time"
)

// labelWidth is the width of the labels of the figures' lines.
const labelWidth = 18

// pad pads a label to the width of the figures' labels.
func pad(s string) string { return s + strings.Repeat(" ", max(0, labelWidth-len(s))) }

// MakespanLine is "makespan: N ms of CLOCK, until the last event".
func MakespanLine(makespan time.Duration, clock string) string {
	return fmt.Sprintf("%s %d ms of %s, until the last event", pad("makespan:"), makespan.Milliseconds(), clock)
}

// DeadlockMakespanLine is the makespan line of a run that deadlocked:
// "makespan: N ms of CLOCK, until the deadlock" (when the last task that
// made progress stopped, which the trace marks with no event of its own).
func DeadlockMakespanLine(makespan time.Duration, clock string) string {
	return fmt.Sprintf("%s %d ms of %s, until the deadlock", pad("makespan:"), makespan.Milliseconds(), clock)
}

// UtilizationLine is the share of slot time with work progressing.
func UtilizationLine(share float64) string {
	return fmt.Sprintf("%s %.1f%% of slot time with work progressing", pad("slot utilization:"), 100*share)
}

// HeldWaitingLine is the share of slot time held by tasks that could
// not progress.
func HeldWaitingLine(share float64) string {
	return fmt.Sprintf("%s %.1f%% of slot time held by tasks that could not progress", pad("held waiting:"), 100*share)
}

// HeldIdleLine is the held-waiting line of a run on a cluster, where what
// it measures is the share of slot time held with no task or driver in
// it (granted, its tasks ended, not released yet): a real run does not
// say when a running task waits for its inputs.
func HeldIdleLine(share float64) string {
	return fmt.Sprintf("%s %.1f%% of slot time held with no task in it", pad("held waiting:"), 100*share)
}

// DriversLine is the share of slot time held by job drivers.
func DriversLine(share float64) string {
	return fmt.Sprintf("%s %.1f%% of slot time held by job drivers", pad("drivers:"), 100*share)
}

// DeployedLine counts the deployments under label ("regions scheduled:"
// or "tasks deployed:"): of, if not "", says of how many ("of 12
// regions"); shared counts the region deployments that went into their
// hybrid producers' slots (said only if some did).
func DeployedLine(label string, deployments int, of string, shared int) string {
	s := pad(label) + " " + plural.Count(deployments, "deployment")
	if of != "" {
		s += " of " + of
	}
	if shared > 0 {
		s += fmt.Sprintf(" (%d into their hybrid producers' slots)", shared)
	}
	return s
}

// RestartsLine counts the failovers and the regions they restarted.
func RestartsLine(failovers, regionRestarts int) string {
	return fmt.Sprintf("%s %d (regions restarted: %d)", pad("restarts:"), failovers, regionRestarts)
}

// ReclaimsLine counts the reclaims, the slots they took and those left
// to their jobs before the timeout.
func ReclaimsLine(reclaims, slots, withdrawn int) string {
	return fmt.Sprintf("%s %d (slots reclaimed: %d, withdrawn before the timeout: %d)", pad("reclaims:"), reclaims, slots, withdrawn)
}

// Queue is one queue of a run of several jobs.
type Queue struct {
	// Name is the queue's full name ("root.prod.etl").
	Name string
	// Guaranteed and Max are its configured guaranteed and maximum slots
	// (Max 0: unlimited).
	Guaranteed, Max int
	// Peak is the most slots it (with its children) held at once.
	Peak int
	// Share is the slot time it held as a share of the cluster's slot
	// time over the run.
	Share float64
}

// PrintQueues writes, when queues are tenants (one has a guarantee or a
// maximum, or several queues without children held slots), one line per
// queue that has capacities or held slots: its guarantee, its maximum,
// the most slots it held at once and its share of the cluster's slot
// time. queues are by name (a queue's children follow it).
func PrintQueues(out io.Writer, queues []Queue) {
	tenants, used := false, 0
	for i, q := range queues {
		tenants = tenants || q.Guaranteed > 0 || q.Max > 0
		parent := i+1 < len(queues) && strings.HasPrefix(queues[i+1].Name, q.Name+".")
		if q.Peak > 0 && !parent {
			used++
		}
	}
	if !tenants && used < 2 {
		return
	}
	for _, q := range queues {
		if q.Peak == 0 && q.Guaranteed == 0 && q.Max == 0 {
			continue
		}
		maxText := "unlimited"
		if q.Max > 0 {
			maxText = fmt.Sprint(q.Max)
		}
		fmt.Fprintf(out, "queue %s: guaranteed %d, max %s, peak %s, %.1f%% of slot time\n", q.Name, q.Guaranteed, maxText, plural.Count(q.Peak, "slot"), 100*q.Share)
	}
}

// AdmissionText says how the jobs were admitted, for the first line of
// the summary: the queues configured with their policies and capacities
// ("queues root.a fifo guaranteed 2, any other queue fifo"), or the
// policy of every queue when none is configured.
func AdmissionText(queues []admission.QueueConfig, defaultPolicy admission.Policy) string {
	if len(queues) == 0 {
		return "queue policy " + defaultPolicy.String()
	}
	parts := make([]string, len(queues))
	for i, q := range queues {
		parts[i] = q.Name + " " + q.Policy.String()
		if q.GuaranteedSlots > 0 {
			parts[i] += fmt.Sprintf(" guaranteed %d", q.GuaranteedSlots)
		}
		if q.MaxSlots > 0 {
			parts[i] += fmt.Sprintf(" max %d", q.MaxSlots)
		}
	}
	return fmt.Sprintf("queues %s, any other queue %s", strings.Join(parts, ", "), defaultPolicy)
}
