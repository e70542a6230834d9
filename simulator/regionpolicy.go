package simulator

import (
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/internal/schedreuse"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// epoch is virtual time zero for the scheduler's time.Time arguments.
var epoch = Epoch

// Epoch is the wall-clock time of virtual time 0 in the times a
// simulation gives the library (audit records carry it): the Unix epoch.
var Epoch = time.Unix(0, 0).UTC()

// regionPolicy drives the library's scheduler: after every input it
// applies the scheduler's Ready to the engine (requests and restarts are
// recorded, cancels and deploys carried out).
//
// In a run of several jobs there is one per job, without a scheduler of
// its own (the jobs' schedulers are behind a multijob.Scheduler): its
// tasks are the engine's tasks off ... off+n-1, its regions rs, and it
// applies the job's Ready values in two steps (applyCancels, then
// applyDeploys once every job's cancels are applied).
type regionPolicy struct {
	e        *engine
	rs       *region.Regions
	off      int32
	sched    *scheduler.Scheduler
	restarts []Restart
	// ownDeadlines: every input of sched goes through input (the one job
	// of a run, without an admission whose other jobs move its
	// deadlines), so the deadline of the last Ready is sched's next one
	// and nextDeadline reads it from there, not from the pool again after
	// every event. deadline is that Ready's (the zero time: none).
	ownDeadlines bool
	deadline     time.Time
	// open counts the job's open requests: the tasks that asked for a
	// slot and have not been deployed since (each task's attempt is its
	// taskRun.asked1). A request superseded by the next attempt of its
	// region is withdrawn (supersede), and so are those of a job of a
	// run of several jobs that ends (withdrawAsks).
	open int
	// tracedAt holds, while a Ready is applied, 1 + the index in
	// Ready.Requests of the request of each task the Ready deploys (by
	// local task id; 0: none): that request is traced right before the
	// first deploy of its tasks (applyDeploys).
	tracedAt []int32
	// waiting returns the regions of the job waiting for slots, as its
	// scheduler has them (withdrawEnded); nil: sched's.
	waiting func() []scheduler.RegionID
}

// newRegionPolicy makes the scheduler of a run of one job, over the
// tables of the scheduler of an ended run if one was left (see
// modelTables); its error is the scheduler's configuration error.
func newRegionPolicy(e *engine) (*regionPolicy, error) {
	old := e.model.spareSched
	e.model.spareSched = nil
	sched, err := newReusing(old, e.rs, scheduler.Config{
		Pool:                     slotpool.Config{Matching: e.cfg.Matching, Timeout: e.cfg.Timeout},
		SelectiveShare:           e.cfg.SelectiveShare,
		DisableHybridSlotSharing: e.cfg.DisableHybridSlotSharing,
		Speculation:              e.cfg.Speculation,
		Logger:                   e.log,
	})
	if err != nil {
		return nil, err
	}
	return &regionPolicy{e: e, rs: e.rs, sched: sched, ownDeadlines: true}, nil
}

// newReusing is scheduler.New over the tables of old, the scheduler of
// an ended run (nil: none; see modelTables).
var newReusing = schedreuse.New.(func(*scheduler.Scheduler, *region.Regions, scheduler.Config) (*scheduler.Scheduler, error))

func (p *regionPolicy) at() time.Time { return p.e.at() }

// input hands one input to the scheduler and applies what it asks.
func (p *regionPolicy) input(what string, err error) {
	if err != nil {
		p.e.log.Debug(what+" refused", zap.Error(err))
	}
	rd := readyOf(p.sched) // the scheduler's own: a Ready is some 250 bytes, not copied on every event
	p.deadline = rd.Deadline
	// The Ready in its field order.
	p.applyCancels(rd)
	p.applyDeploys(rd)
}

// readyOf is sched.Ready() without the copy (see internal/schedreuse).
var readyOf = schedreuse.Ready.(func(*scheduler.Scheduler) *scheduler.Ready)

// applyCancels records a Ready's restarts, stops its canceled tasks and
// withdraws the requests the restarts ended.
func (p *regionPolicy) applyCancels(rd *scheduler.Ready) {
	for _, r := range rd.Restarted {
		p.restarts = append(p.restarts, Restart{At: p.e.now(), Task: p.rs.Topology().VertexName(r.Failed), Regions: slices.Clone(r.Regions)})
	}
	for _, c := range rd.Cancel {
		if p.e.spec != nil && p.e.cancelSpeculative(p.off+int32(c.Task), int32(c.Attempt)) {
			continue
		}
		p.e.cancel(p.off + int32(c.Task))
	}
	for _, r := range rd.Restarted {
		p.withdrawRestarted(r.Regions)
	}
}

// withdrawRestarted ends the open requests of the tasks of restarted
// regions (Withdraw events, in task order): a region that restarts while
// it waits for slots gives up its request at once, and asks again, with
// its next attempt, only once its inputs are complete again. Every
// request open now was made before this Ready, by an attempt the restart
// ended.
func (p *regionPolicy) withdrawRestarted(regions []scheduler.RegionID) {
	for _, r := range regions {
		if p.open == 0 {
			return
		}
		for _, v := range p.rs.Members(r) {
			p.withdraw(p.off + int32(v))
		}
	}
}

// applyDeploys records a Ready's requests and starts its deployments.
//
// One request event per task. (Members of restarted regions that had
// finished run again when they are deployed; see engine.deploy.) Without
// a trace they are only counted: the attempt of a task is read before it
// is deployed only by its trace events. The trace shows a region asking
// after the producers it waits for are deployed: a request the Ready
// also serves is traced right before the first of its deploys, the
// others after every deploy (a region reading full hybrid results asks
// once its producers are deployed, in the same Ready as their deploys).
func (p *regionPolicy) applyDeploys(rd *scheduler.Ready) {
	if p.open > 0 {
		p.withdrawSuperseded(rd)
	}
	tracing := p.e.tracing()
	if tracing && p.tracedAt == nil {
		p.tracedAt = make([]int32, p.rs.Topology().NumExecutionVertices())
	}
	if tracing && len(rd.Requests) > 0 {
		again := false // a task in two requests (two attempts): traced in order
		for i, req := range rd.Requests {
			if req.Speculative {
				continue
			}
			for _, s := range req.Slots {
				for _, v := range s.Members {
					again = again || p.tracedAt[v] != 0
					p.tracedAt[v] = int32(i) + 1
				}
			}
		}
		if again {
			// An earlier attempt's request, superseded in the same Ready
			// (its region restarted before the runtime saw it deployed),
			// ends in a Withdraw before the next attempt's request.
			eachSuperseding(rd, func(v scheduler.TaskID, old scheduler.Attempt) {
				p.e.attemptEvent(runfile.Withdraw, p.off+int32(v), int32(old), runfile.NoSlot, false)
			}, p.traceRequest) // (traceRequest clears tracedAt)
		}
	} else if !tracing && restartsIn(rd) {
		eachSuperseding(rd, func(scheduler.TaskID, scheduler.Attempt) { p.e.traced++ }, nil)
	}
	for _, req := range rd.Requests {
		if req.Speculative {
			p.e.attemptEvent(runfile.Speculate, p.off+int32(req.Slots[0].Members[0]), int32(req.Attempt), runfile.NoSlot, true)
			continue
		}
		for _, s := range req.Slots {
			for _, v := range s.Members {
				p.ask(p.off+int32(v), int32(req.Attempt))
			}
			if !tracing {
				p.e.traced += len(s.Members)
			}
		}
	}
	for _, d := range rd.Deploy {
		if d.Speculative {
			p.e.deployCopy(p.off+int32(d.Task), int32(d.Attempt), int32(d.Slot))
			continue
		}
		if tracing {
			if i := p.tracedAt[d.Task] - 1; i >= 0 {
				p.traceRequest(&rd.Requests[i])
			}
		}
		if d.Shared {
			p.supersede(p.off+int32(d.Task), int32(d.Attempt))
		}
		p.served(p.off + int32(d.Task))
		p.e.model.runs[p.off+int32(d.Task)].attempt = int32(d.Attempt)
		if d.Shared { // its region asked for no slot: the trace shows it asking, and served at once
			p.e.record(runfile.Request, p.off+int32(d.Task), runfile.NoSlot)
		}
		p.e.deploy(p.off+int32(d.Task), int32(d.Slot), d.Shared)
	}
	if tracing {
		for i := range rd.Requests { // those the Ready did not serve
			if req := &rd.Requests[i]; !req.Speculative && p.tracedAt[req.Slots[0].Members[0]] != 0 {
				p.traceRequest(req)
			}
		}
	}
	for _, w := range rd.Won {
		p.e.won(w, p.off)
	}
	if len(rd.Restarted) > 0 && p.open > 0 {
		p.withdrawEnded(rd)
	}
}

// withdrawEnded withdraws the requests of rd that a restart in rd
// ended: a region that asked and restarted within one Ready (a run of
// several jobs applies every input of an instant before its Ready) no
// longer waits, and asks again only once its inputs are complete again.
// Its requests are withdrawn right after they were traced, in the
// Ready's order.
func (p *regionPolicy) withdrawEnded(rd *scheduler.Ready) {
	var waiting []scheduler.RegionID
	switch {
	case p.waiting != nil:
		waiting = p.waiting()
	case p.sched != nil:
		waiting = p.sched.Status().Waiting
	default:
		return
	}
	for v, attempt := range rd.EndedTasks(waiting) {
		if t := p.off + int32(v); p.e.model.runs[t].asked1 == int32(attempt)+1 {
			p.withdraw(t)
		}
	}
}

// withdrawSuperseded ends the open requests of the tasks that ask again
// in rd, with a new attempt, before being deployed: their region
// restarted while it waited for slots (a failover of a producer it
// reads, or a reclaim of the slot it was granted at this instant) before
// the runtime saw it deployed. Each gets a Withdraw event, before the
// Ready's requests.
func (p *regionPolicy) withdrawSuperseded(rd *scheduler.Ready) {
	for _, req := range rd.Requests {
		if req.Speculative {
			continue
		}
		for _, s := range req.Slots {
			for _, v := range s.Members {
				p.supersede(p.off+int32(v), int32(req.Attempt))
			}
		}
	}
}

// supersede ends the open request of task t (a union id) if it was made
// for another attempt than attempt, which asks now (Withdraw event).
func (p *regionPolicy) supersede(t, attempt int32) {
	if a := p.e.model.runs[t].asked1; a != 0 && a != attempt+1 {
		p.withdraw(t)
	}
}

// withdraw ends the open request of task t (a union id), if it has one:
// a Withdraw event with the request's attempt.
func (p *regionPolicy) withdraw(t int32) {
	if a := p.e.model.runs[t].asked1; a != 0 {
		p.e.attemptEvent(runfile.Withdraw, t, a-1, runfile.NoSlot, false)
		p.served(t)
	}
}

// ask records the open request of task t (a union id) for attempt.
func (p *regionPolicy) ask(t, attempt int32) {
	r := &p.e.model.runs[t]
	if r.asked1 == 0 {
		p.open++
	}
	r.asked1 = attempt + 1
}

// served forgets the open request of task t (a union id), if any: it was
// deployed or withdrawn.
func (p *regionPolicy) served(t int32) {
	if r := &p.e.model.runs[t]; r.asked1 != 0 {
		r.asked1 = 0
		p.open--
	}
}

// restartsIn reports whether rd has a regular request of a restarted
// region: only then may a request of it supersede another.
func restartsIn(rd *scheduler.Ready) bool {
	for i := range rd.Requests {
		if rd.Requests[i].Attempt > 0 && !rd.Requests[i].Speculative {
			return true
		}
	}
	return false
}

// eachSuperseding walks the regular requests of rd in order: for each
// task asking again in it for another attempt, superseded(task, the
// attempt it asked for before), then request(the request) if not nil.
// A trace has a Withdraw for each superseded request (applyDeploys).
func eachSuperseding(rd *scheduler.Ready, superseded func(scheduler.TaskID, scheduler.Attempt), request func(*scheduler.Request)) {
	asked := map[scheduler.TaskID]scheduler.Attempt{}
	for i := range rd.Requests {
		req := &rd.Requests[i]
		if req.Speculative {
			continue
		}
		for _, s := range req.Slots {
			for _, v := range s.Members {
				if old, ok := asked[v]; ok && old != req.Attempt {
					superseded(v, old)
				}
				asked[v] = req.Attempt
			}
		}
		if request != nil {
			request(req)
		}
	}
}

// traceRequest traces the request events of a request of the Ready being
// applied, once: it forgets the request's tasks in tracedAt.
func (p *regionPolicy) traceRequest(req *scheduler.Request) {
	for _, s := range req.Slots {
		for _, v := range s.Members {
			p.tracedAt[v] = 0
			p.e.model.runs[p.off+int32(v)].attempt = int32(req.Attempt)
			p.e.record(runfile.Request, p.off+int32(v), runfile.NoSlot)
		}
	}
}

// withdrawAsks ends the open requests of a job that ended (Withdraw
// events, in task order), and forgets them.
func (p *regionPolicy) withdrawAsks() {
	end := p.off + int32(p.rs.Topology().NumExecutionVertices())
	for v := p.off; p.open > 0 && v < end; v++ {
		p.withdraw(v)
	}
}

func (p *regionPolicy) start() {
	slots := p.e.poolSlots()
	p.e.rng.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
	p.input("declaring the capacity", p.sched.SetCapacity(p.at(), p.e.cfg.Cluster))
	p.input("offering the cluster's slots", p.sched.Offer(p.at(), slots...))
	p.input("starting the job", p.sched.Start(p.at()))
}

func (p *regionPolicy) finished(v int32) {
	p.input("finish report", p.sched.TaskFinished(p.at(), topology.ExecutionVertexID(v-p.off), scheduler.Attempt(p.e.model.runs[v].attempt)))
}

func (p *regionPolicy) failed(v, _ int32) {
	p.input("failure report", p.sched.TaskFailed(p.at(), topology.ExecutionVertexID(v-p.off), scheduler.Attempt(p.e.model.runs[v].attempt)))
}

func (p *regionPolicy) afterEvent() {}

func (p *regionPolicy) tick() { p.input("tick", p.sched.Tick(p.at())) }

func (p *regionPolicy) nextDeadline() (time.Duration, bool) {
	t, ok := p.deadline, !p.deadline.IsZero()
	if !p.ownDeadlines {
		t, ok = p.sched.NextDeadline()
	}
	if !ok {
		return 0, false
	}
	return t.Sub(epoch), true
}

func (p *regionPolicy) stopped() (error, bool) {
	return p.sched.Err(), p.sched.State() == scheduler.JobFailed
}

// waitingForSlots lists the tasks of regions that asked for slots and
// were not deployed.
func (p *regionPolicy) waitingForSlots() []int32 {
	var out []int32
	for _, r := range p.sched.Status().Waiting {
		for _, v := range p.rs.Members(r) {
			out = append(out, p.off+int32(v))
		}
	}
	return out
}

func (p *regionPolicy) done() bool { return p.sched.State() == scheduler.JobFinished }

func (p *regionPolicy) stats(r *Result) {
	s := p.sched.Status().Stats
	r.RegionsScheduled, r.Failovers, r.RegionRestarts = s.RegionsDeployed, s.Failovers, s.RegionRestarts
	r.RegionsShared = s.RegionsShared
	r.Restarts = p.restarts
	r.Speculation = p.e.speculationSummary(p.sched.SpeculationStats())
}
