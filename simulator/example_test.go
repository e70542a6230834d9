package simulator_test

import (
	"fmt"
	"os"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// FLIP-119's example in pointwise mode on 2 slots: two pipelined regions
// of 2 slots each run one after the other, then the four D subtasks.
// The eager baseline on the same job in all-pipelined mode with 4 slots
// gives them to A and B, and C can never run.
func ExampleRun() {
	f, err := os.Open("../examples/jobs/flip119.json")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	job, err := topology.Decode(f)
	if err != nil {
		panic(err)
	}

	res, err := simulator.Run(simulator.Config{
		Regions: region.FromJob(job, exchange.PointwisePipelinedOnly),
		Cluster: []resource.Count{{Profile: resource.Unknown, N: 2}},
		Seed:    1,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Verdict, res.Makespan, res.Utilization, res.RegionsScheduled)
	fmt.Println(res) // the verdict line

	res, err = simulator.Run(simulator.Config{
		Regions: region.FromJob(job, exchange.AllPipelined),
		Cluster: []resource.Count{{Profile: resource.Unknown, N: 4}},
		Policy:  simulator.EagerPolicy,
		Seed:    2,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Reason)
	// Output:
	// finished 4s 1 6
	// finished: all 12 tasks finished at 4000 ms
	// deadlock: at 1000 ms B#0, B#1, C#0, C#3 hold slots while waiting; C#1, C#2 wait for a slot
}
