package resource

import (
	"fmt"
	"strings"
)

// Matching says when a slot serves a request.
type Matching uint8

const (
	// FitsEveryDimension serves a request with any slot at least as large
	// in every dimension (the default).
	FitsEveryDimension Matching = iota
	// ExactMatch serves a request only with a slot of exactly its profile.
	// Unknown on either side still matches.
	ExactMatch
)

// String returns "fits" or "exact".
func (m Matching) String() string {
	if m == ExactMatch {
		return "exact"
	}
	return "fits"
}

// Serves reports whether a slot of profile slot can serve a request of
// profile request under this matching.
func (m Matching) Serves(slot, request Profile) bool {
	if m == ExactMatch && request.known && slot.known {
		return request == slot
	}
	return request.FitsIn(slot)
}

// Count is a number of requests or slots that share one profile.
type Count struct {
	Profile Profile
	N       int
}

// String renders "3 x {cpu=500m mem=512MB}".
func (c Count) String() string { return fmt.Sprintf("%d x %v", c.N, c.Profile) }

// Describe renders the count for people: "3 x {cpu=500m mem=512MB}", or
// "3 slots" (and "1 slot") when the profile is Unknown.
func (c Count) Describe() string {
	switch {
	case !c.Profile.IsUnknown():
		return c.String()
	case c.N == 1:
		return "1 slot"
	}
	return fmt.Sprintf("%d slots", c.N)
}

// Tally groups profiles into counts, in order of first appearance.
func Tally(profiles []Profile) []Count {
	idx := make(map[Profile]int, 4)
	var out []Count
	for _, p := range profiles {
		i, ok := idx[p]
		if !ok {
			i = len(out)
			idx[p] = i
			out = append(out, Count{Profile: p})
		}
		out[i].N++
	}
	return out
}

// Pair says that N requests of Demand[Request] are served by slots of
// Supply[Slot].
type Pair struct {
	Request, Slot int
	N             int
}

// Assignment is the result of Assign.
type Assignment struct {
	// Matched is the number of requests served.
	Matched int
	// Pairs lists how many requests of each demand entry each supply entry serves.
	Pairs []Pair
	// Missing lists the requests that could not be served, per profile.
	Missing []Count
}

// Complete reports whether every request was served.
func (a Assignment) Complete() bool { return len(a.Missing) == 0 }

// MissingString renders the missing requests, e.g. "2 x {cpu=1000m mem=2048MB}"
// or "2 slots" for Unknown ones.
func (a Assignment) MissingString() string {
	parts := make([]string, len(a.Missing))
	for i, c := range a.Missing {
		parts[i] = c.Describe()
	}
	return strings.Join(parts, ", ")
}

// Assign serves as many requests as possible with the given slots, each
// slot serving at most one request, and among the maximum assignments
// picks one that uses the smallest slots (so that big slots stay free for
// requests only they can serve). It is exact: a complete assignment is
// returned whenever one exists. Cost is a min-cost max-flow on the graph of
// distinct profiles, independent of the counts' magnitude per augmentation:
// linear in len(demand) x len(supply) per augmenting path.
func Assign(demand, supply []Count, m Matching) Assignment {
	var a Assignment
	AssignInto(&a, demand, supply, m)
	return a
}

// AssignInto is Assign writing into a, whose Pairs and Missing storage it
// reuses: for a caller that reads the assignment before the next call and
// keeps nothing of it. In the common cases (one request profile, or slots
// that serve every request, with at most 8 supply profiles) it allocates
// only when a's storage must grow.
func AssignInto(a *Assignment, demand, supply []Count, m Matching) {
	a.Matched, a.Pairs, a.Missing = 0, a.Pairs[:0], a.Missing[:0]
	need := 0
	for _, d := range demand {
		need += d.N
	}
	if need == 0 {
		return
	}
	var orderBuf, rankBuf [smallSupply]int
	order, rank := sizeRanks(supply, orderBuf[:0], rankBuf[:0])
	if assignSingleSlotKind(a, demand, supply, m, order, true) {
		return
	}
	assignFlow(a, demand, supply, m, rank, need)
}

// assignFlow is AssignInto by a min-cost max-flow, for a demand of need
// requests (positive) that assignSingleSlotKind did not serve; rank is
// sizeRanks' ranking of the supply.
func assignFlow(a *Assignment, demand, supply []Count, m Matching, rank []int, need int) {
	k, n := len(demand), len(supply)
	f := newFlow(k + n + 2)
	src, sink := 0, k+n+1
	for i, d := range demand {
		if d.N > 0 {
			f.addEdge(src, 1+i, d.N, 0)
		}
	}
	pairEdge := make([]int, 0, k*n)
	pairIdx := make([][2]int, 0, k*n)
	for i, d := range demand {
		if d.N == 0 {
			continue
		}
		for j, s := range supply {
			if s.N > 0 && m.Serves(s.Profile, d.Profile) {
				pairEdge = append(pairEdge, f.addEdge(1+i, 1+k+j, need, rank[j]+1))
				pairIdx = append(pairIdx, [2]int{i, j})
			}
		}
	}
	for j, s := range supply {
		if s.N > 0 {
			f.addEdge(1+k+j, sink, s.N, 0)
		}
	}
	a.Matched = f.minCostMaxFlow(src, sink)
	served := make([]int, k)
	for x, e := range pairEdge {
		if fl := f.flowOn(e); fl > 0 {
			a.Pairs = append(a.Pairs, Pair{Request: pairIdx[x][0], Slot: pairIdx[x][1], N: fl})
			served[pairIdx[x][0]] += fl
		}
	}
	for i, d := range demand {
		if d.N > served[i] {
			a.Missing = append(a.Missing, Count{Profile: d.Profile, N: d.N - served[i]})
		}
	}
}

// Matched returns the number of requests Assign(demand, supply, m) serves,
// without building its pairs: what a fit check needs. It allocates nothing
// in the common cases (one request profile, or slots that serve every
// request, with at most 8 supply profiles).
func Matched(demand, supply []Count, m Matching) int {
	need := 0
	for _, d := range demand {
		need += d.N
	}
	if need == 0 {
		return 0
	}
	if len(supply) == 1 {
		// One slot profile: every request it serves takes any of them.
		s, served := supply[0], 0
		for _, d := range demand {
			if m.Serves(s.Profile, d.Profile) {
				served += d.N
			}
		}
		return max(min(served, s.N), 0)
	}
	var orderBuf, rankBuf [smallSupply]int
	order, rank := sizeRanks(supply, orderBuf[:0], rankBuf[:0])
	var a Assignment
	if !assignSingleSlotKind(&a, demand, supply, m, order, false) {
		assignFlow(&a, demand, supply, m, rank, need)
	}
	return a.Matched
}

// smallSupply is the number of supply profiles whose ranking fits in
// arrays on the stack (more are ranked in the heap).
const smallSupply = 8

// sizeRanks ranks the supply by size, the cost of using a slot of that
// profile: order lists the supply indexes from smallest to largest (ties
// in their given order), rank[j] is the place of supply[j] in order. Both
// are appended to the given buffers. An insertion sort: supplies are a
// handful of distinct profiles.
func sizeRanks(supply []Count, order, rank []int) ([]int, []int) {
	for j := range supply {
		order = append(order, j)
		for i := len(order) - 1; i > 0 && CompareSize(supply[order[i]].Profile, supply[order[i-1]].Profile) < 0; i-- {
			order[i], order[i-1] = order[i-1], order[i]
		}
	}
	rank = append(rank, order...) // sized; overwritten below
	for r, j := range order {
		rank[j] = r
	}
	return order, rank
}

// assignSingleSlotKind handles the common cases without a flow: one demand
// profile, or every slot able to serve every request. Then taking the
// smallest usable slots first (byRank: the supply indexes by size) is
// optimal. It reports false, leaving a as it is, in the other cases. With
// pairs false it counts a.Matched only.
func assignSingleSlotKind(a *Assignment, demand, supply []Count, m Matching, byRank []int, pairs bool) bool {
	if len(demand) != 1 {
		for _, s := range supply {
			for _, d := range demand {
				if !m.Serves(s.Profile, d.Profile) {
					return false
				}
			}
		}
	}
	r := 0
	left := 0
	for i, d := range demand {
		want := d.N
		for want > 0 && r < len(byRank) {
			j := byRank[r]
			if left == 0 {
				left = supply[j].N
			}
			if left == 0 || !m.Serves(supply[j].Profile, d.Profile) {
				r, left = r+1, 0
				continue
			}
			take := min(want, left)
			if pairs {
				a.Pairs = append(a.Pairs, Pair{Request: i, Slot: j, N: take})
			}
			a.Matched += take
			want -= take
			left -= take
			if left == 0 {
				r++
			}
		}
		if want > 0 && pairs {
			a.Missing = append(a.Missing, Count{Profile: d.Profile, N: want})
		}
	}
	return true
}
