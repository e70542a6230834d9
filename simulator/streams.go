package simulator

import (
	"fmt"
	"slices"

	"github.com/regionsched/regionsched/runfile"
)

// runningTasks counts the tasks of the union range [from, to) that are
// deployed and run forever (unbounded), the other deployed ones
// (consumers of a stream, or tasks holding their slots while waiting),
// and those that are neither deployed nor finished (idle).
func (e *engine) runningTasks(from, to int32) (unbounded, consumers, idle int) {
	for v := from; v < to; v++ {
		t := &e.model.tasks[v]
		switch {
		case t.phase == finished:
		case t.phase != deployed:
			idle++
		case e.model.duration[t.jobVertex] == never:
			unbounded++
		default:
			consumers++
		}
	}
	return unbounded, consumers, idle
}

// streaming reports whether job i of a multi-job run is a stream fully
// deployed: it has unbounded tasks, and every task of it has finished or
// is deployed and not holding its slot while waiting (holding, sorted:
// the tasks that are). Such a job never finishes, and rightly so; it
// returns the job's counts of unbounded tasks and of tasks reading them.
func (e *engine) streaming(i int, holding []int32) (unbounded, consumers int, ok bool) {
	from, to := e.set.offsets[i], e.set.offsets[i+1]
	unbounded, consumers, idle := e.runningTasks(from, to)
	if unbounded == 0 || idle > 0 {
		return 0, 0, false
	}
	at, _ := slices.BinarySearch(holding, from)
	if at < len(holding) && holding[at] < to {
		return 0, 0, false // a task of it holds its slot while waiting
	}
	return unbounded, consumers, true
}

// steadyReason is the verdict of a run (or a job) whose bounded tasks all
// finished or read an unbounded stream: "running: ...".
func steadyReason(unbounded, consumers int) string {
	s := fmt.Sprintf("running: every bounded task finished or reads an unbounded stream; %d unbounded %s running",
		unbounded, verb(unbounded, "task keeps", "tasks keep"))
	if consumers > 0 {
		s += fmt.Sprintf(", %d %s reading them", consumers, verb(consumers, "task keeps", "tasks keep"))
	}
	return s
}

// blocked names the tasks of the jobs stuck at the end of a multi-job run
// (never ended, not streams) that are neither deployed nor waiting for a
// slot: as in a run of one job, they wait for a blocking result whose
// producer never finishes (a stream's). It is asked when nothing is stuck
// on slots.
func (p *jobsPolicy) blocked() []string {
	asked := p.waitingForSlots()
	slices.Sort(asked)
	var out []string
	for _, v := range p.e.neverStarted(asked) {
		if run, _, _, _ := p.task(v); !run.ended && run.verdict != runfile.Steady {
			out = append(out, p.e.name(v))
		}
	}
	return out
}
