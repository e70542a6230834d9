package admission_test

import (
	"fmt"
	"os"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/slotpool"
)

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
