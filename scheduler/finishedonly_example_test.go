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

// How a runtime wires the hybrid inputs of a consumer it deploys under
// speculative execution: src(2) -hash-> sink(1) in all-hybrid-full mode.
// Every src may get a speculative attempt, so the sink, deployed as soon
// as both src are, reads their results only from the winners once they
// finished; without speculation it reads them live.
func ExampleScheduler_ReadsFinishedOnly() {
	job, err := topology.NewBuilder("hybrid").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1}).
		Connect("src", "sink", exchange.Hash).
		Build()
	if err != nil {
		panic(err)
	}
	rs := region.FromJob(job, exchange.AllHybridFull)
	topo := rs.Topology()
	for _, spec := range []scheduler.Speculation{{}, scheduler.DefaultSpeculation()} {
		s, err := scheduler.New(rs, scheduler.Config{Speculation: spec})
		if err != nil {
			panic(err)
		}
		now := time.Unix(0, 0)
		_ = s.Offer(now, slotpool.Slots(3)...)
		_ = s.Start(now)
		fmt.Printf("speculation %v:\n", spec.Enabled)
		for _, d := range s.Ready().Deploy {
			if topo.JobVertexOf(d.Task) != 1 { // the sink's inputs
				continue
			}
			for _, e := range job.InEdges(1) {
				first, n := topo.GroupPartitions(topo.ConsumedGroup(e, topo.SubtaskIndex(d.Task)))
				for p := first; p < first+topology.ResultPartitionID(n); p++ {
					how := "live, while it is written"
					if s.ReadsFinishedOnly(p) {
						how = "from the winner, once finished"
					}
					fmt.Printf("  %s reads %s's result %s\n", s.TaskName(d.Task), s.TaskName(topo.PartitionProducer(p)), how)
				}
			}
		}
	}
	// Output:
	// speculation false:
	//   sink#0 reads src#0's result live, while it is written
	//   sink#0 reads src#1's result live, while it is written
	// speculation true:
	//   sink#0 reads src#0's result from the winner, once finished
	//   sink#0 reads src#1's result from the winner, once finished
}
