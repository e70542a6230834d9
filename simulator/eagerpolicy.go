package simulator

import (
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// eagerPolicy is the baseline of a scheduler without regions, bulks or
// slot sharing: a task asks for its own slot as soon as its blocking
// inputs are finished and its pipelined and hybrid producers are
// deployed; free
// slots go to pending tasks in seeded random order. A failed task is
// restarted alone (it asks for a slot again).
type eagerPolicy struct {
	e         *engine
	profile   []resource.Profile // per job vertex
	pending   []int32
	requested []bool
	free      []int32
	deploys   int
	failovers int
	// arrived says, in a multi-job run, whether each job has arrived (its
	// submitAtMs): the tasks of a job ask for slots from then on (nil:
	// one job, there from the start).
	arrived []bool
}

func newEagerPolicy(e *engine) *eagerPolicy {
	job := e.topo.Job()
	p := &eagerPolicy{e: e, profile: make([]resource.Profile, job.NumVertices()), requested: make([]bool, len(e.model.tasks))}
	for jv := range topology.JobVertexID(job.NumVertices()) {
		p.profile[jv] = job.Vertex(jv).Resources
	}
	for i := range e.slots {
		p.free = append(p.free, int32(i))
	}
	e.model.onRequestable = p.request
	return p
}

// arrivals makes the jobs of a multi-job run arrive at their submission
// times: those of 0 ms at once, the others by calendar events
// (eagerArrival, in job order among themselves at one instant).
func (p *eagerPolicy) arrivals(jobs []runfile.Job) {
	p.arrived = make([]bool, len(jobs))
	for i, j := range jobs {
		if at := j.Job.Submission().SubmitAt; at > 0 {
			p.e.model.cal.add(timed{at: at, order: uint64(i), kind: eagerArrival, task: int32(i)})
			continue
		}
		p.arrived[i] = true
	}
}

// arrive lets job i's tasks ask for slots: those whose inputs allow it ask
// now.
func (p *eagerPolicy) arrive(i int32) {
	p.arrived[i] = true
	for v := p.e.set.offsets[i]; v < p.e.set.offsets[i+1]; v++ {
		if p.e.model.requestable(v) {
			p.request(v)
		}
	}
}

func (p *eagerPolicy) request(v int32) {
	if p.requested[v] {
		return
	}
	if p.arrived != nil {
		if i, _ := p.e.set.of(v); !p.arrived[i] {
			return // it asks when its job arrives
		}
	}
	p.requested[v] = true
	p.e.record(runfile.Request, v, runfile.NoSlot)
	p.pending = append(p.pending, v)
}

func (p *eagerPolicy) start() {
	for v := range p.e.model.tasks {
		if p.e.model.requestable(int32(v)) {
			p.request(int32(v))
		}
	}
}

// afterEvent hands free slots to pending tasks in random order.
func (p *eagerPolicy) afterEvent() {
	for len(p.free) > 0 && len(p.pending) > 0 {
		p.e.rng.Shuffle(len(p.pending), func(i, j int) { p.pending[i], p.pending[j] = p.pending[j], p.pending[i] })
		progress := false
		for i := 0; i < len(p.pending) && len(p.free) > 0; {
			v := p.pending[i]
			slot := p.takeSlot(p.profile[p.e.model.tasks[v].jobVertex])
			if slot < 0 {
				i++
				continue
			}
			p.pending[i] = p.pending[len(p.pending)-1]
			p.pending = p.pending[:len(p.pending)-1]
			p.deploys++
			p.e.deploy(v, slot, false)
			progress = true
		}
		if !progress {
			return
		}
	}
}

// takeSlot removes and returns a random free slot that fits, or -1.
func (p *eagerPolicy) takeSlot(need resource.Profile) int32 {
	start := p.e.rng.IntN(len(p.free))
	for k := range len(p.free) {
		i := (start + k) % len(p.free)
		slot := p.free[i]
		if p.e.cfg.Matching.Serves(p.e.slotProfiles[slot], need) {
			p.free[i] = p.free[len(p.free)-1]
			p.free = p.free[:len(p.free)-1]
			return slot
		}
	}
	return -1
}

func (p *eagerPolicy) finished(v int32) {
	p.free = append(p.free, p.e.model.slot(v))
}

func (p *eagerPolicy) failed(v, slot int32) {
	p.failovers++
	t := &p.e.model.runs[v]
	// the model reset the task; give its slot back and let it ask again
	p.free = append(p.free, slot)
	p.requested[v] = false
	t.attempt++
	if p.e.model.requestable(v) {
		p.request(v)
	}
}

func (p *eagerPolicy) tick()                               {}
func (p *eagerPolicy) nextDeadline() (time.Duration, bool) { return 0, false }
func (p *eagerPolicy) stopped() (error, bool)              { return nil, false }
func (p *eagerPolicy) waitingForSlots() []int32            { return append([]int32(nil), p.pending...) }

func (p *eagerPolicy) done() bool { return true }

func (p *eagerPolicy) stats(r *Result) {
	r.RegionsScheduled, r.Failovers, r.RegionRestarts = p.deploys, p.failovers, 0
}
