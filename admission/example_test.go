package admission_test

import (
	"fmt"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// A pool linked to a static cluster of three slots: the first bulk's ask
// is granted and the bulk fulfilled; a bulk larger than the cluster fails
// at once, since the cluster declared its capacity.
func Example() {
	small := resource.New(500, 512)
	big := resource.New(2000, 4096)
	now := time.Unix(0, 0)
	cluster, err := admission.NewStaticCluster(resource.FitsEveryDimension,
		slotpool.Slot{ID: 1, Profile: small}, slotpool.Slot{ID: 2, Profile: small}, slotpool.Slot{ID: 3, Profile: big})
	if err != nil {
		panic(err)
	}
	pool := slotpool.New(slotpool.Config{Admission: true})
	link := slotpool.NewLink(pool, cluster, nil)
	link.Ready(now) // delivers the cluster's capacity

	_ = pool.Submit(now, slotpool.Bulk{ID: 1, Requests: []slotpool.Request{{Profile: big}, {Profile: small}}})
	printEvents(link.Ready(now))
	_ = pool.Submit(now, slotpool.Bulk{ID: 2, Requests: []slotpool.Request{{Profile: big}, {Profile: big}}})
	printEvents(link.Ready(now))
	fmt.Println("left in the cluster:", cluster.Available())
	// Output:
	// bulk 1 fulfilled with slots [3 1]
	// bulk 2 failed: slotpool: bulk 2: 1 x {cpu=2000m mem=4096MB} cannot be served: no resource available (larger than the cluster)
	// left in the cluster: [{2 {cpu=500m mem=512MB} }]
}

// printEvents prints the fulfilled and failed bulks among events.
func printEvents(events []slotpool.Event) {
	for _, ev := range events {
		switch ev := ev.(type) {
		case slotpool.Fulfilled:
			fmt.Printf("bulk %d fulfilled with slots %v\n", ev.Bulk, ev.Slots)
		case slotpool.Failed:
			fmt.Printf("bulk %d failed: %v\n", ev.Bulk, ev.Err)
		}
	}
}
