package admission_test

import (
	"fmt"
	"os"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// Two jobs on a cluster of 4 slots under priority, each run by a
// scheduler whose admission is the job's port: a low-priority job holds
// every slot; a high-priority job that arrives later claims what it needs,
// and, since its queue preempts at once, two of the low job's slots are
// revoked (its region restarts) and go to the high job. A scheduler takes
// its port's messages in its next call (here Tick; Queues.Pending says
// which ports have some, and package multijob does all this for every
// job).
func ExampleQueues() {
	now := time.Unix(0, 0)
	q, err := admission.New(admission.Config{Slots: slotpool.Slots(4), Queues: []admission.QueueConfig{
		{Name: "root.default", Policy: admission.Priority, Preempt: true},
	}})
	if err != nil {
		panic(err)
	}
	// start submits a job of one region of n slots, src(1) -hash,
	// pipelined-> work(n), and starts its scheduler.
	start := func(name string, priority, n int) *scheduler.Scheduler {
		job, err := topology.NewBuilder(name).
			AddVertex(topology.JobVertex{ID: "src", Parallelism: 1}).
			AddVertex(topology.JobVertex{ID: "work", Parallelism: n}).
			Connect("src", "work", exchange.Hash).
			Build()
		if err != nil {
			panic(err)
		}
		port, err := q.Submit(now, admission.JobSpec{Name: name, Priority: priority,
			Largest: []resource.Count{{Profile: resource.Unknown, N: n}}})
		if err != nil {
			panic(err)
		}
		s, err := scheduler.New(region.FromJob(job, exchange.AllPipelined), scheduler.Config{Admission: port})
		if err != nil {
			panic(err)
		}
		_ = s.Start(now)
		return s
	}
	show := func(name string, s *scheduler.Scheduler) {
		rd := s.Ready()
		for _, c := range rd.Cancel {
			fmt.Printf("%s: cancel %s\n", name, s.TaskName(c.Task))
		}
		for _, d := range rd.Deploy {
			fmt.Printf("%s: deploy %s in slot %d\n", name, s.TaskName(d.Task), d.Slot)
		}
	}
	low := start("low", 1000, 4)
	show("low", low)
	high := start("high", 9000, 2) // its ask: the claim revokes two of low's slots
	show("high", high)
	_ = low.Tick(now) // the revocations: low's region restarts and waits
	show("low", low)
	_ = high.Tick(now) // low's pool gave them back
	show("high", high)
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
	// high: deploy src#0 in slot 4
	// high: deploy work#0 in slot 4
	// high: deploy work#1 in slot 3
}

// Priority changes are authorized by role and audited, accepted or not.
func ExampleQueues_SetPriority() {
	now := time.Unix(0, 0)
	q, err := admission.New(admission.Config{
		Slots: []slotpool.Slot{{ID: 1}},
		Audit: admission.NewJSONLinesAudit(os.Stdout, now),
	})
	if err != nil {
		panic(err)
	}
	if _, err := q.Submit(now, admission.JobSpec{Name: "etl", User: "bob"}); err != nil {
		panic(err)
	}
	err = q.SetPriority(now.Add(time.Second), admission.Principal{Name: "bob", Role: admission.RoleUser}, "etl", 9000)
	fmt.Println(err)
	err = q.SetPriority(now.Add(2*time.Second), admission.Principal{Name: "alice", Role: admission.RoleAdmin}, "etl", 9000)
	fmt.Println(err)
	// Output:
	// {"t":1000,"by":"bob","role":"user","action":"set-priority","job":"etl","old":5000,"new":9000,"accepted":false,"reason":"role user may set priorities 1 ... 5000"}
	// admission: set-priority 9000 on job "etl" by bob (user) refused: role user may set priorities 1 ... 5000
	// {"t":2000,"by":"alice","role":"admin","action":"set-priority","job":"etl","old":5000,"new":9000,"accepted":true}
	// <nil>
}
