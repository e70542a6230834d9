package region

import (
	"fmt"
	"slices"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/csr"
	"github.com/regionsched/regionsched/internal/heap"
	"github.com/regionsched/regionsched/topology"
)

// Build derives the pipelined regions of t. It runs in O(subtasks +
// partition group sizes) time and memory (see the package comment).
func Build(t *topology.ExecutionTopology) *Regions {
	job := t.Job()
	n := t.NumExecutionVertices()
	logical, whole := logicalRegions(t)

	regionOf := make([]ID, n)
	var count int32
	if job.PipelinedEdges(t.Mode()) == 0 {
		// Every subtask is a region of its own, numbered as the subtasks
		// (an all-blocking or all-hybrid job): no union-find over millions
		// of them.
		for v := range regionOf {
			regionOf[v] = ID(v)
		}
		count = int32(n)
	} else {
		count = unionRegions(t, logical, whole, regionOf)
	}

	gp, gc := groupRegions(t, regionOf, int(count))
	if cyclePossible(t, logical) {
		var merged bool
		count, merged = mergeCycles(regionOf, int(count), gp, gc)
		if merged {
			gp, gc = groupRegions(t, regionOf, int(count))
		}
	}

	// nil: the numbering by smallest member is already the order.
	if order := topologicalOrder(int(count), gp, gc); order != nil {
		final := make([]ID, count)
		for pos, r := range order {
			final[r] = ID(pos)
		}
		for v := range regionOf {
			regionOf[v] = final[regionOf[v]]
		}
		relabel(gp, final)
		relabel(gc, final)
	}

	rs := &Regions{topo: t, regionOf: regionOf, groupProducers: gp, groupConsumers: gc}
	rs.members, rs.spans = membersByRegion(regionOf, int(count))
	// Only blocking groups have regions listed; skip the pipelined ones.
	forEachBlockingGroup := func(f func(g int32)) {
		for e := range topology.JobEdgeID(job.NumEdges()) {
			if !t.PartitionType(e).IsPipelined() {
				gs := t.GroupsOf(e)
				for g := gs.Start; g < gs.End; g++ {
					f(g)
				}
			}
		}
	}
	ownInput := false // a region reads a blocking group only it produces
	rs.consumed = csr.Build(int(count), func(add func(int32, topology.GroupID)) {
		forEachBlockingGroup(func(g int32) {
			for _, c := range gc.Row(g) {
				if hasOther(gp.Row(g), c) {
					add(int32(c), topology.GroupID(g))
				} else {
					ownInput = true
				}
			}
		})
	})
	if ownInput {
		rs.consumedAll = csr.Build(int(count), func(add func(int32, topology.GroupID)) {
			forEachBlockingGroup(func(g int32) {
				for _, c := range gc.Row(g) {
					add(int32(c), topology.GroupID(g))
				}
			})
		})
	}
	rs.cross = make([]uint64, (gp.Rows()+63)/64)
	forEachBlockingGroup(func(g int32) {
		if ps := gp.Row(g); len(ps) > 1 {
			for _, c := range gc.Row(g) {
				if containsSorted(ps, c) {
					rs.cross[g/64] |= 1 << (g % 64)
					break
				}
			}
		}
	})
	rs.produced = csr.Build(int(count), func(add func(int32, topology.GroupID)) {
		forEachBlockingGroup(func(g int32) {
			for _, p := range gp.Row(g) {
				if hasOther(gc.Row(g), p) {
					add(int32(p), topology.GroupID(g))
				}
			}
		})
	})
	rs.indexSlotSharingGroups()
	rs.markNeverFinishing()
	rs.indexVertexSlots()
	rs.countSlots()
	return rs
}

// FromJob is Build(topology.NewExecutionTopology(g, m)).
func FromJob(g *topology.JobGraph, m exchange.Mode) *Regions {
	return Build(topology.NewExecutionTopology(g, m))
}

// logicalRegions groups job vertices connected by pipelined edges and
// reports for each group whether it contains an all-to-all pipelined edge
// (then all its subtasks form one region).
func logicalRegions(t *topology.ExecutionTopology) (logical []int32, whole []bool) {
	job := t.Job()
	uf := newUnionFind(job.NumVertices())
	for e := range topology.JobEdgeID(job.NumEdges()) {
		if t.PartitionType(e).IsPipelined() {
			s, d := job.EdgeEnds(e)
			uf.union(int32(s), int32(d))
		}
	}
	logical = make([]int32, job.NumVertices())
	id := make(map[int32]int32)
	for v := range logical {
		r := uf.find(int32(v))
		l, ok := id[r]
		if !ok {
			l = int32(len(id))
			id[r] = l
		}
		logical[v] = l
	}
	whole = make([]bool, len(id))
	for e := range topology.JobEdgeID(job.NumEdges()) {
		if t.PartitionType(e).IsPipelined() && t.Pattern(e) == exchange.AllToAll {
			s, _ := job.EdgeEnds(e)
			whole[logical[s]] = true
		}
	}
	return logical, whole
}

// cyclePossible reports whether execution regions can depend on each other
// in a cycle: only if a blocking edge lies inside one logical region or
// the graph of logical regions over blocking edges has a cycle. Otherwise
// the region graph maps onto an acyclic graph and the SCC pass is skipped.
func cyclePossible(t *topology.ExecutionTopology, logical []int32) bool {
	job := t.Job()
	l := 0
	for _, x := range logical {
		l = max(l, int(x)+1)
	}
	indeg := make([]int32, l)
	out := make([][]int32, l)
	for e := range topology.JobEdgeID(job.NumEdges()) {
		if t.PartitionType(e).IsPipelined() {
			continue
		}
		s, d := job.EdgeEnds(e)
		a, b := logical[s], logical[d]
		if a == b {
			return true
		}
		out[a] = append(out[a], b)
		indeg[b]++
	}
	var ready []int32
	for i, d := range indeg {
		if d == 0 {
			ready = append(ready, int32(i))
		}
	}
	seen := 0
	for len(ready) > 0 {
		a := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		seen++
		for _, b := range out[a] {
			if indeg[b]--; indeg[b] == 0 {
				ready = append(ready, b)
			}
		}
	}
	return seen < l
}

// groupRegions lists, for every partition group, the distinct regions of
// its producers and of its consumers (sorted); pipelined groups are empty.
func groupRegions(t *topology.ExecutionTopology, regionOf []ID, regions int) (gp, gc csr.CSR[ID]) {
	groups := t.NumGroups()
	stamp := make([]int32, regions)
	for i := range stamp {
		stamp[i] = -1
	}
	list := func(pick func(topology.PartitionGroup) topology.Range, tag func(g int32) int32) csr.CSR[ID] {
		c := csr.CSR[ID]{Start: make([]int32, groups+1)}
		bound := 0 // the lists hold at most one entry per task of a blocking group: sized once, never copied
		for e := range topology.JobEdgeID(t.Job().NumEdges()) {
			if !t.PartitionType(e).IsPipelined() {
				gs := t.GroupsOf(e)
				for g := gs.Start; g < gs.End; g++ {
					bound += pick(t.GroupOnEdge(e, topology.GroupID(g))).Len()
				}
			}
		}
		c.Adj = make([]ID, 0, bound)
		for e := range topology.JobEdgeID(t.Job().NumEdges()) {
			gs := t.GroupsOf(e)
			blocking := !t.PartitionType(e).IsPipelined()
			for g := gs.Start; g < gs.End; g++ {
				if blocking {
					rng := pick(t.GroupOnEdge(e, topology.GroupID(g)))
					from := len(c.Adj)
					for v := rng.Start; v < rng.End; v++ {
						r := regionOf[v]
						if stamp[r] != tag(g) {
							stamp[r] = tag(g)
							c.Adj = append(c.Adj, r)
						}
					}
					if s := c.Adj[from:]; !slices.IsSorted(s) {
						slices.Sort(s)
					}
				}
				c.Start[g+1] = int32(len(c.Adj))
			}
		}
		return c
	}
	gp = list(func(pg topology.PartitionGroup) topology.Range { return pg.Producers }, func(g int32) int32 { return 2 * g })
	gc = list(func(pg topology.PartitionGroup) topology.Range { return pg.Consumers }, func(g int32) int32 { return 2*g + 1 })
	return gp, gc
}

// mergeCycles merges every strongly connected component of the region
// graph (regions -> produced groups -> consumer regions) into one region,
// renumbering regionOf in order of smallest member. It returns the new
// region count and whether anything merged.
func mergeCycles(regionOf []ID, regions int, gp, gc csr.CSR[ID]) (int32, bool) {
	groups := gp.Rows()
	// nodes 0 ... regions-1 are regions, regions+g is group g.
	arcs := csr.Build(regions+groups, func(add func(int32, int32)) {
		for g := range int32(groups) {
			for _, r := range gp.Row(g) {
				add(int32(r), int32(regions)+g)
			}
			for _, r := range gc.Row(g) {
				add(int32(regions)+g, int32(r))
			}
		}
	})
	comp, _ := stronglyConnected(arcs)
	newID := make([]int32, len(comp))
	for i := range newID {
		newID[i] = -1
	}
	count := int32(0)
	for v, r := range regionOf {
		c := comp[r]
		if newID[c] < 0 {
			newID[c] = count
			count++
		}
		regionOf[v] = ID(newID[c])
	}
	return count, int(count) < regions
}

// topologicalOrder orders the regions so that every producer region comes
// before its consumer regions; among ready regions the smallest id first.
// A consumer c of group g waits for the producers of g other than c itself
// (cross-region groups, FLINK-22017). It returns nil when the current
// numbering already is that order.
func topologicalOrder(regions int, gp, gc csr.CSR[ID]) []ID {
	groups := gp.Rows()
	// Fast path: if every consumer of every group is numbered after all
	// the group's other producers, the identity is a topological order,
	// and being the lexicographically smallest permutation it is exactly
	// what Kahn with a min-heap would return. This is the common case
	// (regions are numbered by smallest member and subtasks of producers
	// usually come first) and saves the heap, O(regions log regions).
	identity := true
	for g := range int32(groups) {
		ps, cs := gp.Row(g), gc.Row(g)
		if len(ps) > 0 && len(cs) > 0 && cs[0] < ps[len(ps)-1] {
			identity = false
			break
		}
	}
	if identity {
		return nil
	}
	producedAll := csr.Build(regions, func(add func(int32, int32)) {
		for g := range int32(groups) {
			for _, r := range gp.Row(g) {
				add(int32(r), g)
			}
		}
	})
	indeg := make([]int32, regions)
	remaining := make([]int32, groups)
	sum := make([]int64, groups) // sum of the ids of the producers not yet ordered
	for g := range int32(groups) {
		ps := gp.Row(g)
		remaining[g] = int32(len(ps))
		for _, p := range ps {
			sum[g] += int64(p)
		}
		for _, c := range gc.Row(g) {
			if hasOther(ps, c) {
				indeg[c]++
			}
		}
	}
	h := heap.New(func(a, b int32) bool { return a < b }, nil)
	for r, d := range indeg {
		if d == 0 {
			h.Push(int32(r))
		}
	}
	order := make([]ID, 0, regions)
	release := func(c ID) {
		if indeg[c]--; indeg[c] == 0 {
			h.Push(int32(c))
		}
	}
	for h.Len() > 0 {
		r := h.Pop()
		order = append(order, ID(r))
		for _, g := range producedAll.Row(r) {
			remaining[g]--
			sum[g] -= int64(r)
			switch remaining[g] {
			case 1: // only one producer left: if it also consumes g, it may go
				if last := ID(sum[g]); containsSorted(gc.Row(g), last) {
					release(last)
				}
			case 0:
				for _, c := range gc.Row(g) {
					if c != ID(r) {
						release(c)
					}
				}
			}
		}
	}
	if len(order) != regions {
		panic(fmt.Sprintf("region: region graph has a cycle after merging (%d of %d regions ordered)", len(order), regions))
	}
	return order
}

// hasOther reports whether the sorted list s has an element other than x.
func hasOther(s []ID, x ID) bool { return len(s) > 1 || (len(s) == 1 && s[0] != x) }

// relabel maps every entry of c through final and re-sorts each row.
func relabel(c csr.CSR[ID], final []ID) {
	for i := range c.Adj {
		c.Adj[i] = final[c.Adj[i]]
	}
	for g := range int32(c.Rows()) {
		if row := c.Row(g); !slices.IsSorted(row) {
			slices.Sort(row)
		}
	}
}

// membersByRegion lists the execution vertices of each region, ascending.
func membersByRegion(regionOf []ID, regions int) ([]topology.ExecutionVertexID, []memberSpan) {
	spans := make([]memberSpan, regions+1)
	if regions == len(regionOf) { // one member each (an all-blocking job): no counting
		members := make([]topology.ExecutionVertexID, regions)
		for v, r := range regionOf {
			members[r] = topology.ExecutionVertexID(v)
			spans[r] = memberSpan{start: int32(r), first: topology.ExecutionVertexID(v)}
		}
		spans[regions] = memberSpan{start: int32(regions), first: -1}
		return members, spans
	}
	c := csr.Build(regions, func(add func(int32, topology.ExecutionVertexID)) {
		for v, r := range regionOf {
			add(int32(r), topology.ExecutionVertexID(v))
		}
	})
	for r := range regions {
		spans[r] = memberSpan{start: c.Start[r], first: c.Adj[c.Start[r]]} // a region has a member
	}
	spans[regions] = memberSpan{start: c.Start[regions], first: -1}
	return c.Adj, spans
}

// unionRegions numbers the pipelined regions of t into regionOf (by
// their smallest member) and returns their count: subtasks joined by
// pipelined edges, a pipelined component with an all-to-all edge as one.
func unionRegions(t *topology.ExecutionTopology, logical []int32, whole []bool, regionOf []ID) int32 {
	job := t.Job()
	n := t.NumExecutionVertices()
	uf := newUnionFind(n)
	// Logical fast path: a pipelined component with an all-to-all edge is
	// one region; union each of its vertices with one representative.
	rep := make([]int32, len(whole))
	for i := range rep {
		rep[i] = -1
	}
	for jv := range topology.JobVertexID(job.NumVertices()) {
		l := logical[jv]
		if !whole[l] {
			continue
		}
		vs := t.VerticesOf(jv)
		if rep[l] < 0 {
			rep[l] = vs.Start
		}
		for v := vs.Start; v < vs.End; v++ {
			uf.union(rep[l], v)
		}
	}
	// Otherwise merge subtasks along pointwise pipelined blocks.
	for e := range topology.JobEdgeID(job.NumEdges()) {
		src, _ := job.EdgeEnds(e)
		if !t.PartitionType(e).IsPipelined() || whole[logical[src]] {
			continue
		}
		gs := t.GroupsOf(e)
		for g := gs.Start; g < gs.End; g++ {
			pg := t.GroupOnEdge(e, topology.GroupID(g))
			base := pg.Producers.Start
			for v := base + 1; v < pg.Producers.End; v++ {
				uf.union(base, v)
			}
			for v := pg.Consumers.Start; v < pg.Consumers.End; v++ {
				uf.union(base, v)
			}
		}
	}

	// Number the components in order of their smallest member.
	idOfRoot := uf.size // reuse: sizes are no longer needed
	for i := range idOfRoot {
		idOfRoot[i] = -1
	}
	count := int32(0)
	for v := range int32(n) {
		r := uf.find(v)
		if idOfRoot[r] < 0 {
			idOfRoot[r] = count
			count++
		}
		regionOf[v] = ID(idOfRoot[r])
	}
	return count
}
