package simulator

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// Policy is how tasks get slots.
type Policy uint8

const (
	// RegionPolicy is the library: pipelined regions, FIFO atomic bulks,
	// slot sharing, region failover.
	RegionPolicy Policy = iota
	// EagerPolicy is the baseline without regions, bulks or sharing.
	EagerPolicy
)

// String returns "region" or "eager".
func (p Policy) String() string {
	if p == EagerPolicy {
		return "eager"
	}
	return "region"
}

// ErrUnknownPolicy means a policy name is not "region" or "eager".
var ErrUnknownPolicy = errors.New("unknown policy")

// ParsePolicy parses "region" or "eager".
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "region":
		return RegionPolicy, nil
	case "eager":
		return EagerPolicy, nil
	}
	return 0, fmt.Errorf("%w %q (valid: region, eager)", ErrUnknownPolicy, s)
}

// Config describes one simulation.
type Config struct {
	// Regions is the job under its global data exchange mode.
	Regions *region.Regions
	// Cluster lists the slots; they get ids 0, 1, ... in this order.
	Cluster []resource.Count
	// Policy selects the region scheduler or the eager baseline.
	Policy Policy
	// Seed orders the offer of slots, the eager policy's grants and,
	// with Ties TiesSeeded, simultaneous events.
	Seed uint64
	// Ties is the order of events due at the same time (default: in the
	// order they were scheduled).
	Ties TieOrder
	// Failures injects failures of first attempts.
	Failures []Failure
	// Matching is how slots serve requests (default: fits every dimension).
	Matching resource.Matching
	// Timeout is the slot pool's fulfillability timeout (0: the pool's default).
	Timeout time.Duration
	// SelectiveShare is the share of the producers of a selective hybrid
	// input that must have finished before its consumer may start (region
	// policy; scheduler.Config.SelectiveShare): in (0, 1], 0 means
	// scheduler.DefaultSelectiveShare. Run refuses other values.
	SelectiveShare float64
	// DisableHybridSlotSharing keeps consumers of hybrid results out of
	// their producers' slots (region policy;
	// scheduler.Config.DisableHybridSlotSharing).
	DisableHybridSlotSharing bool
	// Record keeps the trace in Result.Events.
	Record bool
	// OnEvent, if set, receives every trace event as it happens, in time
	// order (with or without Record): a trace streamed this way costs no
	// memory per event (see runfile.TraceWriter).
	OnEvent func(runfile.Event)
	// Detail also hands OnEvent, among the trace events, the events of
	// the kinds only a picture uses (Progress, Stall; in a run of several
	// jobs Reserve, Unreserve and Change too): never recorded, never
	// counted as trace events (see Kind.Traced).
	Detail bool
	// MaxEvents stops a run that processes more calendar events (0: 1<<31).
	MaxEvents int
	// Speculation turns speculative execution of slow tasks on
	// (scheduler.Speculation; the zero value is off). Region policy and
	// one job only.
	Speculation scheduler.Speculation
	// Stragglers is the share of attempts, 0 ... 1, that run
	// StragglerFactor times slower than their duration (see
	// stragglers.go); 0: none.
	Stragglers float64
	// StragglerFactor is how many times slower a straggler runs, 1 ...
	// MaxStragglerFactor; 0 means DefaultStragglerFactor.
	StragglerFactor float64
	// SlotNodes names the node of each slot, by id (Cluster's order);
	// a slot without one (beyond the list, or "") is a node of its own.
	// Speculative execution keeps its attempts off the nodes it blocks.
	SlotNodes []string
	// Logger receives debug logs; nil means zap.NewNop().
	Logger *zap.Logger
}

// Result is the outcome of a run.
type Result struct {
	Verdict runfile.Verdict
	// Reason is one line starting with the verdict, e.g. "deadlock: ...".
	Reason string
	// Makespan is the virtual time of the last event.
	Makespan time.Duration
	// Slots is the number of slots of the cluster.
	Slots int
	// Utilization is the share of slot time (the cluster's slots times
	// Makespan) in which slots were held, by tasks whether they made
	// progress or waited, or by drivers: WorkUtilization plus HeldWaiting
	// plus DriverHeld.
	Utilization float64
	// WorkUtilization is the share of slot time in which a slot held at
	// least one task making progress (a deadlocked run's waiting does not
	// count).
	WorkUtilization float64
	// HeldWaiting is the share of slot time in which slots were held by
	// tasks none of which made progress (waiting for pipelined peers, for
	// blocking inputs, or for producers to finish). Drivers do not count
	// here: their time is DriverHeld.
	HeldWaiting float64
	// DriverHeld is, in a run of several jobs, the share of slot time in
	// which slots were held by job drivers (docs/job-file.md): a driver
	// holds its slot from its grant to its job's end. 0 without drivers.
	DriverHeld float64
	// RegionsScheduled counts region deployments (restarts included);
	// under the eager policy it counts task deployments.
	RegionsScheduled int
	// RegionsShared counts the region deployments (in RegionsScheduled)
	// that went into slots their hybrid producers held (region policy).
	RegionsShared int
	// Failovers counts handled failures; RegionRestarts the regions they restarted.
	Failovers, RegionRestarts int
	// Reclaims counts, in a run of several jobs, the reclaims (slots of
	// one job taken for another by preemption, one per claimant and victim
	// at a time); ReclaimedSlots the slots they took; WithdrawnSlots those
	// of them left to their jobs before the timeout, the reason gone.
	Reclaims, ReclaimedSlots, WithdrawnSlots int
	// Queues lists, in a run of several jobs through the in-process
	// admission, every queue of the hierarchy by name (root left out):
	// its capacities, the most slots it held at once and its slot time.
	Queues []QueueStat
	// JobEvents lists, in a run of several jobs, what became of each
	// event of JobsConfig.Events (applied or refused, and why), in the
	// order they were applied.
	JobEvents []EventOutcome
	// Restarts lists the failovers of the region policy in order: which
	// regions the strategy chose to restart for which failed task.
	Restarts []Restart
	// Holding lists, on deadlock, the tasks holding slots while waiting.
	Holding []string
	// Waiting lists, on deadlock, the tasks waiting for a slot.
	Waiting []string
	// Blocked lists, on deadlock, the tasks that can never start: a
	// blocking result they read is never complete (its producer never
	// finishes).
	Blocked []string
	// Err is why the job failed.
	Err error
	// Events is the trace, in time order, if Config.Record.
	Events []runfile.Event
	// Processed counts the calendar events the run handled: task progress
	// ends and slot-request timeouts (not trace events).
	Processed int
	// TraceEvents counts the trace events of the run (the lines of its
	// trace), recorded or not.
	TraceEvents int
	// SlotTime is the time slots were held in all (Utilization ×
	// Makespan × Slots).
	SlotTime time.Duration
	// Speculation is what speculative execution did, and how many
	// stragglers the straggler model made (zero without either).
	Speculation SpeculationSummary
}

// String is the verdict line, Reason: "finished: all 12 tasks finished at
// 4000 ms", "deadlock: at 1000 ms B#0, ... hold slots while waiting; ...".
// Printing a Result prints it; its numbers are in the fields.
func (r *Result) String() string {
	if r.Reason == "" {
		return r.Verdict.String()
	}
	return r.Reason
}

// Restart is one failover of the region policy.
type Restart struct {
	// At is the virtual time of the failure.
	At time.Duration
	// Task is the failed execution vertex, "A#1".
	Task string
	// Regions are the regions restarted (the failed task's, the producers
	// of inputs no longer available, everything downstream), ascending.
	Regions []region.ID
}

// Run simulates the job to its end. The error is for a bad Config; the
// job's own fate is in the Result.
// Run is safe for concurrent use.
func Run(cfg Config) (*Result, error) {
	if cfg.Regions == nil {
		return nil, errors.New("simulator: Config.Regions is nil")
	}
	if _, err := region.ClusterSize(cfg.Cluster); err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	if err := checkFailures(cfg); err != nil {
		return nil, err
	}
	if err := checkTies(cfg.Ties); err != nil {
		return nil, err
	}
	if err := checkHorizon(cfg); err != nil {
		return nil, err
	}
	if cfg.SelectiveShare != 0 {
		if err := scheduler.ValidateSelectiveShare(cfg.SelectiveShare); err != nil {
			return nil, fmt.Errorf("simulator: %w", err)
		}
	}
	if err := checkSpeculation(cfg, func() error { return cfg.Speculation.ValidateJob(cfg.Regions) }); err != nil {
		return nil, err
	}
	e, err := newEngine(cfg)
	if err != nil {
		return nil, err
	}
	res, err := e.run()
	var sched *scheduler.Scheduler
	if rp, ok := e.policy.(*regionPolicy); ok {
		sched = rp.sched
	}
	e.model.release(sched) // the result holds nothing of either
	return res, err
}

// checkFailures rejects injections that name no subtask, name one twice,
// or could never fire.
func checkFailures(cfg Config) error {
	topo := cfg.Regions.Topology()
	n := topo.NumExecutionVertices()
	seen := map[topology.ExecutionVertexID]bool{}
	for _, f := range cfg.Failures {
		if f.Task < 0 || int(f.Task) >= n {
			return fmt.Errorf("simulator: %w: subtask %d does not exist (the job has %d)", ErrBadFailure, f.Task, n)
		}
		name := topo.VertexName(f.Task)
		vx := topo.Job().Vertex(topo.JobVertexOf(f.Task))
		switch {
		case f.After < 0:
			return fmt.Errorf("simulator: %w: negative progress %v for %s", ErrBadFailure, f.After, name)
		case seen[f.Task]:
			return fmt.Errorf("simulator: %w: %s is named twice", ErrBadFailure, name)
		case !vx.Unbounded && f.After >= vx.Duration:
			return fmt.Errorf("simulator: %w: %s@%d never fires: %s finishes after %d ms", ErrBadFailure,
				name, f.After.Milliseconds(), name, vx.Duration.Milliseconds())
		}
		seen[f.Task] = true
	}
	return nil
}

// ErrTooLong means the job's tasks take too long in all for virtual time
// (a time.Duration) to hold the run.
var ErrTooLong = errors.New("simulator: job too long to simulate")

// checkHorizon makes sure no virtual time can overflow: a run never lasts
// longer than every bounded task run one after the other, twice (a failed
// first attempt and its rerun), so that sum must fit comfortably.
func checkHorizon(cfg Config) error {
	_, err := addWork(0, cfg.Regions.Topology().Job(), "")
	return err
}

// horizon is the virtual time a run may last: about 73 years.
const horizon = time.Duration(1 << 61)

// endOfTime is the last instant virtual time holds (about 292 years).
const endOfTime = time.Duration(math.MaxInt64)

// laterBy is d after now, or endOfTime if virtual time cannot hold that:
// the run then fails (ErrTooLong) once it gets there. Only a run set
// going again by an event later than the horizon gets there: the
// horizon's checks keep every other run well within it.
func laterBy(now, d time.Duration) time.Duration {
	if d > endOfTime-now {
		return endOfTime
	}
	return now + d
}

// addWork adds to total, within the horizon, every bounded task of job
// run twice; else ErrTooLong, naming the vertex (of the job named, if
// named).
func addWork(total time.Duration, job *topology.JobGraph, named string) (time.Duration, error) {
	for jv := range topology.JobVertexID(job.NumVertices()) {
		vx := job.Vertex(jv)
		if vx.Unbounded {
			continue
		}
		if vx.Duration > horizon/time.Duration(2*vx.Parallelism) || total > horizon-2*time.Duration(vx.Parallelism)*vx.Duration {
			of := vx.ID
			if named != "" {
				of = fmt.Sprintf("%s of job %q", vx.ID, named)
			}
			return 0, fmt.Errorf("%w: vertex %s: %s of %d ms, run twice (a failure and its rerun), with the rest, last more than the about 73 years of virtual time a run may last",
				ErrTooLong, of, count(vx.Parallelism, "subtask"), vx.Duration.Milliseconds())
		}
		total += 2 * time.Duration(vx.Parallelism) * vx.Duration
	}
	return total, nil
}

// listNames renders names as "A#0, B#1, ... (N in all)", at most limit.
func listNames(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:limit], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
}
