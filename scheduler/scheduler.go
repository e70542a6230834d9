package scheduler

import (
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/strategy"
	"github.com/regionsched/regionsched/topology"
)

// Deployer is the runtime side of the scheduler.
type Deployer interface {
	// Deploy starts attempt `attempt` of subtask v in slot `slot`. v may
	// have finished in an earlier attempt whose region was restarted; its
	// earlier results are then void (every reader restarts as well).
	Deploy(v topology.ExecutionVertexID, attempt strategy.Attempt, slot slotpool.SlotID)
	// Cancel stops attempt `attempt` of subtask v, which is deployed: its
	// region is restarted, or the job failed. It is also called for every
	// task that ran in a slot reported lost (SlotLost, or revoked by the
	// admission), so the runtime forgets it; that slot is not reused.
	Cancel(v topology.ExecutionVertexID, attempt strategy.Attempt)
}

// Observer, if set in Config, learns what the scheduler does (for traces,
// metrics and tests). Every method is optional to act on.
type Observer interface {
	// Requested: region r (attempt) asked the pool for these slots.
	Requested(r region.ID, attempt strategy.Attempt, slots []region.Slot)
	// SlotReleased: a slot went back to the pool (last task finished, or
	// its tasks were canceled).
	SlotReleased(slot slotpool.SlotID, r region.ID, attempt strategy.Attempt)
	// PartitionsReleased: blocking partitions nobody needs any more.
	PartitionsReleased(ps []topology.ResultPartitionID)
	// Restarting: a failover of `failed` restarts these regions.
	Restarting(failed topology.ExecutionVertexID, regions []region.ID)
}

// Config configures a Scheduler.
type Config struct {
	// Pool configures the slot pool (matching, fulfillability timeout). Its
	// Logger is replaced by a child of Logger, and Admission is set when
	// an Admission is given.
	Pool slotpool.Config
	// Admission, if set, is an in-process queue-level admission: the
	// pool's demand goes to it and its grants, revocations and release
	// confirmations come back (Pool.Admission is then set to true).
	Admission slotpool.Admission
	// Observer, if set, is told what happens.
	Observer Observer
	// Logger receives debug logs; nil means zap.NewNop().
	Logger *zap.Logger
}

// JobState is where the job is.
type JobState uint8

// The states of a job.
const (
	Created  JobState = iota // Start not called yet
	Running                  // started, not every region finished
	Finished                 // every region finished
	Failed                   // a region could not be served (see Err)
)

var jobStateNames = [...]string{"created", "running", "finished", "failed"}

// String returns "created", "running", "finished" or "failed".
func (s JobState) String() string {
	if int(s) < len(jobStateNames) {
		return jobStateNames[s]
	}
	return "invalid"
}

// Stats counts what the scheduler did.
type Stats struct {
	// RegionsDeployed counts region deployments (restarts included).
	RegionsDeployed int
	// Failovers counts handled task failures and slot losses.
	Failovers int
	// RegionRestarts counts regions restarted by failovers.
	RegionRestarts int
}

// regionRun is the scheduler's view of one region's current attempt.
type regionRun struct {
	attempt  strategy.Attempt
	bulk     slotpool.BulkID   // the waiting bulk, 0 if none
	deployed slotpool.BulkID   // the fulfilled bulk, 0 if none
	slots    []region.Slot     // cached while the attempt is scheduled or deployed
	placed   []slotpool.SlotID // slot of each entry of slots, once deployed
	inUse    int               // placed slots not yet returned
}

// slotUse counts the unfinished tasks in a slot of a deployed region.
type slotUse struct {
	region  region.ID
	attempt strategy.Attempt
	running int
}

// Scheduler runs one job (see the package comment).
type Scheduler struct {
	rs       *region.Regions
	strategy *strategy.Strategy
	pool     *slotpool.Pool
	adm      slotpool.Admission
	dep      Deployer
	obs      Observer
	log      *zap.Logger

	regions  []regionRun
	taskSlot []slotpool.SlotID // per execution vertex, valid while deployed
	slots    map[slotpool.SlotID]slotUse

	state JobState
	err   error
	stats Stats

	requestBuf []slotpool.Request // scratch for request
}

// New creates a scheduler for the regions of one job.
func New(rs *region.Regions, d Deployer, cfg Config) *Scheduler {
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	pc := cfg.Pool
	pc.Logger = log.Named("slotpool")
	if cfg.Admission != nil {
		pc.Admission = true
	}
	return &Scheduler{
		rs:       rs,
		strategy: strategy.New(rs, strategy.WithLogger(log.Named("strategy"))),
		pool:     slotpool.New(pc),
		adm:      cfg.Admission,
		dep:      d,
		obs:      cfg.Observer,
		log:      log,
		regions:  make([]regionRun, rs.NumRegions()),
		taskSlot: make([]slotpool.SlotID, rs.Topology().NumExecutionVertices()),
		slots:    map[slotpool.SlotID]slotUse{},
	}
}

// Regions returns the job's regions.
func (s *Scheduler) Regions() *region.Regions { return s.rs }

// Strategy returns the strategy (read-only use: its queries).
func (s *Scheduler) Strategy() *strategy.Strategy { return s.strategy }

// Pool returns the slot pool (read-only use: its queries).
func (s *Scheduler) Pool() *slotpool.Pool { return s.pool }

// State returns the job state.
func (s *Scheduler) State() JobState { return s.state }

// Err returns why the job failed (a *RegionError), or nil.
func (s *Scheduler) Err() error { return s.err }

// Stats returns the counters.
func (s *Scheduler) Stats() Stats { return s.stats }

// SlotOf returns the slot subtask v is deployed in, if it is.
func (s *Scheduler) SlotOf(v topology.ExecutionVertexID) (slotpool.SlotID, bool) {
	st, err := s.strategy.Vertex(v)
	if err != nil || (st.State != strategy.Deploying && st.State != strategy.Running) {
		return 0, false
	}
	return s.taskSlot[v], true
}

// Offer adds slots to the pool (a static cluster or the runtime's own
// slots); FIFO hands them to the oldest waiting region that can use them.
func (s *Scheduler) Offer(now time.Time, slots ...slotpool.Slot) error {
	if err := s.pool.Offer(now, slots...); err != nil {
		return err
	}
	s.drain(now)
	return nil
}

// SetCapacity declares everything the cluster could ever give: a region
// that cannot fit it fails at once instead of waiting for its timeout.
func (s *Scheduler) SetCapacity(now time.Time, capacity []resource.Count) {
	s.pool.SetCapacity(now, capacity)
	s.drain(now)
}

// Start schedules the source regions.
func (s *Scheduler) Start(now time.Time) error {
	if s.state != Created {
		return ErrAlreadyStarted
	}
	d, err := s.strategy.Start()
	if err != nil {
		return err
	}
	s.state = Running
	s.apply(now, d)
	s.drain(now)
	return nil
}

// Tick fires the timeouts due at now (pool and admission).
func (s *Scheduler) Tick(now time.Time) {
	if s.adm != nil {
		s.adm.Tick(now)
	}
	s.pool.Tick(now)
	s.drain(now)
}

// NextDeadline returns when Tick next has work to do.
func (s *Scheduler) NextDeadline() (time.Time, bool) {
	t, ok := s.pool.NextDeadline()
	if s.adm != nil {
		if at, aok := s.adm.NextDeadline(); aok && (!ok || at.Before(t)) {
			t, ok = at, true
		}
	}
	return t, ok
}

// bulkID names the bulk of region r's attempt: unique in the pool, and
// the region is read back from it without a lookup table.
func bulkID(r region.ID, attempt strategy.Attempt) slotpool.BulkID {
	return slotpool.BulkID(int64(attempt)<<32|int64(r)) + 1
}

// regionOfBulk inverts bulkID.
func regionOfBulk(id slotpool.BulkID) region.ID { return region.ID(int64(id-1) & 0xffffffff) }
