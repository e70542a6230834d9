// Package topology holds the two graphs the scheduler works on.
//
// A JobGraph is the logical plan: job vertices (an operator with a
// parallelism, a slot sharing group, a resource profile per subtask, a
// duration for the simulator and whether it is bounded) connected by job
// edges (a ship strategy and an optional pinned partition type). Build one
// with a Builder or decode the JSON job file of docs/job-file.md with
// Decode; both validate and return typed errors (errors.Is / errors.As)
// naming the offending vertex, edge or field.
//
// An ExecutionTopology is the JobGraph expanded to subtasks ("execution
// vertices", named "A#0") under a global data exchange mode. It never
// expands an edge pairwise: every job edge is cut into blocks, each block
// pairing a contiguous range of producer partitions (a
// ConsumedPartitionGroup) with a contiguous range of consumer subtasks (its
// ConsumerVertexGroup). An all-to-all edge is one block; a pointwise edge
// with parallelisms s and t is min(s, t) blocks. Group membership is
// computed by arithmetic, so a 10,000 x 10,000 all-to-all edge costs a few
// integers and the topology costs O(job vertices + job edges) memory.
//
//	g, err := topology.NewBuilder("etl").
//		AddVertex(topology.JobVertex{ID: "src", Parallelism: 4}).
//		AddVertex(topology.JobVertex{ID: "agg", Parallelism: 2}).
//		AddEdge(topology.JobEdge{Source: "src", Target: "agg", ShipStrategy: exchange.Hash}).
//		Build()
//	if err != nil { ... }
//	t := topology.NewExecutionTopology(g, exchange.AllBlocking)
//	v := t.ExecutionVertex(0, 3) // src#3
package topology
