package scheduler

import (
	"fmt"
	"math"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// The types a runtime handles, under the names it looks for here, so that
// runtime code needs no other package of the library to read a Ready.
type (
	// TaskID names one subtask (an execution vertex, written "ID#i").
	TaskID = topology.ExecutionVertexID
	// RegionID names a pipelined region.
	RegionID = region.ID
	// SlotID names a slot of the pool.
	SlotID = slotpool.SlotID
	// Slot is a slot offered to the pool.
	Slot = slotpool.Slot
	// PartitionID names a result partition.
	PartitionID = topology.ResultPartitionID
)

// Attempt numbers the runs of a task: 0 for the first, one more at every
// restart of its region, and with Config.Speculation one more for each
// speculative attempt. Every report about a task carries the attempt it
// was deployed with.
type Attempt int32

// Config configures a Scheduler. Its pool declares its demand (an Ask for
// every region that has to wait for slots, an AskRelease when it no longer
// needs them) exactly when it has an admission: Admission in process, or
// one outside the scheduler (ExternalAdmission). Without either, the slots
// are those the runtime offers (Scheduler.Offer). A Config that sets both,
// or asks the pool to return freed slots to an admission it does not have,
// is refused: Validate returns a *ConfigError, and New returns it.
type Config struct {
	// Pool configures the slot pool (matching, fulfillability timeout,
	// idle timeout, freed slots returned to the admission).
	Pool slotpool.Config
	// Admission, if set, is an in-process queue-level admission (package
	// admission): the pool's demand goes to it and its grants,
	// revocations and release confirmations come back inside the
	// Scheduler's calls.
	Admission slotpool.Admission
	// SelectiveShare is the share of the producers of a selective hybrid
	// input that must have finished before its consumer may start: more
	// than 0 and at most 1; 0 means DefaultSelectiveShare. Validate
	// refuses a value outside that range.
	SelectiveShare float64
	// DisableHybridSlotSharing keeps the consumers of hybrid results out
	// of their producers' slots: every region then asks the pool for all
	// the slots it needs. By default a region whose inputs become
	// consumable while hybrid producers of it run goes into their slots
	// when every slot it needs finds one there (see "Slot sharing across
	// hybrid edges" in the package documentation).
	DisableHybridSlotSharing bool
	// ExternalAdmission says an admission outside the scheduler answers
	// the pool (one the runtime runs itself): the pool's
	// messages come out in Ready.ToAdmission, and the admission's answers
	// go in through Admit. It excludes Admission.
	ExternalAdmission bool
	// Speculation configures speculative execution of slow tasks (see
	// Speculation); the zero value is off. New refuses an invalid one
	// with its *SpeculationError.
	Speculation Speculation
	// Logger receives debug logs; nil means zap.NewNop(). Whether it
	// takes debug entries is read once, by New, for the entries that come
	// with every task (a region deployed; the pool's and the strategy's
	// per-bulk and per-region entries): they do not follow a level
	// changed later, the others do.
	Logger *zap.Logger
}

// Stats counts what the scheduler did.
type Stats struct {
	// RegionsDeployed counts region deployments handed out (restarts
	// included; not one a cancel withdrew before a Ready handed it out).
	RegionsDeployed int
	// Failovers counts handled task failures and slot losses.
	Failovers int
	// RegionRestarts counts regions restarted by failovers.
	RegionRestarts int
	// RegionsShared counts the region deployments (in RegionsDeployed)
	// that went into slots their hybrid producers hold, asking the pool
	// for none.
	RegionsShared int
}

// regionRun is the scheduler's view of one region's current attempt. The
// attempt is the strategy's (Strategy.Attempt: a region's bulk, slots and
// tasks always belong to its current attempt, since a failover stops them
// before the strategy restarts the region); what only a region of several
// members that asked for slots or holds them needs lives in
// Scheduler.lives. A region of one member (every region of an
// all-blocking job) keeps its task's slot here, where a task event reads
// its region anyway, instead of in a table per task. It is kept at 8
// bytes, one per region of the job: a task event's first touch of it is
// most of the cost of a large job's hot path.
type regionRun struct {
	// ref is, for a region of several members, 1 + its index in
	// Scheduler.lives while scheduled or deployed, else 0 (see live); for
	// a region of one member, its member while its bulk waits (request
	// sets it, deploy reads it: the Regions' record of the member, far
	// from this one in a long queue, is not read again when its turn
	// comes), then the slot its task was deployed in last, or bigSlot if
	// that slot's id is not in [0, math.MaxInt32] (see
	// Scheduler.slotOfOne).
	ref      int32
	waiting  bool // its bulk, bulkID(region, attempt), waits in the pool
	deployed bool // its bulk was fulfilled and holds slots (a region of one member: one slot), or it is a guest
	several  bool // it has several members (set by request)
	// guest says its attempt runs in slots of its hybrid producers (see
	// share): it holds none of them; its tasks are counted in their
	// slotUse's guests.
	guest bool
}

// bigSlot in regionRun.ref says the slot of a region of one member is in
// Scheduler.bigSlots.
const bigSlot = -1

// live returns 1 + the index of run's entry in Scheduler.lives, or 0.
func (run *regionRun) live() int32 {
	if run.several {
		return run.ref
	}
	return 0
}

// liveRun is what a region of several members holds while its attempt is
// scheduled or deployed: its slots (cached) and, once deployed, the slot
// of each and how many of them are not returned yet.
type liveRun struct {
	slots  []region.Slot
	placed []slotpool.SlotID
	inUse  int32 // placed slots not yet returned (a guest: slots it has tasks in)
	// left is, for a guest, per slot its unfinished tasks there.
	left []int32
}

// slotUse counts the unfinished tasks in a slot of a deployed region: the
// owner's, whose bulk got the slot, and the guests' (regions reading the
// owner's or another guest's hybrid results that went into the slot, see
// share). The slot goes back when both counts are zero.
type slotUse struct {
	region  region.ID        // the owner
	attempt strategy.Attempt // the owner's attempt
	running int32            // unfinished tasks of the owner in the slot
	guests  int32            // guest regions with unfinished tasks in the slot
	live    bool             // in the table
	// ownerOut says the owner's attempt was stopped while guests ran
	// on in the slot: the owner no longer counts it as its own.
	ownerOut bool
}

// denseSlotLimit bounds the slot ids kept in slotTable's dense slice.
const denseSlotLimit = 1 << 20

// slotTable maps the slots of deployed regions to their use: slot ids in
// [0, denseSlotLimit) (the usual dense ids) index a slice, others go to a
// map.
type slotTable struct {
	dense  []slotUse
	sparse map[slotpool.SlotID]*slotUse
	n      int // slots in the table
}

// len returns the number of slots in the table.
func (t *slotTable) len() int { return t.n }

func (t *slotTable) get(id slotpool.SlotID) (slotUse, bool) {
	if u := t.ref(id); u != nil {
		return *u, true
	}
	return slotUse{}, false
}

// ref returns the entry of slot id, nil if the table has none: the hot
// path changes it in place, without copying it out and back. It is
// valid until the next set or del.
func (t *slotTable) ref(id slotpool.SlotID) *slotUse {
	if id >= 0 && id < slotpool.SlotID(len(t.dense)) {
		if u := &t.dense[id]; u.live {
			return u
		}
		return nil
	}
	if id >= 0 && id < denseSlotLimit {
		return nil
	}
	return t.sparse[id]
}

func (t *slotTable) set(id slotpool.SlotID, u slotUse) {
	u.live = true
	if t.ref(id) == nil {
		t.n++
	}
	if id >= 0 && id < denseSlotLimit {
		if id >= slotpool.SlotID(len(t.dense)) {
			n := max(int(id)+1, 2*len(t.dense), 64)
			t.dense = append(t.dense, make([]slotUse, min(n, denseSlotLimit)-len(t.dense))...)
		}
		t.dense[id] = u
		return
	}
	if t.sparse == nil {
		t.sparse = map[slotpool.SlotID]*slotUse{}
	}
	p := new(slotUse) // only here: taking u's address would move every u to the heap
	*p = u
	t.sparse[id] = p
}

func (t *slotTable) del(id slotpool.SlotID) {
	if t.ref(id) != nil {
		t.n--
	}
	if id >= 0 && id < denseSlotLimit {
		if id < slotpool.SlotID(len(t.dense)) {
			t.dense[id] = slotUse{}
		}
		return
	}
	delete(t.sparse, id)
}

// Scheduler runs one job (see the package comment). It is not safe for
// concurrent use; Driver runs one on its own goroutine.
type Scheduler struct {
	rs       *region.Regions
	strategy *strategy.Strategy
	pool     *pool.Pool
	link     *pool.Link
	log      *zap.Logger
	debug    bool // log takes debug entries (read once, in New)

	regions []regionRun
	lives   []liveRun // see regionRun.live
	// bigSlots holds the slot of a region of one member whose id does
	// not fit regionRun.ref; nil until there is one.
	bigSlots  map[region.ID]slotpool.SlotID
	freeLives []int32 // indexes of lives not in use
	// oneSlot and onePlaced are liveSlots' scratch.
	oneSlot   [1]region.Slot
	onePlaced [1]slotpool.SlotID
	// taskSlot is, per execution vertex of a region of several members,
	// its slot, valid while deployed (see regionRun.ref for the others);
	// nil until such a region is deployed.
	taskSlot []slotpool.SlotID
	slots    slotTable
	// sharing says consumers may go into their hybrid producers' slots
	// (the job has hybrid edges and Config.DisableHybridSlotSharing is
	// off); guestsOf lists, per slot with guests, the guest regions.
	sharing  bool
	guestsOf map[slotpool.SlotID][]region.ID
	// toDeploy queues the regions apply deploys while sharing is on;
	// applying says an apply drains it.
	toDeploy []strategy.Deployment
	applying bool
	// shareBins and shareHosts are share's scratch.
	shareBins  []region.Slot
	shareHosts []slotpool.SlotID

	state JobState
	err   error
	stats Stats

	last    time.Time // the time of the latest input that changed something
	started bool      // last is set

	// rd is what the next Ready call hands out, one of bufs (bufs[cur]);
	// the other is the storage of the one handed out last, valid until
	// the next call, which empties it to collect the Ready after.
	// oneSlots and spareSlots hold the slot lists of the one-member
	// regions' requests in the two.
	rd                   *Ready
	bufs                 [2]Ready
	cur                  int
	oneSlots, spareSlots []region.Slot
	// deployAt is, per execution vertex, 1 + its index in rd.Deploy, or 0;
	// nil until the first cancel (see emitCancel).
	deployAt []int32
	// withdrawn holds the region attempts whose deployment in rd a
	// cancel withdrew (emitCancel): they count no deployment (nil until
	// one).
	withdrawn map[withdrawnKey]bool

	requestBuf []pool.Request // scratch for request

	// spec is speculative execution, nil if off: the one hook of it the
	// scheduler's paths look at.
	spec *speculator

	// burstRequests and burstSlots keep the storage of the largest
	// Requests and one-member slot lists that Ready dropped (see reuse),
	// emptied and cleared, for the next burst (apply) and the next job
	// (internal/schedreuse).
	burstRequests []Request
	burstSlots    []region.Slot
}

// Validate returns the first error of the Config: a *ConfigError if it
// contradicts itself (an in-process and an external admission at once,
// Pool.ReturnFreed without an admission) or sets a SelectiveShare out of
// range, the *SpeculationError of an invalid Speculation
// (Speculation.Validate). Both match ErrInvalidConfig. New returns it.
func (c Config) Validate() error {
	hasAdmission := c.Admission != nil || c.ExternalAdmission
	switch {
	case c.Admission != nil && c.ExternalAdmission:
		return &ConfigError{Field: "ExternalAdmission", Reason: "an in-process Admission is set too"}
	case c.Pool.ReturnFreed && !hasAdmission:
		return &ConfigError{Field: "Pool.ReturnFreed", Reason: "freed slots go back to an admission, and there is none"}
	case c.SelectiveShare != 0 && ValidateSelectiveShare(c.SelectiveShare) != nil:
		return &ConfigError{Field: "SelectiveShare",
			Reason: fmt.Sprintf("%v is not a share of the producers: more than 0 and at most 1 (0: the default, %v)", c.SelectiveShare, DefaultSelectiveShare)}
	}
	return c.Speculation.Validate()
}

// New creates a scheduler for the regions of one job. It returns the
// error of a cfg that Config.Validate refuses, and the *SpeculationError
// of a Speculation turned on for a job with no task to speculate
// (Speculation.ValidateJob); no scheduler then.
func New(rs *region.Regions, cfg Config) (*Scheduler, error) {
	return newScheduler(nil, rs, cfg)
}

// newScheduler is New, taking the storage of its tables from old, a
// scheduler no longer used, where it has room (old nil: none): see
// package internal/schedreuse.
func newScheduler(old *Scheduler, rs *region.Regions, cfg Config) (*Scheduler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Speculation.ValidateJob(rs); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	pc := cfg.Pool
	var oldPool *pool.Pool
	if old != nil {
		oldPool = old.pool
	}
	p := pool.Renew(oldPool, pool.Config{
		Matching: pc.Matching, Timeout: pc.Timeout, IdleTimeout: pc.IdleTimeout, ReturnFreed: pc.ReturnFreed,
		Admission: cfg.Admission != nil || cfg.ExternalAdmission,
		Logger:    log.Named("slotpool"),
	})
	opts := []strategy.Option{strategy.WithLogger(log.Named("strategy")), strategy.WithDeployedReports(), strategy.WithSelectiveShare(cfg.SelectiveShare)}
	var regions []regionRun
	if old != nil {
		opts = append(opts, strategy.WithSpare(old.strategy))
		regions = old.regions
	}
	s := &Scheduler{
		rs:       rs,
		strategy: strategy.New(rs, opts...),
		pool:     p,
		link:     pool.NewLink(p, cfg.Admission, log.Named("link")),
		log:      log,
		debug:    log.Core().Enabled(zap.DebugLevel),
		regions:  zeroed(regions, rs.NumRegions()),
		sharing:  !cfg.DisableHybridSlotSharing && rs.Topology().Job().HybridEdges(rs.Topology().Mode()) > 0,
	}
	if old != nil {
		s.keepStorage(old)
	}
	s.rd = &s.bufs[0]
	if cfg.Speculation.Enabled {
		s.spec = newSpeculator(s, cfg.Speculation)
	}
	return s, nil
}

// Regions returns the job's regions (immutable).
func (s *Scheduler) Regions() *region.Regions { return s.rs }

// TaskName names a task for users: "ID#i", the id of its job vertex and
// its subtask index (s.Regions().Topology().VertexName(v)). v must be a
// task of the job.
func (s *Scheduler) TaskName(v TaskID) string { return s.rs.Topology().VertexName(v) }

// State returns the job state.
func (s *Scheduler) State() JobState { return s.state }

// Err returns why the job failed (a *RegionError), or nil.
func (s *Scheduler) Err() error { return s.err }

// DefaultSelectiveShare is Config.SelectiveShare's default.
const DefaultSelectiveShare = 0.5

// ValidateSelectiveShare returns an error naming share and the valid
// range unless 0 < share <= 1: what a caller that reads a share from its
// input checks (Config.SelectiveShare also takes 0, the default).
func ValidateSelectiveShare(share float64) error { return strategy.ValidateSelectiveShare(share) }

// Status is a read-only snapshot of a Scheduler.
type Status struct {
	// State is the job's state; Err why it failed (a *RegionError), or nil.
	State JobState
	Err   error
	// Stats counts deployments and failovers so far.
	Stats Stats
	// Pool counts the pool's slots and waiting bulks.
	Pool slotpool.Stats
	// Waiting lists the regions that asked for slots and have not got
	// them, in ascending id order.
	Waiting []RegionID
	// Deployed lists the regions whose tasks hold slots, ascending.
	Deployed []RegionID
}

// Status returns a snapshot of the scheduler. It costs O(regions).
func (s *Scheduler) Status() Status {
	st := Status{State: s.state, Err: s.err, Stats: s.stats, Pool: s.pool.Stats()}
	for r := range s.regions {
		run := &s.regions[r]
		if run.waiting {
			st.Waiting = append(st.Waiting, RegionID(r))
		}
		if run.deployed {
			st.Deployed = append(st.Deployed, RegionID(r))
		}
	}
	return st
}

// Stats counts deployments and failovers so far: Status's Stats, without
// the walk over the regions that Status makes.
func (s *Scheduler) Stats() Stats { return s.stats }

// Task returns what the scheduler knows of one task: its state and the
// attempt of its region. An id out of range returns an
// *UnknownVertexError in an *OpError.
func (s *Scheduler) Task(v TaskID) (TaskStatus, error) {
	st, err := s.strategy.Vertex(v)
	if err != nil {
		return TaskStatus{}, s.wrap("task", -1, err)
	}
	return TaskStatus{State: taskState(st.State), Attempt: s.ext(s.rs.RegionOf(v), st.Attempt)}, nil
}

// SlotOf returns the slot task v is deployed in, if it is.
func (s *Scheduler) SlotOf(v TaskID) (SlotID, bool) {
	st, err := s.strategy.Vertex(v)
	if err != nil || (st.State != strategy.TaskDeploying && st.State != strategy.TaskRunning) {
		return 0, false
	}
	return s.slotOf(v, s.rs.RegionOf(v)), true
}

// slotOfOne returns the slot the task of region r, of one member, was
// deployed in last.
func (s *Scheduler) slotOfOne(r region.ID, run *regionRun) slotpool.SlotID {
	if run.ref == bigSlot {
		return s.bigSlots[r]
	}
	return slotpool.SlotID(run.ref)
}

// setSlotOfOne records slot as the one the task of region r, of one
// member, is deployed in.
func (s *Scheduler) setSlotOfOne(r region.ID, run *regionRun, slot slotpool.SlotID) {
	if slot >= 0 && slot <= math.MaxInt32 {
		run.ref = int32(slot)
		return
	}
	if s.bigSlots == nil {
		s.bigSlots = map[region.ID]slotpool.SlotID{}
	}
	run.ref = bigSlot
	s.bigSlots[r] = slot
}

// slotOf returns the slot task v, of region r, was deployed in last.
func (s *Scheduler) slotOf(v TaskID, r region.ID) slotpool.SlotID {
	if run := &s.regions[r]; !run.several {
		return s.slotOfOne(r, run)
	}
	if s.taskSlot == nil {
		return 0
	}
	return s.taskSlot[v]
}

// NextDeadline returns when Tick next has work to do (the pool's and the
// admission's timeouts, and with Config.Speculation the detector's
// checks).
func (s *Scheduler) NextDeadline() (time.Time, bool) {
	t, ok := s.link.NextDeadline()
	if sp := s.spec; sp != nil {
		if st, sok := sp.deadline(); sok && (!ok || st.Before(t)) {
			t, ok = st, true
		}
	}
	return t, ok
}

// checkTime refuses a time before the latest time of an input that
// changed something (drain records it), so a refused input moves nothing,
// not even the clock.
func (s *Scheduler) checkTime(now time.Time) error {
	if s.started && now.Before(s.last) {
		return &TimeError{Now: now, Last: s.last}
	}
	return nil
}

// Offer adds slots to the pool (a static cluster or the runtime's own
// slots); FIFO hands them to the oldest waiting region that can use them.
//
// Errors: a *TimeError if now is before an earlier call's time; a
// *slotpool.SlotError in an *OpError (errors.Is slotpool.ErrDuplicateSlot)
// if a slot id is already in the pool. Nothing changes then.
func (s *Scheduler) Offer(now time.Time, slots ...Slot) error {
	if err := s.checkTime(now); err != nil {
		return err
	}
	if err := s.pool.Offer(now, slots...); err != nil {
		return s.wrap("offer", -1, err)
	}
	s.drain(now)
	return nil
}

// SetCapacity declares everything the cluster could ever give: a region
// that cannot fit it fails at once (and with it the job) instead of
// waiting for its timeout. nil means unknown (the default).
//
// Errors: a *TimeError if now is before an earlier call's time.
func (s *Scheduler) SetCapacity(now time.Time, capacity []resource.Count) error {
	if err := s.checkTime(now); err != nil {
		return err
	}
	s.pool.SetCapacity(now, capacity)
	s.drain(now)
	return nil
}

// Start schedules the source regions: they ask for slots, and are
// deployed at once if the pool has them.
//
// Errors: ErrAlreadyStarted on a second call; a *TimeError if now is
// before an earlier call's time; and the job's *RegionError
// (errors.Is ErrJobFailed) if the job failed at once because a region can
// never fit the declared capacity. The Ready then says so as well.
func (s *Scheduler) Start(now time.Time) error {
	if s.state != JobCreated {
		return ErrAlreadyStarted
	}
	if err := s.checkTime(now); err != nil {
		return err
	}
	if sp := s.spec; sp != nil {
		sp.begin(now)
	}
	d, err := s.strategy.Start()
	if err != nil {
		return s.wrap("start", -1, err)
	}
	s.setState(JobRunning, nil)
	s.apply(now, &d)
	s.drain(now)
	if s.state == JobFailed {
		return s.err
	}
	return nil
}

// Tick fires the timeouts due at now (pool and admission): a region whose
// slots did not become available in time fails the job. With
// Config.Speculation it also runs the slow-task detector when a check is
// due.
//
// Errors: a *TimeError if now is before an earlier call's time.
func (s *Scheduler) Tick(now time.Time) error {
	if err := s.checkTime(now); err != nil {
		return err
	}
	s.link.Tick(now)
	if sp := s.spec; sp != nil {
		sp.tick(now)
	}
	s.drain(now)
	return nil
}

// Admit applies messages from an admission outside the scheduler (one
// that read Ready.ToAdmission): grants, revocations, reclaims, release
// confirmations and capacity. A revoked slot in use fails its task over.
//
// Errors: a *TimeError if now is before an earlier call's time; the first
// message the pool rejects returns its *slotpool.SlotError (or an error
// wrapping slotpool.ErrUnknownMessage) in an *OpError, and the messages after it are not
// applied; the ones before it are.
func (s *Scheduler) Admit(now time.Time, msgs ...slotpool.FromAdmission) error {
	if err := s.checkTime(now); err != nil {
		return err
	}
	var err error
	for _, m := range msgs {
		if err = s.pool.Admit(now, m); err != nil {
			err = s.wrap("admit", -1, err)
			break
		}
	}
	s.drain(now)
	return err
}

// bulkID names the bulk of region r's attempt: unique in the pool, and
// the region is read back from it without a lookup table.
func bulkID(r region.ID, attempt strategy.Attempt) slotpool.BulkID {
	return slotpool.BulkID(int64(attempt)<<32|int64(r)) + 1
}

// regionOfBulk inverts bulkID.
func regionOfBulk(id slotpool.BulkID) region.ID { return region.ID(int64(id-1) & 0xffffffff) }
