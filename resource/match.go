package resource

import (
	"fmt"
	"sort"
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
	k, n := len(demand), len(supply)
	need := 0
	for _, d := range demand {
		need += d.N
	}
	if need == 0 {
		return Assignment{}
	}
	// rank supply by size: the cost of using a slot of that profile.
	order := make([]int, n)
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return compareSize(supply[order[a]].Profile, supply[order[b]].Profile) < 0 })
	rank := make([]int, n)
	for r, j := range order {
		rank[j] = r
	}

	if a, ok := assignSingleSlotKind(demand, supply, m, rank); ok {
		return a
	}
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
	matched := f.minCostMaxFlow(src, sink)
	a := Assignment{Matched: matched}
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
	return a
}

// assignSingleSlotKind handles the common cases without a flow: one demand
// profile, or every slot able to serve every request. Then taking the
// smallest usable slots first is optimal.
func assignSingleSlotKind(demand, supply []Count, m Matching, rank []int) (Assignment, bool) {
	universal := true
	for _, s := range supply {
		for _, d := range demand {
			if !m.Serves(s.Profile, d.Profile) {
				universal = false
			}
		}
	}
	if len(demand) != 1 && !universal {
		return Assignment{}, false
	}
	byRank := make([]int, len(supply))
	for j, r := range rank {
		byRank[r] = j
	}
	var a Assignment
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
			a.Pairs = append(a.Pairs, Pair{Request: i, Slot: j, N: take})
			a.Matched += take
			want -= take
			left -= take
			if left == 0 {
				r++
			}
		}
		if want > 0 {
			a.Missing = append(a.Missing, Count{Profile: d.Profile, N: want})
		}
	}
	return a, true
}
