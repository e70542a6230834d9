package topology_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/topology"
)

func ExampleDecode() {
	g, err := topology.Decode(strings.NewReader(`{
	  "name": "etl",
	  "vertices": [{"id": "src", "parallelism": 4}, {"id": "agg", "parallelism": 2}],
	  "edges": [{"source": "src", "target": "agg", "shipStrategy": "rescale"}]
	}`))
	if err != nil {
		panic(err)
	}
	t := topology.NewExecutionTopology(g, exchange.PointwisePipelinedOnly)
	fmt.Println(g.Name(), t.NumExecutionVertices(), "subtasks,", t.PartitionType(0))
	for j := range 2 {
		pg := t.Group(t.ConsumedGroup(0, j))
		fmt.Printf("agg#%d reads src#%d ... src#%d\n", j, pg.Producers.Start, pg.Producers.End-1)
	}

	_, err = topology.Decode(strings.NewReader(`{"vertices": [{"id": "a#1", "parallelism": 1}]}`))
	var ve *topology.VertexError
	fmt.Println(errors.Is(err, topology.ErrInvalidVertexID), errors.As(err, &ve), ve.Vertex)
	fmt.Println(err)
	// Output:
	// etl 6 subtasks, pipelined-bounded
	// agg#0 reads src#0 ... src#1
	// agg#1 reads src#2 ... src#3
	// true true a#1
	// vertex "a#1" (vertices[0]) field "id": invalid vertex id: contains '#'
}
