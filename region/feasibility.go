package region

import (
	"fmt"
	"sort"
	"strings"

	"github.com/regionsched/regionsched/resource"
)

// Verdict is the answer of Check: can the job run to completion on a
// cluster without deadlock under region scheduling with atomic bulks.
type Verdict struct {
	// Runnable is true when every region can be served.
	Runnable bool
	// MinimumSlots is Regions.MinimumSlots.
	MinimumSlots int
	// Region is the first region (in topological order) that cannot be
	// served when not runnable, else the region with the largest need.
	Region ID
	// Needed is what Region needs at once, including the slots held
	// indefinitely by unbounded subtasks of the whole job.
	Needed []resource.Count
	// Missing is the part of Needed the cluster cannot serve (empty when
	// runnable).
	Missing []resource.Count
	// Indefinite is the number of slots held forever by unbounded subtasks.
	Indefinite int
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
// Slots with an unbounded subtask never come back, so they are counted as
// held by every region: region r needs the job's unbounded slots plus its
// own bounded ones at once. (This is conservative for regions that can
// only run after an unbounded producer finished, which never happens.)
//
// The matching per region is exact (resource.Assign, a max-flow over
// distinct profiles); regions with the same slot profiles are checked once.
func (rs *Regions) Check(cluster []resource.Count, m resource.Matching) Verdict {
	v := Verdict{Runnable: true, MinimumSlots: rs.minimumSlots, Region: -1}
	capacity := 0
	for _, c := range cluster {
		capacity += c.N
	}
	if e, ok := rs.blockedForever(); ok {
		// No cluster helps: a blocking result that is never complete.
		job := rs.topo.Job()
		edge := job.Edge(e)
		_, target := job.EdgeEnds(e)
		r := rs.regionOf[rs.topo.VerticesOf(target).Start]
		v.Runnable, v.Region = false, r
		v.Reason = fmt.Sprintf("region %d %s can never run: it reads the blocking result of edge %s -> %s, and %s never finishes "+
			"(it is unbounded or reads an unbounded vertex through pipelined edges)",
			r, rs.MemberNames(r, 8), edge.Source, edge.Target, edge.Source)
		return v
	}
	// Regions with unbounded subtasks: their slots of unbounded subtasks
	// are held forever (indefinite); their other slots (bounded) come back.
	unboundedRegions := rs.unboundedRegions()
	var indefinite []resource.Profile
	bounded := make(map[ID][]resource.Profile, len(unboundedRegions))
	for _, r := range unboundedRegions {
		own := []resource.Profile{}
		for _, s := range rs.Slots(r) {
			if s.Unbounded {
				indefinite = append(indefinite, s.Profile)
			} else {
				own = append(own, s.Profile)
			}
		}
		bounded[r] = own
	}
	v.Indefinite = len(indefinite)

	if !rs.anyKnownResources() {
		// Every request is Unknown: any slot serves any request, so only
		// counts matter; the largest region decides.
		worst, need := ID(-1), -1
		for r := range ID(rs.NumRegions()) {
			n := rs.SlotCount(r)
			if own, ok := bounded[r]; ok {
				n = len(own)
			}
			if n > need {
				worst, need = r, n
			}
		}
		need += len(indefinite)
		v.Region = worst
		v.Needed = []resource.Count{{Profile: resource.Unknown, N: need}}
		if need > capacity {
			v.Runnable = false
			v.Missing = []resource.Count{{Profile: resource.Unknown, N: need - capacity}}
		}
		v.Reason = rs.reason(v, capacity)
		return v
	}

	// Unbounded slots first: they must all fit, and they stay taken.
	remaining := cluster
	if len(indefinite) > 0 {
		held := resource.Tally(indefinite)
		if a := resource.Assign(held, cluster, m); !a.Complete() {
			v.Runnable, v.Region, v.Needed, v.Missing = false, unboundedRegions[0], held, a.Missing
			v.Reason = rs.reason(v, capacity)
			return v
		}
		remaining = withoutIndefinite(cluster, held, m)
	}
	checked := map[string]bool{}
	bestNeed := -1
	for r := range ID(rs.NumRegions()) {
		own, ok := bounded[r]
		if !ok {
			for _, s := range rs.Slots(r) {
				own = append(own, s.Profile)
			}
		}
		// A region whose every slot is held indefinitely is still a
		// candidate for the largest need (it needs the held slots).
		if len(own)+len(indefinite) > bestNeed {
			bestNeed = len(own) + len(indefinite)
			v.Region, v.Needed = r, resource.Tally(append(own, indefinite...))
		}
		if len(own) == 0 {
			continue
		}
		need := resource.Tally(own)
		key := countsKey(need)
		if checked[key] {
			continue
		}
		checked[key] = true
		if a := resource.Assign(need, remaining, m); !a.Complete() {
			v.Runnable, v.Region, v.Missing = false, r, a.Missing
			v.Needed = resource.Tally(append(own, indefinite...))
			break
		}
	}
	v.Reason = rs.reason(v, capacity)
	return v
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

// blockedForever returns a blocking edge whose producer never finishes: an
// unbounded vertex, or one that reads an unbounded vertex through
// pipelined edges (a task cannot finish before its pipelined producers).
// Its result is never complete, so its consumers never run.
func (rs *Regions) blockedForever() (edge int, found bool) {
	job := rs.topo.Job()
	never := make([]bool, job.NumVertices())
	for _, jv := range job.TopologicalOrder() {
		never[jv] = job.Vertex(int(jv)).Unbounded
		for _, e := range job.InEdges(int(jv)) {
			if src, _ := job.EdgeEnds(int(e)); never[src] && rs.topo.PartitionType(int(e)).IsPipelined() {
				never[jv] = true
			}
		}
	}
	for e := range job.NumEdges() {
		if src, _ := job.EdgeEnds(e); never[src] && !rs.topo.PartitionType(e).IsPipelined() {
			return e, true
		}
	}
	return 0, false
}

// unboundedRegions lists, ascending, the regions with an unbounded subtask.
func (rs *Regions) unboundedRegions() []ID {
	job := rs.topo.Job()
	seen := map[ID]bool{}
	var out []ID
	for jv := range job.NumVertices() {
		if !job.Vertex(jv).Unbounded {
			continue
		}
		vs := rs.topo.VerticesOf(jv)
		for x := vs.Start; x < vs.End; x++ {
			if r := rs.regionOf[x]; !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (rs *Regions) anyKnownResources() bool {
	job := rs.topo.Job()
	for jv := range job.NumVertices() {
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

func (rs *Regions) reason(v Verdict, capacity int) string {
	if v.Region < 0 {
		return "the job has no regions"
	}
	needed := formatCounts(v.Needed)
	held := ""
	if v.Indefinite > 0 {
		held = fmt.Sprintf(" (including %d held indefinitely by unbounded subtasks)", v.Indefinite)
	}
	if v.Runnable {
		return fmt.Sprintf("every region fits; the largest, region %d %s, needs %s at once%s; the cluster has %s",
			v.Region, rs.MemberNames(v.Region, 8), needed, held, plural(capacity, "slot"))
	}
	return fmt.Sprintf("region %d %s needs %s at once%s; the cluster has %s; missing %s",
		v.Region, rs.MemberNames(v.Region, 8), needed, held, plural(capacity, "slot"), formatCounts(v.Missing))
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
	members := rs.Members(r)
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range members {
		if i == limit {
			fmt.Fprintf(&b, ", ... (%d in all)", len(members))
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
