package region_test

import (
	"fmt"
	"strings"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

func ExampleFromJob() {
	g, err := topology.Decode(strings.NewReader(`{
	  "name": "flip119-example",
	  "vertices": [
	    {"id": "A", "parallelism": 2}, {"id": "B", "parallelism": 2},
	    {"id": "C", "parallelism": 4}, {"id": "D", "parallelism": 4}
	  ],
	  "edges": [
	    {"source": "A", "target": "B", "shipStrategy": "forward"},
	    {"source": "B", "target": "C", "shipStrategy": "rescale"},
	    {"source": "C", "target": "D", "shipStrategy": "hash"}
	  ]
	}`))
	if err != nil {
		panic(err)
	}
	rs := region.FromJob(g, exchange.PointwisePipelinedOnly)
	t := rs.Topology()
	fmt.Println("regions:", rs.NumRegions(), "minimum slots:", rs.MinimumSlots())
	for r := range region.ID(rs.NumRegions()) {
		var names []string
		for _, v := range rs.Members(r) {
			names = append(names, t.VertexName(v))
		}
		fmt.Printf("%d %v slots=%d consumes=%v\n", r, names, rs.SlotCount(r), rs.ProducerRegions(r))
	}
	// Output:
	// regions: 6 minimum slots: 2
	// 0 [A#0 B#0 C#0 C#1] slots=2 consumes=[]
	// 1 [A#1 B#1 C#2 C#3] slots=2 consumes=[]
	// 2 [D#0] slots=1 consumes=[0 1]
	// 3 [D#1] slots=1 consumes=[0 1]
	// 4 [D#2] slots=1 consumes=[0 1]
	// 5 [D#3] slots=1 consumes=[0 1]
}
