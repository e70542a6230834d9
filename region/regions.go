package region

import (
	"sort"

	"github.com/regionsched/regionsched/internal/csr"
	"github.com/regionsched/regionsched/topology"
)

// ID is a region id: its position in the topological order (producers
// before consumers).
type ID int32

// Regions is the set of pipelined regions of one execution topology.
// It is immutable after Build and safe for concurrent reads.
type Regions struct {
	topo         *topology.ExecutionTopology
	regionOf     []ID
	spans        []memberSpan // per region, and one past the last
	members      []topology.ExecutionVertexID
	slotCount    []int32
	minimumSlots int
	// consumed: per region, the blocking and hybrid groups it reads that
	// have a producer outside it. produced: per region, those it
	// writes that have a consumer outside it.
	consumed, produced csr.CSR[topology.GroupID]
	// consumedAll: per region, every blocking group it reads, also those
	// only it produces; empty (no rows) when that is consumed, i.e. no
	// region reads a blocking group of its own.
	consumedAll csr.CSR[topology.GroupID]
	// per group (all groups; empty for pipelined ones): the distinct
	// regions of its producers and of its consumers, sorted.
	groupProducers, groupConsumers csr.CSR[ID]
	// cross marks the cross-region groups (see IsCrossRegion), one bit each.
	cross []uint64
	// slot sharing groups: index per job vertex, names by index.
	ssgOf    []int32
	ssgNames []string
	// never marks the job vertices that never finish (NeverFinishes); nil
	// when the job has no unbounded vertex.
	never []bool
	// vertexSlot is, per job vertex, the slot of one of its subtasks alone
	// (Members nil): what AppendSlots hands out for a one-member region.
	vertexSlot []Slot
	// packed holds, per region, the slots of a resource-aware packing
	// chosen by ForCluster (nil: the locality packing of Slots); nil when
	// no region is repacked.
	packed [][]Slot
}

// memberSpan is where a region's members start in Regions.members, with
// its first member beside: a region of one member (most regions of a
// blocking job) is answered from this record alone (OnlyMember), where
// Members reads the start here and the member in another array, one
// cache miss more when regions are visited out of order.
type memberSpan struct {
	start int32
	first topology.ExecutionVertexID // -1 in the record past the last region
}

// Topology returns the execution topology the regions were built from.
func (rs *Regions) Topology() *topology.ExecutionTopology { return rs.topo }

// NumRegions returns the number of regions.
func (rs *Regions) NumRegions() int { return len(rs.spans) - 1 }

// RegionOf returns the region of execution vertex v.
func (rs *Regions) RegionOf(v topology.ExecutionVertexID) ID { return rs.regionOf[v] }

// Members returns the execution vertices of region r in ascending id
// order (read-only; it aliases internal storage).
func (rs *Regions) Members(r ID) []topology.ExecutionVertexID {
	return rs.members[rs.spans[r].start:rs.spans[r+1].start]
}

// OnlyMember returns the member of region r and true when r has exactly
// one, else -1 and false. It reads r's span alone, where Members(r)[0]
// reads the members array too (see memberSpan).
func (rs *Regions) OnlyMember(r ID) (topology.ExecutionVertexID, bool) {
	sp := rs.spans[r : r+2]
	if sp[1].start-sp[0].start == 1 {
		return sp[0].first, true
	}
	return -1, false
}

// Size returns the number of execution vertices of region r.
func (rs *Regions) Size(r ID) int { return int(rs.spans[r+1].start - rs.spans[r].start) }

// Contains reports whether execution vertex v belongs to region r.
func (rs *Regions) Contains(r ID, v topology.ExecutionVertexID) bool { return rs.regionOf[v] == r }

// SlotCount returns how many slots region r needs at once: per slot
// sharing group the largest number of subtasks of one job vertex in the
// region, summed over groups — or, for a region that ForCluster repacked,
// the number of slots of that packing (len(Slots(r))).
func (rs *Regions) SlotCount(r ID) int {
	if rs.packed != nil && rs.packed[r] != nil {
		return len(rs.packed[r])
	}
	return int(rs.slotCount[r])
}

// MinimumSlots returns the largest lower bound of SlotCount over the
// regions (the locality packing's count): with fewer slots the job cannot
// run; with at least this many unknown-sized slots and bounded tasks,
// region scheduling never deadlocks. ForCluster does not change it.
func (rs *Regions) MinimumSlots() int { return rs.minimumSlots }

// ConsumedGroups returns the blocking and hybrid partition groups region
// r reads that have at least one producer outside r: r may be scheduled
// once every partition of its blocking ones produced outside r is
// finished, and its hybrid ones are consumable (package strategy)
// (read-only).
func (rs *Regions) ConsumedGroups(r ID) []topology.GroupID { return rs.consumed.Row(int32(r)) }

// AllConsumedGroups returns every blocking and hybrid partition group region r reads,
// ascending: ConsumedGroups plus the groups whose only producer region is
// r itself (read-only). Counting a region off every group it reads (for
// partition release) needs these. It usually is ConsumedGroups: a second
// list is kept only when some region reads such a group of its own.
func (rs *Regions) AllConsumedGroups(r ID) []topology.GroupID {
	if rs.consumedAll.Rows() == 0 {
		return rs.consumed.Row(int32(r))
	}
	return rs.consumedAll.Row(int32(r))
}

// ProducedGroups returns the blocking and hybrid partition groups region r writes
// that have at least one consumer outside r (read-only).
func (rs *Regions) ProducedGroups(r ID) []topology.GroupID { return rs.produced.Row(int32(r)) }

// GroupProducerRegions returns the distinct regions of group g's
// producers, ascending (read-only; empty for pipelined groups).
func (rs *Regions) GroupProducerRegions(g topology.GroupID) []ID {
	return rs.groupProducers.Row(int32(g))
}

// GroupProducerBase returns where group g's list of producer regions
// starts in the concatenation of every group's GroupProducerRegions, in
// group order: entry i of g's list is number GroupProducerBase(g)+i, and
// GroupProducerBase(g+1) - GroupProducerBase(g) is the list's length. g
// may be NumGroups, which gives the total. A caller keeping one counter per
// (group, producer region) pair (package strategy) indexes it so, with no
// table of its own.
func (rs *Regions) GroupProducerBase(g topology.GroupID) int32 { return rs.groupProducers.Start[g] }

// GroupConsumerRegions returns the distinct regions of group g's
// consumers, ascending (read-only; empty for pipelined groups).
func (rs *Regions) GroupConsumerRegions(g topology.GroupID) []ID {
	return rs.groupConsumers.Row(int32(g))
}

// IsCrossRegion reports whether blocking or hybrid group g has a region among its
// consumers that is also among its producers while other regions produce
// into it too (FLINK-22017): that consumer must wait only for the
// partitions produced outside itself.
func (rs *Regions) IsCrossRegion(g topology.GroupID) bool {
	return rs.cross[g/64]&(1<<(g%64)) != 0
}

// ProducerRegions returns the distinct regions whose blocking or hybrid results
// region r reads, ascending. Cost O(sum of the producer lists of r's
// consumed groups).
func (rs *Regions) ProducerRegions(r ID) []ID {
	return rs.distinctNeighbours(r, rs.consumed, rs.groupProducers)
}

// ConsumerRegions returns the distinct regions that read region r's
// blocking or hybrid results, ascending.
func (rs *Regions) ConsumerRegions(r ID) []ID {
	return rs.distinctNeighbours(r, rs.produced, rs.groupConsumers)
}

func (rs *Regions) distinctNeighbours(r ID, byRegion csr.CSR[topology.GroupID], byGroup csr.CSR[ID]) []ID {
	groups := byRegion.Row(int32(r))
	if len(groups) == 1 { // common case: one list, already sorted and distinct
		var out []ID
		for _, x := range byGroup.Row(int32(groups[0])) {
			if x != r {
				out = append(out, x)
			}
		}
		return out
	}
	seen := make(map[ID]struct{})
	var out []ID
	for _, g := range groups {
		for _, x := range byGroup.Row(int32(g)) {
			if _, dup := seen[x]; !dup && x != r {
				seen[x] = struct{}{}
				out = append(out, x)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func containsSorted[T ~int32](s []T, x T) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i] >= x })
	return i < len(s) && s[i] == x
}
