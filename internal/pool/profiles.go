package pool

import (
	"github.com/regionsched/regionsched/resource"
)

// profileRec aggregates the slots of one distinct profile, so that every
// matching question runs on distinct profiles, not on individual slots.
type profileRec struct {
	profile resource.Profile
	free    []int32 // free slots of this profile (a stack; slotRec.pos indexes it)
	held    []int32 // slots of this profile held by the head bulk
	// total counts the slots of this profile in the pool: free, held and in
	// use (not those being released to the admission).
	total int
	// fixed counts the in-use slots that will not come back: their task is
	// unbounded, or the admission reclaimed them.
	fixed int

	// Changes not yet folded into the shapes' cached verdicts.
	reusableAdds int  // slots that became reusable
	reusableLoss bool // a reusable slot went away
	freeAdds     int  // slots that became free
	// headRejected: the head cannot use one more slot of this profile.
	headRejected bool
	// servesRequest caches Matching.Serves(this, request profile index):
	// 0 unknown, 1 yes, 2 no.
	servesRequest []int8
}

// reusable is the number of slots of this profile that are or will become
// available: free, held, or used by bounded tasks.
func (r *profileRec) reusable() int { return r.total - r.fixed }

// profileTable holds the distinct profiles of the pool's slots and
// requests, one record each, so that every matching question runs on
// distinct profiles, not on individual slots; and the storage of the
// supplies and matchings built over them.
type profileTable struct {
	recs []profileRec
	// index maps a profile to its record once there are more than
	// scanProfiles of them; below, intern scans recs (a job's pool mostly
	// sees one or two profiles, and a map costs more memory than it saves
	// time there).
	index map[resource.Profile]int32
	// last is the index intern returned last.
	last     int32
	matching resource.Matching
	// supplyBuf holds the per-profile counts supply built last, supplyProf
	// the profile index of each.
	supplyBuf  []resource.Count
	supplyProf []int32
	asgBuf     resource.Assignment // storage of assign's results
}

// scanProfiles is the most profiles a table finds by scanning its records.
const scanProfiles = 8

// newProfileTable returns an empty table whose profiles are matched with m.
func newProfileTable(m resource.Matching) profileTable {
	return profileTable{matching: m}
}

// intern returns the index of a profile, adding it if new.
func (t *profileTable) intern(pr resource.Profile) int32 {
	// The profile interned last first: the requests of a run mostly
	// repeat a few profiles, and comparing is cheaper than hashing.
	if i := t.last; int(i) < len(t.recs) && t.recs[i].profile == pr {
		return i
	}
	i, ok := t.find(pr)
	if !ok {
		i = int32(len(t.recs))
		t.recs = append(t.recs, profileRec{profile: pr})
		switch {
		case t.index != nil:
			t.index[pr] = i
		case len(t.recs) > scanProfiles:
			t.index = make(map[resource.Profile]int32, 2*len(t.recs))
			for k := range t.recs {
				t.index[t.recs[k].profile] = int32(k)
			}
		}
	}
	t.last = i
	return i
}

// find returns the index of a profile the table holds.
func (t *profileTable) find(pr resource.Profile) (int32, bool) {
	if t.index != nil {
		i, ok := t.index[pr]
		return i, ok
	}
	for k := range t.recs {
		if t.recs[k].profile == pr {
			return int32(k), true
		}
	}
	return 0, false
}

// serves reports whether a slot of profile slot serves a request of profile
// req, caching the answer per pair of profile indexes.
func (t *profileTable) serves(slot, req int32) bool {
	rec := &t.recs[slot]
	for int(req) >= len(rec.servesRequest) {
		rec.servesRequest = append(rec.servesRequest, 0)
	}
	switch rec.servesRequest[req] {
	case 1:
		return true
	case 2:
		return false
	}
	ok := t.matching.Serves(rec.profile, t.recs[req].profile)
	rec.servesRequest[req] = 2
	if ok {
		rec.servesRequest[req] = 1
	}
	return ok
}

// supply fills t.supplyBuf/t.supplyProf with the non-zero per-profile
// counts of the chosen slot sets, ready for resource.Assign.
func (t *profileTable) supply(held, free, reusable bool) []resource.Count {
	t.supplyBuf, t.supplyProf = t.supplyBuf[:0], t.supplyProf[:0]
	for i := range t.recs {
		rec := &t.recs[i]
		n := 0
		if reusable {
			n = rec.reusable()
		} else {
			if held {
				n += len(rec.held)
			}
			if free {
				n += len(rec.free)
			}
		}
		if n > 0 {
			t.supplyBuf = append(t.supplyBuf, resource.Count{Profile: rec.profile, N: n})
			t.supplyProf = append(t.supplyProf, int32(i))
		}
	}
	return t.supplyBuf
}

// supplyIndex returns the position of a profile in t.supplyProf, or -1.
func (t *profileTable) supplyIndex(pr int32) int {
	for k, q := range t.supplyProf {
		if q == pr {
			return k
		}
	}
	return -1
}

// slotCount is the number of free (or reusable) slots of profile q.
func (t *profileTable) slotCount(q int32, reusable bool) int {
	if reusable {
		return t.recs[q].reusable()
	}
	return len(t.recs[q].free)
}

// assign is resource.Assign into the table's own storage: the result is
// valid until the next call.
func (t *profileTable) assign(demand, supply []resource.Count) resource.Assignment {
	resource.AssignInto(&t.asgBuf, demand, supply, t.matching)
	return t.asgBuf
}

// relevant reports whether a slot of profile pr can serve any request of s.
func (t *profileTable) relevant(pr int32, s *shape) bool {
	for _, c := range s.classProf {
		if t.serves(pr, c) {
			return true
		}
	}
	return false
}
