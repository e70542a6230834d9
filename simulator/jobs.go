package simulator

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// JobsConfig describes a run of several jobs sharing one cluster through
// the queue-level admission (package admission) — docs/job-file.md.
type JobsConfig struct {
	// Jobs are the jobs, each run under Mode.
	Jobs []runfile.Job
	// Mode is the global data exchange mode of every job.
	Mode exchange.Mode
	// SelectiveShare is as in Config, for every job.
	SelectiveShare float64
	// DisableHybridSlotSharing is as in Config, for every job.
	DisableHybridSlotSharing bool
	// Cluster lists the slots; they get ids 0, 1, ... in this order.
	Cluster []resource.Count
	// Queues configures queues; DefaultPolicy is the policy of a queue a
	// job names that is not configured (it is created under root).
	Queues        []admission.QueueConfig
	DefaultPolicy admission.Policy
	// Policy selects the region scheduler behind the admission, or the
	// eager baseline across jobs (no admission, no bulks: every task of
	// every job asks for its own slot once its job arrived; drivers are
	// ignored).
	Policy Policy
	// Seed, Ties, Matching, Record, OnEvent, Detail, MaxEvents and Logger
	// are as in Config: OnEvent receives every trace event (its Job set)
	// as it happens, in time order, with or without Record.
	// Timeout is each job's fulfillability timeout; 0 means none (the
	// admission decides who waits, and a wait nobody can end is reported
	// as a deadlock).
	Seed      uint64
	Ties      TieOrder
	Matching  resource.Matching
	Timeout   time.Duration
	Record    bool
	OnEvent   func(runfile.Event)
	Detail    bool
	MaxEvents int
	Logger    *zap.Logger
	// Events are priority changes and kills applied at their times
	// (docs/job-file.md), authorized by the role Users gives their By
	// (no role: refused); a refusal is a Refused trace event and the run
	// goes on. Audit, if set, gets every change and refusal.
	Events []runfile.JobEvent
	Users  map[string]admission.Role
	Audit  admission.AuditSink
	// Stragglers and StragglerFactor are the straggler model, as in
	// Config, over every job's attempts.
	Stragglers      float64
	StragglerFactor float64
	// SlotNodes names the node of each slot, as in Config (the blocklist
	// of speculative execution blocks nodes).
	SlotNodes []string
	// Speculation turns speculative execution on for every job that has
	// a task it may speculate (scheduler.Speculation.ValidateJob; the
	// others run without it), as multijob.JobSpec.Speculation: a
	// speculative attempt asks the admission for its slot, granted only
	// while no regular ask of any job waits that the slot could serve.
	// An invalid setting is refused (a *scheduler.SpeculationError), and
	// so is speculation under the eager policy (ErrSpeculationPolicy).
	Speculation scheduler.Speculation
}

// EventOutcome is what became of an event of JobsConfig.Events: applied,
// or refused and why.
type EventOutcome struct {
	runfile.JobEvent
	// Old is the job's priority before an applied set-priority (0 for a
	// kill or a refused event).
	Old int
	// Applied says whether the event took effect; Reason says why not
	// ("role user may set priorities 1 ... 5000", "the job has not
	// arrived yet (it arrives at 5000 ms)").
	Applied bool
	Reason  string
}

// String describes the outcome in one line, as the summary of
// regionsched simulate prints it (docs/cli.md):
// "event 4000 ms: alice set-priority etl 3000 -> 9000: applied" or
// "event 100 ms: bob kill etl: refused: role user may change only their
// own jobs; the job is alice's".
func (o EventOutcome) String() string {
	return summary.EventLine(summary.EventOutcome{At: o.At, By: o.By, Action: o.Action, Job: o.Job, Priority: o.Priority,
		Old: o.Old, Applied: o.Applied, Reason: o.Reason})
}

// JobResult is how one job of a multi-job run went.
type JobResult struct {
	Name string
	// State is the job's final state in the admission (completed, failed,
	// rejected), or the state it was stuck in.
	State admission.JobState
	// Verdict is Finished, Failed (failed or rejected), Killed, Steady (a
	// stream fully deployed: it runs on and never finishes, rightly) or
	// Deadlock (never finished otherwise).
	Verdict runfile.Verdict
	// Reason says why it failed, what it was stuck on or, for a stream,
	// what keeps running ("" if finished).
	Reason string
	// Submitted, FirstDeploy and Finished are virtual times; FirstDeploy
	// is when its first task got a slot (its driver's slot does not
	// count: a job whose driver ran but no task has none), -1 if never;
	// Finished is -1 if it never finished. Under the eager policy,
	// Finished is when its last task finished. They need no recorded
	// trace.
	Submitted, FirstDeploy, Finished time.Duration
	// SpeculativeStarted and SpeculativeWon count the job's speculative
	// attempts deployed and those that finished first
	// (JobsConfig.Speculation).
	SpeculativeStarted, SpeculativeWon int
}

// Wait is the time from submission to the first deploy of a task (-1 if
// no task was ever deployed).
func (r JobResult) Wait() time.Duration {
	if r.FirstDeploy < 0 {
		return -1
	}
	return r.FirstDeploy - r.Submitted
}

// Makespan is the time from submission to the end (-1 if it never ended).
func (r JobResult) Makespan() time.Duration {
	if r.Finished < 0 {
		return -1
	}
	return r.Finished - r.Submitted
}

// ErrDuplicateJobName means two jobs of a run have the same name.
var ErrDuplicateJobName = errors.New("simulator: duplicate job name")

// ErrBadEvent means an event of JobsConfig.Events names no job of the
// run or has a negative time.
var ErrBadEvent = errors.New("simulator: bad event")

// checkEvents refuses events that name no job of the run or come before
// time 0.
func checkEvents(jobs []runfile.Job, events []runfile.JobEvent) error {
	names := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		names[j.Name] = true
	}
	for i, ev := range events {
		switch {
		case ev.At < 0:
			return fmt.Errorf("%w: events[%d] (%s of job %q) at %d ms: a negative time", ErrBadEvent, i, ev.Action, ev.Job, ev.At.Milliseconds())
		case !names[ev.Job]:
			return fmt.Errorf("%w: events[%d] (%s) names no job of the run: %q", ErrBadEvent, i, ev.Action, ev.Job)
		}
	}
	return nil
}

// jobSet is the jobs of a multi-job run laid side by side in one union
// topology: job i's execution vertices are offsets[i] ... offsets[i+1]-1.
type jobSet struct {
	jobs    []runfile.Job
	regions []*region.Regions // each job's own regions (its scheduler's)
	offsets []int32
	union   *region.Regions
}

// of returns the job of a union execution vertex and its local id.
func (s *jobSet) of(v int32) (int, topology.ExecutionVertexID) {
	i := sort.Search(len(s.jobs), func(i int) bool { return s.offsets[i+1] > v }) // first job whose range ends after v
	return i, topology.ExecutionVertexID(v - s.offsets[i])
}

// newJobSet builds the union topology of the jobs under mode.
func newJobSet(jobs []runfile.Job, mode exchange.Mode) (*jobSet, error) {
	s := &jobSet{jobs: jobs, offsets: make([]int32, len(jobs)+1)}
	seen := map[string]bool{}
	b := topology.NewBuilder("jobs")
	for i, j := range jobs {
		if seen[j.Name] {
			return nil, fmt.Errorf("%w %q", ErrDuplicateJobName, j.Name)
		}
		seen[j.Name] = true
		// The vertices as the job has them: a zero duration stays zero.
		b.AddGraph(fmt.Sprintf("%d/", i), j.Job)
		rs := region.FromJob(j.Job, mode)
		s.regions = append(s.regions, rs)
		s.offsets[i+1] = s.offsets[i] + int32(rs.Topology().NumExecutionVertices())
	}
	union, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("simulator: the jobs side by side: %w", err)
	}
	s.union = region.FromJob(union, mode)
	if n := int32(s.union.Topology().NumExecutionVertices()); n != s.offsets[len(jobs)] {
		return nil, fmt.Errorf("simulator: union of the jobs has %d subtasks, the jobs %d", n, s.offsets[len(jobs)])
	}
	return s, nil
}

// RunJobs simulates several jobs on one cluster to their ends. The error
// is for a bad configuration (no jobs, duplicate names, a bad queue, a
// cluster too large); each job's fate is in the JobResults, and the
// Result's verdict is Finished only if every job finished or was killed
// (an events file's kill ends a job as asked: the run is still fine).
func RunJobs(cfg JobsConfig) (*Result, []JobResult, error) {
	if len(cfg.Jobs) == 0 {
		return nil, nil, errors.New("simulator: no jobs")
	}
	if _, err := region.ClusterSize(cfg.Cluster); err != nil {
		return nil, nil, fmt.Errorf("simulator: %w", err)
	}
	set, err := newJobSet(cfg.Jobs, cfg.Mode)
	if err != nil {
		return nil, nil, err
	}
	if err := checkEvents(cfg.Jobs, cfg.Events); err != nil {
		return nil, nil, err
	}
	single := Config{Regions: set.union, Cluster: cfg.Cluster, Policy: cfg.Policy, Seed: cfg.Seed, Ties: cfg.Ties, Matching: cfg.Matching,
		Timeout: cfg.Timeout, Record: cfg.Record, OnEvent: cfg.OnEvent, Detail: cfg.Detail, MaxEvents: cfg.MaxEvents, Logger: cfg.Logger,
		Stragglers: cfg.Stragglers, StragglerFactor: cfg.StragglerFactor, Speculation: cfg.Speculation, SlotNodes: cfg.SlotNodes}
	if err := checkSpeculation(single, cfg.Speculation.Validate); err != nil {
		return nil, nil, err
	}
	if err := checkTies(cfg.Ties); err != nil {
		return nil, nil, err
	}
	if err := checkJobsHorizon(cfg); err != nil {
		return nil, nil, err
	}
	e, err := newJobsEngine(single, cfg, set)
	if err != nil {
		return nil, nil, err
	}
	res, err := e.run()
	if err != nil {
		return nil, nil, err
	}
	if e.eagerEvents != nil {
		res.JobEvents = e.eagerEvents.outcomes
	}
	return res, e.jobResults(), nil
}

// checkJobsHorizon is checkHorizon over the jobs of a multi-job run: its
// jobs are done by their last arrival, then every bounded task of every
// job run one after the other twice and every driver's startup, so that
// must fit comfortably. (An event may come later: one that sets work
// going again so late that virtual time cannot hold it fails the run,
// see laterBy.)
func checkJobsHorizon(cfg JobsConfig) error {
	var last time.Duration
	for _, j := range cfg.Jobs {
		if at := j.Job.Submission().SubmitAt; at > horizon {
			return fmt.Errorf("%w: job %q arrives at %d ms, later than the about 73 years of virtual time a run may last", ErrTooLong, j.Name, at.Milliseconds())
		}
		last = max(last, j.Job.Submission().SubmitAt)
	}
	total := last
	for _, j := range cfg.Jobs {
		var err error
		if total, err = addWork(total, j.Job, j.Name); err != nil {
			return err
		}
		if d := j.Job.Submission().Driver; d != nil {
			if d.Startup > horizon-total {
				return fmt.Errorf("%w: the driver of job %q starts in %d ms, more than the about 73 years of virtual time a run may last", ErrTooLong, j.Name, d.Startup.Milliseconds())
			}
			total += d.Startup
		}
	}
	return nil
}
