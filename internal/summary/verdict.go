package summary

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/runfile"
)

// JobsVerdict is the verdict line of a run of several jobs, in the words
// of simulate: deadlock (the line given, which names what never
// finishes) if a job never finished, followed by the jobs that failed or
// were rejected when some did (WithFailed); "failed: 1 of 3 jobs: etl
// failed: ..." if a job failed or was rejected; else "finished: all 3
// jobs finished at 19000 ms", with the killed jobs when some were
// ("finished: 1 of 2 jobs finished at 1000 ms, adhoc killed at 1500 ms").
// It names jobs in the order of their names (CompareNames), whatever
// the order of jobs. ok reports whether the run succeeded (every job
// finished or was killed).
func JobsVerdict(jobs []Job, deadlock string) (line string, ok bool) {
	var stuck bool
	var failed, killed []string
	finished, last := 0, time.Duration(-1)
	for _, j := range byName(jobs) {
		switch j.Verdict {
		case runfile.Deadlock, runfile.Steady:
			stuck = true
		case runfile.Killed:
			killed = append(killed, fmt.Sprintf("%s killed at %d ms", j.Name, max(j.Finished, 0).Milliseconds()))
		case runfile.Finished:
			finished, last = finished+1, max(last, j.Finished)
		default:
			failed = append(failed, fmt.Sprintf("%s %s", j.Name, j.Reason))
		}
	}
	switch {
	case stuck:
		return WithFailed(deadlock, failed, len(jobs)), false
	case len(failed) > 0:
		return Failed(failed, len(jobs)), false
	}
	at := ""
	if last >= 0 {
		at = fmt.Sprintf(" at %d ms", last.Milliseconds())
	}
	if len(killed) == 0 {
		return fmt.Sprintf("finished: %s finished%s", plural.All(len(jobs), "job"), at), true
	}
	return fmt.Sprintf("finished: %d of %s finished%s, %s", finished, plural.Count(len(jobs), "job"), at, listNames(killed, 12)), true
}

// Failed is the verdict of a run of n jobs some of which failed or were
// rejected, failed naming each with how it ended ("etl failed: ...",
// "big rejected: ..."): "failed: 1 of 3 jobs: etl failed: ...".
func Failed(failed []string, n int) string {
	return fmt.Sprintf("failed: %d of %s: %s", len(failed), plural.Count(n, "job"), strings.Join(failed, "; "))
}

// WithFailed is a verdict line that names something other than the
// failed jobs first (a deadlock), followed by the failed or rejected
// jobs of the run of n jobs when there are some, as Failed names them: a
// rejected job is named whatever else went wrong in the run ("deadlock:
// at 0 ms jobs d1, d2 never finish: ...; failed: 1 of 3 jobs: big
// rejected: ...").
func WithFailed(line string, failed []string, n int) string {
	if len(failed) == 0 {
		return line
	}
	return line + "; " + Failed(failed, n)
}

// JobVerdict is the verdict line of a run of one job, in the words of
// simulate: "finished: all 12 tasks finished at 4000 ms" (tasks: its
// execution vertices), its failure ("failed: ...") or the deadlock line
// given. ok reports whether it finished.
func JobVerdict(j Job, tasks int, deadlock string) (line string, ok bool) {
	switch j.Verdict {
	case runfile.Finished:
		return fmt.Sprintf("finished: %s finished at %d ms", plural.All(tasks, "task"), j.Finished.Milliseconds()), true
	case runfile.Deadlock, runfile.Steady:
		return deadlock, false
	}
	return j.Reason, false
}

// listNames joins names, the first limit of them and how many in all.
func listNames(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:limit], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
}

// byName returns the jobs in the order of their names (CompareNames).
func byName(jobs []Job) []Job {
	return slices.SortedStableFunc(slices.Values(jobs), func(a, b Job) int { return CompareNames(a.Name, b.Name) })
}
