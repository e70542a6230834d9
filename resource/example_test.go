package resource_test

import (
	"fmt"

	"github.com/regionsched/regionsched/resource"
)

func ExampleAssign() {
	small := resource.New(500, 512)
	gpu := resource.New(500, 512).WithExtended("gpu", 1)
	big := resource.New(2000, 4096)

	requests := resource.Tally([]resource.Profile{small, small, gpu})
	slots := []resource.Count{{Profile: gpu, N: 1}, {Profile: small, N: 1}, {Profile: big, N: 2}}
	a := resource.Assign(requests, slots, resource.FitsEveryDimension)
	fmt.Println("complete:", a.Complete(), "matched:", a.Matched)
	for _, p := range a.Pairs {
		fmt.Printf("%d x %v -> %v\n", p.N, requests[p.Request].Profile, slots[p.Slot].Profile)
	}

	a = resource.Assign(resource.Tally([]resource.Profile{big, big, big}), slots, resource.FitsEveryDimension)
	fmt.Println("missing:", a.MissingString())
	// Unordered output:
	// complete: true matched: 3
	// 1 x {cpu=500m mem=512MB} -> {cpu=500m mem=512MB}
	// 1 x {cpu=500m mem=512MB} -> {cpu=2000m mem=4096MB}
	// 1 x {cpu=500m mem=512MB gpu=1} -> {cpu=500m mem=512MB gpu=1}
	// missing: 1 x {cpu=2000m mem=4096MB}
}
