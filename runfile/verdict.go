package runfile

// Verdict is how a run ended.
type Verdict uint8

const (
	// Finished: every task finished.
	Finished Verdict = iota
	// Steady: every bounded task finished and every unbounded task runs.
	Steady
	// Deadlock: nothing can make progress and the job has not finished.
	Deadlock
	// Failed: the scheduler failed the job (a region could not be served).
	Failed
	// Killed: a job of a multi-job run was killed (an event of the events
	// file); the run is still fine if every other job finished.
	Killed
)

var verdictNames = [...]string{"finished", "running", "deadlock", "failed", "killed"}

// String returns "finished", "running", "deadlock", "failed" or "killed".
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "invalid"
}

// OK reports whether the verdict is a success (Finished or Steady).
func (v Verdict) OK() bool { return v == Finished || v == Steady }
