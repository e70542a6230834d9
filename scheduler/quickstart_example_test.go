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

// The README's quick tour of the Ready loop: a job of one source and one
// sink joined by a blocking edge, on two slots. Every input is followed
// by Ready, whose cancels are applied before its deployments.
func Example_quickStart() {
	job, err := topology.NewBuilder("quick").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1}).
		Connect("src", "sink", exchange.Hash).
		Build()
	if err != nil {
		panic(err)
	}
	rs := region.FromJob(job, exchange.AllBlocking)
	now := time.Unix(0, 0)

	s, err := scheduler.New(rs, scheduler.Config{})
	if err != nil {
		panic(err)
	}
	s.Offer(now, slotpool.Slot{ID: 1}, slotpool.Slot{ID: 2})
	s.Start(now) // the source regions ask for slots
	for range 2 {
		rd := s.Ready()
		for _, c := range rd.Cancel {
			fmt.Println("stop", s.TaskName(c.Task))
		}
		var v scheduler.TaskID
		var attempt scheduler.Attempt
		for _, d := range rd.Deploy {
			fmt.Printf("start %s in slot %d\n", s.TaskName(d.Task), d.Slot)
			v, attempt = d.Task, d.Attempt
		}
		s.TaskFinished(now, v, attempt) // then TaskFailed, SlotLost, Tick at rd.Deadline, ...
	}
	fmt.Println(s.Status().State)
	// Output:
	// start src#0 in slot 2
	// start sink#0 in slot 2
	// finished
}
