package region

import (
	"slices"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// Packing is how the subtasks of a region are put into slots.
type Packing uint8

const (
	// LocalityPacking is the default of Slots: the fewest slots possible,
	// a consumer in its producer's slot when it can be (no slot sizes are
	// looked at).
	LocalityPacking Packing = iota
	// ResourcePacking packs the subtasks by their sizes into the slot
	// profiles of a cluster (ForCluster), for a region whose locality
	// packing does not fit that cluster.
	ResourcePacking
)

// String returns "locality" or "resource-aware".
func (p Packing) String() string {
	if p == ResourcePacking {
		return "resource-aware"
	}
	return "locality"
}

// Packing reports which packing Slots(r) returns: ResourcePacking for a
// region repacked by ForCluster, else LocalityPacking.
func (rs *Regions) Packing(r ID) Packing {
	if rs.packed != nil && rs.packed[r] != nil {
		return ResourcePacking
	}
	return LocalityPacking
}

// Repacked lists, ascending, the regions whose Slots use ResourcePacking.
func (rs *Regions) Repacked() []ID {
	var out []ID
	for r, p := range rs.packed {
		if p != nil {
			out = append(out, ID(r))
		}
	}
	return out
}

// ForCluster returns the regions with their slots packed for a cluster
// with the given slots (profiles with counts) under matching m. A region
// keeps the locality packing when its slots can be matched into the
// cluster; otherwise it gets a resource-aware packing of its subtasks into
// the cluster's slot profiles, if one is found: the rules of slot sharing
// still hold (members of a slot share its slot sharing group, and no two
// subtasks of one job vertex share a slot), and the slots may be more than
// the locality packing's. The search is exact for regions of at most
// exactPackLimit subtasks (a packing is found whenever one exists, within
// a bounded number of steps) and first-fit-decreasing beyond; whatever it
// returns is verified against the cluster, so a found packing always
// fits. A region for which none is found keeps the locality packing.
//
// Each region is packed for the whole cluster on its own; Check accounts
// for the slots held forever by other regions. The result shares
// everything else with rs (both stay immutable); when no region is
// repacked it is rs itself (or, if rs was repacked for another cluster,
// an unpacked copy). A runtime that wants the scheduler to ask for the
// slots Check judged hands the result to the scheduler:
// scheduler.New(rs.ForCluster(cluster, m), ...). Check calls it itself.
func (rs *Regions) ForCluster(cluster []resource.Count, m resource.Matching) *Regions {
	base := rs
	if rs.packed != nil {
		cp := *rs
		cp.packed = nil
		base = &cp
	}
	if !rs.anyKnownResources() {
		return base
	}
	kinds := slotKinds(cluster)
	if len(kinds) == 0 || kinds[0].Profile.IsUnknown() { // every slot serves every request
		return base
	}
	fits := map[string]bool{}
	var packed [][]Slot
	for r := range ID(rs.NumRegions()) {
		slots := base.localitySlots(r)
		need := resource.Tally(slotProfiles(slots))
		key := countsKey(need)
		ok, seen := fits[key]
		if !seen {
			ok = resource.Assign(need, kinds, m).Complete()
			fits[key] = ok
		}
		if ok {
			continue
		}
		if p := base.resourcePack(r, kinds, m); p != nil {
			if packed == nil {
				packed = make([][]Slot, rs.NumRegions())
			}
			packed[r] = p
		}
	}
	if packed == nil {
		return base
	}
	cp := *base
	cp.packed = packed
	return &cp
}

// slotProfiles lists the profiles of the slots.
func slotProfiles(slots []Slot) []resource.Profile {
	out := make([]resource.Profile, len(slots))
	for i, s := range slots {
		out[i] = s.Profile
	}
	return out
}

// slotKinds merges the cluster's counts by profile, drops empty ones and
// orders them from small to large, known profiles first (an Unknown slot
// serves anything and comes last; so kinds[0] is Unknown only when every
// slot is).
func slotKinds(cluster []resource.Count) []resource.Count {
	var out []resource.Count
	at := map[resource.Profile]int{}
	for _, c := range cluster {
		if c.N <= 0 {
			continue
		}
		if i, ok := at[c.Profile]; ok {
			out[i].N = satAdd(out[i].N, c.N)
			continue
		}
		at[c.Profile] = len(out)
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b resource.Count) int {
		if a.Profile.IsUnknown() != b.Profile.IsUnknown() {
			if a.Profile.IsUnknown() {
				return 1
			}
			return -1
		}
		return resource.CompareAmounts(a.Profile, b.Profile)
	})
	return out
}

// exactPackLimit is the largest region (in subtasks) for which
// resourcePack searches exhaustively; packBudget bounds that search.
const (
	exactPackLimit = 16
	packBudget     = 1 << 17
)

// packGroup is the subtasks of one job vertex in a region.
type packGroup struct {
	jv      topology.JobVertexID
	ssg     int32
	profile resource.Profile
	members []topology.ExecutionVertexID
}

// packBin is one slot being filled: its kind (index into the slot kinds),
// load, slot sharing group and members.
type packBin struct {
	kind    int
	ssg     int32
	load    resource.Profile
	stamp   topology.JobVertexID // the last job vertex placed
	members []topology.ExecutionVertexID
}

// resourcePack packs region r's subtasks into slots of the given kinds
// (see ForCluster), or returns nil if it finds no packing.
func (rs *Regions) resourcePack(r ID, kinds []resource.Count, m resource.Matching) []Slot {
	t := rs.topo
	job := t.Job()
	members := rs.Members(r)
	var groups []packGroup
	for i := 0; i < len(members); {
		jv := t.JobVertexOf(members[i])
		end := t.VerticesOf(jv).End
		j := i
		for j < len(members) && int32(members[j]) < end {
			j++
		}
		groups = append(groups, packGroup{jv: jv, ssg: rs.ssgOf[jv], profile: job.Vertex(jv).Resources, members: members[i:j]})
		i = j
	}
	// Largest first (Unknown, which adds nothing, last); ties by topological rank.
	slices.SortStableFunc(groups, func(a, b packGroup) int {
		ua, ub := a.profile.IsUnknown(), b.profile.IsUnknown()
		if ua != ub {
			if ua {
				return 1
			}
			return -1
		}
		if c := resource.CompareAmounts(b.profile, a.profile); c != 0 {
			return c
		}
		return job.TopologicalRank(a.jv) - job.TopologicalRank(b.jv)
	})
	for _, largest := range []bool{false, true} {
		if bins := firstFitDecreasing(groups, kinds, largest); bins != nil {
			if slots := rs.binsToSlots(bins, kinds, m); slots != nil {
				return slots
			}
		}
	}
	if len(members) <= exactPackLimit {
		if bins := exactPack(groups, kinds, m); bins != nil {
			return rs.binsToSlots(bins, kinds, m)
		}
	}
	return nil
}

// firstFitDecreasing places the groups (largest first) subtask by subtask
// into the first open bin of the same slot sharing group without a subtask
// of the same job vertex that still fits, else into a new bin of the
// smallest (or, with largest, the largest) kind left that fits the
// subtask. Cost O(groups x bins). It returns nil when a subtask fits no
// kind left.
func firstFitDecreasing(groups []packGroup, kinds []resource.Count, largest bool) []packBin {
	left := make([]int, len(kinds))
	for k, c := range kinds {
		left[k] = c.N
	}
	var bins []packBin
	for _, g := range groups {
		cursor := 0 // bins before it are used by g's vertex or too full for g's profile
		for _, v := range g.members {
			placed := false
			for ; cursor < len(bins); cursor++ {
				b := &bins[cursor]
				if b.ssg == g.ssg && b.stamp != g.jv && b.load.Add(g.profile).FitsIn(kinds[b.kind].Profile) {
					b.load = b.load.Add(g.profile)
					b.stamp = g.jv
					b.members = append(b.members, v)
					cursor++
					placed = true
					break
				}
			}
			if placed {
				continue
			}
			k := -1
			for i := range kinds {
				j := i
				if largest {
					j = len(kinds) - 1 - i
				}
				if left[j] > 0 && g.profile.FitsIn(kinds[j].Profile) {
					k = j
					break
				}
			}
			if k < 0 {
				return nil
			}
			left[k]--
			bins = append(bins, packBin{kind: k, ssg: g.ssg, load: g.profile, stamp: g.jv, members: []topology.ExecutionVertexID{v}})
			cursor = len(bins)
		}
	}
	return bins
}

// exactPack searches every packing of the groups' subtasks into bins of
// the kinds (subtasks of one vertex go to bins in increasing order, and
// one new bin per kind is tried, which loses no packing), for at most
// packBudget steps. It returns nil when there is none or the budget ran
// out.
func exactPack(groups []packGroup, kinds []resource.Count, m resource.Matching) []packBin {
	type item struct {
		g int
		v topology.ExecutionVertexID
	}
	var items []item
	for gi, g := range groups {
		for _, v := range g.members {
			items = append(items, item{gi, v})
		}
	}
	left := make([]int, len(kinds))
	for k, c := range kinds {
		left[k] = min(c.N, len(items))
	}
	var bins []packBin
	binOf := make([]int, len(items))
	budget := packBudget
	var place func(i int) bool
	place = func(i int) bool {
		if budget--; budget < 0 {
			return false
		}
		if i == len(items) {
			for _, b := range bins {
				if !m.Serves(kinds[b.kind].Profile, b.load) {
					return false
				}
			}
			return true
		}
		it := items[i]
		g := &groups[it.g]
		start := 0
		if i > 0 && items[i-1].g == it.g {
			start = binOf[i-1] + 1
		}
		for b := start; b < len(bins); b++ {
			bin := &bins[b]
			if bin.ssg != g.ssg || bin.stamp == g.jv {
				continue
			}
			load := bin.load.Add(g.profile)
			if !load.FitsIn(kinds[bin.kind].Profile) {
				continue
			}
			old, oldStamp := bin.load, bin.stamp
			bin.load, bin.stamp = load, g.jv
			bin.members = append(bin.members, it.v)
			binOf[i] = b
			if place(i + 1) {
				return true
			}
			bin = &bins[b]
			bin.load, bin.stamp = old, oldStamp
			bin.members = bin.members[:len(bin.members)-1]
		}
		for k := range kinds {
			if left[k] == 0 || !g.profile.FitsIn(kinds[k].Profile) {
				continue
			}
			left[k]--
			bins = append(bins, packBin{kind: k, ssg: g.ssg, load: g.profile, stamp: g.jv, members: []topology.ExecutionVertexID{it.v}})
			binOf[i] = len(bins) - 1
			if place(i + 1) {
				return true
			}
			bins = bins[:len(bins)-1]
			left[k]++
		}
		return false
	}
	if !place(0) {
		return nil
	}
	return bins
}

// binsToSlots turns bins into slots (members producers first), or returns
// nil if their loads cannot be matched into the cluster after all.
func (rs *Regions) binsToSlots(bins []packBin, kinds []resource.Count, m resource.Matching) []Slot {
	t := rs.topo
	job := t.Job()
	slots := make([]Slot, len(bins))
	for i, b := range bins {
		s := Slot{SlotSharingGroup: rs.ssgNames[b.ssg], Members: slices.Clone(b.members)}
		slices.SortFunc(s.Members, func(a, c topology.ExecutionVertexID) int {
			ra, rc := job.TopologicalRank(t.JobVertexOf(a)), job.TopologicalRank(t.JobVertexOf(c))
			if ra != rc {
				return ra - rc
			}
			return int(a) - int(c)
		})
		for _, v := range s.Members {
			jv := t.JobVertexOf(v)
			s.Profile = s.Profile.Add(job.Vertex(jv).Resources)
			s.Unbounded = s.Unbounded || rs.NeverFinishes(jv)
		}
		slots[i] = s
	}
	if !resource.Assign(resource.Tally(slotProfiles(slots)), kinds, m).Complete() {
		return nil
	}
	return slots
}
