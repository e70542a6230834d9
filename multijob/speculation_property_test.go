package multijob_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/inspect"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// TestPropertySpeculation runs random mixes of 2 to 5 jobs with
// stragglers and speculation on a small cluster of one or two slot
// profiles, under every queue policy, the queue capped by maxSlots in
// half of them, and watches the admission's
// messages from outside: a spy between the jobs' pools and the admission
// keeps its own ledger of every job's regular asks (asked, granted,
// withdrawn). Whenever the admission grants a speculative ask, no regular
// ask of any running job may wait that the granted slot could serve. After
// every Ready the admission's invariants hold, every job ends, and every
// slot is back at the end.
func TestPropertySpeculation(t *testing.T) {
	const mixes = 1000
	totals := struct{ started, won, granted int }{}
	for seed := uint64(1); seed <= mixes; seed++ {
		st, won, granted := runSpecMix(t, seed, false)
		totals.started += st
		totals.won += won
		totals.granted += granted
	}
	// The mixes exercise what they are about: attempts are granted slots
	// by the admission, and some win.
	require.Positive(t, totals.granted, "no speculative ask was ever granted")
	require.Positive(t, totals.won, "no speculative attempt ever won")
	t.Logf("%d mixes: %d speculative slots granted, %d attempts started, %d won", mixes, totals.granted, totals.started, totals.won)
}

// TestPropertySpeculationHybrid runs the mixes of TestPropertySpeculation
// with half the jobs in all-hybrid-full mode: their consumers go into
// their running producers' slots, their tasks with full hybrid outputs
// are speculated, and a consumer's finish before its hybrid producers'
// is refused and reported again later. The same checks hold.
func TestPropertySpeculationHybrid(t *testing.T) {
	const mixes = 1000
	var granted, won int
	sharedDeploys = 0
	for seed := uint64(1); seed <= mixes; seed++ {
		_, w, g := runSpecMix(t, seed, true)
		granted += g
		won += w
	}
	require.Positive(t, sharedDeploys, "no consumer ever went into its producers' slots")
	require.Positive(t, granted, "no speculative ask was ever granted")
	require.Positive(t, won, "no speculative attempt ever won")
}

// sharedDeploys counts the deployments into slots of hybrid producers
// (Deployment.Shared) of the mixes run.
var sharedDeploys int

// specRunning is a task attempt the runtime runs.
type specRunning struct {
	job     string
	task    scheduler.TaskID
	attempt scheduler.Attempt
	end     time.Duration
}

// runSpecMix runs one mix and returns the speculative attempts started
// and won, and the speculative slots granted.
func runSpecMix(t *testing.T, seed uint64, hybrid bool) (started, won, granted int) {
	rng := rand.New(rand.NewPCG(seed, 0x5bec))
	profiles := []resource.Profile{smallP}
	if rng.IntN(2) == 0 {
		profiles = append(profiles, largeP)
	}
	var slots []slotpool.Slot
	n := 3 + rng.IntN(6)
	for i := range n {
		slots = append(slots, slotpool.Slot{ID: slotpool.SlotID(i), Profile: profiles[rng.IntN(len(profiles))],
			Node: fmt.Sprintf("node%d", i/2)})
	}
	slots[0].Profile = profiles[len(profiles)-1]
	policy := admission.Policy(rng.IntN(4))
	// Half the mixes cap the queue below the cluster (from a stream of
	// their own): speculative slots count against its maxSlots too.
	maxSlots := 0
	if capRNG := rand.New(rand.NewPCG(seed, 0x5bed)); capRNG.IntN(2) == 0 {
		maxSlots = 2 + capRNG.IntN(n-2)
	}
	q, err := admission.New(admission.Config{Slots: slots, DefaultPolicy: policy,
		Queues: []admission.QueueConfig{{Name: "root.default", Policy: policy, MaxSlots: maxSlots}}})
	require.NoError(t, err)
	spy := &specSpy{Cluster: q, ports: map[admission.JobID]*spyPort{}}
	s, err := multijob.New(multijob.Config{Cluster: spy})
	require.NoError(t, err)

	type jobInfo struct {
		durs []time.Duration
		slow map[scheduler.TaskID]time.Duration
		rs   *region.Regions
	}
	jobs := map[string]*jobInfo{}
	var arrivals []struct {
		at   time.Duration
		spec multijob.JobSpec
	}
	nJobs := 2 + rng.IntN(4)
	for j := range nJobs {
		name := fmt.Sprintf("j%d", j)
		b := topology.NewBuilder(name)
		mode := exchange.AllBlocking
		if hybrid && rng.IntN(2) == 0 {
			mode = exchange.AllHybridFull
		}
		nv := 1 + rng.IntN(3)
		info := &jobInfo{slow: map[scheduler.TaskID]time.Duration{}}
		for v := range nv {
			d := time.Duration(100+rng.IntN(900)) * time.Millisecond
			b.AddVertex(topology.JobVertex{ID: fmt.Sprintf("v%d", v), Parallelism: 2 + rng.IntN(3),
				Resources: profiles[rng.IntN(len(profiles))], Duration: d})
			info.durs = append(info.durs, d)
			if v > 0 {
				// A pipelined edge makes regions of several slots, asked
				// for all or nothing: regular asks that wait beside a free
				// slot.
				pt := exchange.Blocking
				if rng.IntN(2) == 0 {
					pt = exchange.PipelinedBounded
				}
				if mode == exchange.AllHybridFull && pt == exchange.Blocking {
					b.Connect(fmt.Sprintf("v%d", v-1), fmt.Sprintf("v%d", v), exchange.Hash) // hybrid
				} else {
					b.ConnectPinned(fmt.Sprintf("v%d", v-1), fmt.Sprintf("v%d", v), exchange.Hash, pt)
				}
			}
		}
		g, err := b.Build()
		require.NoError(t, err)
		info.rs = region.FromJob(g, mode)
		for v := range scheduler.TaskID(info.rs.Topology().NumExecutionVertices()) {
			if rng.IntN(5) == 0 { // a straggler: 5 to 10 times its duration
				info.slow[v] = info.durs[info.rs.Topology().JobVertexOf(v)] * time.Duration(5+rng.IntN(6))
			}
		}
		jobs[name] = info
		sp := scheduler.DefaultSpeculation()
		sp.BaselineLowerBound = time.Duration(rng.IntN(3)) * 100 * time.Millisecond
		sp.CheckInterval = 100 * time.Millisecond
		sp.MaxConcurrentExecutions = 2 + rng.IntN(2)
		sp.BlockSlowNodeDuration = time.Duration(rng.IntN(2)) * time.Second
		if sp.ValidateJob(info.rs) != nil {
			sp = scheduler.Speculation{} // no task of it may be speculated
		}
		arrivals = append(arrivals, struct {
			at   time.Duration
			spec multijob.JobSpec
		}{time.Duration(rng.IntN(3)) * 500 * time.Millisecond,
			multijob.JobSpec{JobSpec: admission.JobSpec{Name: name, Priority: 1000 * (1 + rng.IntN(9))}, Regions: info.rs, Speculation: sp}})
	}
	slices.SortStableFunc(arrivals, func(a, b struct {
		at   time.Duration
		spec multijob.JobSpec
	}) int {
		return int(a.at - b.at)
	})

	var running []specRunning
	now := time.Duration(0)
	at := func() time.Time { return mixT0.Add(now) }
	ended := map[string]bool{}
	var deadline time.Time
	for steps := 0; len(ended) < nJobs; steps++ {
		require.Less(t, steps, 100000, "seed %d: the mix never ends", seed)
		require.Less(t, now, time.Hour, "seed %d: the mix runs past an hour", seed)
		for len(arrivals) > 0 && arrivals[0].at <= now {
			require.NoError(t, s.Submit(at(), arrivals[0].spec), "seed %d", seed)
			arrivals = arrivals[1:]
		}
		var ends []specRunning
		running = slices.DeleteFunc(running, func(r specRunning) bool {
			if r.end <= now {
				ends = append(ends, r)
				return true
			}
			return false
		})
		for _, r := range ends {
			if !ended[r.job] {
				err := s.TaskFinished(at(), r.job, r.task, r.attempt) // a loser's late finish may be refused
				if errors.Is(err, strategy.ErrEarlyFinish) {
					// Its hybrid producers have not finished: it reports again.
					r.end = now + 50*time.Millisecond
					running = append(running, r)
				}
			}
		}
		if !deadline.IsZero() && !deadline.After(at()) {
			require.NoError(t, s.Tick(at()))
		}
		rd := s.Ready()
		require.Empty(t, spy.violations, "seed %d", seed)
		require.NoError(t, inspect.CheckInvariants(q), "seed %d at %v", seed, now)
		for _, jr := range rd.Jobs {
			for _, c := range jr.Cancel {
				running = slices.DeleteFunc(running, func(r specRunning) bool {
					return r.job == jr.Job && r.task == c.Task && r.attempt == c.Attempt
				})
			}
		}
		for _, e := range rd.Ended {
			require.NotEqual(t, multijob.Failed, e.Outcome, "seed %d: %s: %v", seed, e.Job, e.Err)
			ended[e.Job] = true
			running = slices.DeleteFunc(running, func(r specRunning) bool { return r.job == e.Job })
		}
		for _, jr := range rd.Jobs {
			info := jobs[jr.Job]
			won += len(jr.Won)
			for _, d := range jr.Deploy {
				dur := info.durs[info.rs.Topology().JobVertexOf(d.Task)]
				if slow, ok := info.slow[d.Task]; ok && !d.Speculative && d.Attempt == 0 {
					dur = slow
				}
				if d.Speculative {
					started++
				}
				if d.Shared {
					sharedDeploys++
				}
				if !ended[jr.Job] {
					running = append(running, specRunning{job: jr.Job, task: d.Task, attempt: d.Attempt, end: now + dur})
				}
			}
		}
		deadline = rd.Deadline
		next := time.Duration(-1)
		see := func(d time.Duration) {
			if next < 0 || d < next {
				next = d
			}
		}
		for _, r := range running {
			see(r.end)
		}
		if len(arrivals) > 0 {
			see(arrivals[0].at)
		}
		if !deadline.IsZero() {
			see(max(deadline.Sub(mixT0), now))
		}
		if next < 0 {
			break
		}
		now = max(next, now)
	}
	require.Len(t, ended, nJobs, "seed %d: every job ends", seed)
	for _, id := range spy.order {
		require.Zero(t, spy.ports[id].Granted(), "seed %d: a job that ended holds slots", seed)
	}
	require.Equal(t, 0, speculativeAsks(t, q), "seed %d: a speculative ask outlived its job", seed)
	return started, won, spy.specGrants
}

// specSpy sits between the jobs' pools and the admission: it forwards
// everything, keeps a ledger of each job's regular asks from the
// messages, and checks every speculative grant against it.
type specSpy struct {
	admission.Cluster
	ports      map[admission.JobID]*spyPort
	order      []admission.JobID
	pending    []admission.JobID
	specGrants int
	violations []string
}

// GrantsSpeculative: the spy forwards speculative asks to Queues, which
// grants them.
func (c *specSpy) GrantsSpeculative() bool { return true }

// Submit wraps the job's port.
func (c *specSpy) Submit(now time.Time, spec admission.JobSpec) (admission.JobPort, error) {
	p, err := c.Cluster.Submit(now, spec)
	if err != nil {
		return nil, err
	}
	sp := &spyPort{JobPort: p, c: c, regular: map[slotpool.AskID][]resource.Count{}, spec: map[slotpool.AskID]bool{}}
	c.ports[p.ID()] = sp
	c.order = append(c.order, p.ID())
	return sp, nil
}

// Decide decides and takes what the admission sent at once.
func (c *specSpy) Decide(now time.Time) {
	c.Cluster.Decide(now)
	c.collect()
}

// Pending returns the jobs the spy holds messages for.
func (c *specSpy) Pending() []admission.JobID {
	c.collect()
	ids := c.pending
	c.pending = nil
	return ids
}

// collect takes every message the admission has for the pools: the
// regular grants are booked first (a decision serves every regular ask
// it can before any speculative one), then each speculative grant is
// checked against the regular asks that still wait.
func (c *specSpy) collect() {
	type specGrant struct {
		job  string
		slot slotpool.Slot
	}
	var specs []specGrant
	for _, id := range c.Cluster.Pending() {
		p := c.ports[id]
		msgs := p.JobPort.Ready()
		if len(msgs) == 0 {
			continue
		}
		if len(p.buf) == 0 {
			c.pending = append(c.pending, id)
		}
		p.buf = append(p.buf, msgs...)
		for _, m := range msgs {
			g, ok := m.(slotpool.Grant)
			if !ok {
				continue
			}
			if p.spec[g.Ask] {
				delete(p.spec, g.Ask)
				for _, sl := range g.Slots {
					specs = append(specs, specGrant{job: fmt.Sprint(id), slot: sl})
				}
				continue
			}
			if left, ok := p.regular[g.Ask]; ok {
				for _, sl := range g.Slots {
					for i := range left {
						if left[i].N > 0 && resource.FitsEveryDimension.Serves(sl.Profile, left[i].Profile) {
							left[i].N--
							break
						}
					}
				}
				if sumLeft(left) == 0 {
					delete(p.regular, g.Ask)
				}
			}
		}
	}
	for _, sg := range specs {
		c.specGrants++
		for _, id := range c.order {
			p := c.ports[id]
			if p.State().Terminal() {
				continue
			}
			for ask, left := range p.regular {
				for _, l := range left {
					if l.N > 0 && resource.FitsEveryDimension.Serves(sg.slot.Profile, l.Profile) {
						c.violations = append(c.violations, fmt.Sprintf("job %s got speculative slot %d (%v) while ask %d of job %d waits for %v",
							sg.job, sg.slot.ID, sg.slot.Profile, ask, id, left))
					}
				}
			}
		}
	}
}

func sumLeft(cs []resource.Count) int {
	n := 0
	for _, c := range cs {
		n += c.N
	}
	return n
}

// spyPort is a job's port seen through the spy.
type spyPort struct {
	admission.JobPort
	c       *specSpy
	regular map[slotpool.AskID][]resource.Count // what each regular ask still lacks
	spec    map[slotpool.AskID]bool             // speculative asks not granted
	buf     []slotpool.FromAdmission
}

// Handle books the pool's asks and withdrawals, and forwards the message.
func (p *spyPort) Handle(now time.Time, msg slotpool.ToAdmission) error {
	switch m := msg.(type) {
	case slotpool.Ask:
		if m.Speculative {
			p.spec[m.ID] = true
		} else {
			p.regular[m.ID] = m.Gang.Counts()
		}
	case slotpool.AskRelease:
		delete(p.regular, m.ID)
		delete(p.spec, m.ID)
	}
	return p.JobPort.Handle(now, msg)
}

// Pending reports whether the spy holds messages for the pool.
func (p *spyPort) Pending() bool {
	p.c.collect()
	return len(p.buf) > 0
}

// Ready hands the pool what the spy holds for it.
func (p *spyPort) Ready() []slotpool.FromAdmission {
	p.c.collect()
	out := p.buf
	p.buf = nil
	return out
}

// speculativeAsks returns how many speculative asks wait in q.
func speculativeAsks(t *testing.T, q *admission.Queues) int {
	t.Helper()
	n, ok := inspect.SpeculativeAsks(q)
	require.True(t, ok, "an in-process admission")
	return n
}
