package multijob_test

import (
	"fmt"
	"slices"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// Two jobs submitted at the same instant to a priority queue of 4 slots,
// the low-priority one first: the admission decides once both are in,
// so the high-priority job deploys at 0 ms, and the other gets the slots
// the first gives back as its tasks finish.
func Example() {
	job, err := topology.NewBuilder("fan").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 4}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 2}).
		Connect("src", "sink", exchange.Hash).
		Build()
	if err != nil {
		panic(err)
	}
	slots := make([]slotpool.Slot, 4)
	for i := range slots {
		slots[i] = slotpool.Slot{ID: slotpool.SlotID(i)}
	}
	s, err := multijob.New(multijob.Config{Admission: admission.Config{Slots: slots, DefaultPolicy: admission.Priority}})
	if err != nil {
		panic(err)
	}
	epoch := time.Unix(0, 0)
	at := func(ms int) time.Time { return epoch.Add(time.Duration(ms) * time.Millisecond) }
	for _, spec := range []multijob.JobSpec{
		{JobSpec: admission.JobSpec{Name: "adhoc", Priority: 1000}},
		{JobSpec: admission.JobSpec{Name: "etl", Priority: 9000}},
	} {
		spec.Regions = region.FromJob(job, exchange.AllPipelined) // one region of 4 slots
		if err := s.Submit(at(0), spec); err != nil {
			panic(err)
		}
	}
	print := func(ms int, rd multijob.Ready) {
		for _, jr := range rd.Jobs {
			if len(jr.Deploy) == 0 {
				continue
			}
			topo := s.Regions(jr.Job).Topology()
			var tasks []string
			var slots []int
			for _, d := range jr.Deploy {
				tasks = append(tasks, topo.VertexName(d.Task))
				slots = append(slots, int(d.Slot))
			}
			slices.Sort(tasks)
			slices.Sort(slots)
			fmt.Printf("%d ms: %s deploys %v in slots %v\n", ms, jr.Job, tasks, slices.Compact(slots))
		}
		for _, end := range rd.Ended {
			fmt.Printf("%d ms: %s %v\n", ms, end.Job, end.Outcome)
		}
	}
	rd := s.Ready()
	print(0, rd)
	for _, jr := range rd.Jobs { // the tasks deployed all finish at 100 ms
		for _, d := range jr.Deploy {
			if err := s.TaskFinished(at(100), jr.Job, d.Task, d.Attempt); err != nil {
				panic(err)
			}
		}
	}
	print(100, s.Ready())
	// Output:
	// 0 ms: etl deploys [sink#0 sink#1 src#0 src#1 src#2 src#3] in slots [0 1 2 3]
	// 100 ms: adhoc deploys [sink#0 sink#1 src#0 src#1 src#2 src#3] in slots [0 1 2 3]
	// 100 ms: etl finished
}
