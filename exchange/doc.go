// Package exchange defines how data moves along a job edge: the result
// partition type a producer writes (pipelined, pipelined-bounded,
// blocking, or hybrid: full or selective), the ship strategy of the edge
// (forward, rescale, hash, rebalance, broadcast) with its distribution
// pattern (pointwise or all-to-all), and the global data exchange modes
// that decide the partition type of every edge that does not pin one: the
// four of FLIP-119 and the two hybrid ones of Flink's
// execution.batch-shuffle-mode.
//
// It is a leaf package: it imports nothing of regionsched. Typical use:
//
//	mode, err := exchange.ParseMode("pointwise-pipelined-only")
//	if err != nil { ... } // errors.Is(err, exchange.ErrUnknownMode)
//	pt := mode.PartitionType(exchange.Rescale) // exchange.PipelinedBounded
//	if pt.IsPipelined() { ... }               // the edge glues a region
//	if pt.IsHybrid() { ... }                  // it separates regions; consumers may read it live
package exchange
