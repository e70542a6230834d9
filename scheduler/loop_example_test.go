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

// The Ready loop of the package documentation, as written, for a runtime
// whose tasks finish in the order they started: src(2) -hash, blocking->
// sink(1) on two slots. The input that finishes the job (sink#0 finished)
// also releases its last slot; the loop reads that Ready too.
func Example_readyLoop() {
	job, err := topology.NewBuilder("two-vertex").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1}).
		Connect("src", "sink", exchange.Hash).
		Build()
	if err != nil {
		panic(err)
	}
	now := time.Unix(0, 0)
	var running []scheduler.Deployment // the runtime: tasks started and not yet reported

	run := func() error {
		s, err := scheduler.New(region.FromJob(job, exchange.AllBlocking), scheduler.Config{})
		if err != nil {
			return err
		}
		if err := s.Offer(now, slotpool.Slots(2)...); err != nil {
			return err
		}
		if err := s.Start(now); err != nil {
			return err
		}
		for {
			rd := s.Ready() // what the last input caused
			for _, t := range rd.Cancel {
				fmt.Println("cancel", s.TaskName(t.Task))
			}
			for _, r := range rd.Released {
				fmt.Println("slot", r.Slot, "released")
			}
			for _, d := range rd.Deploy {
				fmt.Println("deploy", s.TaskName(d.Task), "in slot", d.Slot)
				running = append(running, d)
			}
			if ended, err := rd.Job.Ended(); ended {
				return err // nil: finished; else why it failed (a *RegionError)
			}
			// Wait for the next thing the runtime observes, and report it:
			// here the oldest running task finishes.
			d := running[0]
			running = running[1:]
			fmt.Println(s.TaskName(d.Task), "finished")
			if err := s.TaskFinished(now, d.Task, d.Attempt); err != nil {
				return err
			}
		}
	}
	fmt.Println("job ended, error:", run())
	// Output:
	// deploy src#0 in slot 2
	// deploy src#1 in slot 1
	// src#0 finished
	// slot 2 released
	// src#1 finished
	// slot 1 released
	// deploy sink#0 in slot 1
	// sink#0 finished
	// slot 1 released
	// job ended, error: <nil>
}
