package pool_test

import (
	"fmt"
	"time"

	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

func Example() {
	small := resource.New(500, 512)
	big := resource.New(2000, 4096)
	now := time.Unix(0, 0)
	p := pool.New(pool.Config{Timeout: time.Minute})

	// Region 1 needs a big and a small slot; region 2 one small slot.
	_ = p.Submit(now, pool.Bulk{ID: 1, Requests: []pool.Request{{Profile: big}, {Profile: small}}})
	_ = p.Submit(now, pool.Bulk{ID: 2, Requests: []pool.Request{{Profile: small}}})
	// The small slot goes to the oldest bulk that can use it: bulk 1.
	_ = p.Offer(now, slotpool.Slot{ID: 10, Profile: small})
	fmt.Println(len(p.Ready()), "events; waiting:", p.Waiting())
	_ = p.Offer(now, slotpool.Slot{ID: 20, Profile: big}, slotpool.Slot{ID: 11, Profile: small})
	for _, ev := range p.Ready() {
		fmt.Printf("%+v\n", ev)
	}
	// Output:
	// 0 events; waiting: [1 2]
	// {Bulk:1 Slots:[20 10]}
	// {Bulk:2 Slots:[11]}
}

func ExamplePool_Tick() {
	small := resource.New(500, 512)
	now := time.Unix(0, 0)
	p := pool.New(pool.Config{Timeout: time.Minute})
	_ = p.Offer(now, slotpool.Slot{ID: 10, Profile: small})
	_ = p.Submit(now, pool.Bulk{ID: 7, Requests: []pool.Request{{Profile: small}, {Profile: small}}})
	deadline, _ := p.NextDeadline()
	p.Tick(deadline)
	for _, ev := range p.Ready() {
		fmt.Println(ev.(pool.Failed).Err)
	}
	fmt.Println("free slots:", len(p.FreeSlots()))
	// Output:
	// slotpool: bulk 7: 1 x {cpu=500m mem=512MB} cannot be served: no resource available (unfulfillable for 1m0s)
	// free slots: 1
}

// Slots of unknown size serve any request: Slots(n) makes n of them, with
// ids 1 ... n.
func ExampleSlots() {
	now := time.Unix(0, 0)
	p := pool.New(pool.Config{})
	_ = p.Offer(now, slotpool.Slots(2)...)
	_ = p.Submit(now, pool.Bulk{ID: 1, Requests: []pool.Request{{Profile: resource.New(1000, 2048)}, {}}})
	fmt.Printf("%+v\n", slotpool.Slots(2))
	for _, ev := range p.Ready() {
		fmt.Printf("%+v\n", ev)
	}
	// Output:
	// [{ID:1 Profile:unknown Node:} {ID:2 Profile:unknown Node:}]
	// {Bulk:1 Slots:[1 2]}
}
