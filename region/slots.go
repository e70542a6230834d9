package region

import (
	"slices"
	"sort"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// Slot is one slot a region needs: the subtasks that share it (all of one
// slot sharing group, at most one per job vertex) and the sum of their
// resource profiles.
type Slot struct {
	// SlotSharingGroup is the group of every member.
	SlotSharingGroup string
	// Profile is the sum of the members' profiles (resource.Unknown if
	// every member is unknown).
	Profile resource.Profile
	// Members are the subtasks in the slot, producers before consumers.
	Members []topology.ExecutionVertexID
	// Unbounded reports whether a member never finishes — it is
	// unbounded, or reads an unbounded vertex through pipelined or full
	// hybrid edges (Regions.NeverFinishes) — so the slot is occupied indefinitely.
	Unbounded bool
}

func (rs *Regions) indexSlotSharingGroups() {
	job := rs.topo.Job()
	rs.ssgOf = make([]int32, job.NumVertices())
	byName := map[string]int32{}
	for jv := range topology.JobVertexID(job.NumVertices()) {
		name := job.Vertex(jv).SlotSharingGroup
		i, ok := byName[name]
		if !ok {
			i = int32(len(rs.ssgNames))
			byName[name] = i
			rs.ssgNames = append(rs.ssgNames, name)
		}
		rs.ssgOf[jv] = i
	}
}

// indexVertexSlots fills vertexSlot (after indexSlotSharingGroups and
// markNeverFinishing).
func (rs *Regions) indexVertexSlots() {
	job := rs.topo.Job()
	rs.vertexSlot = make([]Slot, job.NumVertices())
	for jv := range topology.JobVertexID(job.NumVertices()) {
		rs.vertexSlot[jv] = Slot{SlotSharingGroup: rs.ssgNames[rs.ssgOf[jv]], Profile: job.Vertex(jv).Resources,
			Unbounded: rs.NeverFinishes(jv)}
	}
}

// countSlots computes every region's lower bound in one pass over the
// members: members are sorted by id, so the subtasks of one job vertex
// form a run, and the count per vertex is the run length.
func (rs *Regions) countSlots() {
	regions := rs.NumRegions()
	rs.slotCount = make([]int32, regions)
	ssgMax := make([]int32, len(rs.ssgNames))
	var touched []int32
	for r := range ID(regions) {
		members := rs.Members(r)
		for i := 0; i < len(members); {
			jv := rs.topo.JobVertexOf(members[i])
			end := rs.topo.VerticesOf(jv).End
			j := i
			for j < len(members) && int32(members[j]) < end {
				j++
			}
			s := rs.ssgOf[jv]
			if ssgMax[s] == 0 {
				touched = append(touched, s)
			}
			ssgMax[s] = max(ssgMax[s], int32(j-i))
			i = j
		}
		total := int32(0)
		for _, s := range touched {
			total += ssgMax[s]
			ssgMax[s] = 0
		}
		touched = touched[:0]
		rs.slotCount[r] = total
		rs.minimumSlots = max(rs.minimumSlots, int(total))
	}
}

// Slots assigns the subtasks of region r to SlotCount(r) slots. By
// default this is the locality packing: per slot
// sharing group, job vertices in topological order, each subtask into the
// slot of one of its pipelined producers in the region when that slot has
// no subtask of the same vertex yet, else into the least loaded such slot
// (for a subtask with a known profile, in groups of at most balanceLimit
// slots) or the first such slot, else a new slot. A new slot opens only when every slot of the group already
// holds a subtask of the vertex, so the count equals the lower bound.
// On Regions returned by ForCluster, a region the locality packing does
// not fit into the cluster gets the resource-aware packing found there
// (see Packing). A slot is Unbounded when a member never finishes
// (NeverFinishes).
// Cost O(region size); the result is freshly allocated.
func (rs *Regions) Slots(r ID) []Slot {
	if rs.packed != nil && rs.packed[r] != nil {
		return cloneSlots(rs.packed[r])
	}
	return rs.localitySlots(r)
}

// AppendSlots appends the slots of region r (those Slots returns) to dst
// and returns the extended slice. Unlike Slots it does not copy what the
// Regions already hold: the member lists of a one-member region, and of a
// region ForCluster repacked, alias internal storage and must not be
// modified. A caller that reuses dst (package scheduler) asks for a
// one-member region's slot without allocating.
func (rs *Regions) AppendSlots(dst []Slot, r ID) []Slot {
	if rs.packed != nil && rs.packed[r] != nil {
		return append(dst, rs.packed[r]...)
	}
	if v, one := rs.OnlyMember(r); one {
		dst = append(dst, rs.vertexSlot[rs.topo.JobVertexOf(v)]) // copied once, in place
		dst[len(dst)-1].Members = rs.Members(r)                  // the slice alone: its element is not read
		return dst
	}
	return rs.appendLocalitySlots(dst, r)
}

// cloneSlots copies slots and their member lists.
func cloneSlots(in []Slot) []Slot {
	out := make([]Slot, len(in))
	for i, s := range in {
		s.Members = append([]topology.ExecutionVertexID(nil), s.Members...)
		out[i] = s
	}
	return out
}

// localitySlots is the locality packing of Slots.
func (rs *Regions) localitySlots(r ID) []Slot { return rs.appendLocalitySlots(nil, r) }

// appendLocalitySlots appends the locality packing of region r to dst
// (grown once, by the slots the packing opens) and returns the extended
// slice.
func (rs *Regions) appendLocalitySlots(dst []Slot, r ID) []Slot {
	t := rs.topo
	job := t.Job()
	members := rs.Members(r)
	if len(members) == 1 { // common in blocking jobs: no sharing to work out
		sl := rs.vertexSlot[t.JobVertexOf(members[0])]
		sl.Members = []topology.ExecutionVertexID{members[0]}
		return append(dst, sl)
	}
	type run struct {
		jv         topology.JobVertexID
		start, end int // positions in members
	}
	var runs []run
	for i := 0; i < len(members); {
		jv := t.JobVertexOf(members[i])
		end := t.VerticesOf(jv).End
		j := i
		for j < len(members) && int32(members[j]) < end {
			j++
		}
		runs = append(runs, run{jv, i, j})
		i = j
	}
	sort.SliceStable(runs, func(a, b int) bool { return job.TopologicalRank(runs[a].jv) < job.TopologicalRank(runs[b].jv) })

	n := rs.slotCount[r] // what the packing opens (see Slots)
	base := len(dst)
	dst = slices.Grow(dst, int(n))
	slots := dst[base:base]                     // in dst's storage while it has room
	stamp := make([]topology.JobVertexID, 0, n) // per slot: the last job vertex placed in it
	count := make([]int, 0, n)                  // per slot: its members
	bySSG := map[int32][]int{}                  // slot sharing group -> its slots, in opening order
	slotOf := newSlotIndex(members)
	// What a subtask adds to its slot: the same for a whole run (one job
	// vertex), read once per run, not per subtask.
	var profile resource.Profile
	var never bool
	place := func(v topology.ExecutionVertexID, jv topology.JobVertexID, slot int) {
		s := &slots[slot]
		count[slot]++
		s.Profile = s.Profile.Add(profile)
		s.Unbounded = s.Unbounded || never
		stamp[slot] = jv
		slotOf.set(v, slot)
	}
	for _, ru := range runs {
		ssg := rs.ssgOf[ru.jv]
		// The group's slots, looked up once per run and stored back at its
		// end (only this run opens slots of ssg meanwhile).
		list := bySSG[ssg]
		cursor := 0 // scan position in list for this job vertex
		profile, never = job.Vertex(ru.jv).Resources, rs.NeverFinishes(ru.jv)
		sized := !profile.IsUnknown()
		for _, v := range members[ru.start:ru.end] {
			if slot, ok := rs.producerSlot(v, ru.jv, ssg, stamp, slotOf); ok {
				place(v, ru.jv, slot)
				continue
			}
			if sized && len(list) <= balanceLimit {
				if slot := lightestWithout(slots, list, stamp, ru.jv); slot >= 0 {
					place(v, ru.jv, slot)
					continue
				}
				cursor = len(list)
			}
			for cursor < len(list) && stamp[list[cursor]] == ru.jv {
				cursor++
			}
			if cursor == len(list) {
				slots = append(slots, Slot{SlotSharingGroup: rs.ssgNames[ssg]})
				stamp = append(stamp, -1)
				count = append(count, 0)
				list = append(list, len(slots)-1)
			}
			place(v, ru.jv, list[cursor])
		}
		bySSG[ssg] = list
	}
	// The member lists, carved from one array: each slot's in placement
	// order (runs in topological order, subtasks by id), as counted above.
	all := make([]topology.ExecutionVertexID, len(members))
	off := 0
	for i := range slots {
		slots[i].Members = all[off : off : off+count[i]]
		off += count[i]
	}
	for _, ru := range runs {
		for _, v := range members[ru.start:ru.end] {
			s := &slots[slotOf.get(v)]
			s.Members = append(s.Members, v)
		}
	}
	if len(slots) > cap(dst)-base { // more than counted: appending slots moved them
		return append(dst, slots...)
	}
	return dst[:base+len(slots)]
}

// slotIndex maps the members of a region being packed to their slots: a
// slice over the span of their ids when it is dense enough, else a map.
type slotIndex struct {
	base  topology.ExecutionVertexID
	dense []int32 // 1 + slot, 0: not placed
	m     map[topology.ExecutionVertexID]int
}

// newSlotIndex returns an empty index for members (sorted by id).
func newSlotIndex(members []topology.ExecutionVertexID) slotIndex {
	span := int(members[len(members)-1]-members[0]) + 1
	if span <= 4*len(members)+64 {
		return slotIndex{base: members[0], dense: make([]int32, span)}
	}
	return slotIndex{m: make(map[topology.ExecutionVertexID]int, len(members))}
}

// set records that member v is in slot.
func (x slotIndex) set(v topology.ExecutionVertexID, slot int) {
	if x.m != nil {
		x.m[v] = slot
		return
	}
	x.dense[v-x.base] = int32(slot) + 1
}

// lookup returns the slot of v if v is a placed member.
func (x slotIndex) lookup(v topology.ExecutionVertexID) (int, bool) {
	if x.m != nil {
		s, ok := x.m[v]
		return s, ok
	}
	if i := v - x.base; i >= 0 && int(i) < len(x.dense) && x.dense[i] > 0 {
		return int(x.dense[i]) - 1, true
	}
	return 0, false
}

// get returns the slot of a placed member.
func (x slotIndex) get(v topology.ExecutionVertexID) int {
	s, _ := x.lookup(v)
	return s
}

// balanceLimit bounds the slot groups in which a subtask with a known
// profile goes to the least loaded slot (a scan per subtask) rather than
// the first free one; larger groups keep the linear first-fit.
const balanceLimit = 64

// lightestWithout returns, among the given slots, the one holding no
// subtask of job vertex jv with the smallest profile so far (by
// resource.CompareAmounts, Unknown as zero), or -1 if every slot holds one.
func lightestWithout(slots []Slot, list []int, stamp []topology.JobVertexID, jv topology.JobVertexID) int {
	best := -1
	for _, i := range list {
		if stamp[i] == jv {
			continue
		}
		if best < 0 || lighter(slots[i].Profile, slots[best].Profile) {
			best = i
		}
	}
	return best
}

// lighter reports whether slot load a is smaller than b by
// resource.CompareAmounts (CPU, memory, then extended resources); an
// Unknown load counts as zero.
func lighter(a, b resource.Profile) bool { return resource.CompareAmounts(a, b) < 0 }

// producerSlot finds the slot of a pipelined producer of v (same slot
// sharing group, same region) that holds no subtask of v's job vertex yet.
// For a pointwise input it tries the producers of v's block; for an
// all-to-all input only the producer with the aligned index, keeping the
// cost per subtask constant.
func (rs *Regions) producerSlot(v topology.ExecutionVertexID, jv topology.JobVertexID, ssg int32, stamp []topology.JobVertexID, slotOf slotIndex) (int, bool) {
	t := rs.topo
	job := t.Job()
	sub := int(int32(v) - t.VerticesOf(jv).Start)
	for _, e := range job.InEdges(jv) {
		src, _ := job.EdgeEnds(e)
		if !t.PartitionType(e).IsPipelined() || rs.ssgOf[src] != ssg {
			continue
		}
		pg := t.GroupOnEdge(e, t.ConsumedGroup(e, sub))
		candidates := pg.Producers
		if t.Pattern(e) == exchange.AllToAll {
			srcPar := int64(candidates.Len())
			dstPar := int64(t.VerticesOf(jv).Len())
			aligned := candidates.Start + int32(int64(sub)*srcPar/dstPar)
			candidates = topology.Range{Start: aligned, End: aligned + 1}
		}
		for p := candidates.Start; p < candidates.End; p++ {
			if slot, ok := slotOf.lookup(topology.ExecutionVertexID(p)); ok && stamp[slot] != jv {
				return slot, true
			}
		}
	}
	return 0, false
}
