package admission_test

import (
	"fmt"
	"os"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// Two jobs on a cluster of 4 slots under priority: a low-priority job
// holds every slot; a high-priority job that arrives later claims what it
// needs, and, since its queue preempts at once, the low job's slots are
// revoked (its pool reports them lost, to fail its tasks over) and go to
// the high job.
func ExampleQueues() {
	now := time.Unix(0, 0)
	slots := make([]slotpool.Slot, 4)
	for i := range slots {
		slots[i] = slotpool.Slot{ID: slotpool.SlotID(i + 1)}
	}
	q, err := admission.New(admission.Config{Slots: slots, Queues: []admission.QueueConfig{
		{Name: "root.default", Policy: admission.Priority, Preempt: true},
	}})
	if err != nil {
		panic(err)
	}
	run := func(name string, priority, n int) (*pool.Pool, *pool.Link) {
		port, err := q.Submit(now, admission.JobSpec{Name: name, Priority: priority,
			Largest: []resource.Count{{Profile: resource.Unknown, N: n}}})
		if err != nil {
			panic(err)
		}
		p := pool.New(pool.Config{Admission: true})
		link := pool.NewLink(p, port, nil)
		_ = p.Submit(now, pool.Bulk{ID: 1, Requests: make([]pool.Request, n)})
		return p, link
	}
	_, lowLink := run("low", 1000, 4)
	for _, ev := range lowLink.Ready(now) {
		fmt.Printf("low: %T %v\n", ev, ev)
	}
	_, highLink := run("high", 9000, 2)
	highLink.Ready(now) // its ask: the claim revokes two of low's slots
	for _, ev := range lowLink.Ready(now) {
		fmt.Printf("low: %T slot %v\n", ev, ev.(pool.Lost).Slot)
	}
	for _, ev := range highLink.Ready(now) { // low's pool gave them back
		fmt.Printf("high: %T %v\n", ev, ev)
	}
	// Output:
	// low: pool.Fulfilled {1 [4 3 2 1]}
	// low: pool.Lost slot 4
	// low: pool.Lost slot 3
	// high: pool.Fulfilled {1 [4 3]}
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
