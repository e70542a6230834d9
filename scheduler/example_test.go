package scheduler_test

import (
	"fmt"
	"time"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// A two-vertex batch job, src(2) -hash, blocking-> sink(1), on two slots:
// the sources run first, the sink once both finished; the sink fails once
// and runs again with attempt 1. After every input the runtime drains the
// scheduler's Ready and applies it: cancels first, then deploys.
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
	s, err := scheduler.New(rs, scheduler.Config{})
	if err != nil {
		panic(err) // a Config{} is valid
	}
	now := time.Unix(0, 0)
	attempt := map[scheduler.TaskID]scheduler.Attempt{} // what the runtime runs

	// apply is the runtime's side of the Ready loop.
	apply := func(rd scheduler.Ready) {
		for _, r := range rd.Restarted { // a failover, for the story
			fmt.Printf("  %s failed: restart regions %v\n", s.TaskName(r.Failed), r.Regions)
		}
		for _, c := range rd.Cancel {
			fmt.Printf("  cancel %s attempt %d\n", topo.VertexName(c.Task), c.Attempt)
		}
		for _, d := range rd.Deploy {
			attempt[d.Task] = d.Attempt
			fmt.Printf("  deploy %s attempt %d in slot %d\n", topo.VertexName(d.Task), d.Attempt, d.Slot)
		}
		if len(rd.PartitionsReleased) > 0 {
			fmt.Printf("  partitions %v may be deleted\n", rd.PartitionsReleased)
		}
		if rd.Job != nil {
			fmt.Printf("  job %v\n", rd.Job.State)
		}
	}
	step := func(what string, f func() error) {
		fmt.Println(what)
		if err := f(); err != nil {
			fmt.Println("  error:", err)
		}
		apply(s.Ready())
	}
	name := func(n string) scheduler.TaskID {
		v, err := topo.ParseVertexName(n)
		if err != nil {
			panic(err)
		}
		return v
	}

	step("offer 2 slots", func() error { return s.Offer(now, slotpool.Slot{ID: 1}, slotpool.Slot{ID: 2}) })
	step("start", func() error { return s.Start(now) })
	for _, n := range []string{"src#0", "src#1"} {
		v := name(n)
		step(n+" finished", func() error { return s.TaskFinished(now, v, attempt[v]) })
	}
	sink := name("sink#0")
	step("sink#0 failed", func() error { return s.TaskFailed(now, sink, attempt[sink]) })
	step("sink#0 attempt 0 finished (late)", func() error { return s.TaskFinished(now, sink, 0) })
	step("sink#0 finished", func() error { return s.TaskFinished(now, sink, attempt[sink]) })
	st := s.Status()
	fmt.Printf("%v, %+v, %d free slots\n", st.State, st.Stats, st.Pool.Free)
	// Output:
	// offer 2 slots
	// start
	//   deploy src#0 attempt 0 in slot 2
	//   deploy src#1 attempt 0 in slot 1
	//   job running
	// src#0 finished
	// src#1 finished
	//   deploy sink#0 attempt 0 in slot 1
	// sink#0 failed
	//   sink#0 failed: restart regions [2]
	//   deploy sink#0 attempt 1 in slot 1
	// sink#0 attempt 0 finished (late)
	// sink#0 finished
	//   partitions [0 1] may be deleted
	//   job finished
	// finished, {RegionsDeployed:4 Failovers:1 RegionRestarts:1 RegionsShared:0}, 2 free slots
}
