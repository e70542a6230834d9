package multijob_test

import (
	"fmt"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// A node is lost under a running region: RemoveSlots takes its slot out
// of the cluster, the region's task in it fails over, and the region runs
// again in the slot left; the slot is never granted again until
// AddSlots brings it back.
func ExampleScheduler_RemoveSlots() {
	s, err := multijob.New(multijob.Config{Admission: admission.Config{Slots: slotpool.Slots(2)}})
	if err != nil {
		panic(err)
	}
	job, err := topology.NewBuilder("etl").AddVertex(topology.JobVertex{ID: "scan", Parallelism: 1}).Build()
	if err != nil {
		panic(err)
	}
	now := time.Unix(0, 0)
	if err := s.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "etl"}, Regions: region.FromJob(job, exchange.AllBlocking)}); err != nil {
		panic(err)
	}
	show := func(rd multijob.Ready) {
		for _, jr := range rd.Jobs {
			for _, d := range jr.Deploy {
				fmt.Printf("%s: task %d attempt %d in slot %d\n", jr.Job, d.Task, d.Attempt, d.Slot)
			}
		}
	}
	show(s.Ready())
	if err := s.RemoveSlots(now.Add(time.Second), 1); err != nil {
		panic(err)
	}
	show(s.Ready())
	fmt.Println("capacity:", s.Cluster().(*admission.Queues).Capacity())
	// Output:
	// etl: task 0 attempt 0 in slot 1
	// etl: task 0 attempt 1 in slot 2
	// capacity: [1 x unknown]
}
