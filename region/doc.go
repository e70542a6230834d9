// Package region derives the pipelined regions of an execution topology:
// the sets of subtasks connected by pipelined data exchanges, which must be
// scheduled together. Blocking and hybrid exchanges separate regions; below,
// "blocking" edges and groups stand for both unless hybrid ones are named.
//
// Build follows Flink 1.14 and goes further:
//   - a logical fast path: on the job graph, a set of vertices connected by
//     pipelined edges that contains an all-to-all pipelined edge is one
//     region; otherwise subtasks are merged along pointwise pipelined blocks
//     with a union-find (union by size, path halving);
//   - the cycle merge of FLINK-17330: a blocking edge inside a pipelined
//     component can make regions depend on each other in a cycle; the
//     region graph is built through partition groups (never pairwise) and
//     every strongly connected component is merged (iterative Tarjan on
//     int32 arrays), run only when the job graph makes a cycle possible;
//   - a deterministic topological order (Kahn, ties by the smallest member),
//     which is also the region id;
//   - per region its consumed blocking partition groups, produced groups,
//     producer and consumer regions, and its slot requirement: per slot
//     sharing group the lower bound max over job vertices of its subtasks in
//     the region, summed over groups, reached by an explicit assignment that
//     puts a consumer in its producer's slot when it can (Slots).
//
// Everything is stored in flat int32 arrays (CSR), so a region set of a
// million subtasks costs tens of bytes per subtask, and an all-to-all edge
// between 10,000 and 10,000 subtasks costs O(20,000), not O(10^8).
//
//	rs := region.Build(topology.NewExecutionTopology(job, exchange.PointwisePipelinedOnly))
//	for r := range rs.NumRegions() {
//		fmt.Println(r, rs.Members(region.ID(r)), rs.SlotCount(region.ID(r)))
//	}
//	v := rs.Check(cluster, resource.FitsEveryDimension) // can the job run here?
//
// Subtasks that never finish (unbounded ones and, transitively, whatever
// reads them through pipelined edges; NeverFinishes) hold their slots
// forever: Slots marks those slots Unbounded, and Check counts them as
// held. When a region's locality packing does not fit a sized cluster,
// ForCluster repacks it by size into the cluster's slot profiles; Check
// judges those slots, and a runtime hands the same Regions to its
// scheduler so that it asks for them:
//
//	sched, err := scheduler.New(rs.ForCluster(cluster, m), scheduler.Config{})
package region
