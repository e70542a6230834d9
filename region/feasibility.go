package region

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// MaxClusterSlots is the largest number of slots a cluster may have in
// all (about 10^12): more is taken for a mistake in the input, and it
// keeps every sum of slot counts far from overflowing an int.
const MaxClusterSlots = 1 << 40

// ErrClusterTooLarge means a cluster's slot counts add up to more than
// MaxClusterSlots.
var ErrClusterTooLarge = errors.New("cluster too large")

// ErrNegativeSlotCount means a cluster lists a negative number of slots.
var ErrNegativeSlotCount = errors.New("negative slot count")

// ClusterSizeError is the error of ClusterSize: the entry of the cluster
// at which the count went wrong. It unwraps to ErrClusterTooLarge or
// ErrNegativeSlotCount.
type ClusterSizeError struct {
	// Entry is the index of the offending count in the cluster list.
	Entry int
	// N is that entry's count.
	N int
	// Err is ErrClusterTooLarge or ErrNegativeSlotCount.
	Err error
}

// Error names the entry and what is wrong with it.
func (e *ClusterSizeError) Error() string {
	if errors.Is(e.Err, ErrNegativeSlotCount) {
		return fmt.Sprintf("%v: entry %d of the cluster has %s", e.Err, e.Entry, count(e.N, "slot"))
	}
	return fmt.Sprintf("%v: with entry %d (%s) the cluster has more than %d slots in all", e.Err, e.Entry, count(e.N, "slot"), MaxClusterSlots)
}

// Unwrap returns Err.
func (e *ClusterSizeError) Unwrap() error { return e.Err }

// ClusterSize returns the number of slots of a cluster, or a
// *ClusterSizeError when a count is negative or the counts add up to more
// than MaxClusterSlots. It never overflows.
func ClusterSize(cluster []resource.Count) (int, error) {
	total := 0
	for i, c := range cluster {
		if c.N < 0 {
			return 0, &ClusterSizeError{Entry: i, N: c.N, Err: ErrNegativeSlotCount}
		}
		if c.N > MaxClusterSlots-total {
			return 0, &ClusterSizeError{Entry: i, N: c.N, Err: ErrClusterTooLarge}
		}
		total += c.N
	}
	return total, nil
}

// satAdd adds two non-negative ints, saturating at math.MaxInt.
func satAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// Verdict is the answer of Check: can the job run to completion on a
// cluster without deadlock under region scheduling with atomic bulks.
type Verdict struct {
	// Runnable is true when every region can be served, whatever the
	// timing of events.
	Runnable bool
	// Definite is set when not runnable and no timing of events lets the
	// job finish (or run steadily): the region cannot be served even next
	// to only the slots that are certainly held forever by then. When not
	// runnable and not Definite, the job deadlocks for some timing (for
	// instance when a region that never finishes takes its slots first)
	// and may finish for another.
	Definite bool
	// MinimumSlots is Regions.MinimumSlots.
	MinimumSlots int
	// Region is the first region (in topological order) that cannot be
	// served when not runnable, else the region with the largest need.
	Region ID
	// Needed is what Region needs at once, including the slots held
	// forever by subtasks that never finish and that may be held when it
	// asks.
	Needed []resource.Count
	// Missing is the part of Needed the cluster cannot serve (empty when
	// runnable).
	Missing []resource.Count
	// Indefinite is the number of slots held forever by the subtasks of
	// the whole job that never finish.
	Indefinite int
	// NeverFinish lists, ascending, the subtasks that never finish
	// (Regions.NeverFinishes): they hold their slots forever.
	NeverFinish []topology.ExecutionVertexID
	// Repacked lists the regions judged with a resource-aware packing
	// (ForCluster), ascending; the others use the locality packing.
	Repacked []ID
	// Reason explains the verdict in one line, naming the region.
	Reason string
}

// Check decides whether the job can run on a cluster with the given slots
// (profiles with counts; resource.Unknown slots serve any request) under
// matching m. The answer is sound — never runnable when the job cannot
// run — and exact for bounded jobs: with region scheduling and FIFO atomic
// bulks, a job whose every region fits the cluster on its own finishes,
// because a deployed region always finishes and frees its slots.
//
// The slots are those of rs.ForCluster(cluster, m): a region whose
// locality packing does not fit is judged with a resource-aware packing
// when one exists (Verdict.Repacked); a scheduler must be given the same
// Regions to ask for those slots.
//
// A slot with a subtask that never finishes (an unbounded one, or one
// that reads an unbounded one through pipelined edges) never comes back.
// Region r is judged next to every such slot of the regions that can take
// their slots before r does: all but r's descendants in the region graph
// (those only run after r was deployed) and, when every slot serves every
// request (bulks are then served in strict FIFO order) and r is a source
// region, the source regions after r (the strategy submits all sources at
// start in topological order). Every slot held forever must also fit the
// cluster at once. When a region fails, Verdict.Definite
// tells whether it fails for every timing: next to the held slots of its
// ancestors only (and, when every slot serves every request, so that the
// bulks are served in strict FIFO order, of the source regions asking
// before it).
//
// The matching per region is exact (resource.Assign, a max-flow over
// distinct profiles); the slots held forever by other regions are charged
// one slot of every kind that could serve them, a superset of what any
// actual assignment takes. Regions with the same needs are checked once.
func (rs *Regions) Check(cluster []resource.Count, m resource.Matching) Verdict {
	return rs.ForCluster(cluster, m).check(cluster, m)
}

// neverRegion is what Check keeps of a region with subtasks that never
// finish: the profiles of all its slots and of those held forever.
type neverRegion struct {
	id        ID
	all, held []resource.Profile
	heldTally []resource.Count
}

// feasibilityCheck is what check computes once about a job and a cluster
// before it judges the regions one by one.
type feasibilityCheck struct {
	rs        *Regions
	cluster   []resource.Count
	m         resource.Matching
	capacity  int
	counts    bool // only counts matter: any slot serves any request
	kinds     []resource.Count
	universal bool // every slot serves every request
	strict    bool // bulks are served in strict FIFO order
	nevers    []neverRegion
	index     map[ID]int // region -> its index in nevers
	allHeld   []resource.Profile
	allTally  []resource.Count
	desc      []uint64
	// later[k] sums the held slots of the source regions among nevers[k:].
	later []int
}

func (rs *Regions) check(cluster []resource.Count, m resource.Matching) Verdict {
	v := Verdict{Runnable: true, MinimumSlots: rs.minimumSlots, Region: -1, Repacked: rs.Repacked()}
	capacity := 0
	for _, c := range cluster {
		capacity = satAdd(capacity, max(c.N, 0))
	}
	if e, ok := rs.blockedForever(); ok {
		return rs.blockedVerdict(v, e)
	}
	c := rs.newFeasibilityCheck(cluster, m, capacity)
	v.Indefinite = len(c.allHeld)
	if len(c.nevers) > 0 {
		v.NeverFinish = rs.neverFinishing()
		// In the end every such slot is held at once.
		fit, missing := rs.fits(nil, c.allHeld, cluster, capacity, c.counts, m)
		if !fit {
			v.Runnable, v.Definite, v.Region = false, true, c.nevers[0].id
			v.Needed, v.Missing = tallyOrCount(c.allHeld, c.counts), missing
			v.Reason = rs.heldReason(v, capacity, !c.universal)
			return v
		}
	}
	c.desc = rs.descendantMasks(c.nevers, c.index)
	best, bestNeed, failed := c.judgeRegions(&v)
	if failed {
		return v
	}
	if best >= 0 {
		return c.largestVerdict(v, best, bestNeed)
	}
	v.Reason = rs.reason(v, capacity, 0, !c.universal)
	return v
}

// blockedVerdict is the verdict of a job with a blocking result that is
// never complete (edge e's): no cluster helps.
func (rs *Regions) blockedVerdict(v Verdict, e topology.JobEdgeID) Verdict {
	job := rs.topo.Job()
	edge := job.Edge(e)
	_, target := job.EdgeEnds(e)
	r := rs.regionOf[rs.topo.VerticesOf(target).Start]
	v.Runnable, v.Definite, v.Region = false, true, r
	v.NeverFinish = rs.neverFinishing()
	v.Reason = fmt.Sprintf("region %d %s can never run: it reads the %s result of edge %s -> %s, and %s never finishes "+
		"(it is unbounded or reads an unbounded vertex through pipelined or hybrid edges)",
		r, rs.MemberNames(r, 8), rs.topo.PartitionType(e), edge.Source, edge.Target, edge.Source)
	return v
}

// newFeasibilityCheck collects the regions with subtasks that never
// finish (the slots of those subtasks are held forever; their other
// slots come back) and how the cluster serves requests.
func (rs *Regions) newFeasibilityCheck(cluster []resource.Count, m resource.Matching, capacity int) *feasibilityCheck {
	c := &feasibilityCheck{rs: rs, cluster: cluster, m: m, capacity: capacity}
	c.counts = !rs.anyKnownResources()
	c.kinds = slotKinds(cluster)
	c.universal = c.counts || len(c.kinds) == 0 || c.kinds[0].Profile.IsUnknown()
	c.nevers = rs.neverRegions()
	c.index = map[ID]int{}
	for k := range c.nevers {
		n := &c.nevers[k]
		c.index[n.id] = k
		for _, s := range rs.Slots(n.id) {
			n.all = append(n.all, s.Profile)
			if s.Unbounded {
				n.held = append(n.held, s.Profile)
			}
		}
		n.heldTally = resource.Tally(n.held)
		c.allHeld = append(c.allHeld, n.held...)
	}
	c.allTally = resource.Tally(c.allHeld)
	// With strict FIFO (every slot serves every request, so the oldest
	// waiting bulk takes any free slot and no younger one overtakes it),
	// a source region asks at start before every source region of a larger
	// id: those cannot hold slots before it is served.
	c.strict = len(c.nevers) > 0 && (c.universal || rs.servesAll(c.kinds, m))
	c.later = make([]int, len(c.nevers)+1)
	for k := len(c.nevers) - 1; k >= 0; k-- {
		c.later[k] = c.later[k+1]
		if rs.isSource(c.nevers[k].id) {
			c.later[k] += len(c.nevers[k].held)
		}
	}
	return c
}

// heldOf returns the slots held forever that r may have to wait beside:
// those of every never-finishing region but r's descendants and r (and,
// with strict FIFO, the later sources when r is a source).
func (c *feasibilityCheck) heldOf(r ID) (n int, tally []resource.Count) {
	rs, nevers := c.rs, c.nevers
	n, tally = len(c.allHeld), c.allTally
	excluded := rs.excluded(r, c.desc, c.index)
	after := len(nevers) // nevers[after:] are the later sources to drop
	if c.strict && rs.isSource(r) {
		after, _ = slices.BinarySearchFunc(nevers, r+1, func(n neverRegion, id ID) int { return int(n.id) - int(id) })
		if !c.counts && len(nevers)-after > maxLaterSources {
			after = len(nevers) // too many to subtract one by one: stay conservative
		}
	}
	if len(excluded) == 0 && after == len(nevers) {
		return n, tally
	}
	if !c.counts {
		tally = slices.Clone(c.allTally)
	}
	for _, k := range excluded {
		n -= len(nevers[k].held)
		if !c.counts {
			tally = subtractCounts(tally, nevers[k].heldTally)
		}
	}
	n -= c.later[after]
	if !c.counts {
		for k := after; k < len(nevers); k++ {
			if rs.isSource(nevers[k].id) {
				tally = subtractCounts(tally, nevers[k].heldTally)
			}
		}
	}
	return n, tally
}

// ownSlots returns region r's slots: their profiles (nil when only
// counts matter) and their number.
func (c *feasibilityCheck) ownSlots(r ID) ([]resource.Profile, int) {
	if k, isNever := c.index[r]; isNever {
		return c.nevers[k].all, len(c.nevers[k].all)
	}
	if c.counts {
		return nil, c.rs.SlotCount(r)
	}
	own := slotProfiles(c.rs.Slots(r))
	return own, len(own)
}

// judgeRegions judges every region beside the slots held forever that
// it may wait for. The first region that does not fit fills v and ends
// the walk (failed); otherwise it returns the region that needs the most
// slots with what it needs.
func (c *feasibilityCheck) judgeRegions(v *Verdict) (best ID, bestNeed int, failed bool) {
	rs := c.rs
	checked := map[string]bool{}
	remaining := map[string][]resource.Count{}
	best, bestNeed = -1, -1
	for r := range ID(rs.NumRegions()) {
		own, ownN := c.ownSlots(r)
		heldN, heldTally := c.heldOf(r)
		if ownN+heldN > bestNeed {
			best, bestNeed = r, ownN+heldN
		}
		if c.counts {
			if ownN+heldN <= c.capacity {
				continue
			}
			v.Runnable, v.Region = false, r
			v.Needed = []resource.Count{{Profile: resource.Unknown, N: ownN + heldN}}
			v.Missing = []resource.Count{{Profile: resource.Unknown, N: ownN + heldN - c.capacity}}
			v.Definite = rs.definitelyStuck(r, ownN, nil, c.nevers, c.index, c.capacity, true, true, c.cluster, c.m)
			v.Reason = rs.reason(*v, c.capacity, heldN+len(neverHeld(c.nevers, c.index, r)), !c.universal)
			return best, bestNeed, true
		}
		if ownN == 0 {
			continue
		}
		need := resource.Tally(own)
		heldKey := countsKey(heldTally)
		key := countsKey(need) + "|" + heldKey
		if checked[key] {
			continue
		}
		checked[key] = true
		rest, ok := remaining[heldKey]
		if !ok {
			rest = c.cluster
			if len(heldTally) > 0 {
				rest = withoutIndefinite(c.cluster, heldTally, c.m)
			}
			remaining[heldKey] = rest
		}
		if a := resource.Assign(need, rest, c.m); !a.Complete() {
			v.Runnable, v.Region, v.Missing = false, r, a.Missing
			v.Needed = addCounts(need, heldTally)
			v.Definite = rs.definitelyStuck(r, ownN, own, c.nevers, c.index, c.capacity, false,
				c.strict || c.universal || rs.servesAll(c.kinds, c.m), c.cluster, c.m)
			v.Reason = rs.reason(*v, c.capacity, heldN+len(neverHeld(c.nevers, c.index, r)), !c.universal)
			return best, bestNeed, true
		}
	}
	return best, bestNeed, false
}

// largestVerdict is the verdict of a runnable job: it names the region
// that needs the most slots (best, needing bestNeed with the slots held
// forever beside it).
func (c *feasibilityCheck) largestVerdict(v Verdict, best ID, bestNeed int) Verdict {
	rs := c.rs
	v.Region = best
	heldN, heldTally := c.heldOf(best)
	if c.counts {
		v.Needed = []resource.Count{{Profile: resource.Unknown, N: bestNeed}}
	} else {
		own := slotProfiles(rs.Slots(best))
		v.Needed = addCounts(resource.Tally(own), heldTally)
	}
	v.Reason = rs.reason(v, c.capacity, heldN+len(neverHeld(c.nevers, c.index, best)), !c.universal)
	return v
}

// neverHeld returns the held-forever slot profiles of region r (nil when
// r has none).
func neverHeld(nevers []neverRegion, index map[ID]int, r ID) []resource.Profile {
	if k, ok := index[r]; ok {
		return nevers[k].held
	}
	return nil
}

// fits reports whether the demand (own plus held profiles) fits the
// cluster at once, and what is missing if not.
func (rs *Regions) fits(own, held []resource.Profile, cluster []resource.Count, capacity int, counts bool, m resource.Matching) (bool, []resource.Count) {
	n := len(own) + len(held)
	if counts {
		if n <= capacity {
			return true, nil
		}
		return false, []resource.Count{{Profile: resource.Unknown, N: n - capacity}}
	}
	all := append(append([]resource.Profile(nil), held...), own...)
	a := resource.Assign(resource.Tally(all), cluster, m)
	return a.Complete(), a.Missing
}

// tallyOrCount is Tally, or one Unknown count when only counts matter.
func tallyOrCount(ps []resource.Profile, counts bool) []resource.Count {
	if counts {
		return []resource.Count{{Profile: resource.Unknown, N: len(ps)}}
	}
	return resource.Tally(ps)
}

// subtractCounts returns a minus b (per profile, never below zero, empty
// entries dropped); a is modified.
func subtractCounts(a, b []resource.Count) []resource.Count {
	for _, x := range b {
		for i := range a {
			if a[i].Profile == x.Profile {
				a[i].N = max(0, a[i].N-x.N)
				break
			}
		}
	}
	return slices.DeleteFunc(a, func(c resource.Count) bool { return c.N == 0 })
}

// addCounts returns a plus b per profile, in order of first appearance.
func addCounts(a, b []resource.Count) []resource.Count {
	out := slices.Clone(a)
	for _, x := range b {
		i := slices.IndexFunc(out, func(c resource.Count) bool { return c.Profile == x.Profile })
		if i < 0 {
			out = append(out, x)
		} else {
			out[i].N += x.N
		}
	}
	return out
}

// maxLaterSources bounds the later source regions whose held slots are
// subtracted one by one per region (see Check).
const maxLaterSources = 256

// isSource reports whether region r reads no blocking result of another
// region: the strategy schedules it at start, in topological order.
func (rs *Regions) isSource(r ID) bool { return len(rs.ConsumedGroups(r)) == 0 }

// maxMaskWords bounds the memory of descendantMasks (words of 64 bits).
const maxMaskWords = 1 << 20

// descendantMasks returns, per region, the set of never-finishing regions
// (bits by their index in nevers) that are the region itself or its
// descendants in the region graph, as rows of words; nil when that would
// take more than maxMaskWords words (then only the region itself is
// excluded, which is conservative).
func (rs *Regions) descendantMasks(nevers []neverRegion, index map[ID]int) []uint64 {
	if len(nevers) == 0 {
		return nil
	}
	words := (len(nevers) + 63) / 64
	n := rs.NumRegions()
	if n*words > maxMaskWords {
		return nil
	}
	masks := make([]uint64, n*words)
	for r := n - 1; r >= 0; r-- {
		row := masks[r*words : (r+1)*words]
		if k, ok := index[ID(r)]; ok {
			row[k/64] |= 1 << (k % 64)
		}
		for _, g := range rs.ProducedGroups(ID(r)) {
			for _, c := range rs.groupConsumers.Row(int32(g)) {
				if int(c) == r {
					continue
				}
				for w, x := range masks[int(c)*words : (int(c)+1)*words] {
					row[w] |= x
				}
			}
		}
	}
	return masks
}

// excluded lists the indexes (in nevers) of the never-finishing regions
// that cannot hold slots before region r is deployed: r and its
// descendants.
func (rs *Regions) excluded(r ID, masks []uint64, index map[ID]int) []int {
	if len(index) == 0 {
		return nil
	}
	if masks == nil {
		if k, ok := index[r]; ok {
			return []int{k}
		}
		return nil
	}
	words := len(masks) / rs.NumRegions()
	var out []int
	for w, x := range masks[int(r)*words : (int(r)+1)*words] {
		for x != 0 {
			out = append(out, w*64+bits.TrailingZeros64(x))
			x &= x - 1
		}
	}
	return out
}

// definitelyStuck reports whether region r (own slots: ownN, profiles
// own unless counts) can never be served: not even next to the slots held
// forever by the never-finishing regions certainly deployed before it —
// its ancestors, which must have run for r to be scheduled, and, when
// bulks are served in strict FIFO order (universal: every slot serves
// every request), the source regions that ask before r (all of them when
// r is not a source; those of smaller id when it is, since the strategy
// schedules sources in topological order at start). An older bulk that is
// never served blocks r as well.
func (rs *Regions) definitelyStuck(r ID, ownN int, own []resource.Profile, nevers []neverRegion, index map[ID]int,
	capacity int, counts, universal bool, cluster []resource.Count, m resource.Matching) bool {
	var held []resource.Profile
	heldN := 0
	take := func(k int) {
		heldN += len(nevers[k].held)
		if !counts {
			held = append(held, nevers[k].held...)
		}
	}
	taken := map[int]bool{}
	if k, ok := index[r]; ok {
		taken[k] = true // its held slots are among its own
	}
	for _, q := range rs.ancestors(r) {
		if k, ok := index[q]; ok && !taken[k] {
			taken[k] = true
			take(k)
		}
	}
	if universal {
		source := rs.isSource(r)
		for k, n := range nevers {
			if !taken[k] && rs.isSource(n.id) && (!source || n.id < r) {
				taken[k] = true
				take(k)
			}
		}
	}
	if counts {
		return ownN+heldN > capacity
	}
	fit, _ := rs.fits(own, held, cluster, capacity, false, m)
	return !fit
}

// servesAll reports whether every slot kind of the cluster serves every
// slot the regions ask for. Cost: Slots of every region.
func (rs *Regions) servesAll(kinds []resource.Count, m resource.Matching) bool {
	seen := map[resource.Profile]bool{}
	for r := range ID(rs.NumRegions()) {
		for _, s := range rs.Slots(r) {
			if seen[s.Profile] {
				continue
			}
			seen[s.Profile] = true
			for _, k := range kinds {
				if !m.Serves(k.Profile, s.Profile) {
					return false
				}
			}
		}
	}
	return true
}

// ancestors lists the regions whose blocking results region r reads,
// directly or through other regions (r excluded).
func (rs *Regions) ancestors(r ID) []ID {
	seen := map[ID]bool{r: true}
	stack := []ID{r}
	var out []ID
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, g := range rs.ConsumedGroups(x) {
			for _, p := range rs.groupProducers.Row(int32(g)) {
				if !seen[p] {
					seen[p] = true
					out = append(out, p)
					stack = append(stack, p)
				}
			}
		}
	}
	return out
}

// withoutIndefinite returns the cluster minus the slots unbounded requests
// may take. Which slots they get depends on timing, so unless every held
// request has only one kind of slot that can serve it, each held request
// is charged one slot of every kind that could serve it: a superset of
// what any actual assignment takes, which keeps Check sound.
func withoutIndefinite(cluster, held []resource.Count, m resource.Matching) []resource.Count {
	out := append([]resource.Count(nil), cluster...)
	for _, h := range held {
		var kinds []int
		for j, c := range cluster {
			if c.N > 0 && m.Serves(c.Profile, h.Profile) {
				kinds = append(kinds, j)
			}
		}
		for _, j := range kinds {
			out[j].N = max(0, out[j].N-h.N)
		}
	}
	return out
}

// blockedForever returns a blocking or selective hybrid edge whose
// producer never finishes (an unbounded vertex, or one that reads an
// unbounded vertex through pipelined or hybrid edges: a task cannot
// finish before its pipelined or hybrid producers) and whose consumers
// wait for it (not runsBeside). Its result is never complete (a selective
// hybrid consumer waits for a share of it from other regions), so its
// consumers never run.
func (rs *Regions) blockedForever() (edge topology.JobEdgeID, found bool) {
	job := rs.topo.Job()
	for e := range topology.JobEdgeID(job.NumEdges()) {
		if src, _ := job.EdgeEnds(e); rs.NeverFinishes(src) && !rs.runsBeside(e) {
			return e, true
		}
	}
	return 0, false
}

// neverRegions lists, ascending, the regions with a subtask that never
// finishes.
func (rs *Regions) neverRegions() []neverRegion {
	var ids []ID
	seen := map[ID]bool{}
	for jv, never := range rs.never {
		if !never {
			continue
		}
		vs := rs.topo.VerticesOf(topology.JobVertexID(jv))
		for x := vs.Start; x < vs.End; x++ {
			if r := rs.regionOf[x]; !seen[r] {
				seen[r] = true
				ids = append(ids, r)
			}
		}
	}
	slices.Sort(ids)
	out := make([]neverRegion, len(ids))
	for i, r := range ids {
		out[i].id = r
	}
	return out
}

func (rs *Regions) anyKnownResources() bool {
	job := rs.topo.Job()
	for jv := range topology.JobVertexID(job.NumVertices()) {
		if !job.Vertex(jv).Resources.IsUnknown() {
			return true
		}
	}
	return false
}

func countsKey(cs []resource.Count) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}

// reason renders the verdict in one line; held is the number of slots
// held forever counted in v.Needed, sized whether slot sizes matter (the
// packing is then named).
func (rs *Regions) reason(v Verdict, capacity, held int, sized bool) string {
	if v.Region < 0 {
		return "the job has no regions"
	}
	needed := formatCounts(v.Needed)
	heldNote := ""
	if held > 0 {
		heldNote = fmt.Sprintf(" (including %s held indefinitely by %s, which never finish: %s)",
			count(held, "slot"), rs.vertexNames(v.NeverFinish, 8), neverWhy)
	}
	var b strings.Builder
	if v.Runnable {
		fmt.Fprintf(&b, "every region fits; the largest, region %d %s, needs %s at once%s; the cluster has %s",
			v.Region, rs.MemberNames(v.Region, 8), needed, heldNote, clusterText(capacity))
	} else {
		fmt.Fprintf(&b, "region %d %s needs %s at once%s; the cluster has %s; missing %s",
			v.Region, rs.MemberNames(v.Region, 8), needed, heldNote, clusterText(capacity), formatCounts(v.Missing))
		if !v.Definite {
			b.WriteString("; it deadlocks when regions that never finish take their slots before it (whether they do depends on timing)")
		}
	}
	b.WriteString(rs.packingNote(v.Repacked, sized))
	return b.String()
}

// neverWhy says why a subtask never finishes.
const neverWhy = "unbounded, or reading an unbounded task through pipelined or full hybrid edges"

// heldReason is the reason when the slots held forever do not fit the
// cluster at once.
func (rs *Regions) heldReason(v Verdict, capacity int, sized bool) string {
	return fmt.Sprintf("the subtasks that never finish (%s: %s) hold %s indefinitely, which the cluster cannot serve at once: "+
		"they need %s; the cluster has %s; missing %s (first in region %d %s)%s",
		rs.vertexNames(v.NeverFinish, 8), neverWhy, count(v.Indefinite, "slot"), formatCounts(v.Needed), clusterText(capacity),
		formatCounts(v.Missing), v.Region, rs.MemberNames(v.Region, 8), rs.packingNote(v.Repacked, sized))
}

// packingNote names the packing of the slots: nothing when sizes do not
// matter, else the regions packed by size (ForCluster), at most three
// shown with their slots.
func (rs *Regions) packingNote(repacked []ID, sized bool) string {
	if len(repacked) == 0 {
		if sized {
			return "; packing: locality"
		}
		return ""
	}
	var b strings.Builder
	b.WriteString("; packing: resource-aware (the locality packing does not fit) for ")
	for i, r := range repacked {
		if i == 3 {
			fmt.Fprintf(&b, ", ... (%d regions in all)", len(repacked))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "region %d as ", r)
		for j, s := range rs.Slots(r) {
			if j == 4 {
				b.WriteString(" + ...")
				break
			}
			if j > 0 {
				b.WriteString(" + ")
			}
			b.WriteString(rs.vertexNames(s.Members, 4))
		}
	}
	b.WriteString(", locality for the others")
	return b.String()
}

// clusterText renders the cluster's size, "3 slots" ("at least ..." when
// the sum saturated).
func clusterText(capacity int) string {
	if capacity == math.MaxInt {
		return fmt.Sprintf("at least %d slots", capacity)
	}
	return count(capacity, "slot")
}

// vertexNames renders execution vertices as "{A#0, B#0, ...}", at most
// limit names followed by "... (N in all)".
func (rs *Regions) vertexNames(vs []topology.ExecutionVertexID, limit int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range vs {
		if i == limit {
			fmt.Fprintf(&b, ", ... (%d in all)", len(vs))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(rs.topo.VertexName(v))
	}
	b.WriteByte('}')
	return b.String()
}

func formatCounts(cs []resource.Count) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Describe()
	}
	return strings.Join(parts, " + ")
}

// MemberNames renders region r's members as "{A#0, B#0, ...}", at most
// limit names followed by "... (N in all)".
func (rs *Regions) MemberNames(r ID, limit int) string {
	return rs.vertexNames(rs.Members(r), limit)
}

// SlotsToRun returns the fewest slots of unknown size on which the job
// runs without deadlock (Check finds it runnable), and false if no number
// of slots lets it run (it reads a blocking result that is never
// complete): then n is MinimumSlots. For a job whose every subtask
// finishes it is MinimumSlots; a subtask that never finishes holds its
// slot for good, and the regions that run beside it need theirs too, so
// such a job may need more.
func (rs *Regions) SlotsToRun() (n int, ok bool) {
	if slices.Index(rs.never, true) < 0 {
		return rs.minimumSlots, true
	}
	if _, blocked := rs.blockedForever(); blocked {
		return rs.minimumSlots, false
	}
	runs := func(n int) bool {
		return rs.Check([]resource.Count{{Profile: resource.Unknown, N: n}}, resource.FitsEveryDimension).Runnable
	}
	// Every region's slots at once are enough if anything is: find the
	// fewest by bisection (more slots never make a job deadlock).
	hi := 0
	for r := range ID(rs.NumRegions()) {
		hi = satAdd(hi, rs.SlotCount(r))
	}
	hi = max(hi, rs.minimumSlots)
	if !runs(hi) {
		return rs.minimumSlots, false
	}
	lo := rs.minimumSlots // runs(lo - 1) is false: fewer cannot run
	for lo < hi {
		mid := lo + (hi-lo)/2
		if runs(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi, true
}
