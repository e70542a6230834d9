package pool

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/regionsched/regionsched/resource"
)

// shape is the demand of bulks that ask for the same multiset of
// profiles: every verdict (fulfillable, completable from free slots, fits
// the cluster) depends only on it, so it is computed once per shape, not
// once per bulk.
type shape struct {
	key       string
	demand    []resource.Count // one class per distinct request profile
	classProf []int32          // profile index of each class
	fitOrder  []int32          // classes, most demanding first
	size      int
	bulks     bulkList // waiting bulks of this shape, oldest first (shapeList)
	pos       int      // index in shapeCache.live, -1 when dead (no waiting bulk)

	// Fulfillability against the reusable slots (shapeCache).
	fulfillable bool
	use         []int32 // fulfillable: slots per profile the cached matching uses
	missing     int     // unfulfillable: requests missing at the last check
	addsSince   int     // reusable slots it could use added since that check

	// Completion of its younger bulks from free slots (Pool.completeYounger).
	freeMissing int // requests missing against the free slots at the last check
	freeAdds    int // free slots it could use added since that check

	// Fit into the declared capacity (shapeCache).
	capVersion uint64
	capFits    bool
}

// firstYounger returns the oldest waiting bulk of the shape that is not
// the head (the head is the oldest waiting bulk overall).
func (s *shape) firstYounger(head *bulk) *bulk {
	b := s.bulks.Front()
	if b != nil && b == head {
		b = s.bulks.Next(b)
	}
	return b
}

// uses returns how many slots of a profile the cached matching uses.
func (s *shape) uses(pr int32) int32 {
	if int(pr) < len(s.use) {
		return s.use[pr]
	}
	return 0
}

// shapeCache holds the shapes of the pool's waiting bulks and decides, per
// shape, whether its bulks can ever be fulfilled: against the slots the
// pool has or will have back (fulfillability.go: the verdict, kept up to
// date as slots come and go) and against the cluster's declared capacity
// (the verdict, computed once per capacity). The pool reads the verdicts,
// arms and cancels its bulks' timeouts when a fulfillability verdict flips
// (shapeCache.flipped), and tells the cache which slots became or stopped
// being reusable.
//
// The cache reads the slots' counts and profiles in the pool's profile
// table and keeps shapes without waiting bulks (dead) for reuse, up to
// maxDeadShapes.
type shapeCache struct {
	profiles *profileTable
	// live lists the shapes with waiting bulks (shape.pos indexes it),
	// which the pool reads; index has them by key, and the dead ones.
	live  []*shape
	index shapeIndex
	// last is the shape lookup returned last (in index), or nil.
	last *shape
	// dead counts the shapes in index without waiting bulks.
	dead int

	// dirty lists the profiles whose reusable slots changed since the
	// last refresh; their records say how (reusableAdds, reusableLoss).
	dirty []int32
	// flipped lists the shapes whose fulfillability verdict flipped in
	// the last recheck or refresh: the pool's to act on and empty.
	flipped []*shape

	capacity   []resource.Count // nil: unknown
	capVersion uint64

	// classify's results, read by lookup: the shape key, and the shape's
	// classes (profile index and count).
	keyBuf   []byte
	classBuf []int32
	countBuf []int32
}

// newShapeCache returns an empty cache over the profiles of t.
func newShapeCache(t *profileTable) shapeCache {
	return shapeCache{profiles: t}
}

// single returns the live shape lookup returned last if it is the shape
// of one request of profile *pr and that profile is the one interned last
// (the usual case at scale: a region of one slot, like the bulk before),
// without building its key; else nil, and classify and lookup find the
// shape. It is small enough to be inlined in Submit.
func (c *shapeCache) single(pr *resource.Profile) *shape {
	ls, t := c.last, c.profiles
	if ls == nil || ls.pos < 0 || ls.size != 1 {
		return nil
	}
	if i := ls.classProf[0]; i == t.last && t.recs[i].profile == *pr {
		return ls
	}
	return nil
}

// classify interns the profiles of a bulk's requests and writes their
// classes into reqClass (one per request), leaving the shape key in
// c.keyBuf and the shape's classes (profile and count, sorted by profile
// index so equal multisets share a key) in c.classBuf and c.countBuf for
// lookup.
func (c *shapeCache) classify(reqClass []int32, requests []Request) {
	c.classBuf, c.countBuf = c.classBuf[:0], c.countBuf[:0]
	for i, r := range requests {
		pr := c.profiles.intern(r.Profile)
		k := 0
		for k < len(c.classBuf) && c.classBuf[k] < pr {
			k++
		}
		if k == len(c.classBuf) || c.classBuf[k] != pr {
			// Insert a new class at k; shift the classes after it, and
			// the requests already classified there.
			c.classBuf = slices.Insert(c.classBuf, k, pr)
			c.countBuf = slices.Insert(c.countBuf, k, 0)
			for j := range reqClass[:i] {
				if int(reqClass[j]) >= k {
					reqClass[j]++
				}
			}
		}
		c.countBuf[k]++
		reqClass[i] = int32(k)
	}
	key := c.keyBuf[:0]
	for k, pr := range c.classBuf {
		key = binary.AppendUvarint(key, uint64(pr))
		key = binary.AppendUvarint(key, uint64(c.countBuf[k]))
	}
	c.keyBuf = key
}

// lookup returns the shape classify just computed, making it live; isNew
// means its verdicts must be computed (recheck), as for a shape never
// seen: fulfillable until rechecked, capacity unchecked.
func (c *shapeCache) lookup() (s *shape, isNew bool) {
	// The shape found last first (the bulks of a run mostly repeat a few
	// shapes): comparing the key is cheaper than hashing it.
	key := c.keyBuf
	s, ok := c.last, false
	if s != nil && s.key == string(key) {
		ok = true
	} else {
		s, ok = c.index.get(key)
	}
	if ok {
		if s.pos >= 0 {
			return s, false
		}
		c.dead--
		s.fulfillable, s.use, s.missing, s.addsSince = true, s.use[:0], 0, 0
		s.freeMissing, s.freeAdds, s.capVersion = 0, 0, 0
	} else {
		s = &shape{key: string(key), fulfillable: true, bulks: bulkList{list: shapeList}}
		for k, pr := range c.classBuf {
			n := int(c.countBuf[k])
			s.demand = append(s.demand, resource.Count{Profile: c.profiles.recs[pr].profile, N: n})
			s.classProf = append(s.classProf, pr)
			s.size += n
		}
		s.fitOrder = make([]int32, len(s.demand))
		for k := range s.fitOrder {
			s.fitOrder[k] = int32(k)
		}
		slices.SortStableFunc(s.fitOrder, func(x, y int32) int {
			return moreDemanding(s.demand[x].Profile, s.demand[y].Profile)
		})
		c.index.put(s)
	}
	c.last = s
	s.pos = len(c.live)
	c.live = append(c.live, s)
	return s, true
}

// moreDemanding orders request profiles, most demanding first, by
// resource.CompareAmounts reversed (CPU, memory, total of extended
// resources, encoding: an order in which a profile never comes before one
// it fits in); Unknown (fits anywhere) is the least demanding. The head's
// direct fit counts a slot for the most demanding class it serves,
// leaving the easy ones to small slots, and the head asks for the least
// demanding requests it can.
func moreDemanding(a, b resource.Profile) int {
	if a.IsUnknown() != b.IsUnknown() {
		if a.IsUnknown() {
			return 1
		}
		return -1
	}
	return resource.CompareAmounts(b, a)
}

// maxDeadShapes bounds the shapes kept for reuse without waiting bulks.
const maxDeadShapes = 1024

// kill takes a shape without waiting bulks out of the live shapes. Past
// maxDeadShapes dead shapes, every dead one is forgotten.
func (c *shapeCache) kill(s *shape) {
	last := c.live[len(c.live)-1]
	c.live[s.pos] = last
	last.pos = s.pos
	c.live = c.live[:len(c.live)-1]
	s.pos = -1
	c.dead++
	if c.dead > maxDeadShapes {
		c.last = nil // it may be forgotten here
		c.index.dropDead()
		c.dead = 0
	}
}

// serving reports whether a slot of profile pr serves a request of some
// live shape.
func (c *shapeCache) serving(pr int32) bool {
	for _, s := range c.live {
		if c.profiles.relevant(pr, s) {
			return true
		}
	}
	return false
}

// classBound returns a lower bound on the requests of s that the free
// slots (reusable slots if reusable) cannot serve: for each class, the
// requests beyond the slots that could serve it, and overall the requests
// beyond the slots that could serve any of them (Hall's condition on
// single classes and on all of them). Zero does not mean s can be served.
func (c *shapeCache) classBound(s *shape, reusable bool) int {
	t := c.profiles
	bound, usable := 0, 0
	for k, d := range s.demand {
		avail := 0
		for q := range t.recs {
			if n := t.slotCount(int32(q), reusable); n > 0 && t.serves(int32(q), s.classProf[k]) {
				avail += n
			}
		}
		bound = max(bound, d.N-avail)
	}
	for q := range t.recs {
		if n := t.slotCount(int32(q), reusable); n > 0 && t.relevant(int32(q), s) {
			usable += n
		}
	}
	return max(bound, s.size-usable)
}

// setCapacity declares what the cluster can ever give the pool (nil:
// unknown); every shape's capacity verdict is computed anew when next
// asked.
func (c *shapeCache) setCapacity(capacity []resource.Count) {
	if capacity == nil {
		c.capacity = nil
	} else {
		c.capacity = append(make([]resource.Count, 0, len(capacity)), capacity...)
	}
	c.capVersion++
}

// fitsCapacity reports whether a shape fits the declared capacity (always
// true when none is declared), caching the answer per capacity version.
func (c *shapeCache) fitsCapacity(s *shape) bool {
	if c.capacity == nil {
		return true
	}
	if s.capVersion != c.capVersion {
		s.capVersion = c.capVersion
		s.capFits = resource.Matched(s.demand, c.capacity, c.profiles.matching) == s.size
	}
	return s.capFits
}

// beyondCapacity returns what a shape misses against the declared
// capacity.
func (c *shapeCache) beyondCapacity(s *shape) []resource.Count {
	return resource.Assign(s.demand, c.capacity, c.profiles.matching).Missing
}

// checkInvariants verifies, from scratch, that the live shapes hold
// waiting bulks, waiting in all, each at its place in c.live and in the
// index, and that the dead ones are counted; and that no verdict flip is
// left for the pool to act on. For tests, like Pool.CheckInvariants.
func (c *shapeCache) checkInvariants(waiting int) error {
	n := 0
	for _, s := range c.live {
		n += s.bulks.Len()
	}
	if n != waiting {
		return fmt.Errorf("shapes hold %d bulks, queue %d", n, waiting)
	}
	live := 0
	for s := range c.index.all() {
		if s.pos < 0 {
			continue
		}
		live++
		if s.pos >= len(c.live) || c.live[s.pos] != s || s.bulks.Len() == 0 {
			return fmt.Errorf("live shape misplaced or empty")
		}
	}
	if n := c.index.len(); live != len(c.live) || n-live != c.dead {
		return fmt.Errorf("%d live shapes in the index, %d listed; %d dead, %d counted", live, len(c.live), n-live, c.dead)
	}
	if len(c.flipped) > 0 {
		return fmt.Errorf("%d verdict flips not acted on", len(c.flipped))
	}
	return nil
}

// checkVerdicts verifies every live shape's verdicts against a matching
// computed from scratch: fulfillable against the reusable slots (the
// counts per profile, which the caller counts slot by slot), and the
// capacity verdict where it is cached for the current capacity.
func (c *shapeCache) checkVerdicts(reusable []resource.Count) error {
	for _, s := range c.live {
		if ok := resource.Assign(s.demand, reusable, c.profiles.matching).Complete(); ok != s.fulfillable {
			return fmt.Errorf("shape %v: fulfillable %v, cached %v", s.demand, ok, s.fulfillable)
		}
		if c.capacity != nil && s.capVersion == c.capVersion {
			if fits := resource.Matched(s.demand, c.capacity, c.profiles.matching) == s.size; fits != s.capFits {
				return fmt.Errorf("shape %v: fits the capacity %v, cached %v", s.demand, fits, s.capFits)
			}
		}
	}
	return nil
}
