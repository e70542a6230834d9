package multijob_test

import (
	"fmt"
	"os"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// Priority changes are authorized by role and audited, accepted or not:
// bob, a user, may not raise his job above 5000; alice, an admin, may.
func ExampleScheduler_SetPriority() {
	now := time.Unix(0, 0)
	s, err := multijob.New(multijob.Config{Admission: admission.Config{
		Slots: slotpool.Slots(1),
		Audit: admission.NewJSONLinesAudit(os.Stdout, now),
	}})
	if err != nil {
		panic(err)
	}
	job, err := topology.NewBuilder("etl").AddVertex(topology.JobVertex{ID: "src", Parallelism: 1}).Build()
	if err != nil {
		panic(err)
	}
	spec := multijob.JobSpec{JobSpec: admission.JobSpec{Name: "etl", User: "bob"}, Regions: region.FromJob(job, exchange.AllBlocking)}
	if err := s.Submit(now, spec); err != nil {
		panic(err)
	}
	err = s.SetPriority(now.Add(time.Second), admission.Principal{Name: "bob", Role: admission.RoleUser}, "etl", 9000)
	fmt.Println(err)
	err = s.SetPriority(now.Add(2*time.Second), admission.Principal{Name: "alice", Role: admission.RoleAdmin}, "etl", 9000)
	fmt.Println(err)
	for _, ev := range s.Ready().Events { // the accepted change comes out of Ready too
		if ev.Kind == admission.PriorityChanged {
			fmt.Printf("%s: %s %d -> %d (%s)\n", ev.Kind, ev.Job, ev.OldPriority, ev.NewPriority, ev.Reason)
		}
	}
	// Output:
	// {"t":1000,"by":"bob","role":"user","action":"set-priority","job":"etl","old":5000,"new":9000,"accepted":false,"reason":"role user may set priorities 1 ... 5000"}
	// admission: set-priority 9000 on job "etl" by bob (user) refused: role user may set priorities 1 ... 5000
	// {"t":2000,"by":"alice","role":"admin","action":"set-priority","job":"etl","old":5000,"new":9000,"accepted":true}
	// <nil>
	// priority-changed: etl 5000 -> 9000 (set by alice)
}
