package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// DefaultFailAfter is how many records an attempt of Config.Fail
// processes before it fails, when Config.FailAfter is not set.
const DefaultFailAfter = 10

// Config is one run of a job.
type Config struct {
	// Job is the graph; every vertex runs the operator its id names
	// (Operators).
	Job *topology.JobGraph
	// Mode is the global data exchange mode.
	Mode exchange.Mode
	// Slots is the number of local slots, at least 1.
	Slots int
	// Text is the input: the lines the text sources read.
	Text []string
	// TopK is what the top-k operator keeps and the result's length; 0
	// means every word.
	TopK int
	// Fail names subtasks whose first attempt fails before it finishes:
	// "ID#i@MS" once it has run MS ms (at the first record it handles
	// from then on), "ID#i" once it processed FailAfter records; either
	// way at the end of its input if that comes first. It is the syntax
	// of regionsched simulate --fail (parseFail).
	Fail []string
	// FailAfter: see Fail; 0 means DefaultFailAfter.
	FailAfter int
	// Slow names subtasks whose first attempt is a straggler: "ID#i@D"
	// holds it for the Go duration D once its work is done, before it
	// finishes (a canceled attempt stops waiting).
	Slow []string
	// Speculation is the scheduler's speculative execution (the zero
	// value is off): a slow task gets an attempt beside it, the first to
	// finish wins (speculation.go).
	Speculation scheduler.Speculation
	// TempDir is where the directory of blocking results is made; "" means
	// os.TempDir(). The directory is removed when Run returns.
	TempDir string
	// Clock is the clock of the driver and the timeline; nil means the
	// wall clock.
	Clock clock.Clock
}

// Result is what a run of a job produced.
type Result struct {
	// Counts is the result: the words and their counts, ordered by count
	// (largest first) then word, the first TopK of them if TopK > 0.
	// Empty if the job failed.
	Counts []WordCount
	// Timeline lists the region attempts, in deployment order.
	Timeline []RegionRun
	// Stats is the scheduler's count of deployments and failovers.
	Stats scheduler.Stats
	// Regions and MinimumSlots describe the job's pipelined regions in
	// the run's mode.
	Regions, MinimumSlots int
	// PeakSlots is the most slots that held a task of the job at once.
	PeakSlots int
	// PartitionsReleased counts the blocking result partitions whose files
	// were deleted during the run because the scheduler released them.
	PartitionsReleased int
}

// FirstDeploy returns when the job's first region attempt was deployed,
// since the start of the run; false if none was.
func (r *Result) FirstDeploy() (time.Duration, bool) {
	if len(r.Timeline) == 0 {
		return 0, false
	}
	return r.Timeline[0].Deployed, true
}

// Run runs a job to its end on cfg.Slots local slots, with the library's
// scheduler deciding what runs when. It returns the result, or the
// scheduler's *scheduler.RegionError if the job cannot run on these slots,
// or the first error of the runtime (a task that could not read or write
// its data, or a promise of the scheduler it saw broken). The Result is
// non-nil whenever the job started (its timeline says how far it got).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	e, err := newEngine(cfg, "")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h, err := newHost(ctx, e.cfg.Clock, cfg.Slots, cfg.TempDir)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(h.dir)
	s, err := scheduler.New(e.rs, scheduler.Config{Speculation: cfg.Speculation})
	if err != nil {
		return nil, err
	}
	e.readFinishedOnly(s) // before the driver owns s
	d := scheduler.StartDriver(ctx, s, scheduler.DriverConfig{Clock: h.clk})
	e.attach(h, h.dir, d)
	defer func() {
		cancel() // every attempt's context is a child
		h.wg.Wait()
		d.Stop()
	}()
	res := &Result{Regions: e.rs.NumRegions(), MinimumSlots: e.rs.MinimumSlots()}
	err = e.runAlone(ctx, d)
	e.result(res)
	if st, serr := d.Status(ctx); serr == nil {
		res.Stats = st.Stats
	}
	if err != nil {
		return res, err
	}
	res.Counts, err = e.collect()
	return res, err
}

// runAlone declares and offers the slots to the job's own driver, starts
// the job and applies Ready values until it ended.
func (e *engine) runAlone(ctx context.Context, d *scheduler.Driver) error {
	capacity := []resource.Count{{Profile: resource.Unknown, N: e.cfg.Slots}}
	if err := d.SetCapacity(ctx, capacity); err != nil {
		return err
	}
	if err := d.Offer(ctx, e.h.slots.slots()...); err != nil {
		return err
	}
	if err := d.Start(ctx); err != nil {
		return err // a *scheduler.RegionError if a region can never fit
	}
	return e.loop(ctx, d)
}

// reporter is where a job's tasks report what they did: the job's own
// *scheduler.Driver, or a *multijob.Driver on behalf of the job.
type reporter interface {
	TaskRunning(ctx context.Context, v scheduler.TaskID, attempt scheduler.Attempt) error
	TaskFinished(ctx context.Context, v scheduler.TaskID, attempt scheduler.Attempt) error
	TaskFailed(ctx context.Context, v scheduler.TaskID, attempt scheduler.Attempt, lost ...scheduler.PartitionID) error
}

// engine runs one job on a host: it applies the job's Ready values and
// runs the job's task attempts.
type engine struct {
	h *host
	// job names the job in a run of several ("" for a run of one): errors
	// and slot occupants carry it.
	job  string
	cfg  Config
	rs   *region.Regions
	topo *topology.ExecutionTopology
	ops  []operator // per job vertex
	rep  reporter
	dir  string // the job's blocking results

	// Owned by the Ready loop.
	runs       map[scheduler.TaskID]*attempt
	spec       *speculation // speculative attempts and stragglers (speculation.go)
	pipes      map[pipeKey]*pipe
	partitions map[scheduler.PartitionID]*blockingResult
	hybrid     map[scheduler.PartitionID]*hybridResult
	// finishedOnly is, per partition, whether its consumers read it only
	// once finished, from the winning attempt (scheduler.ReadsFinishedOnly;
	// nil if none is); pubs holds, per task writing such results, its
	// region attempt's published (hybrid.go).
	finishedOnly []bool
	pubs         map[scheduler.TaskID]*published
	failPending  map[scheduler.TaskID]failure
	released     int // blocking partitions deleted

	// Guarded by h.mu.
	timeline *timeline
	outputs  map[scheduler.TaskID]taskOutput // the result records of sink tasks
}

// taskOutput is what the last finished attempt of a sink task emitted.
type taskOutput struct {
	attempt scheduler.Attempt
	records []Record
}

// newEngine checks the configuration and prepares the engine of a job
// (attach puts it on a host).
func newEngine(cfg Config, job string) (*engine, error) {
	if cfg.Job == nil {
		return nil, errors.New("no job")
	}
	if cfg.Slots < 1 {
		return nil, fmt.Errorf("slots must be at least 1, not %d", cfg.Slots)
	}
	if cfg.FailAfter <= 0 {
		cfg.FailAfter = DefaultFailAfter
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	rs := region.FromJob(cfg.Job, cfg.Mode)
	e := &engine{
		job:         job,
		cfg:         cfg,
		rs:          rs,
		topo:        rs.Topology(),
		runs:        map[scheduler.TaskID]*attempt{},
		pipes:       map[pipeKey]*pipe{},
		partitions:  map[scheduler.PartitionID]*blockingResult{},
		hybrid:      map[scheduler.PartitionID]*hybridResult{},
		pubs:        map[scheduler.TaskID]*published{},
		failPending: map[scheduler.TaskID]failure{},
		timeline:    newTimeline(),
		outputs:     map[scheduler.TaskID]taskOutput{},
	}
	g := cfg.Job
	for jv := range topology.JobVertexID(g.NumVertices()) {
		id := g.Vertex(jv).ID
		op, err := operatorOf(id, cfg.Text, cfg.TopK)
		if err != nil {
			return nil, err
		}
		isSource := len(g.InEdges(jv)) == 0
		if wantSource := op.source; isSource != wantSource {
			if isSource {
				return nil, fmt.Errorf("vertex %q has no input: only a %s may", id, TextSource)
			}
			return nil, fmt.Errorf("vertex %q: a %s takes no input", id, TextSource)
		}
		e.ops = append(e.ops, op.run)
	}
	for _, spec := range cfg.Fail {
		f, err := parseFail(e.topo, spec)
		if err != nil {
			return nil, err
		}
		e.failPending[f.task] = f
	}
	var err error
	if e.spec, err = newSpeculation(e.topo, cfg.Slow); err != nil {
		return nil, err
	}
	return e, nil
}

// readFinishedOnly notes the hybrid results s says are read only once
// finished (s must not run under a driver yet).
func (e *engine) readFinishedOnly(s *scheduler.Scheduler) {
	for p := range scheduler.PartitionID(e.topo.NumPartitions()) {
		if s.ReadsFinishedOnly(p) {
			if e.finishedOnly == nil {
				e.finishedOnly = make([]bool, e.topo.NumPartitions())
			}
			e.finishedOnly[p] = true
		}
	}
}

// readsFinishedOnly reports whether partition p is read only once
// finished.
func (e *engine) readsFinishedOnly(p scheduler.PartitionID) bool {
	return e.finishedOnly != nil && e.finishedOnly[p]
}

// attach puts the engine on its host, with the directory of its blocking
// results and where its tasks report.
func (e *engine) attach(h *host, dir string, rep reporter) {
	e.h, e.dir, e.rep = h, dir, rep
}

// since returns the time since the start of the run.
func (e *engine) since() time.Duration { return e.h.since() }

// fail names the job in an error of a run of several.
func (e *engine) fail(err error) error {
	if e.job == "" || err == nil {
		return err
	}
	return fmt.Errorf("job %s: %w", e.job, err)
}

// abort records the first fatal error of a task goroutine; the Ready loop
// returns it.
func (e *engine) abort(err error) { e.h.abort(e.fail(err)) }

// result fills in what the engine recorded of the run.
func (e *engine) result(res *Result) {
	res.PartitionsReleased = e.released
	e.h.mu.Lock()
	res.Timeline, res.PeakSlots = e.timeline.snapshot(), e.h.slots.peakOf(e.job)
	e.h.mu.Unlock()
}

// collect sums what the sink tasks' last attempts emitted and ranks it.
func (e *engine) collect() ([]WordCount, error) {
	e.h.mu.Lock()
	defer e.h.mu.Unlock()
	counts := map[string]int64{}
	g := e.cfg.Job
	for jv := range topology.JobVertexID(g.NumVertices()) {
		if len(g.OutEdges(jv)) > 0 {
			continue
		}
		r := e.topo.VerticesOf(jv)
		for v := r.Start; v < r.End; v++ {
			out, ok := e.outputs[scheduler.TaskID(v)]
			if !ok {
				return nil, e.fail(fmt.Errorf("job finished but %s never did", e.topo.VertexName(scheduler.TaskID(v))))
			}
			for _, rec := range out.records {
				counts[rec.Key] += rec.N
			}
		}
	}
	return Rank(counts, e.cfg.TopK), nil
}
