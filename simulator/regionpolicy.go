package simulator

import (
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/strategy"
	"github.com/regionsched/regionsched/topology"
)

// epoch is virtual time zero for the scheduler's time.Time arguments.
var epoch = time.Unix(0, 0).UTC()

// regionPolicy drives the library's scheduler: the engine is its
// Deployer and Observer.
type regionPolicy struct {
	e        *engine
	sched    *scheduler.Scheduler
	restarts []Restart
}

func newRegionPolicy(e *engine) *regionPolicy {
	p := &regionPolicy{e: e}
	p.sched = scheduler.New(e.rs, p, scheduler.Config{
		Pool:     slotpool.Config{Matching: e.cfg.Matching, Timeout: e.cfg.Timeout},
		Observer: p,
		Logger:   e.log,
	})
	return p
}

func (p *regionPolicy) at() time.Time { return epoch.Add(p.e.now()) }

func (p *regionPolicy) start() {
	slots := make([]slotpool.Slot, len(p.e.slots))
	for i := range slots {
		slots[i] = slotpool.Slot{ID: slotpool.SlotID(i), Profile: p.e.slots[i].profile}
	}
	p.e.rng.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
	p.sched.SetCapacity(p.at(), p.e.cfg.Cluster)
	if err := p.sched.Offer(p.at(), slots...); err != nil {
		p.e.log.Error("offering the cluster's slots", zap.Error(err))
	}
	if err := p.sched.Start(p.at()); err != nil {
		p.e.log.Error("starting the job", zap.Error(err))
	}
}

// Deploy implements scheduler.Deployer.
func (p *regionPolicy) Deploy(v topology.ExecutionVertexID, attempt strategy.Attempt, slot slotpool.SlotID) {
	p.e.model.tasks[v].attempt = int32(attempt)
	p.e.deploy(int32(v), int32(slot))
}

// Cancel implements scheduler.Deployer.
func (p *regionPolicy) Cancel(v topology.ExecutionVertexID, _ strategy.Attempt) {
	p.e.cancel(int32(v))
}

// Requested implements scheduler.Observer: one request event per task.
func (p *regionPolicy) Requested(_ region.ID, attempt strategy.Attempt, slots []region.Slot) {
	for _, s := range slots {
		for _, v := range s.Members {
			p.e.model.tasks[v].attempt = int32(attempt)
			p.e.record(Request, int32(v), NoSlot)
		}
	}
}

// SlotReleased implements scheduler.Observer (the engine traces releases itself).
func (p *regionPolicy) SlotReleased(slotpool.SlotID, region.ID, strategy.Attempt) {}

// PartitionsReleased implements scheduler.Observer.
func (p *regionPolicy) PartitionsReleased([]topology.ResultPartitionID) {}

// Restarting implements scheduler.Observer: it records the failover for
// Result.Restarts. (Members of restarted regions that had finished run
// again when the scheduler deploys them; see engine.deploy.)
func (p *regionPolicy) Restarting(failed topology.ExecutionVertexID, regions []region.ID) {
	p.restarts = append(p.restarts, Restart{At: p.e.now(), Task: p.e.topo.VertexName(failed), Regions: slices.Clone(regions)})
}

func (p *regionPolicy) finished(v int32) {
	if err := p.sched.TaskFinished(p.at(), topology.ExecutionVertexID(v), strategy.Attempt(p.e.model.tasks[v].attempt)); err != nil {
		p.e.log.Debug("finish report refused", zap.Error(err))
	}
}

func (p *regionPolicy) failed(v, _ int32) {
	if err := p.sched.TaskFailed(p.at(), topology.ExecutionVertexID(v), strategy.Attempt(p.e.model.tasks[v].attempt)); err != nil {
		p.e.log.Debug("failure report refused", zap.Error(err))
	}
}

func (p *regionPolicy) afterEvent() {}

func (p *regionPolicy) tick() { p.sched.Tick(p.at()) }

func (p *regionPolicy) nextDeadline() (time.Duration, bool) {
	t, ok := p.sched.NextDeadline()
	if !ok {
		return 0, false
	}
	return t.Sub(epoch), true
}

func (p *regionPolicy) stopped() (error, bool) {
	return p.sched.Err(), p.sched.State() == scheduler.Failed
}

// waitingForSlots lists the tasks of regions that asked for slots and
// were not deployed.
func (p *regionPolicy) waitingForSlots() []int32 {
	var out []int32
	st := p.sched.Strategy()
	for v := range p.e.model.tasks {
		if s, err := st.Vertex(topology.ExecutionVertexID(v)); err == nil && s.State == strategy.Scheduled {
			out = append(out, int32(v))
		}
	}
	return out
}

func (p *regionPolicy) done() bool { return p.sched.State() == scheduler.Finished }

func (p *regionPolicy) stats(r *Result) {
	s := p.sched.Stats()
	r.RegionsScheduled, r.Failovers, r.RegionRestarts = s.RegionsDeployed, s.Failovers, s.RegionRestarts
	r.Restarts = p.restarts
}
