package admission

import (
	"time"

	"github.com/regionsched/regionsched/slotpool"
)

// Cluster is the cluster-level seam: the admission many jobs share,
// which decides which job gets which slots and when it must give them
// back. Package multijob runs its jobs against one. Queues (in process)
// and package slurm's cluster (a Slurm cluster, which decides by itself)
// implement it.
//
// A Cluster is a deterministic state machine like the pools it serves:
// no goroutine and no clock; time comes in with each input. One whose
// decisions come from outside (Slurm) takes them through input methods of
// its own, which a runtime calls between the calls of its users (package
// multijob: Scheduler.ClusterInput).
type Cluster interface {
	// Submit admits a job and returns its JobPort, the admission of the
	// job's pool. A job that can never run is returned rejected (its
	// port's State is JobRejected, Err says why), not as an error; an
	// error means the spec itself is refused (a *ConfigError, an unknown
	// queue, a priority out of range) and nothing changed.
	Submit(now time.Time, spec JobSpec) (JobPort, error)
	// Decide decides over everything waiting at now: grants, claims,
	// reclaims. Called once per instant, after the instant's inputs.
	Decide(now time.Time)
	// Events returns what happened to jobs since the last call (state
	// changes, drivers granted, reclaims), in order, and forgets them.
	Events() []Event
	// Pending returns the jobs whose ports have messages for their pools.
	Pending() []JobID
	// Tick fires the timers due at now; NextDeadline says when the next
	// one is due.
	Tick(now time.Time)
	NextDeadline() (time.Time, bool)
	// Authorize says whether by may do action to job (with priority for
	// ActionSetPriority) without doing it: nil, or a *RefusedError.
	Authorize(by Principal, action Action, job string, priority int) error
	// SetPriority changes a job's priority if by may (audited).
	SetPriority(now time.Time, by Principal, job string, priority int) error
	// Kill ends a job if by may (audited): its port ends with a
	// *KilledError and takes no more messages; the slots it held go back.
	Kill(now time.Time, by Principal, job string) error
}

// JobPort is one job's side of a Cluster: the slotpool.Admission of its
// pool, and what the runtime tells the cluster of the job. Each Cluster
// returns its own from Submit.
type JobPort interface {
	slotpool.Admission
	// ID is the job's id in the cluster (the JobID of its Events).
	ID() JobID
	// State is where the job is in its life; Err says why it ended if it
	// did not complete.
	State() JobState
	Err() error
	// Pending reports whether Ready has messages for the pool.
	Pending() bool
	// Granted counts the slots the job holds (its driver's included).
	Granted() int
	// DriverSlot is the slot granted to the job's driver, if any.
	DriverSlot() (slotpool.SlotID, bool)
	// Deployed tells the cluster that the job's first region deployed (a
	// starting job is running).
	Deployed(now time.Time)
	// Finished and Failed tell the cluster the job ended; its slots go
	// back.
	Finished(now time.Time) error
	Failed(now time.Time, err error) error
}

var _ Cluster = (*Queues)(nil)

// SpeculativeGranter is implemented by a Cluster whose ports grant
// speculative asks (slotpool.Ask.Speculative) only while no regular ask
// that the slot could serve waits, of any job: Queues is one. A Cluster that does not implement it, or
// returns false, is sent no speculative ask (package multijob refuses
// speculation over it).
type SpeculativeGranter interface {
	GrantsSpeculative() bool
}

// GrantsSpeculative reports that Queues grants speculative asks.
func (q *Queues) GrantsSpeculative() bool { return true }

// GrantsSpeculative reports whether c grants speculative asks (it is a
// SpeculativeGranter that says so).
func GrantsSpeculative(c Cluster) bool {
	g, ok := c.(SpeculativeGranter)
	return ok && g.GrantsSpeculative()
}

var _ JobPort = (*port)(nil)
