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

// Two jobs on a cluster of 4 slots under priority, in a queue that
// preempts at once: a low-priority job holds every slot; a high-priority
// job that arrives later claims what it needs, two of the low job's slots
// are revoked (its region is cancelled and waits to run again) and go to
// the high job, in the same Ready.
func ExampleScheduler_preemption() {
	s, err := multijob.New(multijob.Config{Admission: admission.Config{Slots: slotpool.Slots(4), Queues: []admission.QueueConfig{
		{Name: "root.default", Policy: admission.Priority, Preempt: true},
	}}})
	if err != nil {
		panic(err)
	}
	now := time.Unix(0, 0)
	// submit submits a job of one region of n slots, src(1) -hash,
	// pipelined-> work(n).
	submit := func(name string, priority, n int) {
		job, err := topology.NewBuilder(name).
			AddVertex(topology.JobVertex{ID: "src", Parallelism: 1}).
			AddVertex(topology.JobVertex{ID: "work", Parallelism: n}).
			Connect("src", "work", exchange.Hash).
			Build()
		if err != nil {
			panic(err)
		}
		spec := multijob.JobSpec{JobSpec: admission.JobSpec{Name: name, Priority: priority},
			Regions: region.FromJob(job, exchange.AllPipelined)}
		if err := s.Submit(now, spec); err != nil {
			panic(err)
		}
	}
	show := func(rd multijob.Ready) {
		for _, jr := range rd.Jobs {
			topo := s.Regions(jr.Job).Topology()
			for _, c := range jr.Cancel {
				fmt.Printf("%s: cancel %s\n", jr.Job, topo.VertexName(c.Task))
			}
		}
		for _, ev := range rd.Events {
			if ev.Kind == admission.Reclaimed {
				fmt.Printf("%s takes %d slots of %s\n", ev.Job, ev.Count, ev.Victim)
			}
		}
		for _, jr := range rd.Jobs {
			topo := s.Regions(jr.Job).Topology()
			for _, d := range jr.Deploy {
				fmt.Printf("%s: deploy %s in slot %d\n", jr.Job, topo.VertexName(d.Task), d.Slot)
			}
		}
	}
	submit("low", 1000, 4)
	show(s.Ready())
	submit("high", 9000, 2)
	show(s.Ready())
	// Output:
	// low: deploy src#0 in slot 4
	// low: deploy work#0 in slot 4
	// low: deploy work#1 in slot 3
	// low: deploy work#2 in slot 2
	// low: deploy work#3 in slot 1
	// low: cancel src#0
	// low: cancel work#0
	// low: cancel work#1
	// low: cancel work#2
	// low: cancel work#3
	// high takes 2 slots of low
	// high: deploy src#0 in slot 4
	// high: deploy work#0 in slot 4
	// high: deploy work#1 in slot 3
}
