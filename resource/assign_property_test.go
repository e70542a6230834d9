package resource

// Property test of Assign against a brute force over individual requests
// and slots. It is an internal test so that it can rank slots with
// CompareSize, the order Assign promises to minimise.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bruteForce enumerates every way of serving requests with slots (each
// slot at most once) and returns the largest number of requests served
// and, among assignments serving that many, the smallest sum of the
// ranks of the slots used.
func bruteForce(requests, slots []Profile, m Matching, rank func(Profile) int) (maxMatched, minCost int) {
	used := make([]bool, len(slots))
	minCost = -1
	var rec func(i, matched, cost int)
	rec = func(i, matched, cost int) {
		if i == len(requests) {
			if matched > maxMatched || (matched == maxMatched && (minCost < 0 || cost < minCost)) {
				maxMatched, minCost = matched, cost
			}
			return
		}
		rec(i+1, matched, cost) // leave request i unserved
		for j, s := range slots {
			if !used[j] && m.Serves(s, requests[i]) {
				used[j] = true
				rec(i+1, matched+1, cost+rank(s))
				used[j] = false
			}
		}
	}
	rec(0, 0, 0)
	return maxMatched, minCost
}

// sizeRank ranks the distinct profiles of slots from small to large by
// CompareSize: the cost Assign minimises per slot used.
func sizeRank(slots []Profile) func(Profile) int {
	var distinct []Profile
	for _, p := range slots {
		if !slices.Contains(distinct, p) {
			distinct = append(distinct, p)
		}
	}
	slices.SortFunc(distinct, CompareSize)
	return func(p Profile) int { return slices.Index(distinct, p) }
}

// randomProfile draws from a small universe so that equal, nested and
// incomparable profiles all occur: cpu x mem x gpu, or Unknown.
func randomProfile(r *rand.Rand, universe int) Profile {
	if r.IntN(8) == 0 {
		return Unknown
	}
	k := r.IntN(universe)
	cpu := []int64{0, 500, 1000}[k%3]
	mem := []int64{512, 1024}[(k/3)%2]
	p := New(cpu, mem)
	if (k/6)%2 == 1 {
		p = p.WithExtended("gpu", 1)
	}
	return p
}

// split breaks counts into several entries of the same profile, in a
// random order, to check that Assign does not rely on Tally's grouping.
func split(r *rand.Rand, counts []Count) []Count {
	var out []Count
	for _, c := range counts {
		for c.N > 0 {
			n := 1 + r.IntN(c.N)
			out = append(out, Count{Profile: c.Profile, N: n})
			c.N -= n
		}
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func TestAssignMatchesBruteForce(t *testing.T) {
	const cases = 3000
	r := rand.New(rand.NewPCG(20240611, 7))
	complete, incomplete := 0, 0
	var reused Assignment // AssignInto's storage, dirty from the cases before
	for c := range cases {
		universe := 2 + r.IntN(11)
		requests := make([]Profile, r.IntN(6))
		for i := range requests {
			requests[i] = randomProfile(r, universe)
		}
		slots := make([]Profile, r.IntN(6))
		for i := range slots {
			slots[i] = randomProfile(r, universe)
		}
		m := Matching(r.IntN(2))
		rank := sizeRank(slots)
		wantMatched, wantCost := bruteForce(requests, slots, m, rank)

		demand, supply := Tally(requests), Tally(slots)
		name := fmt.Sprintf("case %d: %s requests %v slots %v", c, m, demand, supply)
		a := Assign(demand, supply, m)
		checkAssignment(t, name, a, demand, supply, m)
		assert.Equal(t, wantMatched, a.Matched, "%s: Matched must be the maximum", name)
		assert.Equal(t, wantMatched == len(requests), a.Complete(), "%s: complete iff one exists", name)
		cost := 0
		for _, p := range a.Pairs {
			cost += p.N * rank(supply[p.Slot].Profile)
		}
		if wantMatched > 0 {
			assert.Equal(t, wantCost, cost, "%s: a maximum assignment with the smallest slots (pairs %v)", name, a.Pairs)
		}
		if a.Complete() {
			complete++
		} else {
			incomplete++
		}

		// The same problem with counts split into several entries.
		sd, ss := split(r, demand), split(r, supply)
		b := Assign(sd, ss, m)
		checkAssignment(t, name+" (split)", b, sd, ss, m)
		assert.Equal(t, wantMatched, b.Matched, "%s (split into %v / %v): Matched must be the maximum", name, sd, ss)

		// Matched and AssignInto answer as Assign does.
		assert.Equal(t, wantMatched, Matched(sd, ss, m), "%s (split): Matched", name)
		AssignInto(&reused, sd, ss, m)
		assert.Equal(t, b.Matched, reused.Matched, "%s (split): AssignInto", name)
		assert.Equal(t, len(b.Pairs), len(reused.Pairs), "%s (split): AssignInto's pairs", name)
		assert.Equal(t, len(b.Missing), len(reused.Missing), "%s (split): AssignInto's missing", name)
		for k := range min(len(b.Pairs), len(reused.Pairs)) {
			assert.Equal(t, b.Pairs[k], reused.Pairs[k], "%s (split): AssignInto's pair %d", name, k)
		}
		for k := range min(len(b.Missing), len(reused.Missing)) {
			assert.Equal(t, b.Missing[k], reused.Missing[k], "%s (split): AssignInto's missing %d", name, k)
		}
	}
	// The generator must exercise both outcomes.
	assert.Greater(t, complete, cases/10)
	assert.Greater(t, incomplete, cases/10)
}

// checkAssignment verifies that a is a valid assignment: pairs respect the
// counts and the Serves relation, Matched and Missing add up.
func checkAssignment(t *testing.T, name string, a Assignment, demand, supply []Count, m Matching) {
	t.Helper()
	served := make([]int, len(demand))
	usedSlots := make([]int, len(supply))
	total := 0
	for _, p := range a.Pairs {
		require.True(t, p.Request >= 0 && p.Request < len(demand) && p.Slot >= 0 && p.Slot < len(supply), "%s: pair %v out of range", name, p)
		assert.Positive(t, p.N, "%s: pair %v", name, p)
		assert.True(t, m.Serves(supply[p.Slot].Profile, demand[p.Request].Profile), "%s: pair %v: slot does not serve the request", name, p)
		served[p.Request] += p.N
		usedSlots[p.Slot] += p.N
		total += p.N
	}
	assert.Equal(t, a.Matched, total, "%s: Matched is the sum of the pairs", name)
	for i, d := range demand {
		assert.LessOrEqual(t, served[i], d.N, "%s: request %d over-served", name, i)
	}
	for j, s := range supply {
		assert.LessOrEqual(t, usedSlots[j], s.N, "%s: slot %d used more often than it exists", name, j)
	}
	missing := map[Profile]int{}
	need := 0
	for i, d := range demand {
		missing[d.Profile] += d.N - served[i]
		need += d.N
	}
	got := map[Profile]int{}
	for _, c := range a.Missing {
		assert.Positive(t, c.N, "%s: missing entry %v", name, c)
		got[c.Profile] += c.N
	}
	for p, n := range missing {
		if n == 0 {
			delete(missing, p)
		}
	}
	assert.Equal(t, missing, got, "%s: Missing lists what was not served", name)
	assert.Equal(t, need-a.Matched == 0, a.Complete(), "%s", name)
}

// The fit checks of the slot pool and the admission run on every event:
// in the common cases they must not allocate.
func TestMatchedAndAssignIntoDoNotAllocate(t *testing.T) {
	small, large := New(500, 512), New(1000, 1024)
	supply := []Count{{Profile: large, N: 2}, {Profile: small, N: 3}, {Profile: Unknown, N: 1}}
	oneProfile := []Count{{Profile: small, N: 4}}
	assert.Equal(t, 4, Matched(oneProfile, supply, FitsEveryDimension))
	assert.Zero(t, testing.AllocsPerRun(100, func() { Matched(oneProfile, supply, FitsEveryDimension) }))

	var a Assignment
	AssignInto(&a, oneProfile, supply, FitsEveryDimension) // grows a's storage once
	require.True(t, a.Complete())
	assert.Equal(t, []Pair{{Request: 0, Slot: 1, N: 3}, {Request: 0, Slot: 0, N: 1}}, a.Pairs, "the smallest slots first")
	assert.Zero(t, testing.AllocsPerRun(100, func() { AssignInto(&a, oneProfile, supply, FitsEveryDimension) }))
}
