package scheduler_test

import (
	"fmt"
	"time"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/strategy"
	"github.com/regionsched/regionsched/topology"
)

// printer is a tiny Deployer: it prints what the scheduler asks of the
// runtime and remembers the attempt each task runs.
type printer struct {
	topo    *topology.ExecutionTopology
	attempt map[topology.ExecutionVertexID]strategy.Attempt
}

func (p *printer) Deploy(v topology.ExecutionVertexID, a strategy.Attempt, slot slotpool.SlotID) {
	p.attempt[v] = a
	fmt.Printf("  deploy %s attempt %d in slot %d\n", p.topo.VertexName(v), a, slot)
}

func (p *printer) Cancel(v topology.ExecutionVertexID, a strategy.Attempt) {
	fmt.Printf("  cancel %s attempt %d\n", p.topo.VertexName(v), a)
}

// A two-vertex batch job, src(2) -hash, blocking-> sink(1), on two slots:
// the sources run first, the sink once both finished; the sink fails once
// and runs again with attempt 1.
func Example() {
	job, err := topology.NewBuilder("two-vertex").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1}).
		Connect("src", "sink", exchange.Hash).
		Build()
	if err != nil {
		panic(err)
	}
	rs := region.FromJob(job, exchange.AllBlocking)
	topo := rs.Topology()
	p := &printer{topo: topo, attempt: map[topology.ExecutionVertexID]strategy.Attempt{}}
	s := scheduler.New(rs, p, scheduler.Config{})
	now := time.Unix(0, 0)
	name := func(n string) topology.ExecutionVertexID {
		v, err := topo.ParseVertexName(n)
		if err != nil {
			panic(err)
		}
		return v
	}
	step := func(what string, f func() error) {
		fmt.Println(what)
		if err := f(); err != nil {
			fmt.Println("  error:", err)
		}
	}

	_ = s.Offer(now, slotpool.Slot{ID: 1}, slotpool.Slot{ID: 2})
	step("start", func() error { return s.Start(now) })
	for _, n := range []string{"src#0", "src#1"} {
		v := name(n)
		step(n+" finished", func() error { return s.TaskFinished(now, v, p.attempt[v]) })
	}
	sink := name("sink#0")
	step("sink#0 failed", func() error { return s.TaskFailed(now, sink, p.attempt[sink]) })
	step("sink#0 attempt 0 finished (late)", func() error { return s.TaskFinished(now, sink, 0) })
	step("sink#0 finished", func() error { return s.TaskFinished(now, sink, p.attempt[sink]) })
	fmt.Printf("%v, %+v\n", s.State(), s.Stats())
	// Output:
	// start
	//   deploy src#0 attempt 0 in slot 2
	//   deploy src#1 attempt 0 in slot 1
	// src#0 finished
	// src#1 finished
	//   deploy sink#0 attempt 0 in slot 1
	// sink#0 failed
	//   deploy sink#0 attempt 1 in slot 1
	// sink#0 attempt 0 finished (late)
	// sink#0 finished
	// finished, {RegionsDeployed:4 Failovers:1 RegionRestarts:1}
}
