package regiontest_test

import (
	"fmt"
	"os"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/regiontest"
	"github.com/regionsched/regionsched/topology"
)

// Verify checks FLIP-119's example job statically and by simulating it
// for 10 seeds: all-pipelined, its one region of 12 subtasks needs 4
// slots at once.
func ExampleVerify() {
	f, err := os.Open("../examples/jobs/flip119.json")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	job, err := topology.Decode(f)
	if err != nil {
		panic(err)
	}

	rep := regiontest.Verify(job, exchange.AllPipelined, regiontest.Slots(4), regiontest.Seeds(10))
	fmt.Println("4 slots deadlock-free:", rep.DeadlockFree(), "- runs:", len(rep.Runs), "- makespan:", rep.Runs[0].Makespan)

	rep = regiontest.Verify(job, exchange.AllPipelined, regiontest.Slots(3))
	fmt.Println("3 slots deadlock-free:", rep.DeadlockFree(), "- minimum slots:", rep.Static.MinimumSlots, "- region:", rep.Static.Region)

	rep = regiontest.Verify(job, exchange.PointwisePipelinedOnly, regiontest.Slots(2), regiontest.Failures("C#3@500"))
	fmt.Println("pointwise, 2 slots, C#3 fails:", rep.DeadlockFree(), "- restarts:", rep.Runs[0].Failovers)
	// Output:
	// 4 slots deadlock-free: true - runs: 10 - makespan: 1s
	// 3 slots deadlock-free: false - minimum slots: 4 - region: 0
	// pointwise, 2 slots, C#3 fails: true - restarts: 1
}
