package pool

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
)

// The shape cache on its own: a profile table whose slot counts the tests
// set by hand (total and fixed per profile, as the pool keeps them), and
// shapes looked up from requests.

// tiny serves no request of the tests' other profiles.
var tiny = resource.New(100, 128)

// newTestCache returns an empty cache over an empty profile table.
func newTestCache(m resource.Matching) *shapeCache {
	t := new(profileTable)
	*t = newProfileTable(m)
	c := newShapeCache(t)
	return &c
}

// shapeOf looks up the shape of bulks of these request profiles and
// returns it with the class of each request.
func shapeOf(c *shapeCache, profiles ...resource.Profile) (s *shape, isNew bool, classes []int32) {
	requests := make([]Request, len(profiles))
	for i, pr := range profiles {
		requests[i] = Request{Profile: pr}
	}
	classes = make([]int32, len(requests))
	c.classify(classes, requests)
	s, isNew = c.lookup()
	return s, isNew, classes
}

// addReusable puts n slots of profile pr in the table, as the pool does
// when slots are offered.
func addReusable(c *shapeCache, pr resource.Profile, n int) {
	i := c.profiles.intern(pr)
	for range n {
		c.profiles.recs[i].total++
		c.reusableAdded(i)
	}
}

// loseReusable takes n slots of profile pr out of the table, as the pool
// does when slots are lost.
func loseReusable(c *shapeCache, pr resource.Profile, n int) {
	i := c.profiles.intern(pr)
	for range n {
		c.profiles.recs[i].total--
		c.reusableLost(i)
	}
}

// takeFlips returns the shapes whose verdict flipped and empties the
// list, as the pool does.
func takeFlips(c *shapeCache) []*shape {
	f := append([]*shape(nil), c.flipped...)
	c.flipped = c.flipped[:0]
	return f
}

// TestShapeCacheClassifiesMultisets: bulks that ask for the same multiset
// of profiles, in any order, share one shape, whose classes are the
// distinct profiles with their counts; each request learns its class.
func TestShapeCacheClassifiesMultisets(t *testing.T) {
	c := newTestCache(resource.FitsEveryDimension)
	s, isNew, classes := shapeOf(c, big, small, small, resource.Unknown)
	require.True(t, isNew)
	assert.Equal(t, []resource.Count{{Profile: big, N: 1}, {Profile: small, N: 2}, {Profile: resource.Unknown, N: 1}}, s.demand)
	assert.Equal(t, []int32{0, 1, 2}, s.classProf, "profile indexes, in the order they were interned")
	assert.Equal(t, []int32{0, 1, 1, 2}, classes)
	assert.Equal(t, 4, s.size)
	assert.Equal(t, []int32{0, 1, 2}, s.fitOrder, "big first, Unknown last")
	assert.True(t, s.fulfillable, "a new shape is fulfillable until rechecked")

	again, isNew, classes := shapeOf(c, resource.Unknown, small, big, small)
	assert.Same(t, s, again)
	assert.False(t, isNew)
	assert.Equal(t, []int32{2, 1, 0, 1}, classes)

	other, isNew, _ := shapeOf(c, big, small)
	assert.NotSame(t, s, other)
	assert.True(t, isNew)
	assert.Equal(t, []*shape{s, other}, c.live)
}

// TestShapeCacheSingle: the shape of one request is found again without a
// key while it is the last one looked up and live and its profile the one
// interned last; otherwise classify and lookup find it.
func TestShapeCacheSingle(t *testing.T) {
	c := newTestCache(resource.FitsEveryDimension)
	assert.Nil(t, c.single(&small), "nothing looked up yet")
	s, _, _ := shapeOf(c, small)
	assert.Same(t, s, c.single(&small))
	assert.Nil(t, c.single(&big))
	c.profiles.intern(big)
	assert.Nil(t, c.single(&small), "another profile interned since")
	again, isNew, _ := shapeOf(c, small)
	assert.Same(t, s, again, "found by its key")
	assert.False(t, isNew)
	assert.Same(t, s, c.single(&small))
	two, _, _ := shapeOf(c, small, small)
	assert.Nil(t, c.single(&small), "the last shape has two requests")
	again, isNew, _ = shapeOf(c, small)
	assert.Same(t, s, again)
	assert.False(t, isNew)
	c.kill(s)
	assert.Nil(t, c.single(&small), "dead")
	assert.Equal(t, []*shape{two}, c.live)
}

// TestShapeCacheKeepsDeadShapes: a shape without waiting bulks is kept
// for reuse, its verdicts reset when it comes back; past maxDeadShapes the
// dead shapes are forgotten.
func TestShapeCacheKeepsDeadShapes(t *testing.T) {
	c := newTestCache(resource.FitsEveryDimension)
	s, _, _ := shapeOf(c, small, small)
	c.recheck(s) // no slots: unfulfillable
	require.False(t, s.fulfillable)
	takeFlips(c)
	c.kill(s)
	assert.Equal(t, -1, s.pos)
	assert.Empty(t, c.live)
	assert.Equal(t, 1, c.dead)

	again, isNew, _ := shapeOf(c, small, small)
	assert.Same(t, s, again)
	assert.True(t, isNew, "its verdicts are computed anew")
	assert.True(t, again.fulfillable)
	assert.Zero(t, again.missing)
	assert.Zero(t, c.dead)
	c.kill(again)

	for n := 1; n <= maxDeadShapes; n++ { // shapes of 1 ... maxDeadShapes small requests
		if n == 2 {
			continue // killed above
		}
		profiles := make([]resource.Profile, n)
		for i := range profiles {
			profiles[i] = small
		}
		sh, _, _ := shapeOf(c, profiles...)
		c.kill(sh)
	}
	assert.Equal(t, maxDeadShapes, c.dead)
	assert.Equal(t, maxDeadShapes, c.index.len())
	sh, _, _ := shapeOf(c, big)
	c.kill(sh)
	assert.Zero(t, c.dead, "past maxDeadShapes every dead shape is forgotten")
	assert.Zero(t, c.index.len())
	assert.Nil(t, c.last)
}

// TestShapeCacheFulfillability walks one shape through the changes of the
// reusable slots: added slots turn it fulfillable only once they can make
// up what it missed, lost slots turn it unfulfillable only if its matching
// used them, and every flip is listed once.
func TestShapeCacheFulfillability(t *testing.T) {
	c := newTestCache(resource.FitsEveryDimension)
	s, _, _ := shapeOf(c, small, small)
	c.recheck(s)
	assert.False(t, s.fulfillable)
	assert.Equal(t, 2, s.missing)
	assert.Equal(t, []*shape{s}, takeFlips(c))
	assert.Equal(t, []resource.Count{{Profile: small, N: 2}}, c.missingNow(s))

	addReusable(c, tiny, 3)
	c.refresh()
	assert.Zero(t, s.addsSince, "tiny slots serve none of its requests")
	addReusable(c, small, 1)
	c.refresh()
	assert.False(t, s.fulfillable)
	assert.Equal(t, 1, s.addsSince)
	assert.Empty(t, c.flipped)

	addReusable(c, small, 1)
	c.refresh()
	assert.True(t, s.fulfillable)
	assert.Equal(t, []*shape{s}, takeFlips(c))
	assert.Equal(t, int32(2), s.uses(c.profiles.intern(small)))
	assert.Empty(t, c.dirty, "refresh folded every change")

	addReusable(c, big, 1)
	c.refresh()
	assert.Empty(t, c.flipped, "more slots never make a fulfillable shape unfulfillable")
	loseReusable(c, small, 1)
	c.refresh()
	assert.True(t, s.fulfillable, "the big slot serves a small request")
	assert.Empty(t, c.flipped)
	assert.Equal(t, int32(1), s.uses(c.profiles.intern(big)))

	loseReusable(c, tiny, 3)
	c.refresh()
	assert.True(t, s.fulfillable, "its matching used no tiny slot")
	loseReusable(c, big, 1)
	c.refresh()
	assert.False(t, s.fulfillable)
	assert.Equal(t, []*shape{s}, takeFlips(c))
	assert.Equal(t, 1, s.missing)

	// A slot in use by an unbounded task is not reusable.
	i := c.profiles.intern(small)
	c.profiles.recs[i].fixed++
	c.reusableLost(i)
	c.refresh()
	assert.False(t, s.fulfillable)
	addReusable(c, small, 1)
	c.refresh()
	assert.False(t, s.fulfillable, "one reusable small slot of two")
	addReusable(c, small, 1)
	c.refresh()
	assert.True(t, s.fulfillable)
	assert.NoError(t, c.checkVerdicts(c.profiles.supply(false, false, true)))
}

// TestShapeCacheCapacity: the capacity verdict is the matching against the
// declared capacity, computed once per capacity; no capacity fits all.
func TestShapeCacheCapacity(t *testing.T) {
	c := newTestCache(resource.FitsEveryDimension)
	s, _, _ := shapeOf(c, small, small)
	assert.True(t, c.fitsCapacity(s), "no capacity declared")
	c.setCapacity([]resource.Count{{Profile: big, N: 1}})
	assert.False(t, c.fitsCapacity(s))
	assert.Equal(t, []resource.Count{{Profile: small, N: 1}}, c.beyondCapacity(s))
	capacity := []resource.Count{{Profile: big, N: 1}, {Profile: small, N: 1}}
	c.setCapacity(capacity)
	capacity[1].N = 0 // the cache keeps its own copy
	assert.True(t, c.fitsCapacity(s))
	assert.Empty(t, c.beyondCapacity(s))
	c.setCapacity(nil)
	assert.True(t, c.fitsCapacity(s))

	exact := newTestCache(resource.ExactMatch)
	e, _, _ := shapeOf(exact, small, small)
	exact.setCapacity([]resource.Count{{Profile: big, N: 2}})
	assert.False(t, exact.fitsCapacity(e), "a big slot is not exactly small")
}

// TestShapeCacheClassBound: the bound never exceeds what a maximum
// matching misses, and counts both a class short of slots that serve it
// and a shape short of slots that serve any of its classes.
func TestShapeCacheClassBound(t *testing.T) {
	c := newTestCache(resource.ExactMatch)
	s, _, _ := shapeOf(c, small, small, big)
	addReusable(c, small, 1)
	assert.Equal(t, 2, c.classBound(s, true), "3 requests, 1 slot that serves one")
	addReusable(c, big, 3)
	assert.Equal(t, 1, c.classBound(s, true), "small: 2 requests, 1 slot")
	addReusable(c, small, 1)
	assert.Equal(t, 0, c.classBound(s, true))
	assert.Equal(t, 3, c.classBound(s, false), "no free slots in the table")
	assert.True(t, c.serving(c.profiles.intern(big)))
	assert.False(t, c.serving(c.profiles.intern(medium)))
}

// TestShapeCacheVerdictsAgreeWithAssign: random changes of the reusable
// slots, under both matchings: after every refresh each live shape's
// verdict is what resource.Assign says from scratch, the flips listed are
// exactly the verdicts that changed, and the class bound never exceeds
// what the matching misses.
func TestShapeCacheVerdictsAgreeWithAssign(t *testing.T) {
	profiles := []resource.Profile{small, medium, big, gpu, tiny, resource.Unknown}
	for seed := uint64(1); seed <= 40; seed++ {
		m := resource.FitsEveryDimension
		if seed%2 == 0 {
			m = resource.ExactMatch
		}
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			c := newTestCache(m)
			for _, pr := range profiles {
				c.profiles.intern(pr)
			}
			for range 4 {
				req := make([]resource.Profile, 1+rng.IntN(4))
				for i := range req {
					req[i] = profiles[rng.IntN(len(profiles))]
				}
				if s, isNew, _ := shapeOf(c, req...); isNew {
					c.recheck(s)
				}
			}
			takeFlips(c)
			for step := range 200 {
				before := make(map[*shape]bool, len(c.live))
				for _, s := range c.live {
					before[s] = s.fulfillable
				}
				for range 1 + rng.IntN(3) {
					pr := c.profiles.intern(profiles[rng.IntN(len(profiles))])
					rec := &c.profiles.recs[pr]
					switch k := rng.IntN(4); {
					case k <= 1:
						rec.total++
						c.reusableAdded(pr)
					case k == 2 && rec.reusable() > 0:
						rec.total--
						c.reusableLost(pr)
					case k == 3 && rec.reusable() > 0: // an unbounded task takes a slot
						rec.fixed++
						c.reusableLost(pr)
					}
				}
				c.refresh()
				flipped := map[*shape]bool{}
				for _, s := range takeFlips(c) {
					assert.False(t, flipped[s], "step %d: a shape listed twice", step)
					flipped[s] = true
				}
				supply := c.profiles.supply(false, false, true)
				require.NoError(t, c.checkVerdicts(supply), "step %d", step)
				for _, s := range c.live {
					assert.Equal(t, before[s] != s.fulfillable, flipped[s], "step %d: shape %v flipped", step, s.demand)
					a := resource.Assign(s.demand, supply, m)
					assert.LessOrEqual(t, c.classBound(s, true), s.size-a.Matched, "step %d: bound of %v", step, s.demand)
				}
			}
		})
	}
}

// TestShapeIndexBelowAndBeyondScan finds shapes by key in a list up to
// scanShapes of them and in a map beyond, and forgets the dead ones in
// both.
func TestShapeIndexBelowAndBeyondScan(t *testing.T) {
	for _, n := range []int{scanShapes, scanShapes + 1, 3 * scanShapes} {
		var x shapeIndex
		for i := range n {
			x.put(&shape{key: fmt.Sprint(i), pos: i%2 - 1}) // odd: live (0), even: dead (-1)
		}
		require.Equal(t, n, x.len())
		require.Equal(t, n > scanShapes, x.byKey != nil, "%d shapes", n)
		for i := range n {
			s, ok := x.get([]byte(fmt.Sprint(i)))
			require.True(t, ok, "shape %d of %d", i, n)
			require.Equal(t, fmt.Sprint(i), s.key)
		}
		_, ok := x.get([]byte("none"))
		require.False(t, ok)
		x.dropDead()
		require.Equal(t, n/2, x.len(), "%d shapes, half of them dead", n)
		for s := range x.all() {
			require.GreaterOrEqual(t, s.pos, 0, "a dead shape is forgotten")
		}
	}
}
