package runfile

import (
	"bufio"
	"io"
	"strconv"
	"time"

	"github.com/regionsched/regionsched/internal/jsontext"
)

// Kind is the kind of a trace event (docs/cli.md).
type Kind uint8

// The trace event kinds.
const (
	Request Kind = iota // a slot was asked for the task
	Deploy              // the task started in a slot
	Finish              // the task finished
	Fail                // the task failed
	Cancel              // the task was canceled (a failover, or the job failing)
	Release             // a slot was returned to the pool
	Refused             // a priority change or kill of the events file was refused (no task)
	Reclaim             // slots of a job (Victim) were reclaimed for another (Job), before the cancels it causes (no task)

	// The kinds below are never in a trace: a simulator run hands them to
	// its OnEvent only with simulator.Config.Detail (JobsConfig.Detail),
	// for a picture (package timeline); TraceWriter and WriteTrace leave
	// them out.

	Progress  // a deployed task starts making progress (its slot is Slot)
	Stall     // a deployed task stops making progress: it ends, or it holds its slot and waits
	Reserve   // the admission keeps slot Slot for job Job with nothing of Job in it: Reason is "gang" (a placeholder of Job's gang) or "claim" (a free slot kept for what Job lacks)
	Unreserve // the slot Reserve kept is no longer kept (a task took it, or it went back)
	Change    // an event of the events file was applied: By changed job Job (Reason: "priority N" or "kill")

	// The kinds below are trace events again (Traced), of speculative
	// execution (simulator.Config.Speculation).

	Speculate // the slow-task detector found the task slow and asked for speculative attempt Attempt (no slot yet)
	Win       // attempt Attempt of the task finished first among its attempts (in Slot); the others are canceled

	// Withdraw is a trace event too: the task's open request (attempt
	// Attempt, no slot) ended without a slot, because its region restarted
	// before it was deployed (the next attempt's request follows) or its
	// job ended (was killed, failed or rejected) in a run of several jobs.
	// Every request of a trace ends in a deploy or a withdraw, or is still
	// waiting when the run ends.
	Withdraw
)

var kindNames = [...]string{"request", "deploy", "finish", "fail", "cancel", "release", "refused", "reclaim",
	"progress", "stall", "reserve", "unreserve", "change", "speculate", "win", "withdraw"}

// String returns the name used in traces: "request", "deploy", ...
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Traced reports whether events of kind k are trace events (every kind
// before Progress, and Speculate, Win and Withdraw): the others are only
// for pictures.
func (k Kind) Traced() bool { return k < Progress || (k >= Speculate && int(k) < len(kindNames)) }

// NoSlot marks an event that is not about a slot (a request, a withdraw).
const NoSlot = -1

// NoRegion is the region of a driver's events (a driver is in no region).
const NoRegion = -1

// DriverTask is the task name of a driver in traces: the events of a
// job's driver (docs/job-file.md) name it as their Task, with NoRegion.
const DriverTask = "driver"

// Event is one line of a trace, in virtual time.
type Event struct {
	// At is the virtual time since the start of the run.
	At   time.Duration
	Kind Kind
	// Task is the execution vertex name, "A#0".
	Task string
	// Region is the task's pipelined region id (under the run's mode).
	Region int
	// Slot is the slot id, stable for the run, or NoSlot.
	Slot int
	// Attempt numbers the task's attempts (0 for the first; a restart or
	// a speculative attempt takes the next number).
	Attempt int
	// Speculative marks the events of a speculative attempt (request,
	// speculate, deploy, finish, cancel, release, win).
	Speculative bool
	// Shared marks a deploy into a slot that the task's hybrid producers
	// hold (see scheduler.Config.DisableHybridSlotSharing): its region
	// asked the pool for nothing; the trace shows its request and this
	// deploy at the same time.
	Shared bool
	// Job names the task's job in a run of several jobs ("" otherwise).
	Job string
	// By and Reason (Refused only): who asked and why it was refused.
	// Reason (Reclaim too): why the slots were reclaimed. By and Reason
	// of a Change, Reason of a Reserve: see the kinds.
	By, Reason string
	// Victim and Slots (Reclaim only): the job the slots were taken from,
	// and how many.
	Victim string
	Slots  int
}

// AppendJSON appends the event as one JSON object (no newline):
// {"t": 0, "event": "deploy", "task": "A#0", "region": 0, "slot": 1, "attempt": 0}
// (with "speculative": true for a speculative attempt, "shared": true for
// a deploy into a slot of the task's hybrid producers);
// a refused change is {"t": 4000, "event": "refused", "job": "etl", "by": "bob", "reason": "..."};
// a reclaim is {"t": 800, "event": "reclaim", "job": "high", "victim": "low", "slots": 1, "reason": "..."}.
// Times are whole milliseconds.
func (e Event) AppendJSON(b []byte) []byte {
	b = append(b, `{"t": `...)
	b = strconv.AppendInt(b, e.At.Milliseconds(), 10)
	b = append(b, `, "event": "`...)
	b = append(b, e.Kind.String()...)
	b = append(b, '"')
	if e.Job != "" {
		b = append(b, `, "job": `...)
		b = jsontext.AppendString(b, e.Job)
	}
	if e.Kind == Reclaim {
		b = append(b, `, "victim": `...)
		b = jsontext.AppendString(b, e.Victim)
		b = append(b, `, "slots": `...)
		b = strconv.AppendInt(b, int64(e.Slots), 10)
		b = append(b, `, "reason": `...)
		b = jsontext.AppendString(b, e.Reason)
		return append(b, '}')
	}
	if e.Kind == Refused {
		b = append(b, `, "by": `...)
		b = jsontext.AppendString(b, e.By)
		b = append(b, `, "reason": `...)
		b = jsontext.AppendString(b, e.Reason)
		return append(b, '}')
	}
	b = append(b, `, "task": `...)
	b = jsontext.AppendString(b, e.Task)
	b = append(b, `, "region": `...)
	b = strconv.AppendInt(b, int64(e.Region), 10)
	if e.Slot != NoSlot {
		b = append(b, `, "slot": `...)
		b = strconv.AppendInt(b, int64(e.Slot), 10)
	}
	b = append(b, `, "attempt": `...)
	b = strconv.AppendInt(b, int64(e.Attempt), 10)
	if e.Speculative {
		b = append(b, `, "speculative": true`...)
	}
	if e.Shared {
		b = append(b, `, "shared": true`...)
	}
	return append(b, '}')
}

// TraceWriter streams a trace as JSON Lines, the lines WriteTrace writes,
// one event at a time: give its Event method as the OnEvent of a
// simulator.Config, and call Flush after the run. Memory does not grow with the trace.
type TraceWriter struct {
	bw   *bufio.Writer
	line []byte
	err  error
}

// NewTraceWriter returns a TraceWriter writing to w (buffered).
func NewTraceWriter(w io.Writer) *TraceWriter {
	return &TraceWriter{bw: bufio.NewWriterSize(w, 1<<16)}
}

// Event writes one event as a line. After a write error it writes
// nothing more; Flush returns the error. An event of a kind that is not
// Traced is left out.
func (t *TraceWriter) Event(e Event) {
	if t.err != nil || !e.Kind.Traced() {
		return
	}
	t.line = append(e.AppendJSON(t.line[:0]), '\n')
	_, t.err = t.bw.Write(t.line)
}

// Flush writes what is buffered and returns the first error.
func (t *TraceWriter) Flush() error {
	if t.err != nil {
		return t.err
	}
	return t.bw.Flush()
}

// WriteTrace writes events as JSON Lines, one event per line, in the
// order given (a simulator.Result's trace is in time order), leaving out those of
// kinds that are not Traced.
func WriteTrace(w io.Writer, events []Event) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for _, e := range events {
		if !e.Kind.Traced() {
			continue
		}
		line = e.AppendJSON(line[:0])
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
