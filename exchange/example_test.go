package exchange_test

import (
	"errors"
	"fmt"

	"github.com/regionsched/regionsched/exchange"
)

func ExampleParseMode() {
	mode, err := exchange.ParseMode("POINTWISE_EDGES_PIPELINED")
	if err != nil {
		panic(err)
	}
	for _, s := range []exchange.ShipStrategy{exchange.Forward, exchange.Rescale, exchange.Hash} {
		pt := mode.PartitionType(s)
		fmt.Printf("%s %s (%s): %s, pipelined=%t\n", mode, s, s.Pattern(), pt, pt.IsPipelined())
	}
	hybrid, _ := exchange.ParseMode("ALL_EXCHANGES_HYBRID_FULL")
	pt := hybrid.PartitionType(exchange.Hash)
	fmt.Printf("%s hash: %s, pipelined=%t, hybrid=%t\n", hybrid, pt, pt.IsPipelined(), pt.IsHybrid())

	_, err = exchange.ParseMode("streaming")
	fmt.Println(errors.Is(err, exchange.ErrUnknownMode))
	fmt.Println(err)
	// Output:
	// pointwise-pipelined-only forward (pointwise): pipelined-bounded, pipelined=true
	// pointwise-pipelined-only rescale (pointwise): pipelined-bounded, pipelined=true
	// pointwise-pipelined-only hash (all-to-all): blocking, pipelined=false
	// all-hybrid-full hash: hybrid-full, pipelined=false, hybrid=true
	// true
	// unknown global data exchange mode "streaming" (valid: all-blocking, forward-pipelined-only, pointwise-pipelined-only, all-pipelined, all-hybrid-full, all-hybrid-selective, ALL_EDGES_BLOCKING, FORWARD_EDGES_PIPELINED, POINTWISE_EDGES_PIPELINED, ALL_EDGES_PIPELINED, ALL_EDGES_HYBRID_FULL, ALL_EDGES_HYBRID_SELECTIVE, ALL_EXCHANGES_BLOCKING, ALL_EXCHANGES_PIPELINED, ALL_EXCHANGES_HYBRID_FULL, ALL_EXCHANGES_HYBRID_SELECTIVE, batch, pipelined)
}
