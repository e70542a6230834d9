package kubernetes

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/multijob"
)

// ErrDeadlock: the jobs left wait for slots nothing will free.
var ErrDeadlock = errors.New("kubernetes: deadlock")

// DeadlockError is what Deadlock (and Run) return when the jobs not
// ended can never progress: no pod of the run is pending or running but drivers', no
// driver is starting, and the scheduler has no timeout to come. It names
// what a simulation of the same jobs names: the stuck jobs, what holds
// slots while waiting (drivers), the tasks waiting for a slot, and the
// jobs waiting for a driver's slot.
type DeadlockError struct {
	// At is how long after the first Submit the deadlock was found.
	At time.Duration
	// Jobs are the jobs that never finish, in the order of their names
	// (as every list of the error: a verdict reads the same whatever the
	// order the jobs were given in).
	Jobs []string
	// Holding are what holds slots while waiting ("job:driver").
	Holding []string
	// Waiting are the tasks that wait for a slot ("job:vertex#i").
	Waiting []string
	// NoDriver are the jobs whose drivers wait for a slot.
	NoDriver []string
}

// Error reads like a simulation's verdict: "deadlock: at 1300 ms jobs a,
// b never finish: a:driver, b:driver hold slots while waiting; a:x#0, ...
// wait for a slot".
func (e *DeadlockError) Error() string {
	var parts []string
	if len(e.Holding) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s slots while waiting", listNames(e.Holding, 12), pick(len(e.Holding), "holds", "hold")))
	}
	if len(e.Waiting) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s for a slot", listNames(e.Waiting, 12), pick(len(e.Waiting), "waits", "wait")))
	}
	if len(e.NoDriver) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s for a driver's slot", listNames(e.NoDriver, 12), pick(len(e.NoDriver), "waits", "wait")))
	}
	return fmt.Sprintf("deadlock: at %d ms %s %s %s: %s", e.At.Milliseconds(), pick(len(e.Jobs), "job", "jobs"),
		listNames(e.Jobs, 12), pick(len(e.Jobs), "never finishes", "never finish"), strings.Join(parts, "; "))
}

// Unwrap returns ErrDeadlock.
func (e *DeadlockError) Unwrap() error { return ErrDeadlock }

// listNames joins names, the first limit of them and how many in all.
func listNames(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:limit], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
}

// pick returns one for n == 1, else many.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Deadlock returns, after a Step at time now, a *DeadlockError if jobs
// have not ended and nothing can happen any more: the last Step's Ready
// had nothing left to apply, no pod of the run is pending or running but
// drivers', no driver is starting, and the scheduler has no timeout to
// come. The jobs then wait for slots that nothing the Runner knows of
// will free, as a simulation of them would report (Run stops there). A
// caller with inputs still to give (jobs to submit later, kills,
// priority changes) asks only once it gave them all. Otherwise nil.
func (r *Runner) Deadlock(now time.Time) *DeadlockError {
	if !r.quiet || len(r.jobs) == 0 || r.Done() || len(r.pods) > 0 || r.driverStarting() {
		return nil
	}
	if _, ok := r.s.NextDeadline(); ok {
		return nil
	}
	d := &DeadlockError{At: now.Sub(r.start)}
	for _, name := range slices.SortedFunc(slices.Values(r.order), summary.CompareNames) {
		j := r.jobs[name]
		if j.ended {
			continue
		}
		d.Jobs = append(d.Jobs, name)
		st, err := r.s.Status(name)
		if err != nil {
			continue
		}
		switch {
		case j.driver != nil && !j.driver.gone:
			d.Holding = append(d.Holding, name+":"+DriverTaskName)
		case j.spec.Driver != nil && !st.HasDriverSlot:
			d.NoDriver = append(d.NoDriver, name)
		}
		d.Waiting = append(d.Waiting, waitingTasks(name, j, st)...)
	}
	return d
}

// waitingTasks names the tasks of a job's regions waiting for slots.
func waitingTasks(name string, j *runJob, st multijob.JobStatus) []string {
	var out []string
	for _, rg := range st.Scheduler.Waiting {
		for _, v := range j.spec.Regions.Members(rg) {
			out = append(out, name+":"+j.tasks.TaskName(v))
		}
	}
	return out
}
